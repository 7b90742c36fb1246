"""Mechanism specifications: the worst-case pair (A, B) of each mechanism, bucketed by loss.

A mechanism here is a pair of output distributions on neighbouring inputs (the paper's
"worst-case distributions", §2.1 of Meiser & Mohammadi): for additive noise, the noise and the
noise shifted by the sensitivity.  Each class knows how to bucket its pair on a grid of step
``h`` (:meth:`PLDMechanism.cells`), in either direction (A ‖ B or B ‖ A).

Parameters are parsed exactly (strings such as ``"0.1"`` or Fractions are welcome).  Where the
computation needs a float, it is rounded in the direction that makes the analysed mechanism
*leak more* (a larger ε, a smaller σ), and the analysed pair dominates the one you asked for
(it is at least as distinguishable; dominance is preserved by composition), so the upper bound
stays sound; the lower bound is then a lower bound for a mechanism within one unit in the last
place of yours.

Continuous mechanisms (Gaussian, Laplace) are bucketed from differences of their CDFs, so the
buckets hold the exact mass of the continuous distributions (not a sampled pdf).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Callable, Sequence

import numpy as np
from scipy import special

from ..budget import parse_nonnegative, parse_positive, parse_positive_int, to_fraction
from ..errors import InvalidParameter
from ._numerics import (
    ELEMENTARY_ULPS,
    LOG_NDTR_ULPS,
    U,
    gaussian_excess,
    normal_edge_sensitivity,
    normal_interval_log,
)
from ..floats import float_down, float_up
from .cells import Cells, cells_from_atoms

__all__ = [
    "PLDMechanism",
    "Gaussian",
    "Laplace",
    "PLDRandomizedResponse",
    "ApproximateDP",
    "DiscreteLaplace",
    "DiscreteGaussian",
    "FinitePair",
]


def _round(x: Fraction, side: str) -> float:
    """``x`` rounded to a float toward more leakage (``side="upper"``) or less (``"lower"``)."""
    return float_up(x) if side == "upper" else float_down(x)


def short_up(x: float, bits: int = 26) -> float:
    """``x > 0`` rounded up to a float with a ``bits``-bit significand, so that ``i * x`` is
    exact for ``|i| < 2**(53 - bits)`` (grid points computed without rounding)."""
    m, e = math.frexp(x)
    return math.ldexp(math.ceil(math.ldexp(m, bits)), e - bits)


def exact_multiples(h: float, limit: int) -> bool:
    """Whether ``i * h`` is computed exactly for every integer ``|i| <= limit``."""
    num, den = h.as_integer_ratio()
    return num.bit_length() + max(1, int(limit)).bit_length() <= 53





class PLDMechanism(ABC):
    """A pair of distributions (A, B) to be bucketed; see the module docstring."""

    #: True when (B, A) is the same pair as (A, B) up to relabelling the outputs, so the reverse
    #: direction need not be computed.
    symmetric: bool = True

    def anchor(self) -> float | None:
        """A natural grid step (grids are ``anchor * 2**j``), e.g. the loss lattice."""
        return None

    def lattice(self) -> float | None:
        """If every finite loss is an integer multiple of this float (exactly), that step."""
        return None

    @abstractmethod
    def loss_range(self, reverse: bool, tail: float) -> tuple[float, float]:
        """Losses outside this interval have A-mass at most ``tail`` on each side."""

    def loss_scale(self) -> Fraction | None:
        """An upper bound on ``|loss|`` of one run (outside far tails), from the exact
        parameters, or ``None`` if unknown.  Checked before any float is computed, so that
        parameters beyond double precision are refused with a clear message."""
        return None

    def loss_moments(self, tail: float) -> tuple[float, float]:
        """About the mean and the standard deviation of one run's finite privacy loss under A
        (upper estimates), for the up-front check of a composition's loss range.  Default: a
        pair with ``|loss| <= e`` has mean at most ``e tanh(e/2)`` and deviation at most ``e``."""
        scale = self.loss_scale()
        if scale is not None:
            e = float(scale)
        else:
            e = max(max(abs(v) for v in self.loss_range(r, tail))
                    for r in ((False,) if self.symmetric else (False, True)))
        return e * math.tanh(e / 2), e

    def work_items(self, tail: float) -> int:
        """How many array entries building this pair's buckets allocates before they are fitted
        into the window (support points of a discrete distribution); 0 when the window bounds
        it.  Computed from the parameters alone, for the up-front estimate of
        :mod:`odp.limits`."""
        return 0

    def cells_both(self, h: float, reverse: bool, tail: float) -> tuple[Cells, Cells]:
        """``(cells(..., "upper"), cells(..., "lower"))``, sharing work where possible."""
        return self.cells(h, reverse, tail, "upper"), self.cells(h, reverse, tail, "lower")

    @abstractmethod
    def cells(self, h: float, reverse: bool, tail: float, side: str = "upper") -> Cells:
        """Buckets of step ``h`` covering :meth:`loss_range` (see :class:`Cells`).

        ``side`` says which bound the buckets feed: parameters that must be rounded to floats
        are rounded toward *more* leakage for ``"upper"`` and toward *less* for ``"lower"``, so
        each bound is rigorous for the exact parameters you gave.
        """

    @abstractmethod
    def describe(self) -> dict[str, Any]:  # Any: JSON values
        """JSON-able description (exact parameters as strings)."""

    def to_json(self) -> dict[str, Any]:  # Any: JSON values
        """The lossless JSON form (= :meth:`describe`); ``PLDMechanism.from_json`` inverts it."""
        return self.describe()

    @staticmethod
    def from_json(data: dict[str, Any]) -> "PLDMechanism":
        """The mechanism a :meth:`to_json` object describes (:func:`mechanism_from_dict`)."""
        return mechanism_from_dict(data)


# --------------------------------------------------------------------------- Gaussian


@dataclass(frozen=True)
class Gaussian(PLDMechanism):
    """Gaussian mechanism: A = N(0, σ²), B = N(Δ, σ²).  Only ``μ = Δ/σ`` matters.

    The privacy loss under A is ``N(μ²/2, μ²)``; bucket masses are differences of the normal
    CDF (computed in log space, so even μ ≈ 40 works).  μ is rounded *up* to a float: a larger μ
    dominates (N(0,σ²) vs N(Δ',σ²) with Δ' ≥ Δ is a post-processing away from it).
    """

    sigma: Any
    sensitivity: Any = 1

    def __post_init__(self):
        object.__setattr__(self, "sigma", parse_positive(self.sigma, name="sigma"))
        object.__setattr__(self, "sensitivity", parse_positive(self.sensitivity, name="sensitivity"))

    def mu(self, side: str = "upper") -> float:
        """``Δ/σ`` as a float, rounded up (``side="upper"``) or down."""
        return _round(self.sensitivity / self.sigma, side)

    def anchor(self) -> float | None:
        return 1.0

    def loss_scale(self) -> Fraction | None:
        mu = self.sensitivity / self.sigma
        return mu * mu / 2 + 40 * mu  # mean μ²/2 plus 40 standard deviations

    def loss_moments(self, tail: float) -> tuple[float, float]:
        mu = self.mu()
        return mu * mu / 2, mu

    def loss_range(self, reverse: bool, tail: float) -> tuple[float, float]:
        mu = self.mu()
        z = -float(special.ndtri(tail))
        m = mu * mu / 2
        return m - z * mu, m + z * mu

    def cells(self, h: float, reverse: bool, tail: float, side: str = "upper") -> Cells:
        mu = self.mu(side)
        m = mu * mu / 2
        lo, hi = self.loss_range(reverse, tail)
        first = math.floor(lo / h) + 1
        last = max(math.ceil(hi / h), first)
        i = np.arange(first, last + 1, dtype=np.int64)
        top = i * h
        bottom = (i - 1) * h
        # absolute error of a computed edge z = (l -/+ m)/mu (edge l = i*h, m = mu^2/2 rounded)
        def z_of(l, sign):
            z = (l + sign * m) / mu
            dz = 4 * U * (np.abs(l) + m) / mu + 2 * U * np.abs(z)
            return z, dz

        za_lo, dza_lo = z_of(bottom, -1.0)
        za_hi, dza_hi = z_of(top, -1.0)
        zb_lo, dzb_lo = z_of(bottom, +1.0)
        zb_hi, dzb_hi = z_of(top, +1.0)
        log_a, ea = normal_interval_log(za_lo, za_hi)
        ea = ea + np.maximum(dza_lo, dza_hi) * normal_edge_sensitivity(za_lo, za_hi, log_a)
        with np.errstate(over="ignore", under="ignore"):
            a = np.exp(log_a)
        rel_a = ea + ELEMENTARY_ULPS * U * (1 + np.abs(log_a))
        rel_a = np.where(np.isfinite(rel_a), rel_a, 1.0)
        # excess bhat - a = E_A[(e^{ih - L} - 1) ; bucket], by quadrature (no cancellation)
        excess, err_excess = gaussian_excess(za_hi, dza_hi, width=h / mu, mu=mu, h=h)
        err_excess = err_excess + excess * 4 * U * (1 + abs(h / mu))
        bhat = a + excess
        with np.errstate(invalid="ignore", divide="ignore"):
            rel_b = np.where(bhat > 0, (a * rel_a + err_excess) / bhat + U, 1.0)
        # tails: P_A[L > last*h] and P_A[L <= (first-1)*h], with their relative error bounds
        zt, dzt = z_of(np.float64(last * h), -1.0)
        zb, dzb = z_of(np.float64((first - 1) * h), -1.0)
        log_top = float(special.log_ndtr(-zt))
        log_bottom = float(special.log_ndtr(zb))
        top_a = math.exp(log_top)
        bottom_a = math.exp(log_bottom)
        rel_tails = (
            LOG_NDTR_ULPS * U * max(1.0, abs(log_top), abs(log_bottom))
            + float(max(dzt * (abs(zt) + 1), dzb * (abs(zb) + 1)))
            + ELEMENTARY_ULPS * U
        )
        return Cells(
            h, first, a, bhat, rel_a, rel_b, 0.0, 0.0, top_a, bottom_a, rel_tails,
            excess=excess, err_excess=err_excess,
        )

    def describe(self) -> dict[str, Any]:
        return {"mechanism": "gaussian", "sigma": str(self.sigma), "sensitivity": str(self.sensitivity)}


# --------------------------------------------------------------------------- Laplace


@dataclass(frozen=True)
class Laplace(PLDMechanism):
    """Laplace mechanism: A = Lap(0, b), B = Lap(Δ, b).  Only ``ε0 = Δ/b`` matters.

    Under A the loss is ``+ε0`` with mass 1/2, ``-ε0`` with mass ``e^{-ε0}/2`` and has density
    ``e^{(t-ε0)/2}/4`` on ``(-ε0, ε0)``; buckets are exact integrals of that (CDF differences).
    ε0 is rounded *up* (the δ(ε) curve of Laplace grows with ε0 for every ε, so a larger ε0
    dominates).
    """

    scale: Any
    sensitivity: Any = 1

    def __post_init__(self):
        object.__setattr__(self, "scale", parse_positive(self.scale, name="scale"))
        object.__setattr__(self, "sensitivity", parse_positive(self.sensitivity, name="sensitivity"))

    def eps0(self, side: str = "upper") -> float:
        """``Δ/b`` as a float: rounded up to a short significand for the upper bound (so the
        grid ``ε0 * 2**-j`` has exact multiples), rounded down for the lower bound."""
        e0 = self.sensitivity / self.scale
        return short_up(float_up(e0)) if side == "upper" else float_down(e0)

    def anchor(self) -> float | None:
        return self.eps0()

    def loss_scale(self) -> Fraction | None:
        return self.sensitivity / self.scale

    def loss_range(self, reverse: bool, tail: float) -> tuple[float, float]:
        return -self.eps0(), self.eps0()

    def cells(self, h: float, reverse: bool, tail: float, side: str = "upper") -> Cells:
        e0 = self.eps0(side)
        first = math.ceil(-e0 / h)
        last = math.ceil(e0 / h)
        i = np.arange(first, last + 1, dtype=np.int64)
        top = i * h
        t1 = np.maximum((i - 1) * h, -e0)
        t2 = np.minimum(top, e0)
        width = np.maximum(t2 - t1, 0.0)
        shrink = -np.expm1(-width / 2)  # 1 - e^{-(t2-t1)/2}
        v1 = top - t2  # in [0, h]: distance of the piece's ends below the bucket top
        v2 = top - t1
        with np.errstate(under="ignore", over="ignore"):
            a = 0.5 * np.exp((t2 - e0) / 2) * shrink
            # excess = ∫ expm1(ih - t) e^{(t-e0)/2}/4 dt = e^{(ih-e0)/2} 2 sinh((v1+v2)/4) sinh((v2-v1)/4)
            excess = np.where(
                width > 0,
                2 * np.exp((top - e0) / 2) * np.sinh((v1 + v2) / 4) * np.sinh(width / 4),
                0.0,
            )
            bhat = a + excess
        if exact_multiples(h, max(abs(first), abs(last)) + 1) and exact_multiples(e0, 1):
            cond = 0.0  # edges and widths are computed exactly
        else:
            with np.errstate(divide="ignore", invalid="ignore"):
                cond = np.where(width > 0, (np.abs(t1) + np.abs(t2) + 4 * np.abs(top) + h) / width, 0.0)
        rel = ELEMENTARY_ULPS * U * (4.0 + np.abs(top) + e0 + cond)
        rel_a = rel.copy()
        rel_b = rel.copy() + U
        with np.errstate(invalid="ignore", divide="ignore"):
            rel_v = np.where(width > 0, ELEMENTARY_ULPS * U * (np.abs(top) + h) / np.maximum(v1 + v2, 1e-300), 0.0)
        err_excess = excess * (rel + 2 * rel_v + ELEMENTARY_ULPS * U * 4)
        # the two atoms (exact masses 1/2 and e^{-e0}/2 under A)
        top_atom = 0.5
        bh_top = 0.5 * math.exp(last * h - e0)  # B-mass e^{-e0}/2, times e^{last*h}
        bot_atom = 0.5 * math.exp(-e0)
        bh_bot = 0.5 * math.exp(first * h)  # B-mass 1/2, times e^{first*h}
        r_atom = ELEMENTARY_ULPS * U * (3.0 + 2 * e0 + abs(last * h) + abs(first * h))
        atom = np.zeros_like(a)
        rel_atom = np.zeros_like(a)
        exact = np.isscalar(cond)  # grid points computed exactly: can test "on the grid" exactly
        for pos, am, bm, on_grid in (
            (len(i) - 1, top_atom, bh_top, exact and last * h == e0),
            (0, bot_atom, bh_bot, exact and first * h == -e0),
        ):
            if on_grid:  # the atom sits exactly at the bucket top: no split needed
                atom[pos] += am
                rel_atom[pos] = r_atom
                continue
            tot_a = a[pos] + am
            tot_b = bhat[pos] + bm
            loss = e0 if pos == len(i) - 1 else -e0
            x_exc = am * math.expm1(i[pos] * h - loss)  # the atom's own excess
            err_excess[pos] += abs(x_exc) * r_atom * 4 + am * r_atom * (1 + abs(i[pos] * h) + e0)
            excess[pos] += x_exc
            rel_a[pos] = (rel_a[pos] * a[pos] + r_atom * am) / tot_a + U
            rel_b[pos] = (rel_b[pos] * bhat[pos] + r_atom * bm) / tot_b + U
            a[pos], bhat[pos] = tot_a, tot_b
        return Cells(
            h, first, a, bhat, rel_a, rel_b, atom=atom, rel_atom=rel_atom,
            excess=excess, err_excess=err_excess,
        )

    def describe(self) -> dict[str, Any]:
        return {"mechanism": "laplace", "scale": str(self.scale), "sensitivity": str(self.sensitivity)}


# --------------------------------------------------------------------------- finite pairs


class _AtomPLDMechanism(PLDMechanism):
    """A pair with finitely many atoms (or a finite truncation with an accounted tail)."""

    def _atoms(self, reverse: bool, tail: float = 0.0, side: str = "upper") -> dict[str, Any]:
        raise NotImplementedError

    def _finite_losses(self, reverse: bool, tail: float) -> np.ndarray:
        at = self._atoms(reverse, tail)
        a = np.asarray(at["a"], dtype=float)
        if at.get("lattice") is not None:
            loss = np.asarray(at["n"], dtype=float) * at["lattice"]
        else:
            with np.errstate(divide="ignore"):
                loss = np.log(a) - np.asarray(at["log_b"], dtype=float)
        loss = loss[(a > 0) & np.isfinite(loss)]
        return loss

    #: True when :meth:`_atoms` does not depend on ``side`` (one build serves both bounds)
    _side_free: bool = False

    def loss_range(self, reverse: bool, tail: float) -> tuple[float, float]:
        # remembered per instance (two floats): building the atoms can take seconds
        cache = self.__dict__.setdefault("_loss_range_cache", {})
        key = (reverse, tail)
        if key not in cache:
            loss = self._finite_losses(reverse, tail)
            cache[key] = (0.0, 0.0) if loss.size == 0 else (float(loss.min()), float(loss.max()))
        return cache[key]

    def cells_both(self, h: float, reverse: bool, tail: float) -> tuple[Cells, Cells]:
        if not self._side_free:
            return super().cells_both(h, reverse, tail)
        at = self._atoms(reverse, tail, "upper")
        return self._cells_of(at, h, "upper"), self._cells_of(at, h, "lower")

    def cells(self, h: float, reverse: bool, tail: float, side: str = "upper") -> Cells:
        return self._cells_of(self._atoms(reverse, tail, side), h, side)

    def _cells_of(self, at: dict[str, Any], h: float, side: str) -> Cells:
        c = cells_from_atoms(
            h,
            at["a"],
            at["rel_a"],
            log_b=at.get("log_b"),
            rel_log_b=at.get("rel_log_b"),
            lattice=at.get("lattice"),
            n=at.get("n"),
            inf_a=at.get("inf_a", 0.0),
            rel_inf=at.get("rel_inf", 0.0),
            nearest=(side == "lower"),
        )
        c.top_a = at.get("top_a", 0.0)
        c.rel_tails = at.get("rel_tails", 0.0)
        return c


@dataclass(frozen=True)
class PLDRandomizedResponse(_AtomPLDMechanism):
    """k-ary randomized response with parameter ε: the true value is reported with probability
    ``e^ε / (e^ε + k - 1)``, each other value with ``1 / (e^ε + k - 1)``.  Losses are ``±ε``
    and 0 (for the ``k - 2`` other values); ε is rounded up."""

    epsilon: Any
    num_values: int = 2

    def __post_init__(self):
        object.__setattr__(self, "epsilon", parse_positive(self.epsilon, name="epsilon"))
        object.__setattr__(self, "num_values", parse_positive_int(self.num_values, name="num_values"))
        if self.num_values < 2:
            raise InvalidParameter("num_values must be at least 2")

    def anchor(self) -> float | None:
        return float_up(self.epsilon)

    def loss_scale(self) -> Fraction | None:
        return self.epsilon

    def lattice(self) -> float | None:
        return float_up(self.epsilon)

    def _atoms(self, reverse: bool, tail: float = 0.0, side: str = "upper") -> dict[str, Any]:
        eps = _round(self.epsilon, side)
        k = self.num_values
        den = 1.0 + (k - 1) * math.exp(-eps)  # (e^eps + k - 1) / e^eps
        a = [1.0 / den, math.exp(-eps) / den, (k - 2) * math.exp(-eps) / den]
        return {"a": a, "rel_a": 4 * ELEMENTARY_ULPS * U * (1 + eps), "lattice": eps, "n": [1, -1, 0]}

    def describe(self) -> dict[str, Any]:
        return {"mechanism": "randomized_response", "epsilon": str(self.epsilon), "num_values": self.num_values}


@dataclass(frozen=True)
class ApproximateDP(_AtomPLDMechanism):
    """The worst case of all (ε, δ)-DP mechanisms (Kairouz–Oh–Viswanath; Murtagh–Vadhan Lemma
    3.2): on input 0 it outputs ``"0"`` w.p. δ, ``"I0"`` w.p. ``(1-δ)e^ε/(1+e^ε)``, ``"I1"``
    w.p. ``(1-δ)/(1+e^ε)``; input 1 is the mirror image.  Bucketing it gives the optimal
    composition theorem for (ε, δ)-DP building blocks.  ε and δ are rounded up."""

    epsilon: Any
    delta: Any = 0

    def __post_init__(self):
        object.__setattr__(self, "epsilon", parse_nonnegative(self.epsilon, name="epsilon"))
        d = parse_nonnegative(self.delta, name="delta")
        if d >= 1:
            raise InvalidParameter(f"delta must be < 1, got {self.delta!r}")
        object.__setattr__(self, "delta", d)

    def anchor(self) -> float | None:
        return float_up(self.epsilon) if self.epsilon > 0 else None

    def loss_scale(self) -> Fraction | None:
        return self.epsilon

    def lattice(self) -> float | None:
        return self.anchor()

    def _atoms(self, reverse: bool, tail: float = 0.0, side: str = "upper") -> dict[str, Any]:
        eps = _round(self.epsilon, side)
        delta = _round(self.delta, side)
        rest = 1.0 - delta  # rounded; covered by rel_a below
        a = [rest / (1.0 + math.exp(-eps)), rest * math.exp(-eps) / (1.0 + math.exp(-eps))]
        rel = 4 * ELEMENTARY_ULPS * U * (1 + eps) + 2 * U
        at: dict[str, Any] = {"a": a, "rel_a": rel, "inf_a": delta, "rel_inf": 0.0}
        if eps > 0:
            at.update(lattice=eps, n=[1, -1])
        else:
            at.update(log_b=np.log(a), rel_log_b=4 * U)
        return at

    def describe(self) -> dict[str, Any]:
        return {"mechanism": "approximate_dp", "epsilon": str(self.epsilon), "delta": str(self.delta)}


@dataclass(frozen=True)
class DiscreteLaplace(_AtomPLDMechanism):
    """Discrete Laplace (two-sided geometric) noise on the integers, ``P(x) ∝ exp(-|x|/scale)``,
    with integer sensitivity Δ.  Losses are ``(Δ - 2x)/scale`` for ``0 <= x <= Δ``; ``1/scale``
    is rounded up (adding independent noise turns a larger parameter into a smaller one, so a
    larger one dominates)."""

    scale: Any
    sensitivity: int = 1

    def __post_init__(self):
        object.__setattr__(self, "scale", parse_positive(self.scale, name="scale"))
        object.__setattr__(self, "sensitivity", parse_positive_int(self.sensitivity, name="sensitivity"))

    def anchor(self) -> float | None:
        return float_up(1 / self.scale)

    def loss_scale(self) -> Fraction | None:
        return self.sensitivity / self.scale

    def work_items(self, tail: float) -> int:
        return self.sensitivity + 1

    def lattice(self) -> float | None:
        return self.anchor()

    def _atoms(self, reverse: bool, tail: float = 0.0, side: str = "upper") -> dict[str, Any]:
        t = _round(1 / self.scale, side)
        delta = self.sensitivity
        q = math.exp(-t)
        c = -math.expm1(-t) / (1.0 + q)  # tanh(t/2)
        xs = np.arange(1, delta)
        a = [1.0 / (1.0 + q)] + list(c * np.exp(-t * xs)) + [math.exp(-t * delta) / (1.0 + q)]
        n = [delta] + list(delta - 2 * xs) + [-delta]
        rel = 4 * ELEMENTARY_ULPS * U * (2 + t * delta)
        return {"a": a, "rel_a": rel, "lattice": t, "n": n}

    def describe(self) -> dict[str, Any]:
        return {"mechanism": "discrete_laplace", "scale": str(self.scale), "sensitivity": self.sensitivity}


@dataclass(frozen=True)
class DiscreteGaussian(_AtomPLDMechanism):
    """Discrete Gaussian noise on the integers, ``P(x) ∝ exp(-x²/(2σ²))``, integer sensitivity
    Δ.  Losses are ``Δ(Δ - 2x)/(2σ²)``.  Masses are computed from the exact σ² (exponents
    rounded once); the far tails (A-mass at most about the ``tail`` option) are charged to the
    infinity bucket."""

    sigma: Any
    sensitivity: int = 1
    _side_free = True  # masses from the exact σ², the same for both bounds

    def __post_init__(self):
        object.__setattr__(self, "sigma", parse_positive(self.sigma, name="sigma"))
        object.__setattr__(self, "sensitivity", parse_positive_int(self.sensitivity, name="sensitivity"))

    def anchor(self) -> float | None:
        return float(Fraction(self.sensitivity) / (2 * self.sigma**2))

    def loss_scale(self) -> Fraction | None:
        # |Δ(Δ - 2x)| / (2σ²) for the kept |x| <= ~40σ + Δ + 1 (see _atoms)
        d = self.sensitivity
        return d * (3 * d + 2 + 80 * self.sigma + 80) / (2 * self.sigma**2)

    def loss_moments(self, tail: float) -> tuple[float, float]:
        # loss Δ(Δ - 2x)/(2σ²) with E[x] = 0 and Var[x] <= σ² under A
        mu = float(self.sensitivity / self.sigma)
        return mu * mu / 2, mu

    def work_items(self, tail: float) -> int:
        sigma = math.sqrt(float(self.sigma**2))
        z = max(-float(special.ndtri(max(tail, 1e-300))), 1.0) + 1.0
        reach = math.ceil(z * sigma) + self.sensitivity + 1
        wide = 2 * (reach + 40 * math.ceil(sigma) + 40) + 1
        return wide + 2 * reach + self.sensitivity + 1

    def _atoms(self, reverse: bool, tail: float = 0.0, side: str = "upper") -> dict[str, Any]:
        s2 = self.sigma**2
        delta = self.sensitivity
        sigma = math.sqrt(float(s2))
        # atoms kept: |x| <= reach; the rest (A-mass <= tail_bound) is charged to the infinity
        # bucket (upper bound) and dropped (lower bound)
        z = max(-float(special.ndtri(max(tail, 1e-300))), 1.0) + 1.0
        reach = int(math.ceil(z * sigma)) + delta + 1
        xs = np.arange(-reach, reach + delta + 1, dtype=np.int64)
        inv = 1.0 / (2.0 * float(s2))  # relative error <= 2u
        expo_a = -(xs.astype(float) ** 2) * inv
        expo_b = -((xs - delta).astype(float) ** 2) * inv
        # log of the normaliser Z = sum_x exp(-x^2/(2 s2)): the kept terms plus a bound on the rest
        wide = np.arange(-(reach + 40 * int(math.ceil(sigma)) + 40), reach + 40 * int(math.ceil(sigma)) + 41)
        ew = -(wide.astype(float) ** 2) * inv
        zmax = ew.max()
        # numpy's pairwise sum of these positive terms: relative error <= (log2 n + 24) u (blocks
        # of 128 summed 8-way, then a binary tree); math.fsum took 2 s at 3e6 terms
        log_z = zmax + math.log(float(np.exp(ew - zmax).sum()))
        rel_lz = (8 * U * (1 + abs(log_z)) + 4 * U * math.log2(wide.size)
                  + (math.log2(wide.size) + 24) * U + 1e-300)
        log_a = expo_a - log_z
        log_b = expo_b - log_z
        a = np.exp(log_a)
        rel_a = 4 * U * (1 + np.abs(expo_a)) + rel_lz + ELEMENTARY_ULPS * U * (1 + np.abs(log_a))
        rel_log_b = 4 * U * (1 + np.abs(expo_b)) + rel_lz
        # A-mass outside the kept range: 2 * sum_{x > reach-1} e^{-x^2/(2 s2)} / Z (geometric bound)
        x0 = reach - delta - 1
        outside = 2 * math.exp(-x0 * x0 * inv - log_z) / -math.expm1(-2 * x0 * inv)
        outside = min(1.0, outside * (1 + 1e-9) + 1e-300)
        if reverse:
            a, log_b = np.exp(log_b), log_a
            rel_a, rel_log_b = rel_log_b + ELEMENTARY_ULPS * U * (1 + np.abs(log_b)), rel_a
        return {"a": a, "rel_a": rel_a, "log_b": log_b, "rel_log_b": rel_log_b, "top_a": outside}

    def describe(self) -> dict[str, Any]:
        return {"mechanism": "discrete_gaussian", "sigma": str(self.sigma), "sensitivity": self.sensitivity}


@dataclass(frozen=True)
class FinitePair(_AtomPLDMechanism):
    """An arbitrary pair of distributions on a finite set: ``p[j] = P_A(j)``, ``q[j] = P_B(j)``.

    Entries may be floats, ints, Fractions or strings (parsed exactly, then rounded once); each
    of ``p`` and ``q`` must be non-negative and sum to 1 (within 1e-9).  Events with
    ``q[j] == 0 < p[j]`` are distinguishing (infinite loss).  Both directions are analysed unless
    ``q`` is ``p`` reversed.
    """

    p: tuple
    q: tuple
    _side_free = True

    def __post_init__(self):
        p = tuple(to_fraction(v, name="p") for v in self.p)
        q = tuple(to_fraction(v, name="q") for v in self.q)
        if len(p) != len(q) or not p:
            raise InvalidParameter("p and q must be non-empty and of the same length")
        for name, vec in (("p", p), ("q", q)):
            if any(v < 0 for v in vec):
                raise InvalidParameter(f"{name} has a negative entry")
            if abs(sum(vec) - 1) > Fraction(1, 10**9):
                raise InvalidParameter(f"{name} must sum to 1, sums to {float(sum(vec))!r}")
        object.__setattr__(self, "p", p)
        object.__setattr__(self, "q", q)

    def work_items(self, tail: float) -> int:
        return len(self.p)

    @property
    def symmetric(self) -> bool:  # type: ignore[override]
        return self.p == self.q[::-1]

    def _atoms(self, reverse: bool, tail: float = 0.0, side: str = "upper") -> dict[str, Any]:
        p = np.array([float(v) for v in self.p])
        q = np.array([float(v) for v in self.q])
        if reverse:
            p, q = q, p
        with np.errstate(divide="ignore"):
            log_b = np.log(q)
        return {
            "a": p,
            "rel_a": 2 * U,
            "log_b": log_b,
            "rel_log_b": ELEMENTARY_ULPS * U * (1 + np.abs(np.where(np.isfinite(log_b), log_b, 0.0))),
        }

    def describe(self) -> dict[str, Any]:
        return {"mechanism": "finite_pair", "p": [str(v) for v in self.p], "q": [str(v) for v in self.q]}


#: Mechanism kinds defined in other modules of the package (``describe()["mechanism"]`` ->
#: a builder from the other fields), registered there at import time (``odp.buckets`` imports
#: them all; e.g. :mod:`odp.buckets.subsampled`'s ``poisson_gaussian``).
EXTRA_KINDS: dict[str, Callable[[dict[str, Any]], PLDMechanism]] = {}


def mechanism_from_dict(spec: dict[str, Any]) -> PLDMechanism:
    """Inverse of ``describe()``: build a mechanism from its JSON description."""
    spec = dict(spec)
    kind = spec.pop("mechanism", None)
    classes = {
        "gaussian": Gaussian,
        "laplace": Laplace,
        "randomized_response": PLDRandomizedResponse,
        "approximate_dp": ApproximateDP,
        "discrete_laplace": DiscreteLaplace,
        "discrete_gaussian": DiscreteGaussian,
        "finite_pair": FinitePair,
    }
    if kind in EXTRA_KINDS:
        return EXTRA_KINDS[kind](spec)
    if kind not in classes:
        known = [*classes, *EXTRA_KINDS]
        raise InvalidParameter(f"unknown mechanism {kind!r}; known: {', '.join(known)}")
    if kind == "finite_pair":
        return FinitePair(tuple(spec["p"]), tuple(spec["q"]))
    return classes[kind](**spec)


def as_sequence(mechanisms: Sequence[Any]) -> list[tuple[PLDMechanism, int]]:
    """Normalise ``[mech, (mech, count), ...]`` into ``[(mech, count), ...]``."""
    out: list[tuple[PLDMechanism, int]] = []
    for item in mechanisms:
        if isinstance(item, PLDMechanism):
            out.append((item, 1))
        elif isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], PLDMechanism):
            out.append((item[0], parse_positive_int(item[1], name="count")))
        else:
            raise InvalidParameter(
                f"expected a PLDMechanism or a (PLDMechanism, count) pair, got {item!r}"
            )
    return out


"""Poisson-subsampled Gaussian and Laplace mechanisms for privacy buckets (DP-SGD accounting).

**The mechanism.**  Each run includes every record independently with probability ``q`` (Poisson
sampling) and releases a sum of the sampled records' clipped contributions (sensitivity Δ) plus
Gaussian (or Laplace) noise.  Neighbouring datasets differ by **adding or removing** one record
(:attr:`odp.Neighbours.ADD_REMOVE`: the two directions below are its two halves; an accountant of
replace-one rounds takes such a guarantee only converted, :class:`odp.composition.
ReplaceOneComposition`).

**The pairs.**  Write ``Q0`` for the base noise and ``A0`` for the base noise shifted by Δ (the
output distribution with the differing record in the sample), and ``P = (1-q) Q0 + q A0``:

* *remove* (the record is in the first dataset): the pair ``(P, Q0)``;
* *add* (the record is in the second one): the pair ``(Q0, P)``.

These are the dominating pairs of Poisson subsampling (Zhu, Dong & Wang, "Optimal accounting
of differential privacy via characteristic function", AISTATS 2022, their section on
subsampling; Koskela, Jälkö & Honkela, AISTATS 2020, for the subsampled Gaussian).  In one
paragraph: for a fixed pair D, D' = D \\ {x}, the output on D is the mixture over the subsample S
of D' of ``(1-q) N(f(S), σ²) + q N(f(S) + f(x), σ²)`` and the output on D' the mixture of
``N(f(S), σ²)``; the hockey-stick divergence is jointly convex, so it is at most that of one
component, which by translation and rotation is ``((1-q) N(0,σ²) + q N(v,σ²), N(0,σ²))`` with
``|v| <= Δ``, and a larger ``|v|`` dominates (the kernel ``y -> (|v|/Δ) y + sqrt(1 - (|v|/Δ)²) Z``
maps the Δ-pair onto the ``v``-pair).  The pair is attained (all other records contribute 0, x
contributes Δ), so it is *tight*.

**The Laplace pair** (a scalar release, ``|f(x)| <= Δ``, noise ``Lap(b)``).  Rotation does not
apply; a one-dimensional argument replaces it.  Joint convexity and translation reduce a fixed
pair D, D' as above to ``(P_v, Q0)`` (remove) or ``(Q0, P_v)`` (add) with ``Q0 = Lap(0, b)``,
``A_v = Lap(v, b)``, ``P_v = (1-q) Q0 + q A_v`` and ``|v| <= Δ``; the reflection ``y -> -y``
(a bijection, so it changes no divergence) makes ``v >= 0``.  It remains to show that for every
``γ >= 0`` both ``H_γ(P_v ‖ Q0)`` and ``H_γ(Q0 ‖ P_v)`` are non-decreasing in ``v`` on
``[0, Δ]`` (then ``(P_Δ, Q0)`` and ``(Q0, P_Δ)`` dominate, for all γ as dominating pairs require).
With ``H_γ(P ‖ Q) = sup_E (P(E) - γ Q(E))`` over events E:

* ``H_γ(P_v ‖ Q0) = sup_E (q A_v(E) - (γ - 1 + q) Q0(E))``, which is ``q H_{γ'}(A_v ‖ Q0)``
  with ``γ' = (γ - 1 + q)/q`` when ``γ' >= 0`` and the constant ``1 - γ`` (E = everything)
  otherwise;
* ``H_γ(Q0 ‖ P_v) = sup_E (c Q0(E) - γ q A_v(E))`` with ``c = 1 - γ(1-q)``: ``0`` (E empty)
  when ``c <= 0``, else ``c H_{γq/c}(Q0 ‖ A_v)``, and ``H(Q0 ‖ A_v) = H(A_v ‖ Q0)`` by the
  reflection ``y -> v - y``, which swaps ``Lap(0, b)`` and ``Lap(v, b)``.

So both reduce to the *shift-monotonicity of the scalar Laplace pair*: for every ``γ >= 0``,
``v -> H_γ(Lap(v, b) ‖ Lap(0, b))`` is non-decreasing on ``v >= 0``.  Proof: the log-likelihood
ratio ``(|y| - |y - v|)/b`` is non-decreasing in ``y``, so the optimal event
``{y : a_v(y) > γ q0(y)}`` is a half-line ``(t, ∞)`` (or empty, or everything), and
``H_γ(Lap(v) ‖ Lap(0)) = sup_t (S(t - v) - γ S(t))`` over ``t in [-∞, ∞]``, with ``S`` the
survival function of ``Lap(0, b)``.  For each fixed ``t``, ``S(t - v)`` does not decrease as
``v`` grows, so neither does the supremum.  The same monotonicity (in ``v/b``) justifies
rounding ``ε0 = Δ/b`` up for the upper bound.  The pair is attained as for the Gaussian.  (This
covers a scalar release; a vector with per-coordinate Laplace noise and L1 sensitivity Δ is not
covered by this argument.)

**Composition.**  For a fixed ordered pair of neighbouring datasets every one of the T runs is
in the same direction (remove, or add), and dominating pairs compose under adaptive
composition (Zhu, Dong & Wang 2022, composition of dominating pairs).  So the T-fold
composition is dominated by ``(P^T, Q0^T)`` for removal and ``(Q0^T, P^T)`` for addition; the
add-or-remove relation is the union of the two, and its tight δ(ε) is the pointwise **maximum**
of the two curves.  :class:`~odp.buckets.accountant.PrivacyBucketsAccountant` composes both
directions ("A ‖ B" and "B ‖ A") separately and reports the worse at every query, which is
exactly that maximum -- neither direction dominates the other at every ε, so composing "the
worse one" alone would not be sound; mixed directions never occur for a fixed pair of datasets.

**Buckets** (Meiser & Mohammadi, CCS 2018, §3-4: the paper's method applied to this pair).  With
``r = ln(A0/Q0)`` the base privacy loss, the remove loss is ``L = φ(r) = ln(1 - q + q e^r)`` and
the add loss is ``-φ(r)``; φ is increasing, so a bucket ``((i-1)h, ih]`` is an interval of ``r``
with end points ``g(l) = ln((e^l - (1-q))/q)``, and its masses are CDF differences of the base
noise (normal CDFs for the Gaussian, exponentials for the Laplace).  The error-correction term
(scaled B-mass minus A-mass) is computed without cancellation: for the Gaussian by Gauss-
Legendre quadrature of a non-negative smooth integrand with a rigorous remainder bound
(Cramér's inequality for the derivatives of the normal density), for the Laplace in closed
form.  Every float that enters a bound carries an error bound:

* ``q`` and ``Δ/σ`` (``Δ/b``) are rounded toward more leakage for the upper bound and toward less
  for the lower one (a larger ``q`` dominates: keep the sample with probability ``q/q'``, else
  redraw from ``Q0``; a larger ``Δ/σ`` dominates by the kernel above);
* a bucket end point ``g(l)`` is computed with an error bound ``dt``; the mass of the sliver
  between the computed and the true end point is charged to the bucket's error bound;
* where ``e^l - (1-q)`` cannot be told from 0 (a grid point within rounding of ``ln(1-q)``),
  the end point is moved in the pessimistic direction (events join the bucket *above* them) and
  the few that then lie below their bucket by at most a tiny ``η`` are treated as raised to its
  bottom: that only makes the pair more distinguishable, and it changes the bucket's
  error-correction term by at most ``a e^{h+η} η``, which is added to its error bound;
* a bucket whose mass cannot be bounded relatively (its sliver errors comparable to its mass) is
  sent to the infinity bucket in the upper pair and dropped from the lower one (dropping events
  only lowers the lower bound's hockey-stick sum);
* remove losses of the Gaussian pair above :data:`GAUSS_LOSS_CAP` (600; ``e^l`` is formed in
  double precision) are not bucketed: their A-mass goes to the infinity bucket (upper pair) and
  is dropped (lower pair), as for any tail cut off the window.  For a mechanism with much mass
  there (e.g. q = 0.3, σ = 0.03, whose true ε at δ = 1e-5 is 686.34) the upper ε is infinite below
  that mass; a Poisson-subsampled Laplace with ``Δ/b > 700`` (:data:`LAPLACE_MAX_E0`) is refused
  with :class:`~odp.errors.InvalidParameter`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
from scipy import special

from ..budget import to_fraction
from ..errors import InvalidParameter
from ..floats import float_down, float_up
from ._numerics import CRAMER_K, ELEMENTARY_ULPS, LOG_NDTR_ULPS, U, normal_interval_log
from .cells import Cells
from .mechanisms import EXTRA_KINDS, Gaussian, Laplace, PLDMechanism

__all__ = ["PoissonSubsampled", "poisson_gaussian", "poisson_laplace"]

EU = ELEMENTARY_ULPS * U

#: An end point ``e^l - (1-q)`` is trusted when it exceeds this many times its error bound
#: (then its logarithm has a relative error below about 1e-6); otherwise it is moved (see the
#: module docstring).
GUARD = 2.0**20

#: A bucket whose mass error bound exceeds this share of its mass is not kept (module docstring).
MAX_REL_MASS_ERROR = 0.25

_SQRT_2PI = math.sqrt(2 * math.pi)
_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


def _round(x: Fraction, side: str) -> float:
    return float_up(x) if side == "upper" else float_down(x)


@dataclass(frozen=True)
class PoissonSubsampled(PLDMechanism):
    """A Gaussian or Laplace mechanism run on a Poisson subsample (rate ``sampling_rate``),
    under add/remove neighbours; see the module docstring.

    ``PoissonSubsampled(Gaussian(sigma=1.1), sampling_rate="0.01")`` is one step of DP-SGD with
    noise multiplier 1.1 and sampling rate 1 % (sensitivity = the clipping norm, default 1).
    The direction ``reverse=False`` is *remove* ``(P, Q0)``, ``reverse=True`` is *add*
    ``(Q0, P)``; the accountant takes the worse at every query.  ``sampling_rate = 1`` is the
    base mechanism itself.

    Poisson sampling means every record is included independently with probability q, so the
    batch size varies.  Shuffling the data and cutting it into fixed-size batches is *not*
    Poisson sampling, and this analysis does not apply to it.
    """

    mechanism: Any
    sampling_rate: Any

    def __post_init__(self):
        if not isinstance(self.mechanism, (Gaussian, Laplace)):
            raise InvalidParameter(
                "Poisson subsampling is implemented for Gaussian and Laplace mechanisms, not "
                f"{type(self.mechanism).__name__}")
        q = to_fraction(self.sampling_rate, name="sampling_rate")
        if not 0 < q <= 1:
            raise InvalidParameter(f"sampling_rate must be in (0, 1], got {self.sampling_rate!r}")
        object.__setattr__(self, "sampling_rate", q)

    # ------------------------------------------------------------------ parameters
    @property
    def symmetric(self) -> bool:  # type: ignore[override]
        return self.sampling_rate == 1

    @property
    def gaussian(self) -> bool:
        return isinstance(self.mechanism, Gaussian)

    def q(self, side: str = "upper") -> float:
        """The sampling rate as a float, rounded up (``"upper"``) or down."""
        q = _round(self.sampling_rate, side)
        if not q > 0:
            raise InvalidParameter(
                f"sampling_rate {float(self.sampling_rate):.3g} underflows double precision")
        return q

    def base_parameter(self, side: str = "upper") -> float:
        """``Δ/σ`` (Gaussian) or ``Δ/b`` (Laplace) as a float, rounded toward more leakage for
        the upper bound."""
        m = self.mechanism
        return m.mu(side) if isinstance(m, Gaussian) else m.eps0(side)

    def _base_scale(self) -> Fraction:
        scale = self.mechanism.loss_scale()
        assert scale is not None
        return scale

    def anchor(self) -> float | None:
        return self.mechanism.anchor() if self.sampling_rate == 1 else None

    def loss_scale(self) -> Fraction | None:
        # |ln(1 - q + q e^r)| <= min(|r|, q (e^|r| - 1) + q/(1-q)): log1p(x) <= x, -ln(1-q) <= q/(1-q)
        s = self._base_scale()
        q = self.sampling_rate
        if q == 1 or s > 60:
            return s
        grow = Fraction(math.expm1(float(s)) * (1 + 1e-9))
        return min(s, q * grow + q / (1 - q))

    def loss_moments(self, tail: float) -> tuple[float, float]:
        mean, sd = self.mechanism.loss_moments(tail)
        q = float(self.sampling_rate)
        if q >= 1:
            return mean, sd
        # chi^2(P || Q0) = q^2 chi^2(A0 || Q0); chi^2 <= e^{mu^2} - 1 (Gaussian), e^{eps0} - 1
        x = self.base_parameter()
        chi = math.expm1(min(x * x if self.gaussian else x, 700.0))
        chi_q = q * q * chi
        return min(mean, math.log1p(chi_q)), min(sd, 2 * math.sqrt(chi_q) + q)

    def loss_range(self, reverse: bool, tail: float) -> tuple[float, float]:
        if self.q() == 1.0:
            return self.mechanism.loss_range(reverse, tail)
        lo, hi = _range(self.gaussian, self.q(), self.base_parameter(), tail)
        return (-hi, -lo) if reverse else (lo, hi)

    # ------------------------------------------------------------------ buckets
    def cells(self, h: float, reverse: bool, tail: float, side: str = "upper") -> Cells:
        q = self.q(side)
        if q == 1.0:
            return self.mechanism.cells(h, reverse, tail, side)
        x = self.base_parameter(side)
        if self.gaussian:
            parts = _gauss_add(h, tail, q, x) if reverse else _gauss_remove(h, tail, q, x)
        else:
            parts = _laplace_add(h, q, x) if reverse else _laplace_remove(h, q, x)
        return _finish(parts, side)

    def describe(self) -> dict[str, Any]:
        base = self.mechanism.describe()
        kind = base.pop("mechanism")
        return {"mechanism": f"poisson_{kind}", "sampling_rate": str(self.sampling_rate), **base}


def poisson_gaussian(sigma: Any, sampling_rate: Any, sensitivity: Any = 1) -> PoissonSubsampled:
    """``PoissonSubsampled(Gaussian(sigma, sensitivity), sampling_rate)``: one DP-SGD step."""
    return PoissonSubsampled(Gaussian(sigma, sensitivity), sampling_rate)


def poisson_laplace(scale: Any, sampling_rate: Any, sensitivity: Any = 1) -> PoissonSubsampled:
    """``PoissonSubsampled(Laplace(scale, sensitivity), sampling_rate)``."""
    return PoissonSubsampled(Laplace(scale, sensitivity), sampling_rate)


def _from_fields(kind: str, base: type) -> Any:  # Any: a builder for EXTRA_KINDS
    def build(fields: dict[str, Any]) -> PLDMechanism:
        fields = dict(fields)
        if "sampling_rate" not in fields:
            raise InvalidParameter(f"{kind} needs sampling_rate (the Poisson sampling rate q)")
        rate = fields.pop("sampling_rate")
        return PoissonSubsampled(base(**fields), rate)
    return build


EXTRA_KINDS["poisson_gaussian"] = _from_fields("poisson_gaussian", Gaussian)
EXTRA_KINDS["poisson_laplace"] = _from_fields("poisson_laplace", Laplace)


# --------------------------------------------------------------------------- loss range


def _phi(r: float, q: float) -> float:
    """``ln(1 - q + q e^r)`` (the remove loss of base loss ``r``); for ``r > 700``, where
    ``e^r`` leaves the float range, ``r + ln q + ln(1 + (1-q) e^{-r}/q)`` (the same number)."""
    if r > 700.0:
        return r + math.log(q) + math.log1p((1.0 - q) / q * math.exp(-r))
    return math.log1p(q * math.expm1(r))


def _phi_err(r: float, q: float) -> float:
    """Absolute error bound of :func:`_phi` (computed in floats): ``expm1`` and the product
    have relative error ``EU + U``; ``log1p`` turns a relative error ``ρ`` of ``x`` into
    ``ρ |x| / (1 + x)``, plus its own rounding."""
    x = q * math.expm1(r)
    value = math.log1p(x)
    return ((EU + 2 * U) * abs(x) / (1 + x) + EU * abs(value)) * (1 + 1e-6) + 1e-300


#: The Gaussian pair's remove losses are bucketed up to this loss; the A-mass above it goes to
#: the infinity bucket of the upper pair and is dropped from the lower pair (both sound, module
#: docstring).  The bucket end points are formed as ``e^l - (1-q)`` in double precision, which
#: overflows above ``l ≈ 709``; the grid's last top is also kept at most :data:`MAX_EDGE`.
GAUSS_LOSS_CAP = 600.0
MAX_EDGE = 705.0

#: The largest ``ε0 = Δ/b`` of a Poisson-subsampled Laplace the buckets represent: its atoms sit
#: at base losses ``±ε0`` and ``e^{ε0}`` is formed in double precision.
LAPLACE_MAX_E0 = 700.0


def _range(gaussian: bool, q: float, x: float, tail: float) -> tuple[float, float]:
    """The remove-direction loss range: ``[ln(1-q), min(φ(r_top), GAUSS_LOSS_CAP)]`` (Gaussian;
    the A-mass above ``φ(r_top)`` is at most ``tail``, the mass above the cap goes to the
    infinity bucket) or ``[φ(-ε0), φ(ε0)]`` (Laplace, ``ε0 <= LAPLACE_MAX_E0``)."""
    if gaussian:
        m = x * x / 2
        zt = -float(special.ndtri(tail))
        return math.log1p(-q), min(_phi(x * (x + zt) - m, q), GAUSS_LOSS_CAP)
    if x > LAPLACE_MAX_E0:
        raise InvalidParameter(
            f"privacy buckets represent a Poisson-subsampled Laplace only up to sensitivity/scale "
            f"= {LAPLACE_MAX_E0:g} (e^(sensitivity/scale) must be a finite double), got "
            f"{x:.3g} (its pure-DP bound ln(1 + q(e^(sensitivity/scale) - 1)) is about "
            f"{_phi(x, q):.4g})")
    return _phi(-x, q), _phi(x, q)


# --------------------------------------------------------------------------- end points


def _edges(l: np.ndarray, q: float):
    """End points ``t = g(l) = ln((e^l - (1-q))/q)`` in base-loss space for exact grid losses
    ``l``: returns ``s = e^l - (1-q)`` (computed as ``expm1(l) + q``), its error bound, ``t``
    (``-inf`` where ``s`` is not trusted), ``dt`` and the mask of untrusted points (``s <=
    GUARD * err_s``)."""
    em = np.expm1(l)
    s = em + q
    err_s = (EU * np.abs(em) + U * np.abs(s)) * (1 + 4 * U)
    bad = ~(s > GUARD * err_s)
    ls = np.log(np.where(bad, 1.0, s))
    lq = math.log(q)
    t = np.where(bad, -np.inf, ls - lq)
    with np.errstate(invalid="ignore", divide="ignore"):
        dt = err_s / (s - err_s) * (1 + 4 * U) + EU * (np.abs(ls) + abs(lq)) + U * np.abs(t)
    dt = np.where(bad, 0.0, dt * (1 + 4 * U))
    return s, err_s, t, dt, bad


def _moved_edge(err_s: np.ndarray, s: np.ndarray, q: float) -> tuple[float, float, float]:
    """A trusted end point above every untrusted one: ``s' >= GUARD * err_s`` and ``>= s``
    (a float, exact), with ``t' = ln(s'/q)`` and its rounding bound."""
    s_new = max(float(np.max(GUARD * err_s)), float(np.max(s)), 1e-300) * (1 + 1e-9)
    t_new = math.log(s_new) - math.log(q)
    dt_new = (EU * (abs(math.log(s_new)) + abs(math.log(q))) + U * abs(t_new)) * (1 + 4 * U)
    return s_new, t_new, dt_new


def _trusted_edges(edges: tuple, q: float, *, h: float, top_index: int, loss_bound: float
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """The end points of the add direction made usable (in place on ``t``, ``dt`` of
    ``edges = _edges(...)``): untrusted end points other than the last are moved up to one
    trusted point (:func:`_moved_edge`), and the last one, if untrusted, becomes ``-inf`` (the
    top bucket, index ``top_index``, gathers every loss above).  Returns ``s_e`` (the end points'
    ``s`` after moving), ``d_e = s_e - s`` (``>= 0``), the mask of moved points, and ``η``, the
    bound on how far below ``(top_index − 1)·h`` the top bucket may now reach (``loss_bound``
    bounds ``|loss|`` there, for the rounding term)."""
    s, err_s, t, dt, bad = edges
    first_bad = int(np.argmax(bad)) if bad.any() else bad.size
    assert bad[first_bad:].all(), "untrusted end points must be a suffix"
    s_e = s.copy()
    d_e = np.zeros_like(s)
    moved = np.zeros(s.size, dtype=bool)
    eta = 0.0
    if first_bad < bad.size - 1:  # untrusted E(i) other than the last: move them up
        sl = slice(first_bad, bad.size - 1)
        s_new, t_new, dt_new = _moved_edge(err_s[sl], s[sl], q)
        t[sl], dt[sl] = t_new, dt_new
        s_e[sl] = s_new
        d_e[sl] = s_new - s[sl]
        moved[sl] = True
        # the top bucket gathers r < t': losses >= -φ(t') >= (top_index-1)h - η
        phi_t = math.log1p(s_new * (1 + 2 * dt_new) - q)
        eta = (max(0.0, (top_index - 1) * h + phi_t)
               + 8 * U * (abs(loss_bound) + abs((top_index - 1) * h)))
    if bad[-1]:
        t[-1] = -np.inf
        dt[-1] = 0.0
    return s_e, d_e, moved, eta


def _phi_sup(z: np.ndarray, d: np.ndarray) -> np.ndarray:
    """``sup φ`` (standard normal density) over ``[z - d, z + d]`` (``0`` for infinite ``z``)."""
    z = np.asarray(z, dtype=float)
    near = np.maximum(np.abs(z) - d, 0.0)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        out = np.exp(-0.5 * near * near - _LOG_SQRT_2PI)
    return np.where(np.isfinite(z), out, 0.0)


# --------------------------------------------------------------------------- quadrature

_GL_NODES = 8
#: Fewer nodes when every panel is at most :data:`_NARROW` wide (fine grids: the remainder,
#: ``∝ p^{2n+1}``, is still far below the rounding bound there, and half the nodes are evaluated).
_GL_FEW = 4
_NARROW = 0.05


def _gl(nodes: int) -> tuple[np.ndarray, np.ndarray, float]:
    """Gauss–Legendre nodes, weights and remainder constant ``(n!)^4 / ((2n+1) ((2n)!)^3)``."""
    x, w = np.polynomial.legendre.leggauss(nodes)
    return x, w, math.factorial(nodes) ** 4 / ((2 * nodes + 1) * math.factorial(2 * nodes) ** 3)


_GL = {n: _gl(n) for n in (_GL_FEW, _GL_NODES)}
_GL_X, _GL_W, _GL_C = _GL[_GL_NODES]
#: Panels of at most this width (in standard-normal units).
_PANEL = 0.5


def _leibniz(mu: float, nodes: int = _GL_NODES) -> tuple[float, float]:
    """``(sqrt((2n)!), Σ_{j=1}^{2n} C(2n, j) μ^j sqrt((2n-j)!))`` for the derivative bound."""
    n2 = 2 * nodes
    a = math.sqrt(math.factorial(n2))
    b = sum(math.comb(n2, j) * mu**j * math.sqrt(math.factorial(n2 - j)) for j in range(1, n2 + 1))
    return a, b * (1 + 1e-12)


def excess_integral(z0, w, dz0, dw, *, mu: float, kind: str):
    """``I = ∫_0^w φ(z0 - v) f(v) dv`` with ``f(v) = 1 - e^{-μv}`` (``kind="down"``) or
    ``e^{μv} - 1`` (``"up"``), for arrays of anchors ``z0`` and widths ``w >= 0``, and a bound on
    ``|I - I*|`` where ``I*`` is the same integral at the true anchor and width (within ``dz0``
    and ``dw`` of the given ones).

    Composite 8-point Gauss–Legendre on panels of width at most 0.5 (4-point when every width
    is at most :data:`_NARROW`, with the same rigorous remainder bound for n = 4); the integrand is
    non-negative, so the sum has no cancellation.  The remainder of each panel is bounded by
    ``c_n p^{2n+1} max |F^{(2n)}|`` with Leibniz's rule, ``|d^j f| <= μ^j e^{∓μv}`` and the
    smaller of two bounds on the derivatives of φ over the panel (``y = z0 − v`` in
    ``[y_lo, y_hi]``, ``y_near`` its point nearest 0, ``Y = max |y|``):

    * Cramér's inequality ``|φ^(k)(y)| <= K √(k!) e^{−y²/4}/√(2π)`` (as
      :func:`odp.buckets._numerics.gaussian_excess`);
    * ``|φ^(k)(y)| = |He_k(y)| φ(y) <= (Y + √k)^k φ(y_near)``: ``He_k(y) = Σ_m (−1)^m C(k,2m)
      (2m−1)!! y^{k−2m}`` and ``(2m−1)!! <= k^m``, so ``|He_k(y)|`` is at most the even terms
      of ``(|y| + √k)^k``.  With Leibniz, ``Σ_{j>=1} C(2n,j) μ^j (Y+√(2n))^{2n−j} =
      (Y+√(2n)+μ)^{2n} − (Y+√(2n))^{2n} <= 2n μ (Y+√(2n)+μ)^{2n−1}``.  Far in the tail (the
      anchors of very large losses, e.g. σ = 0.035) this keeps the remainder relative to the
      integral's own ``e^{−y²/2}``, where Cramér's ``e^{−y²/4}`` would exceed the integral by
      a factor ``e^{y²/4}``.
    """
    z0 = np.asarray(z0, dtype=float)
    w = np.asarray(w, dtype=float)
    dz0 = np.asarray(dz0, dtype=float)
    dw = np.asarray(dw, dtype=float)
    n = z0.size
    if n == 0:
        return np.zeros(0), np.zeros(0)
    panels = np.maximum(1, np.ceil(w / _PANEL)).astype(np.int64)
    nodes = _GL_FEW if float(np.max(w)) <= _NARROW else _GL_NODES
    gl_x, gl_w, gl_c = _GL[nodes]
    owner = np.repeat(np.arange(n), panels)
    start = np.concatenate(([0], np.cumsum(panels)[:-1]))
    k = np.arange(owner.size) - start[owner]  # panel number within its bucket
    p = w[owner] / panels[owner]
    vs = k * p
    zz = z0[owner]
    v = vs[:, None] + p[:, None] * (1.0 + gl_x) / 2.0
    y = zz[:, None] - v
    with np.errstate(under="ignore", over="ignore"):
        dens = np.exp(-0.5 * y * y - _LOG_SQRT_2PI)
        f = -np.expm1(-mu * v) if kind == "down" else np.expm1(mu * v)
        panel_sum = (dens * f * (gl_w * p[:, None] / 2.0)).sum(axis=1)
    total = np.bincount(owner, weights=panel_sum, minlength=n)
    # remainder: c_n p^(2n+1) K/sqrt(2 pi) e^{-y0^2/4} (F0 sqrt((2n)!) + E Σ ...)
    a_coef, b_coef = _leibniz(mu, nodes)
    hi_v = vs + p
    y_lo, y_hi = zz - hi_v, zz - vs
    y_near = np.clip(0.0, y_lo, y_hi)
    with np.errstate(under="ignore", over="ignore"):
        if kind == "down":
            f0 = -np.expm1(-mu * hi_v)
            e = np.exp(-mu * vs)
        else:
            f0 = np.expm1(mu * hi_v)
            e = np.exp(mu * hi_v)
        cramer = CRAMER_K / _SQRT_2PI * np.exp(-y_near * y_near / 4) * (f0 * a_coef + e * b_coef)
        # far in the tail Cramér's e^{-y²/4} is far above the integrand's e^{-y²/2}: use
        # |φ^(k)(y)| = |He_k(y)| φ(y) <= (|y| + √k)^k φ(y) there (see the docstring)
        big_y = np.maximum(np.abs(y_lo), np.abs(y_hi)) + math.sqrt(2 * nodes)
        hermite = (np.exp(-0.5 * y_near * y_near * (1 - 1e-12)) / _SQRT_2PI
                   * (f0 * big_y ** (2 * nodes)
                      + e * (2 * nodes) * mu * (big_y + mu) ** (2 * nodes - 1)))
        trunc = gl_c * p ** (2 * nodes + 1) * np.minimum(cramer, hermite)
    trunc_b = np.bincount(owner, weights=trunc, minlength=n) * (1 + 1e-9)
    # rounding of every node (v, y, φ(y), f(v), the weights) and of the anchor's error
    span = np.abs(z0) + w
    with np.errstate(over="ignore", invalid="ignore"):
        rel = (np.expm1(span * (dz0 + 8 * U * span)) + (6 * U + EU) * (1 + mu * w)
               + 2 * EU + 8 * U * panels + 32 * U * (1 + (span + mu) * np.minimum(w, _PANEL)))
        # width: |dI/dw| = φ(z0 - w) f(w)
        f_w = -np.expm1(-mu * w) if kind == "down" else np.expm1(mu * w)
        width_err = _phi_sup(z0 - w, dw) * f_w * dw
    err = (total * rel + trunc_b + width_err) * (1 + 1e-9)
    return total, err


# --------------------------------------------------------------------------- the pairs


@dataclass
class _Parts:
    """Per-bucket masses and error bounds (absolute) before they become :class:`Cells`."""

    h: float
    first: int
    a: np.ndarray
    err_a: np.ndarray
    excess: np.ndarray
    err_excess: np.ndarray
    top_a: float = 0.0
    bottom_a: float = 0.0
    rel_tails: float = 0.0
    #: A-mass whose bucket could not be determined (sent to the infinity bucket, upper pair)
    lost: float = 0.0


def _finish(p: _Parts, side: str) -> Cells:
    """Relative error bounds, and buckets that cannot be kept (module docstring): a bucket is
    kept when the error bounds of its A-mass and of its scaled B-mass are at most
    :data:`MAX_REL_MASS_ERROR` of them (e.g. not a subnormal mass with a larger absolute
    bound); the others go to the infinity bucket (upper pair) or are dropped (lower pair)."""
    a = np.asarray(p.a, dtype=float)
    err_a = np.asarray(p.err_a, dtype=float)
    exc = np.asarray(p.excess, dtype=float)
    err_exc = np.asarray(p.err_excess, dtype=float)
    bhat = a + np.maximum(exc, 0.0)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        err_b = err_a + err_exc + 2 * U * bhat
        keep = (a > 0) & (err_a <= MAX_REL_MASS_ERROR * a) & (err_b <= MAX_REL_MASS_ERROR * bhat)
    lost = p.lost + float((a[~keep] + err_a[~keep]).sum())
    a = np.where(keep, a, 0.0)
    exc = np.where(keep, exc, 0.0)
    err_exc = np.where(keep, err_exc, 0.0)
    bhat = np.where(keep, bhat, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        rel_a = np.where(keep, err_a / (a - err_a), 0.0) * (1 + 4 * U)
        rel_b = np.where(keep, err_b / (bhat - err_b), 0.0) * (1 + 4 * U) + U
    top_a = p.top_a
    rel_tails = p.rel_tails
    if side == "upper" and lost > 0:  # at infinite loss: pessimistic
        rel_tails = max(rel_tails, 4 * U)
        top_a = top_a + lost * (1 + 1e-9)
    # lower pair: those events are dropped (a subset of the events: still a lower bound)
    return Cells(p.h, p.first, a, bhat, rel_a, rel_b, top_a=top_a, bottom_a=p.bottom_a,
                 rel_tails=rel_tails, excess=exc, err_excess=err_exc)


def _eta_term(a: float, h: float, eta: float) -> float:
    """Change of a bucket's error-correction term when its events lying at most ``eta`` below
    its bottom are raised to it: at most ``a e^{h+η} η``."""
    return a * math.exp(h + eta) * eta * (1 + 1e-9) if eta > 0 else 0.0


def _gauss_remove(h: float, tail: float, q: float, mu: float) -> _Parts:
    """Remove direction (P ‖ Q0), Gaussian base: bucket j holds ``r`` in ``(t_{j-1}, t_j]``."""
    m = mu * mu / 2
    lo, hi = _range(True, q, mu, tail)
    first = math.floor(lo / h) + 1
    last = max(math.ceil(hi / h), first)
    # the last top stays <= MAX_EDGE (first * h <= h <= 700 since first <= 1): mass above it is
    # the A-mass above the last top, which goes to the infinity bucket (top_a below)
    last = min(last, max(first, math.floor(MAX_EDGE / h)))
    while True:
        j = np.arange(first, last + 1, dtype=np.int64)
        s, err_s, t, dt, bad = _edges(j * h, q)
        if not bad[-1]:
            break
        if (last + max(1, last - first + 1)) * h > MAX_EDGE:
            raise InvalidParameter(
                f"privacy buckets cannot place the end points of the Poisson-subsampled Gaussian "
                f"(q={q:.3g}, sensitivity/sigma={mu:.3g}) on a grid of step {h:.3g}")
        last += max(1, (last - first + 1))  # every top untrusted: the range is below rounding
    nb = int(np.argmin(bad)) if bad.any() else 0
    assert not bad[nb:].any(), "untrusted end points must be a prefix"
    # the first bucket takes every r below its top: its losses are above ln(1-q), which is at
    # least (first-1)h - η (ln(1-q) is computed within err_lo)
    err_lo = EU * abs(lo) + 1e-300
    eta = max(0.0, (first - 1) * h - (lo - err_lo)) * (1 + 8 * U)
    if nb:  # merge the untrusted bottom buckets into the first trusted one (module docstring)
        k = nb - 1
        eta = max(eta, max(0.0, float(s[k] + err_s[k])) / (1 - q) * (1 + 8 * U))
        j, s, err_s, t, dt = j[nb:], s[nb:], err_s[nb:], t[nb:], dt[nb:]
        first = int(j[0])
    zq = (t + m) / mu
    za = (t - m) / mu
    dz = dt / mu + 4 * U * (np.abs(t) + m) / mu + 2 * U * np.maximum(np.abs(zq), np.abs(za))
    zq_lo = np.concatenate(([-np.inf], zq[:-1]))
    za_lo = np.concatenate(([-np.inf], za[:-1]))
    dz_lo = np.concatenate(([0.0], dz[:-1]))
    mq, rq, sq = _normal_masses(zq_lo, zq, dz_lo, dz)
    ma, ra, sa = _normal_masses(za_lo, za, dz_lo, dz)
    one_q = 1.0 - q
    a = one_q * mq + q * ma
    err_a = (one_q * mq * (rq + 3 * U) + q * ma * (ra + 2 * U) + U * a
             + one_q * sq + q * sa) * (1 + 4 * U)
    exc = np.zeros_like(a)
    err_exc = np.zeros_like(a)
    if a.size > 1:
        w = zq[1:] - zq[:-1]
        integral, e_int = excess_integral(zq[1:], w, dz[1:], dz[1:] + dz[:-1] + 2 * U * w,
                                         mu=mu, kind="down")
        exc[1:] = s[1:] * integral
        err_exc[1:] = (s[1:] * e_int + integral * err_s[1:] + 2 * U * exc[1:]) * (1 + 4 * U)
    # lowest bucket (r from -inf): e^{l}B - A = s Mq - q Ma
    x0, y0 = float(s[0] * mq[0]), float(q * ma[0])
    exc[0] = x0 - y0
    err_exc[0] = ((x0 * (float(rq[0]) + float(err_s[0] / s[0]) + 3 * U) + y0 * (float(ra[0]) + 2 * U)
                   + U * abs(exc[0])
                   + float(one_q * sq[0] + q * sa[0]) * math.expm1(mu * float(dz[0]))) * (1 + 4 * U)
                  + _eta_term(float(a[0]), h, eta))
    # A-mass above the last top: (1-q) Phi(-zq_last) + q Phi(-za_last)
    top_a, rel_tails = _upper_tail(float(zq[-1]), float(za[-1]), float(dz[-1]), q)
    return _Parts(h, first, a, err_a, exc, err_exc, top_a=top_a, rel_tails=rel_tails)


def _upper_tail(zq: float, za: float, dz: float, q: float) -> tuple[float, float]:
    """``(1-q) P[Z > zq] + q P[Z > za]`` and a relative error bound."""
    lq = float(special.log_ndtr(-zq))
    la = float(special.log_ndtr(-za))
    value = (1 - q) * math.exp(lq) + q * math.exp(la)
    rel = (LOG_NDTR_ULPS * U * max(1.0, abs(lq), abs(la)) + dz * (max(abs(zq), abs(za)) + 1)
           + EU + 4 * U)
    return value, rel * (1 + 1e-9)


def _normal_masses(z_lo, z_hi, d_lo, d_hi):
    """Standard-normal masses of ``(z_lo, z_hi]``, their relative rounding bound and the bound
    on the sliver mass between the computed and the true end points (``d_lo``, ``d_hi``)."""
    log_m, err = normal_interval_log(z_lo, z_hi)
    with np.errstate(under="ignore"):
        mass = np.exp(log_m)
    rel = np.expm1(err + EU * (1 + np.abs(np.where(np.isfinite(log_m), log_m, 0.0))))
    sliver = _phi_sup(z_lo, d_lo) * d_lo + _phi_sup(z_hi, d_hi) * d_hi
    return mass, rel, sliver


def _gauss_add(h: float, tail: float, q: float, mu: float) -> _Parts:
    """Add direction (Q0 ‖ P), Gaussian base: bucket i holds ``r`` in ``[E(i), E(i-1))`` with
    ``E(i) = g(-ih)``; the top bucket's ``E`` is ``-inf``."""
    m = mu * mu / 2
    lo, hi = _range(True, q, mu, tail)  # remove range; the add losses are its negatives
    err_lo = EU * abs(lo) + 1e-300
    i_top = math.ceil((-lo + err_lo) / h)  # i_top * h >= the largest add loss -ln(1-q)
    zt = -float(special.ndtri(tail))
    low = -_phi(mu * zt - m, q)  # Q0-mass of smaller losses <= tail
    first = min(math.floor(low / h) + 1, i_top)
    ie = np.arange(first - 1, i_top + 1, dtype=np.int64)  # E(first-1) .. E(i_top)
    edges = _edges(-ie * h, q)
    s, err_s, t, dt, bad = edges
    assert bad[-1], "E(i_top) must be -inf"
    s_e, d_e, moved, eta = _trusted_edges(edges, q, h=h, top_index=i_top, loss_bound=lo)
    zq = (t + m) / mu
    za = (t - m) / mu
    fin = np.isfinite(t)
    dz = np.where(fin, dt / mu + 4 * U * (np.abs(t) + m) / mu
                  + 2 * U * np.maximum(np.abs(zq), np.abs(za)), 0.0)
    # bucket i = first..i_top: lower end E(i) = index i-first+1, upper end E(i-1) = index i-first
    zq_lo, zq_hi = zq[1:], zq[:-1]
    za_lo, za_hi = za[1:], za[:-1]
    d_lo, d_hi = dz[1:], dz[:-1]
    mq, rq, sq = _normal_masses(zq_lo, zq_hi, d_lo, d_hi)
    ma, ra, sa = _normal_masses(za_lo, za_hi, d_lo, d_hi)
    a = mq
    err_a = (mq * (rq + U) + sq) * (1 + 4 * U)
    i = np.arange(first, i_top + 1, dtype=np.int64)
    eih = np.exp(i * h)
    exc = np.zeros_like(a)
    err_exc = np.zeros_like(a)
    # buckets below the top: e^{ih} (s_e I + d_e Mq), I = ∫ φ(zq_lo + v) expm1(μ v) dv
    if a.size > 1:
        body = slice(0, a.size - 1)
        zl, zh = zq_lo[body], zq_hi[body]
        w = zh - zl
        integral, e_int = excess_integral(-zl, w, d_lo[body], d_lo[body] + d_hi[body] + 2 * U * w,
                                          mu=mu, kind="up")
        se, de, es = s_e[1:][body], d_e[1:][body], err_s[1:][body]
        mv = moved[1:][body]
        dt_lo = dt[1:][body]
        mqb = mq[body]
        core = se * integral + de * mqb
        exc[body] = eih[body] * core
        # s_e approximates q e^{t(true end point)}: within err_s; a moved end point t' is exact
        # and q e^{t'} = s'(1 +- 2 dt'), its offset d_e = s' - s then carries err_s + 2 s' dt'
        s_err = np.where(mv, 4 * se * dt_lo, es)
        m_err = np.where(mv, (4 * se * dt_lo + es) * mqb + de * (mqb * (rq[body] + U) + sq[body]),
                         0.0)
        err_exc[body] = eih[body] * (se * e_int + integral * s_err + m_err + 4 * U * core) \
            * (1 + EU + 4 * U)
    # top bucket (E = -inf): (e^{ih}(1-q) - 1) Mq + e^{ih} q Ma
    ih = float(i[-1] * h)
    arg = ih + lo
    c1 = math.expm1(arg)
    err_c1 = math.exp(abs(arg) + err_lo + 4 * U * abs(ih)) * (err_lo + 4 * U * (abs(ih) + abs(lo))) \
        + EU * abs(c1)
    e_top = float(eih[-1])
    x0, y0 = c1 * float(mq[-1]), e_top * q * float(ma[-1])
    exc[-1] = x0 + y0
    err_exc[-1] = ((abs(x0) * (float(rq[-1]) + 2 * U) + err_c1 * float(mq[-1])
                    + y0 * (float(ra[-1]) + EU + 3 * U) + U * abs(exc[-1])
                    + float(sq[-1]) * math.expm1(h + mu * float(dz[-2]) + eta))
                   * (1 + 4 * U) + _eta_term(float(a[-1]), h, eta))
    # Q0-mass of smaller losses: r >= E(first-1)
    zb = float(zq[0])
    lb = float(special.log_ndtr(-zb))
    bottom_a = math.exp(lb)
    rel_tails = (LOG_NDTR_ULPS * U * max(1.0, abs(lb)) + float(dz[0]) * (abs(zb) + 1) + EU) * (1 + 1e-9)
    return _Parts(h, first, a, err_a, exc, err_exc, bottom_a=bottom_a, rel_tails=rel_tails)


# --------------------------------------------------------------------------- Laplace base


def _laplace_pieces(c1: np.ndarray, c2: np.ndarray, dc1: np.ndarray, dc2: np.ndarray, *,
                    e0: float):
    """Q0- and A0-masses of the continuous part of ``r`` on pieces ``(c1, c2)`` inside
    ``(-ε0, ε0)`` (densities ``e^{(-r-ε0)/2}/4`` and ``e^{(r-ε0)/2}/4``) with a relative
    rounding bound, and for each end point (error ``dc``) the sups of both densities within
    ``dc`` of it (so a sliver of width ``dc`` has at most ``dc`` times that mass)."""
    width = np.maximum(c2 - c1, 0.0)
    shrink = -np.expm1(-width / 2)
    with np.errstate(under="ignore", over="ignore"):
        mq = np.exp((-c1 - e0) / 2) * shrink / 2
        ma = np.exp((c2 - e0) / 2) * shrink / 2

        def sup_q(c, dc):
            return np.exp((np.minimum(e0, -(c - dc)) - e0) / 2) / 4

        def sup_a(c, dc):
            return np.exp((np.minimum(e0, c + dc) - e0) / 2) / 4

        dens = {"q1": sup_q(c1, dc1), "a1": sup_a(c1, dc1), "q2": sup_q(c2, dc2),
                "a2": sup_a(c2, dc2)}
    with np.errstate(invalid="ignore", divide="ignore"):
        # width computed with abs error <= 2U(|c1|+|c2|); expm1's relative condition <= 1
        rel_w = np.where(width > 0, 2 * U * (np.abs(c1) + np.abs(c2)) / width, 0.0)
    rel = rel_w + 2 * U * (np.abs(c1) + np.abs(c2) + e0) + 4 * EU + 4 * U
    return mq, ma, rel, dens, width


def _laplace_remove(h: float, q: float, e0: float) -> _Parts:
    """Remove direction (P ‖ Q0), Laplace base: atoms at ``r = ±ε0``, a continuous part between."""
    lo, hi = _range(False, q, e0, 0.0)
    e_lo, e_hi = _phi_err(-e0, q), _phi_err(e0, q)
    j_lo = math.ceil((lo + e_lo) / h)  # bucket of the atom at r = -ε0 (its top is above it)
    j_hi = math.ceil((hi + e_hi) / h)
    first = min(j_lo, math.floor((lo - e_lo) / h) + 1)
    last = max(j_hi, first)
    j = np.arange(first - 1, last + 1, dtype=np.int64)  # tops of buckets first-1 .. last
    s, err_s, t, dt, bad = _edges(j * h, q)
    nb = int(np.argmin(bad)) if not bad.all() else bad.size
    assert not bad[nb:].any(), "untrusted end points must be a prefix"
    eta = 0.0
    if nb:  # untrusted tops: -inf (their buckets merge into the first trusted one)
        k = nb - 1
        eta = max(0.0, float(s[k] + err_s[k])) / (1 - q) * (1 + 8 * U)
    top, dtop, s_top = t[1:], dt[1:], s[1:]
    c1 = np.maximum(t[:-1], -e0)
    c2 = np.minimum(top, e0)
    dc1 = np.where(t[:-1] > -e0, dt[:-1], 0.0)
    dc2 = np.where(top < e0, dtop, 0.0)
    c2 = np.maximum(c2, c1)
    mq, ma, rel, dens, width = _laplace_pieces(c1, c2, dc1, dc2, e0=e0)
    one_q = 1.0 - q
    a = one_q * mq + q * ma
    pd1 = one_q * dens["q1"] + q * dens["a1"]  # P-density near each end point
    pd2 = one_q * dens["q2"] + q * dens["a2"]
    err_a = (a * (rel + 3 * U) + dc1 * pd1 + dc2 * pd2) * (1 + 4 * U)
    # excess of the continuous part, E_Q0[q e^{t_j} - q e^r] = 2q e^{(t_j - ε0)/2}
    # sinh((v1+v2)/4) sinh(width/4) with v = t_j - r (no cancellation).  Errors: its evaluation
    # at the computed end points, and the end points themselves: d/dt_j = s_j Mq (the piece held
    # fixed); moving an end point c adds or removes events of P-density p(c), each changing the
    # term by p(c) |e^{l_j - L(c)} - 1|: at most expm1(dc) at the top, expm1(h + dc) at the
    # bottom (|dL/dr| <= 1).
    fin = np.isfinite(top)
    tt = np.where(fin, top, 0.0)
    v1 = np.where(fin, tt - c2, 0.0)
    v2 = np.where(fin, tt - c1, 0.0)
    with np.errstate(under="ignore", over="ignore", invalid="ignore", divide="ignore"):
        pre = 2 * q * np.exp((tt - e0) / 2)
        exc = np.where(fin & (width > 0), pre * np.sinh((v1 + v2) / 4) * np.sinh(width / 4), 0.0)
        span = np.abs(tt) + np.abs(c1) + np.abs(c2)
        rel_eval = (rel + 2 * U * (np.abs(tt) + e0) + 4 * EU + 8 * U
                    + np.where(width > 0, 3 * U * span * (1 + 4 / np.maximum(v1 + v2, 1e-300)), 0.0))
        s_top = np.where(fin, np.maximum(s_top, 0.0), 0.0)
        edge = dc1 * pd1 * np.expm1(h + dc1 + eta) + dc2 * pd2 * np.expm1(dc2)
        err_exc = (exc * rel_eval + s_top * mq * np.expm1(dtop) * (1 + 4 * U) + edge) * (1 + 4 * U)
    err_exc = np.where(fin, err_exc, 0.0)
    # atoms
    for r0, amass, where, err_l in (
        (e0, one_q * math.exp(-e0) / 2 + q / 2, j_hi, e_hi),
        (-e0, one_q / 2 + q * math.exp(-e0) / 2, j_lo, e_lo),
    ):
        pos = where - first
        loss = _phi(r0, q)
        gap = where * h - loss  # >= -2 err_l (the atom may lie just below the bucket)
        ex = amass * math.expm1(gap)
        a[pos] += amass
        err_a[pos] += amass * (EU + 4 * U) * (1 + e0)
        exc[pos] += ex
        err_exc[pos] += amass * math.exp(abs(gap) + 2 * err_l) * (err_l + 4 * U * abs(where * h)) \
            + abs(ex) * (EU + 8 * U * (1 + e0))
    if nb:
        pos = max(0, nb - 1)
        err_exc[pos] += _eta_term(float(a[pos]), h, eta)
    return _Parts(h, first, a, err_a, exc, err_exc)


def _laplace_add(h: float, q: float, e0: float) -> _Parts:
    """Add direction (Q0 ‖ P), Laplace base: bucket i holds ``r`` in ``[E(i), E(i-1))``."""
    lo, hi = _range(False, q, e0, 0.0)  # remove range [φ(-ε0), φ(ε0)]; add losses negate it
    e_lo, e_hi = _phi_err(-e0, q), _phi_err(e0, q)
    low, top = -hi, -lo
    j_low = math.ceil((low + e_hi) / h)  # bucket of the atom at r = ε0
    j_top = math.ceil((top + e_lo) / h)  # bucket of the atom at r = -ε0
    first = min(j_low, math.floor((low - e_hi) / h) + 1)
    last = max(j_top, first)
    ie = np.arange(first - 1, last + 1, dtype=np.int64)
    edges = _edges(-ie * h, q)
    s, err_s, t, dt, bad = edges
    s_e, d_e, moved, eta = _trusted_edges(edges, q, h=h, top_index=last, loss_bound=top)
    lo_e, hi_e = t[1:], t[:-1]  # bucket i: [E(i), E(i-1))
    c1 = np.maximum(lo_e, -e0)
    c2 = np.maximum(np.minimum(hi_e, e0), c1)
    dc1 = np.where(lo_e > -e0, dt[1:], 0.0)
    dc2 = np.where(hi_e < e0, dt[:-1], 0.0)
    mq, ma, rel, dens, width = _laplace_pieces(c1, c2, dc1, dc2, e0=e0)
    a = mq.copy()
    err_a = (a * (rel + U) + dc1 * dens["q1"] + dc2 * dens["q2"]) * (1 + 4 * U)
    i = np.arange(first, last + 1, dtype=np.int64)
    eih = np.exp(i * h)
    fin = np.isfinite(lo_e)
    te = np.where(fin, lo_e, 0.0)
    u1 = np.where(fin, c1 - te, 0.0)
    u2 = np.where(fin, c2 - te, 0.0)
    se, de, es = s_e[1:], d_e[1:], err_s[1:]
    mv = moved[1:]
    dte = dt[1:]
    # excess e^{ih} (E_Q0[q e^r - q e^{t}] + d Mq), the first term = 2q e^{(t - ε0)/2}
    # sinh((u1+u2)/4) sinh(width/4) with u = r - t; d/dt of it is -s Mq (the piece held fixed);
    # an end point c moved by dc changes it by at most dc Q0-density(c) |e^{ih - L'(c)} - 1|:
    # expm1(dc) at the lower end (the bucket's top loss), expm1(h + dc) at the upper end
    with np.errstate(under="ignore", over="ignore", invalid="ignore", divide="ignore"):
        core = np.where(fin & (width > 0), 2 * q * np.exp((te - e0) / 2) * np.sinh((u1 + u2) / 4)
                        * np.sinh(width / 4), 0.0) + de * mq
        span = np.abs(te) + np.abs(c1) + np.abs(c2)
        rel_eval = (rel + 2 * U * (np.abs(te) + e0) + 4 * EU + 8 * U
                    + np.where(width > 0, 3 * U * span * (1 + 4 / np.maximum(u1 + u2, 1e-300)), 0.0))
        edge = dc1 * dens["q1"] * np.expm1(dc1) + dc2 * dens["q2"] * np.expm1(h + dc2)
        t_err = np.where(mv, (4 * se * dte + es) * mq + de * (mq * rel + dc1 * dens["q1"]
                                                              + dc2 * dens["q2"]),
                         se * mq * np.expm1(dte) * (1 + 4 * U))
        exc = np.where(fin, eih * core, 0.0)
        err_exc = (eih * (core * rel_eval + t_err) * (1 + EU + 4 * U) + edge * (1 + 4 * U))
        err_exc = np.where(fin, err_exc, 0.0)
    if not fin[-1]:  # the top bucket (E = -inf): (e^{ih}(1-q) - 1) Mq + e^{ih} q Ma
        ih = float(i[-1] * h)
        err_lo = EU * abs(math.log1p(-q)) + 1e-300
        arg = ih + math.log1p(-q)
        c = math.expm1(arg)
        err_c = math.exp(abs(arg) + err_lo) * (err_lo + 4 * U * abs(ih)) + EU * abs(c)
        x0, y0 = c * float(mq[-1]), float(eih[-1]) * q * float(ma[-1])
        exc[-1] = x0 + y0
        err_exc[-1] = (abs(x0) * (float(rel[-1]) + 2 * U) + err_c * float(mq[-1])
                       + y0 * (float(rel[-1]) + EU + 3 * U) + U * abs(exc[-1])
                       + float(dc2[-1] * dens["q2"][-1]) * math.expm1(h + float(dc2[-1]) + eta)) \
            * (1 + 4 * U)
    # atoms: Q0-mass e^{-ε0}/2 at r = ε0 (loss -φ(ε0)), 1/2 at r = -ε0 (loss -φ(-ε0))
    for r0, amass, where, err_l in ((e0, math.exp(-e0) / 2, j_low, e_hi),
                                     (-e0, 0.5, j_top, e_lo)):
        pos = where - first
        loss = -_phi(r0, q)
        gap = where * h - loss
        ex = amass * math.expm1(gap)
        a[pos] += amass
        err_a[pos] += amass * (EU + 4 * U) * (1 + e0)
        exc[pos] += ex
        err_exc[pos] += amass * math.exp(abs(gap) + 2 * err_l) * (err_l + 4 * U * abs(where * h)) \
            + abs(ex) * (EU + 8 * U)
    if eta:
        err_exc[-1] += _eta_term(float(a[-1]), h, eta)
    return _Parts(h, first, a, err_a, exc, err_exc)

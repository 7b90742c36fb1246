"""Exact continuous samplers on lazily refined uniform deviates.

A continuous random variable is represented by its integer part and a uniform deviate in (0, 1)
whose binary digits are drawn from the RNG only when a comparison needs them (``_Uniform``).  So
exact samples of continuous distributions can be *compared* and *rounded* exactly — decisions
are made by exact interval arithmetic, refining the deviates until the answer is certain — with
no floating-point value involved:

* :func:`exact_exponential` — Exp(1): a geometric integer part from exact Bernoulli(e^{−1})
  trials and a fractional part by von Neumann's rejection;
* :func:`exact_normal` — N(0, 1): Karney, *Sampling exactly from the normal distribution*
  (ACM TOMS 2016), Algorithms N and B;
* :func:`sample_l2_laplace` — the d-dimensional density ∝ exp(−β‖q‖₂) (``q = R·G/‖G‖`` with
  ``R ~ Gamma(d, β)`` and ``G`` standard normal), rounded to a grid exactly; used by the ERM
  output perturbation of Hartmann et al. 2022, Alg. 4.

All randomness comes from the given :class:`~odp.samplers.RandomSource`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Sequence

from .errors import InvalidParameter
from .rational import sqrt_bracket
from .samplers import bernoulli_exp
from .types import RandomSource

__all__ = ["exact_exponential", "exact_normal", "sample_l2_laplace"]




class _Uniform:
    """A uniform deviate on (0, 1) whose binary digits are drawn from ``rng`` on demand."""

    __slots__ = ("rng", "bits", "n")

    def __init__(self, rng: RandomSource):
        self.rng = rng
        self.bits = 0
        self.n = 0

    def extend(self, k: int) -> None:
        self.bits = (self.bits << k) | self.rng.randbelow(1 << k)
        self.n += k

    def interval(self) -> tuple[Fraction, Fraction]:
        return Fraction(self.bits, 1 << self.n), Fraction(self.bits + 1, 1 << self.n)

    def less_than(self, other: "_Uniform") -> bool:
        """Exact comparison ``self < other`` (ties have probability 0: digits are drawn until
        the two deviates differ)."""
        while True:
            n = max(self.n, other.n)
            if self.n < n:
                self.extend(n - self.n)
            if other.n < n:
                other.extend(n - other.n)
            if self.bits != other.bits:
                return self.bits < other.bits
            self.extend(16)
            other.extend(16)


def _bernoulli_exp_run(x: _Uniform, rng: RandomSource, k: int | None = None) -> bool:
    """True with probability ``exp(−x)`` (``k is None``: von Neumann) or
    ``exp(−x(2k+x)/(2k+2))`` (Karney's Algorithm B): the length of the run
    ``x > z_1 > z_2 > …`` (each step also passing the coin of probability (2k+x)/(2k+2)) is even."""
    y = x
    n = 0
    while True:
        z = _Uniform(rng)
        if not z.less_than(y):
            break
        if k is not None:
            f = rng.randbelow(2 * k + 2)
            if f == 2 * k:
                if not _Uniform(rng).less_than(x):
                    break
            elif f > 2 * k:
                break
        y = z
        n += 1
    return n % 2 == 0


@dataclass
class _Real:
    """``sign·(whole + frac)`` with ``frac`` a lazily refined uniform deviate."""

    sign: int
    whole: int
    frac: _Uniform

    def interval(self) -> tuple[Fraction, Fraction]:
        lo, hi = self.frac.interval()
        if self.sign > 0:
            return self.whole + lo, self.whole + hi
        return -(self.whole + hi), -(self.whole + lo)

    def magnitude(self) -> tuple[Fraction, Fraction]:
        lo, hi = self.frac.interval()
        return self.whole + lo, self.whole + hi


def exact_exponential(rng: RandomSource) -> _Real:
    """An exact Exp(1) deviate: integer part geometric (P(k) = e^{−k}(1 − e^{−1}), from exact
    Bernoulli(e^{−1}) trials), fractional part with density ∝ e^{−x} on (0, 1) by von Neumann's
    rejection."""
    whole = 0
    while bernoulli_exp(Fraction(1), rng):
        whole += 1
    while True:
        x = _Uniform(rng)
        if _bernoulli_exp_run(x, rng):
            return _Real(1, whole, x)


def exact_normal(rng: RandomSource) -> _Real:
    """An exact N(0, 1) deviate (Karney 2016, Algorithm N): ``k`` with probability
    ∝ e^{−k²/2} (exact Bernoulli(e^{−1/2}) and Bernoulli(e^{−k(k−1)/2}) trials), then
    ``x`` ∈ (0, 1) accepted with probability e^{−x(2k+x)/2} by k+1 runs of Algorithm B, and a
    fair sign: the density of ``±(k + x)`` is ∝ e^{−(k+x)²/2}."""
    while True:
        k = 0
        while bernoulli_exp(Fraction(1, 2), rng):
            k += 1
        if k > 1 and not bernoulli_exp(Fraction(k * (k - 1), 2), rng):
            continue
        x = _Uniform(rng)
        if all(_bernoulli_exp_run(x, rng, k) for _ in range(k + 1)):
            return _Real(1 if rng.randbelow(2) else -1, k, x)


def sample_l2_laplace(center: Sequence[Fraction], beta: Fraction, grid: Fraction,
                      rng: RandomSource, *, initial_bits: int = 48) -> tuple[Fraction, ...]:
    """``round_grid(center + q)`` (nearest grid point per coordinate) with q of density
    ∝ exp(−β‖q‖₂) on ℝ^d, sampled exactly: ``q = R·G/‖G‖``, ``R ~ Gamma(d, β)`` and ``G`` a
    vector of exact standard normals; the deviates are refined until every coordinate's grid
    point is decided by exact interval arithmetic."""
    center = [Fraction(c) for c in center]
    d = len(center)
    if d < 1:
        raise InvalidParameter("need at least one coordinate")
    beta, grid = Fraction(beta), Fraction(grid)
    exps = [exact_exponential(rng) for _ in range(d)]
    normals = [exact_normal(rng) for _ in range(d)]
    deviates = [r.frac for r in exps + normals]
    for u in deviates:
        if u.n < initial_bits:
            u.extend(initial_bits - u.n)
    while True:
        r_lo = sum((e.magnitude()[0] for e in exps), Fraction(0)) / beta
        r_hi = sum((e.magnitude()[1] for e in exps), Fraction(0)) / beta
        mags = [g.magnitude() for g in normals]
        norm2_lo = sum((lo * lo for lo, _ in mags), Fraction(0))
        norm2_hi = sum((hi * hi for _, hi in mags), Fraction(0))
        norm_lo = sqrt_bracket(norm2_lo)[0]
        norm_hi = sqrt_bracket(norm2_hi)[1]
        out: list[Fraction] = []
        for c, g, (m_lo, m_hi) in zip(center, normals, mags):
            if norm_lo <= 0:
                break
            lo = r_lo * m_lo / norm_hi
            hi = r_hi * m_hi / norm_lo
            if g.sign < 0:
                lo, hi = -hi, -lo
            cell_lo = math.floor((c + lo) / grid + Fraction(1, 2))
            cell_hi = math.floor((c + hi) / grid + Fraction(1, 2))
            if cell_lo != cell_hi:
                break
            out.append(cell_lo * grid)
        if len(out) == d:
            return tuple(out)
        for u in deviates:
            u.extend(16)

"""Exact samplers fed by a cryptographically secure RNG.

Canonne, Kamath, Steinke, *The Discrete Gaussian for Differential Privacy* (NeurIPS 2020),
Algorithms 1–3: Bernoulli(exp(−γ)) for rational γ, the discrete Laplace and the discrete
Gaussian distributions, using only uniform integers and exact rational arithmetic.  No floating
point is involved, so the floating-point attacks on the textbook Laplace mechanism (Mironov
2012) do not apply.

Randomness comes from :class:`SecureRandom` (the operating system's CSPRNG via :mod:`secrets`)
by default.  :class:`SeededRandom` is reproducible and **insecure**: for tests and demos only.
"""

from __future__ import annotations

import math
import random
import secrets
from fractions import Fraction
from typing import Any

from .errors import InvalidParameter
from .types import RandomSource

__all__ = [
    "RandomSource",  # what the samplers read (defined in odp.types)
    "SecureRandom",
    "SeededRandom",
    "bernoulli",
    "bernoulli_exp",
    "discrete_laplace",
    "discrete_laplace_tail",
    "discrete_gaussian",
    "uniform_int",
    "default_rng",
]


class SecureRandom:
    """The operating system's CSPRNG (:func:`secrets.randbelow`)."""

    secure = True

    def randbelow(self, n: int) -> int:
        return secrets.randbelow(n)

    def __repr__(self) -> str:
        return "SecureRandom()"


class SeededRandom:
    """INSECURE reproducible randomness (Mersenne Twister) for tests and demos.

    Never use it for a real release: its output can be predicted from past outputs.
    """

    secure = False

    def __init__(self, seed: int | str | None = 0):
        self._rng = random.Random(seed)
        self.seed = seed

    def randbelow(self, n: int) -> int:
        return self._rng.randrange(n)

    def __repr__(self) -> str:
        return f"SeededRandom({self.seed!r})  # INSECURE"


_DEFAULT = SecureRandom()


def default_rng() -> SecureRandom:
    return _DEFAULT


def uniform_int(n: int, rng: RandomSource | None = None) -> int:
    """Uniform on ``{0, …, n−1}``."""
    if n <= 0:
        raise InvalidParameter("uniform_int needs n >= 1")
    return (rng or _DEFAULT).randbelow(n)


def bernoulli(p: Fraction, rng: RandomSource | None = None) -> bool:
    """Exact Bernoulli(p) for rational ``0 <= p <= 1``."""
    p = Fraction(p)
    if not 0 <= p <= 1:
        raise InvalidParameter(f"bernoulli needs 0 <= p <= 1, got {p}")
    return (rng or _DEFAULT).randbelow(p.denominator) < p.numerator


def _bernoulli_exp_unit(gamma: Fraction, rng: RandomSource) -> bool:
    """Bernoulli(exp(−γ)) for ``0 <= γ <= 1`` (CKS Algorithm 1, first case)."""
    k = 1
    while True:
        if not bernoulli(gamma / k, rng):
            break
        k += 1
    return k % 2 == 1


def bernoulli_exp(gamma: Fraction, rng: RandomSource | None = None) -> bool:
    """Exact Bernoulli(exp(−γ)) for rational ``γ >= 0`` (CKS Algorithm 1)."""
    gamma = Fraction(gamma)
    if gamma < 0:
        raise InvalidParameter(f"bernoulli_exp needs gamma >= 0, got {gamma}")
    rng = rng or _DEFAULT
    whole = math.floor(gamma)
    for _ in range(whole):
        if not _bernoulli_exp_unit(Fraction(1), rng):
            return False
    return _bernoulli_exp_unit(gamma - whole, rng)


def discrete_laplace(scale: Fraction, rng: RandomSource | None = None) -> int:
    """Exact sample of the discrete Laplace distribution with ``P[X = x] ∝ exp(−|x| / scale)``
    on the integers (CKS Algorithm 2, with ``scale = t / s``)."""
    scale = Fraction(scale)
    if scale <= 0:
        raise InvalidParameter(f"discrete_laplace needs scale > 0, got {scale}")
    rng = rng or _DEFAULT
    t, s = scale.numerator, scale.denominator
    while True:
        u = rng.randbelow(t)
        if not bernoulli_exp(Fraction(u, t), rng):
            continue
        v = 0
        while bernoulli_exp(Fraction(1), rng):
            v += 1
        x = u + t * v
        y = x // s
        negative = bernoulli(Fraction(1, 2), rng)
        if negative and y == 0:
            continue
        return -y if negative else y


def discrete_laplace_tail(k: int, r: Any) -> Any:  # Any: Fraction, float or mpf, as given
    """``P(X ≥ k)`` for the discrete Laplace law ``P(X = x) = (1 − r)/(1 + r)·r^{|x|}`` on ℤ
    (``0 ≤ r < 1``; :func:`discrete_laplace` with scale ``t`` has ``r = e^{−1/t}``):

    * ``k ≥ 1``: ``Σ_{x≥k} (1−r)/(1+r)·r^x = r^k/(1 + r)``;
    * ``k ≤ 0``: ``1 − P(X ≤ k − 1) = 1 − P(X ≥ 1 − k) = 1 − r^{1−k}/(1 + r)`` (symmetry).

    ``r`` may be any number type with + − × ÷ and integer powers (``Fraction`` for exact
    values, ``float``, mpmath)."""
    if k >= 1:
        return r**k / (1 + r)
    return 1 - r ** (1 - k) / (1 + r)


def _floor_sqrt(x: Fraction) -> int:
    """⌊√x⌋ for rational ``x >= 0``, exactly."""
    return math.isqrt(x.numerator * x.denominator) // x.denominator


def discrete_gaussian(sigma2: Fraction, rng: RandomSource | None = None) -> int:
    """Exact sample of the discrete Gaussian with ``P[X = x] ∝ exp(−x² / (2σ²))`` on the
    integers, for rational variance parameter ``σ² > 0`` (CKS Algorithm 3)."""
    sigma2 = Fraction(sigma2)
    if sigma2 <= 0:
        raise InvalidParameter(f"discrete_gaussian needs sigma2 > 0, got {sigma2}")
    rng = rng or _DEFAULT
    t = _floor_sqrt(sigma2) + 1
    while True:
        y = discrete_laplace(Fraction(t), rng)
        gamma = (abs(y) - sigma2 / t) ** 2 / (2 * sigma2)
        if bernoulli_exp(gamma, rng):
            return y

"""(ε, δ) of the Gaussian mechanisms, as rigorous rational *upper* bounds on δ.

* Continuous Gaussian N(0, σ²) with L2-sensitivity Δ — the analytic Gaussian mechanism of
  Balle & Wang (ICML 2018, Thm. 8), which is tight:
  ``δ(ε) = Φ(Δ/(2σ) − εσ/Δ) − e^ε Φ(−Δ/(2σ) − εσ/Δ)``.
* Discrete Gaussian N_ℤ(0, σ²) with integer sensitivity Δ — Canonne, Kamath, Steinke
  (NeurIPS 2020, Thm. 7), also tight:
  ``δ(ε) = P[Y > εσ²/Δ − Δ/2] − e^ε P[Y > εσ²/Δ + Δ/2]``, ``Y ~ N_ℤ(0, σ²)``.

Both are evaluated in float64 with explicit error control and a relative safety margin of
``1e-9`` (float64's own error here is below ``1e-12``), then rounded *up* to a rational on the
grid ``1/10**30``.  The discrete tails are summed term by term over the first ``min(2**20, 40σ)`` terms
and the rest is enclosed by the integral bound ``∫_a^∞ f ≤ Σ_{y≥a} f(y) ≤ f(a) + ∫_a^∞ f``
(``f`` decreasing), so no term is dropped unaccounted.

Inputs are parsed exactly (:func:`odp.budget.to_fraction`): text that is not a number, NaN, ±inf
and booleans raise :class:`~odp.errors.InvalidParameter`, as do values outside float64's range
(the evaluation is in float64).  The discrete Gaussian's sensitivity must be an integer: the
mechanism adds integer noise to an integer-valued query, whose sensitivity is an integer, and a
real-valued query is first mapped to integer grid units with the sensitivity rounded *up* (see
:class:`odp.GaussianMechanism`).  A non-integer sensitivity here is a caller error and is
refused rather than rounded.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction
from typing import Any, Callable, TypeVar, cast

import numpy as np
from scipy import special

from .budget import to_fraction
from .errors import InvalidParameter
from .rational import ceil_fraction, exp_bracket, magnitude

__all__ = [
    "analytic_gaussian_delta_upper",
    "discrete_gaussian_delta_upper",
    "calibrate_discrete_gaussian",
]

_MARGIN = 1e-9
_DENOMINATOR = 10**30
_TERMS = 1 << 20

_F = TypeVar("_F", bound=Callable[..., Fraction])


def _number(value: Any, name: str) -> Fraction:
    """``value`` parsed exactly; not a finite number → :class:`InvalidParameter`."""
    return to_fraction(value, name=name, warn=False)


def _float(x: Fraction, name: str) -> float:
    """``x`` as a float64, refusing values beyond its range (the bounds are evaluated in it)."""
    try:
        f = float(x)
    except OverflowError:
        f = math.inf
    if not math.isfinite(f) or (x != 0 and f == 0):
        where = f"={magnitude(x)} is above" if f else " is too close to 0 for"
        raise InvalidParameter(f"{name}{where} float64's range, where odp evaluates the "
                               "Gaussian δ bound")
    return f


def _sensitivity(value: Any) -> int:
    """An integer sensitivity ``>= 1`` (the discrete Gaussian's; see the module docstring)."""
    m = _number(value, "sensitivity")
    if m.denominator != 1 or m < 1:
        raise InvalidParameter(
            f"the discrete Gaussian needs an integer sensitivity >= 1, got {value!r} (for a "
            "real-valued query, map it to integer grid units with the sensitivity rounded up, "
            "as odp.GaussianMechanism does)")
    return int(m)


def _in_range(fn: _F) -> _F:
    """Float over/underflow inside a bound → :class:`InvalidParameter` (never a raw error)."""
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Fraction:
        try:
            return fn(*args, **kwargs)
        except ArithmeticError as exc:
            raise InvalidParameter(
                f"{fn.__name__}: parameters outside the range where odp can bound δ "
                f"({type(exc).__name__}: {exc})") from None
    return cast(_F, wrapper)


def _exp_eps_bracket(epsilon: Fraction) -> tuple[float, float]:
    lo, hi = exp_bracket(Fraction(epsilon))
    return float(lo) * (1 - 1e-15), float(hi) * (1 + 1e-15)


def _finish(delta_hi: float) -> Fraction:
    delta_hi = max(delta_hi, 0.0) * (1 + _MARGIN) + 1e-300
    if not math.isfinite(delta_hi):
        raise InvalidParameter("delta bound overflowed")
    return min(ceil_fraction(Fraction(delta_hi), _DENOMINATOR), Fraction(1))


@_in_range
def analytic_gaussian_delta_upper(epsilon: Any, sigma: Any, sensitivity: Any = 1) -> Fraction:
    """Upper bound on δ(ε) of the continuous Gaussian mechanism (Balle–Wang, tight)."""
    eps = _number(epsilon, "epsilon")
    sig = _number(sigma, "sigma")
    sens = _number(sensitivity, "sensitivity")
    if sig <= 0 or sens <= 0 or eps < 0:
        raise InvalidParameter("need sigma > 0, sensitivity > 0, epsilon >= 0")
    s = _float(sig, "sigma")
    d = _float(sens, "sensitivity")
    e_lo, _ = _exp_eps_bracket(eps)
    u = d / (2 * s)
    v = float(eps) * s / d
    first = special.ndtr(u - v) * (1 + 1e-14)
    second = special.ndtr(-u - v) * (1 - 1e-14)
    return _finish(first - e_lo * second)


def _tail_bracket(start: int, sigma2: float) -> tuple[float, float]:
    """Bracket of ``T(start) = Σ_{y ≥ start} exp(−y²/(2σ²))`` for integer ``start ≥ 0``."""
    s = math.sqrt(sigma2)
    terms = min(_TERMS, max(64, math.ceil(40 * s)))
    ys = np.arange(start, start + terms, dtype=np.float64)
    with np.errstate(over="ignore"):  # y² overflowing to inf only makes its term exp(-inf) = 0
        head = float(np.sum(np.exp(-(ys * ys) / (2.0 * sigma2))))
    rest_start = float(start + terms)
    integral = s * math.sqrt(math.pi / 2.0) * float(special.erfc(rest_start / (s * math.sqrt(2.0))))
    f_rest = math.exp(-(rest_start * rest_start) / (2.0 * sigma2))
    lo = (head + integral) * (1 - 1e-12)
    hi = (head + integral + f_rest) * (1 + 1e-12) + 1e-300
    return lo, hi


def _prob_greater(a: Fraction, sigma2: float, z: tuple[float, float]) -> tuple[float, float]:
    """Bracket of ``P[Y > a]`` for ``Y ~ N_ℤ(0, σ²)``; ``z`` brackets the normaliser."""
    z_lo, z_hi = z
    if a >= 0:
        t_lo, t_hi = _tail_bracket(math.floor(a) + 1, sigma2)
        return t_lo / z_hi, min(t_hi / z_lo, 1.0)
    # P[Y > a] = 1 − P[Y ≤ a] = 1 − P[Y ≥ −a] = 1 − T(⌈−a⌉)/Z
    t_lo, t_hi = _tail_bracket(math.ceil(-a), sigma2)
    return max(1 - t_hi / z_lo, 0.0), 1 - t_lo / z_hi


@_in_range
def discrete_gaussian_delta_upper(epsilon: Any, sigma2: Any, sensitivity: Any = 1) -> Fraction:
    """Upper bound on δ(ε) of the discrete Gaussian mechanism with variance parameter σ²
    and integer sensitivity Δ (CKS Thm. 7)."""
    eps = _number(epsilon, "epsilon")
    s2 = _number(sigma2, "sigma2")
    if s2 <= 0 or eps < 0:
        raise InvalidParameter("need sigma2 > 0, epsilon >= 0 and an integer sensitivity >= 1")
    m = _sensitivity(sensitivity)
    s2f = _float(s2, "sigma2")
    t1_lo, t1_hi = _tail_bracket(1, s2f)
    z = (1 + 2 * t1_lo, 1 + 2 * t1_hi)
    a = eps * s2 / m - Fraction(m, 2)
    b = eps * s2 / m + Fraction(m, 2)
    _, pa_hi = _prob_greater(a, s2f, z)
    pb_lo, _ = _prob_greater(b, s2f, z)
    e_lo, _ = _exp_eps_bracket(eps)
    return _finish(pa_hi - e_lo * pb_lo)


@_in_range
def calibrate_discrete_gaussian(epsilon: Any, delta: Any, sensitivity: Any = 1) -> Fraction:
    """A rational σ² (4 significant digits, rounded up) with
    ``discrete_gaussian_delta_upper(ε, σ², Δ) ≤ δ``.  Larger σ² only lowers δ.  ``Δ`` must be
    an integer ``>= 1`` (a non-integer is refused, never truncated: see the module docstring)."""
    eps, target = _number(epsilon, "epsilon"), _number(delta, "delta")
    if eps <= 0 or not 0 < target < 1:
        raise InvalidParameter("calibration needs epsilon > 0 and 0 < delta < 1")
    m = _sensitivity(sensitivity)

    def ok(s2: Fraction) -> bool:
        return discrete_gaussian_delta_upper(eps, s2, m) <= target

    hi = Fraction(m * m)
    while not ok(hi):
        hi *= 4
        if hi > 10**16:
            raise InvalidParameter("no sigma below 1e8 reaches that delta; check the parameters")
    lo = hi / 4 if hi > m * m else Fraction(0)
    for _ in range(40):
        mid = (lo + hi) / 2
        if ok(mid):
            hi = mid
        else:
            lo = mid
    # round σ² up to 4 significant digits and make sure the rounded value still qualifies
    exponent = math.floor(math.log10(float(hi))) - 3
    unit = Fraction(10) ** exponent
    s2 = math.ceil(hi / unit) * unit
    while not ok(s2):  # pragma: no cover - rounding up can only help
        s2 += unit
    return s2

"""Rigorous brackets of the standard normal distribution function Φ and its tail.

Notation: ``φ(x) = e^{−x²/2}/√(2π)``, ``Φ(x) = ∫_{−∞}^x φ``, ``Q(x) = 1 − Φ(x) = Φ(−x)`` and
the *scaled tail* ``SQ(x) = e^{x²/2}·Q(x) = Q(x)/(√(2π)·φ(x))`` for ``x ≥ 0`` (decreasing, from
1/2 at 0 to ``~ 1/(x√(2π))``).  Every function returns an :class:`~odp.intervals.DecimalInterval` that
contains the true value; the arguments are exact Decimals (or intervals of them).

Two expansions, each with a proven remainder bound:

* ``x ≤ X(d)``: **Marsaglia's series** ``Φ(x) = 1/2 + φ(x)·S(x)``,
  ``S(x) = Σ_{n≥0} x^{2n+1}/(1·3·5···(2n+1))`` (G. Marsaglia, *Evaluating the Normal
  Distribution*, J. Stat. Software 11(4), 2004).  All terms are positive and term n+1 is term n
  times ``x²/(2n+3)``, so once that ratio ρ is below 1 the rest of the series is at most
  ``term_n·ρ/(1−ρ)``.  ``SQ(x) = e^{x²/2}/2 − S(x)/√(2π)`` loses about ``x²/(2 ln 10)`` digits
  to cancellation; the working precision is raised by that much.
* ``x > X(d)``: the **asymptotic expansion** with its exact remainder, obtained by integrating
  by parts n times (Abramowitz & Stegun 7.1.23–7.1.24):
  ``Q(x) = φ(x)·Σ_{m<n} (−1)^m (2m−1)!!/x^{2m+1} + (−1)^n (2n−1)!!·∫_x^∞ φ(t)/t^{2n} dt`` with
  ``0 < ∫_x^∞ φ(t)/t^{2n} dt < φ(x)/x^{2n+1}``: the error after n terms has the sign of the
  first omitted term and is smaller in absolute value.

``X(d) = √(2·ln 10·d)`` is where the asymptotic expansion's best error, about ``e^{−x²/2}``
relative, reaches ``10^{−d}``.  Every result is also intersected with Gordon's bounds
``x/(x²+1)·φ(x) ≤ Q(x) ≤ φ(x)/x`` (R. D. Gordon, Ann. Math. Stat. 12, 1941), so it is never
empty or non-positive.  π enters as a 100-decimal bracket (checked in the tests), or, above 95
digits, as a Machin-formula bracket computed to the precision asked for (:func:`pi_bracket`).
"""

from __future__ import annotations

import functools
import math
from decimal import Decimal

from .intervals import Arith, DecimalInterval

__all__ = ["scaled_tail", "scaled_tail_interval", "cdf", "inv_sqrt_2pi", "pi_bracket"]

#: π truncated to 100 decimals and that plus 1e-100: ``_PI_LO < π < _PI_HI``.  (Written out:
#: Decimal operators outside an explicit context round to 28 digits.)
_PI_LO = Decimal("3.1415926535897932384626433832795028841971693993751058209749445923078164"
                 "062862089986280348253421170679")
_PI_HI = Decimal("3.1415926535897932384626433832795028841971693993751058209749445923078164"
                 "062862089986280348253421170680")
_HALF = Decimal("0.5")
_ZERO = Decimal(0)
_ONE = Decimal(1)


def _arctan_inv_scaled(x: int, scale: int) -> tuple[int, int]:
    """``(v, e)`` with ``|v − scale·arctan(1/x)| <= e`` for an integer ``x >= 2``: the Taylor
    series ``Σ (−1)^k / ((2k+1) x^{2k+1})`` in integer fixed point.  Each term is floored
    (error < 1 each; ``⌊⌊a/b⌋/c⌋ = ⌊a/(bc)⌋``), and the series stops at the first term whose
    scaled value floors to 0: the rest alternates and decreases, so it is below 1."""
    total, k = 0, 0
    power = scale // x  # ⌊scale / x^{2k+1}⌋
    x2 = x * x
    while power:
        term = power // (2 * k + 1)
        total += -term if k % 2 else term
        power //= x2
        k += 1
    return total, k + 1


@functools.lru_cache(maxsize=16)
def pi_bracket(digits: int) -> DecimalInterval:
    """An enclosure of π to about ``digits`` decimals: the 100-decimal constants when they
    suffice, else Machin's formula ``π = 16 arctan(1/5) − 4 arctan(1/239)`` in integer fixed
    point with its error bound (:func:`_arctan_inv_scaled`)."""
    if digits <= 95:
        return DecimalInterval(_PI_LO, _PI_HI)
    places = digits + 10
    scale = 10**places
    a5, e5 = _arctan_inv_scaled(5, scale)
    a239, e239 = _arctan_inv_scaled(239, scale)
    value, err = 16 * a5 - 4 * a239, 16 * e5 + 4 * e239
    return DecimalInterval(Decimal(f"{value - err}E-{places}"), Decimal(f"{value + err}E-{places}"))


@functools.lru_cache(maxsize=64)
def inv_sqrt_2pi(digits: int) -> DecimalInterval:
    """An enclosure of ``1/√(2π)`` (π from :func:`pi_bracket`, so any precision is honest)."""
    ar = Arith.at(digits)
    pi = pi_bracket(digits)
    two_pi = DecimalInterval(ar.dn.multiply(2, pi.lo), ar.up.multiply(2, pi.hi))
    return ar.div(ar.of(1), ar.sqrt(two_pi))


def _threshold(digits: int) -> float:
    return math.sqrt(2 * math.log(10) * digits)


def _series_scaled_tail(x: Decimal, digits: int) -> DecimalInterval:
    """``SQ(x) = e^{x²/2}/2 − S(x)/√(2π)`` with Marsaglia's series S (module docstring)."""
    w = digits + int(float(x) ** 2 / (2 * math.log(10))) + 12
    ar = Arith.at(w)
    x2 = ar.sqr(DecimalInterval(x, x))
    tol = Decimal(f"1e-{w + 2}")
    term = DecimalInterval(x, x)
    s = DecimalInterval(_ZERO, _ZERO)
    n = 0
    while True:
        s = ar.add(s, term)
        d = Decimal(2 * n + 3)
        if x2.hi < d:  # ratio ρ = x²/(2n+3) < 1 from here on: rest ≤ term·ρ/(1−ρ)
            rest = ar.up.divide(ar.up.multiply(term.hi, x2.hi), ar.dn.subtract(d, x2.hi))
            if rest <= ar.dn.multiply(s.lo, tol):
                break
        term = DecimalInterval(ar.dn.divide(ar.dn.multiply(term.lo, x2.lo), d),
                        ar.up.divide(ar.up.multiply(term.hi, x2.hi), d))
        n += 1
    series = DecimalInterval(s.lo, ar.up.add(s.hi, rest))
    e = ar.exp(ar.mul(x2, DecimalInterval(_HALF, _HALF)))
    return ar.sub(ar.mul(e, DecimalInterval(_HALF, _HALF)), ar.mul(series, inv_sqrt_2pi(w)))


def _asymptotic_scaled_tail(x: Decimal, digits: int) -> DecimalInterval:
    """``SQ(x)·√(2π) = Σ_{m<n} (−1)^m (2m−1)!!/x^{2m+1} ± (2n−1)!!/x^{2n+1}``."""
    ar = Arith.at(digits + 5)
    dn, up = ar.dn, ar.up
    x2_lo, x2_hi = dn.multiply(x, x), up.multiply(x, x)
    t_lo, t_hi = dn.divide(_ONE, x), up.divide(_ONE, x)  # term m = 0: 1/x (all terms > 0)
    stop = dn.multiply(t_lo, Decimal(f"1e-{digits + 2}"))
    s_lo = s_hi = _ZERO
    n = 0
    while not (n >= 1 and (t_hi <= stop or 2 * n - 1 >= x2_lo)):
        if n % 2 == 0:
            s_lo, s_hi = dn.add(s_lo, t_lo), up.add(s_hi, t_hi)
        else:
            s_lo, s_hi = dn.subtract(s_lo, t_hi), up.subtract(s_hi, t_lo)
        k = Decimal(2 * n + 1)
        t_lo, t_hi = dn.divide(dn.multiply(t_lo, k), x2_hi), up.divide(up.multiply(t_hi, k), x2_lo)
        n += 1
    # the remainder has the sign (−1)^n and is smaller than term n in absolute value
    if n % 2 == 0:
        s_hi = up.add(s_hi, t_hi)
    else:
        s_lo = dn.subtract(s_lo, t_hi)
    return ar.mul(DecimalInterval(s_lo, s_hi), inv_sqrt_2pi(digits + 5))


def scaled_tail(x: Decimal, digits: int = 40) -> DecimalInterval:
    """An enclosure of ``SQ(x) = e^{x²/2}·Q(x)`` for an exact ``x >= 0``."""
    if x < 0:
        raise ValueError("scaled_tail needs x >= 0")
    if x == 0:
        return DecimalInterval(_HALF, _HALF)
    ar = Arith.at(digits + 5)
    c = inv_sqrt_2pi(digits + 5)
    # Gordon: c·x/(x²+1) <= SQ(x) <= min(1/2, c/x)
    gordon_lo = ar.dn.divide(ar.dn.multiply(c.lo, x), ar.up.add(ar.up.multiply(x, x), _ONE))
    gordon_hi = min(_HALF, ar.up.divide(c.hi, x))
    if float(x) <= _threshold(digits):
        v = _series_scaled_tail(x, digits)
    else:
        v = _asymptotic_scaled_tail(x, digits)
    lo, hi = max(v.lo, gordon_lo), min(v.hi, gordon_hi)
    if lo > hi:  # pragma: no cover - both are enclosures of the same number
        raise ArithmeticError(f"inconsistent enclosures of the normal tail at {x}")
    return DecimalInterval(lo, hi)


def _width(ar: Arith, x: DecimalInterval) -> Decimal:
    return ar.up.subtract(x.hi, x.lo)


def scaled_tail_interval(x: DecimalInterval, digits: int = 40) -> DecimalInterval:
    """An enclosure of ``SQ(t)`` for all ``t`` in ``x`` (``x.lo >= 0``).

    SQ decreases and ``|SQ'(t)| = |t·SQ(t) − 1/√(2π)| <= 1/√(2π) < 1/2`` (``0 <= t·SQ(t) <=
    1/√(2π)`` by Gordon's upper bound), so one evaluation at ``x.lo`` and the width suffice —
    unless that costs more than ``10^−(digits−12)`` relative accuracy (``SQ(t) ~ 1/t`` while
    the width grows with ``t``): then the lower end is evaluated at ``x.hi`` instead."""
    v = scaled_tail(x.lo, digits)
    if x.lo == x.hi:
        return v
    ar = Arith.at(digits)
    slack = ar.up.multiply(_HALF, _width(ar, x))
    if slack > ar.dn.multiply(v.lo, Decimal(f"1e-{max(digits - 12, 1)}")):
        return DecimalInterval(scaled_tail(x.hi, digits).lo, v.hi)
    return DecimalInterval(max(ar.dn.subtract(v.lo, slack), _ZERO), v.hi)


def _cdf_point(x: Decimal, digits: int) -> DecimalInterval:
    """``Φ(x) = e^{−x²/2}·SQ(−x)`` for x ≤ 0, ``1 − e^{−x²/2}·SQ(x)`` for x > 0."""
    ar = Arith.at(digits)
    ax = x.copy_abs()  # exact (abs() would round to the context's 28 digits)
    tail = ar.mul(ar.exp(ar.neg(ar.mul(ar.sqr(DecimalInterval(ax, ax)), DecimalInterval(_HALF, _HALF)))),
                  scaled_tail(ax, digits))
    if x <= 0:
        return tail
    tail = DecimalInterval(tail.lo, min(tail.hi, _HALF))  # Q(x) <= 1/2 for x >= 0
    return ar.sub(DecimalInterval(_ONE, _ONE), tail)


def cdf(x: DecimalInterval, digits: int = 40) -> DecimalInterval:
    """An enclosure of ``Φ(t)`` for all ``t`` in ``x``.

    Φ increases, so the enclosure is ``[Φ(x.lo).lo, Φ(x.hi).hi]``.  Where ``x.hi <= 0`` (the
    lower tail, where Φ may be tiny) both ends are evaluated, so the enclosure keeps its
    *relative* accuracy however small Φ is.  Otherwise ``Φ(x.hi) >= 1/2`` and, since
    ``Φ' = φ <= 1/√(2π) < 1/2``, the lower end is ``Φ(x.hi).lo − width/2`` (one evaluation; a
    relative error of at most the width)."""
    v = _cdf_point(x.hi, digits)
    if x.lo == x.hi:
        return v
    if x.hi <= 0:
        return DecimalInterval(_cdf_point(x.lo, digits).lo, v.hi)
    ar = Arith.at(digits)
    return DecimalInterval(max(ar.dn.subtract(v.lo, ar.up.multiply(_HALF, _width(ar, x))), _ZERO), v.hi)

"""Rigorous rational brackets for irrational quantities, and conservative rounding.

Budgets in odp are exact rationals.  Some costs are irrational (``ln``, ``exp``, ``sqrt`` of a
rational); those are enclosed in a rational interval ``[lo, hi]`` computed with the standard
library's :mod:`decimal` (whose ``exp``, ``ln`` and ``sqrt`` are correctly rounded, i.e. within
half a unit in the last place), widened by one full unit in the last place on each side.  A cost
is then charged at ``ceil_fraction(hi, denominator)``: never below the true value.

No floating-point value ever enters a bracket: inputs are :class:`fractions.Fraction`.
"""

from __future__ import annotations

import decimal
import functools
import math
from fractions import Fraction
from typing import Any, Callable

from .errors import InvalidParameter

#: Default grid for costs that must be rounded up: multiples of 1e-12.
DEFAULT_DENOMINATOR = 10**12

#: Default number of significant decimal digits used for brackets.
DEFAULT_DIGITS = 40

#: Largest |x| whose ``e**x`` is bracketed as such: the bracket's ends are exact Fractions of
#: about |x|/2.3 digits, so e**(1e9) would need a 434-million-digit number (minutes,
#: gigabytes).  Below ``-MAX_EXP_ARGUMENT`` the bracket is ``(0, bound of e**-MAX)``; above
#: ``+MAX_EXP_ARGUMENT`` it is refused.
MAX_EXP_ARGUMENT = 100_000

Bracket = tuple[Fraction, Fraction]


def _context(digits: int, rounding: str) -> decimal.Context:
    return decimal.Context(prec=digits, rounding=rounding, Emax=10**9, Emin=-(10**9))


def _decimal_bracket(x: Fraction, digits: int) -> tuple[decimal.Decimal, decimal.Decimal]:
    """Decimals ``lo <= x <= hi`` with ``digits`` significant digits (directed rounding)."""
    num, den = decimal.Decimal(x.numerator), decimal.Decimal(x.denominator)
    lo = _context(digits, decimal.ROUND_FLOOR).divide(num, den)
    hi = _context(digits, decimal.ROUND_CEILING).divide(num, den)
    return lo, hi


def _ulp(d: decimal.Decimal, digits: int) -> Fraction:
    if d == 0:
        return Fraction(0)
    return Fraction(10) ** (d.adjusted() - digits + 1)


def _monotone_bracket(
    x: Fraction, digits: int, fn: Callable[[decimal.Decimal, decimal.Context], decimal.Decimal]
) -> Bracket:
    """Bracket ``fn(x)`` for an increasing, correctly rounded decimal function ``fn``."""
    lo_in, hi_in = _decimal_bracket(x, digits + 5)
    ctx = _context(digits, decimal.ROUND_HALF_EVEN)
    lo_out = fn(lo_in, ctx)
    hi_out = fn(hi_in, ctx)
    return (
        Fraction(lo_out) - _ulp(lo_out, digits),
        Fraction(hi_out) + _ulp(hi_out, digits),
    )


def magnitude(x: Fraction | int) -> str:
    """``x`` to 3 significant digits for a message, or its order of magnitude (``about 1e800``)
    when it is too large or too small for a float."""
    x = Fraction(x)
    if x == 0:
        return "0"
    try:
        f = float(x)
    except OverflowError:
        f = 0.0
    if f != 0 and math.isfinite(f):
        return f"{f:.3g}"
    sign = "-" if x < 0 else ""
    return f"about {sign}1e{round(math.log10(abs(x.numerator)) - math.log10(x.denominator))}"


def short_number(x: Any) -> str:
    """A parameter for a message: as given when short (24 characters at most), else its order
    of magnitude (:func:`magnitude`)."""
    text = str(x)
    if len(text) <= 24:
        return text
    try:
        return magnitude(Fraction(text))
    except (ValueError, ZeroDivisionError):
        return text[:24] + "..."


def bisect_on_grid(ok: Callable[[Fraction], bool], lo: Fraction, hi: Fraction,
                   denominator: int) -> Fraction:
    """Bisection of a monotone predicate on the grid ``ℤ/denominator``: given ``not ok(lo)``
    and ``ok(hi)`` (``hi`` on the grid), the point ``hi`` it ends at satisfies ``ok`` and the
    grid point below it does not (to the grid's resolution)."""
    step = Fraction(1, denominator)
    while hi - lo > step:
        mid = ceil_fraction((lo + hi) / 2, denominator)
        if mid >= hi:
            break
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return hi

@functools.lru_cache(maxsize=1)
def _exp_floor_bound() -> Fraction:
    """An upper bound of ``e**-MAX_EXP_ARGUMENT`` (a 43,430-digit denominator, computed once)."""
    return _monotone_bracket(Fraction(-MAX_EXP_ARGUMENT), DEFAULT_DIGITS,
                             lambda d, c: d.exp(c))[1]


def exp_bracket(x: Fraction, digits: int = DEFAULT_DIGITS) -> Bracket:
    """Rational ``(lo, hi)`` with ``lo <= e**x <= hi``; ``lo > 0`` for ``x >= -MAX_EXP_ARGUMENT``
    (below it, ``lo = 0``)."""
    x = Fraction(x)
    if x == 0:
        return Fraction(1), Fraction(1)
    if x > MAX_EXP_ARGUMENT:
        raise InvalidParameter(f"e**x for x = {magnitude(x)}: x above {MAX_EXP_ARGUMENT:,} "
                               "has no exact bracket of reasonable size")
    if x < -MAX_EXP_ARGUMENT:  # 0 < e**x < e**-MAX: sound, and far below any decision
        return Fraction(0), _exp_floor_bound()
    lo, hi = _monotone_bracket(x, digits, lambda d, c: d.exp(c))
    if lo <= 0:  # extreme underflow guard: e**x is positive
        lo = Fraction(0)
    return lo, hi


def log_bracket(x: Fraction, digits: int = DEFAULT_DIGITS) -> Bracket:
    """Rational ``(lo, hi)`` with ``lo <= ln(x) <= hi`` for ``x > 0``."""
    x = Fraction(x)
    if x <= 0:
        raise InvalidParameter(f"log of a non-positive number: {x}")
    if x == 1:
        return Fraction(0), Fraction(0)
    return _monotone_bracket(x, digits, lambda d, c: d.ln(c))


def sqrt_bracket(x: Fraction, digits: int = DEFAULT_DIGITS) -> Bracket:
    """Rational ``(lo, hi)`` with ``lo <= sqrt(x) <= hi`` for ``x >= 0``."""
    x = Fraction(x)
    if x < 0:
        raise InvalidParameter(f"sqrt of a negative number: {x}")
    if x == 0:
        return Fraction(0), Fraction(0)
    lo, hi = _monotone_bracket(x, digits, lambda d, c: d.sqrt(c))
    return max(lo, Fraction(0)), hi


def ceil_fraction(x: Fraction, denominator: int = DEFAULT_DENOMINATOR) -> Fraction:
    """The smallest multiple of ``1/denominator`` that is ``>= x``."""
    if denominator <= 0:
        raise InvalidParameter("denominator must be positive")
    x = Fraction(x)
    return Fraction(-((-x.numerator * denominator) // x.denominator), denominator)


def floor_fraction(x: Fraction, denominator: int = DEFAULT_DENOMINATOR) -> Fraction:
    """The largest multiple of ``1/denominator`` that is ``<= x``."""
    if denominator <= 0:
        raise InvalidParameter("denominator must be positive")
    x = Fraction(x)
    return Fraction((x.numerator * denominator) // x.denominator, denominator)


def log_upper(x: Fraction, denominator: int = DEFAULT_DENOMINATOR) -> Fraction:
    """``ln(x)`` rounded *up* to the grid ``1/denominator`` (a conservative cost)."""
    x = Fraction(x)
    if x == 1:
        return Fraction(0)
    return ceil_fraction(log_bracket(x)[1], denominator)


def exp_upper(x: Fraction, denominator: int = DEFAULT_DENOMINATOR) -> Fraction:
    """``e**x`` rounded *up* to the grid ``1/denominator``."""
    return ceil_fraction(exp_bracket(Fraction(x))[1], denominator)

"""Decimal interval arithmetic with outward rounding: rigorous enclosures of real numbers.

A :class:`DecimalInterval` ``(lo, hi)`` is a pair of :class:`decimal.Decimal` ends with
``lo <= x <= hi`` for the real number ``x`` it stands for.  :class:`Arith` computes with them at
a fixed number of significant digits:

* ``+ − × ÷`` round the lower end with ``ROUND_FLOOR`` and the upper end with
  ``ROUND_CEILING``; the :mod:`decimal` module rounds these operations correctly in every
  rounding mode (General Decimal Arithmetic specification), so each end moves outward only;
* ``exp``, ``ln`` and ``sqrt`` are correctly rounded by :mod:`decimal` only to nearest
  (``ROUND_HALF_EVEN``, within half a unit in the last place), so each end is then moved one
  representable number outward (``next_minus`` / ``next_plus``) — the same rule as
  :mod:`odp.rational`, without building exact Fractions of huge numbers;
* exact rationals enter through :meth:`Arith.of` (directed division of numerator by
  denominator) and leave through :func:`upper` / :func:`lower` (the exact value of an end).

The exponent range is the widest :mod:`decimal` allows, so ``e**x`` for ``|x|`` up to about
``10**17`` neither overflows nor underflows; beyond it :class:`~odp.errors.InvalidParameter` is
raised.  No float ever enters an interval.

Used by :mod:`odp.normal` (Gaussian tail brackets) and :mod:`odp.rdp` (the subsampled Gaussian's
Rényi DP).
"""

from __future__ import annotations

import decimal
import functools
from decimal import Decimal
from fractions import Fraction
from typing import NamedTuple

from .errors import InvalidParameter

__all__ = ["DecimalInterval", "Arith", "upper", "lower"]


class DecimalInterval(NamedTuple):
    """``lo <= x <= hi`` (Decimal ends): an enclosure to compute with.  Not a result: results
    are :class:`odp.readable.Interval` (exact rational bounds that print readably)."""

    lo: Decimal
    hi: Decimal


def upper(x: DecimalInterval) -> Fraction:
    """The upper end as an exact Fraction."""
    return Fraction(x.hi)


def lower(x: DecimalInterval) -> Fraction:
    """The lower end as an exact Fraction."""
    return Fraction(x.lo)


_TRAPS = [decimal.InvalidOperation, decimal.DivisionByZero, decimal.Overflow]


def _context(digits: int, rounding: str) -> decimal.Context:
    return decimal.Context(prec=digits, rounding=rounding, Emax=decimal.MAX_EMAX,
                           Emin=decimal.MIN_EMIN, traps=_TRAPS)


_ZERO = Decimal(0)
_ONE = Decimal(1)


class Arith:
    """Interval operations at ``digits`` significant decimal digits (see the module docstring).

    Instances are cached per precision: ``Arith.at(digits)``."""

    __slots__ = ("digits", "dn", "up", "near")

    def __init__(self, digits: int):
        if not 10 <= digits <= 10_000:
            raise InvalidParameter(f"interval precision must be 10..10000 digits, got {digits}")
        self.digits = digits
        self.dn = _context(digits, decimal.ROUND_FLOOR)
        self.up = _context(digits, decimal.ROUND_CEILING)
        self.near = _context(digits, decimal.ROUND_HALF_EVEN)

    @staticmethod
    @functools.lru_cache(maxsize=64)
    def at(digits: int) -> "Arith":
        return Arith(digits)

    # ------------------------------------------------------------------ constructors
    def of(self, x: Fraction | int) -> DecimalInterval:
        """The tightest enclosure of the exact rational ``x`` at this precision."""
        x = Fraction(x)
        if x.denominator == 1:
            n = Decimal(x.numerator)
            return DecimalInterval(self.dn.plus(n), self.up.plus(n))
        num, den = Decimal(x.numerator), Decimal(x.denominator)
        return DecimalInterval(self.dn.divide(num, den), self.up.divide(num, den))

    @staticmethod
    def point(d: Decimal) -> DecimalInterval:
        return DecimalInterval(d, d)

    # ------------------------------------------------------------------ arithmetic
    def add(self, a: DecimalInterval, b: DecimalInterval) -> DecimalInterval:
        return DecimalInterval(self.dn.add(a.lo, b.lo), self.up.add(a.hi, b.hi))

    def sub(self, a: DecimalInterval, b: DecimalInterval) -> DecimalInterval:
        return DecimalInterval(self.dn.subtract(a.lo, b.hi), self.up.subtract(a.hi, b.lo))

    @staticmethod
    def neg(a: DecimalInterval) -> DecimalInterval:
        return DecimalInterval(a.hi.copy_negate(), a.lo.copy_negate())  # exact (unary - rounds)

    def mul(self, a: DecimalInterval, b: DecimalInterval) -> DecimalInterval:
        if a.lo >= 0 and b.lo >= 0:  # the common case: both non-negative
            return DecimalInterval(self.dn.multiply(a.lo, b.lo), self.up.multiply(a.hi, b.hi))
        ends = [(x, y) for x in (a.lo, a.hi) for y in (b.lo, b.hi)]
        return DecimalInterval(min(self.dn.multiply(x, y) for x, y in ends),
                        max(self.up.multiply(x, y) for x, y in ends))

    def sqr(self, a: DecimalInterval) -> DecimalInterval:
        """``a²`` (not ``a·a``: the square of an interval around 0 starts at 0)."""
        if a.lo >= 0:
            return DecimalInterval(self.dn.multiply(a.lo, a.lo), self.up.multiply(a.hi, a.hi))
        if a.hi <= 0:
            return DecimalInterval(self.dn.multiply(a.hi, a.hi), self.up.multiply(a.lo, a.lo))
        m = max(a.lo.copy_negate(), a.hi)  # exact (unary - would round to 28 digits)
        return DecimalInterval(_ZERO, self.up.multiply(m, m))

    def div(self, a: DecimalInterval, b: DecimalInterval) -> DecimalInterval:
        if a.lo >= 0 and b.lo > 0:  # the common case: a non-negative, b positive
            return DecimalInterval(self.dn.divide(a.lo, b.hi), self.up.divide(a.hi, b.lo))
        if b.lo <= 0 <= b.hi:
            raise InvalidParameter("interval division by an interval containing 0")
        ends = [(x, y) for x in (a.lo, a.hi) for y in (b.lo, b.hi)]
        return DecimalInterval(min(self.dn.divide(x, y) for x, y in ends),
                        max(self.up.divide(x, y) for x, y in ends))

    def scale(self, a: DecimalInterval, c: Fraction | int) -> DecimalInterval:
        """``c·a`` for an exact rational ``c``."""
        return self.mul(a, self.of(c))

    # ------------------------------------------------------------------ functions
    def exp(self, a: DecimalInterval) -> DecimalInterval:
        """``e**a`` (increasing).  Raises InvalidParameter above the Decimal range."""
        try:
            lo = self.near.exp(a.lo).next_minus(self.dn)
            hi = self.near.exp(a.hi).next_plus(self.up)
        except decimal.Overflow:
            raise InvalidParameter("e**x overflows the decimal range (x is above 1e17)") from None
        return DecimalInterval(max(lo, _ZERO), hi)

    def ln(self, a: DecimalInterval) -> DecimalInterval:
        """``ln a`` (increasing) for ``a > 0``."""
        if a.lo <= 0:
            raise InvalidParameter("log of an interval that is not positive")
        lo = _ZERO if a.lo == 1 else self.near.ln(a.lo).next_minus(self.dn)
        hi = _ZERO if a.hi == 1 else self.near.ln(a.hi).next_plus(self.up)
        return DecimalInterval(lo, hi)

    def sqrt(self, a: DecimalInterval) -> DecimalInterval:
        """``√a`` (increasing) for ``a >= 0``."""
        if a.lo < 0:
            raise InvalidParameter("square root of an interval below 0")
        lo = _ZERO if a.lo == 0 else max(self.near.sqrt(a.lo).next_minus(self.dn), _ZERO)
        hi = self.near.sqrt(a.hi).next_plus(self.up)
        return DecimalInterval(lo, hi)

    @staticmethod
    def hull(a: DecimalInterval, b: DecimalInterval) -> DecimalInterval:
        return DecimalInterval(min(a.lo, b.lo), max(a.hi, b.hi))

"""Exact released numbers that print readably.

A release on a grid is an exact rational: ``acc.run(LaplaceMechanism(...), data)`` on the default
grid ``g = Δ/1000`` returns ``4717/1000``.  :class:`ExactValue` is that same
:class:`fractions.Fraction` — equal to it, with the same hash, usable in every arithmetic and
comparison a ``Fraction`` allows — whose ``str`` and ``repr`` are its **exact** decimal
expansion when it has a short one (``4.717``), and ``n/d`` otherwise (``1/3``: never a rounded
decimal that would misstate the release).

Arithmetic on an :class:`ExactValue` returns a plain ``Fraction`` (the standard library's
operators build ``Fraction``); wrap the result with :func:`readable` to print it the same way.

**Bounds**.  A computed bound is an exact rational that stands for an unknown true value on
one side of it: :class:`UpperBound` (an ε or δ that may be spent: the truth is at most it) and
:class:`LowerBound` (no analysis can do better).  They are the same ``Fraction`` (equal, same
hash, every operation).  Their ``repr`` is :func:`odp.budget.display_fraction`'s: exact when
the decimal is short (at most 12 significant digits: ``5.19262``), else rounded **away from
the truth** and marked (``≤5.19263`` for an upper bound, ``≥5.19262`` for a lower one); their
``str`` stays the exact :func:`decimal_text`, which reads back as the same number.
:class:`Interval` is the pair ``(lower, upper)`` that contains the true value -- the one public
interval of odp (privacy buckets' ``get_epsilon_interval``,
:func:`odp.rdp.subsampled_gaussian_rdp_bracket`).  The Decimal enclosures of odp's internal
interval arithmetic are another thing, named for it: :class:`odp.intervals.DecimalInterval`.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Iterable, NamedTuple

from .budget import FRACTION_DECIMAL_PLACES, display_fraction, format_fraction, to_fraction
from .errors import InvalidBudget

__all__ = ["ExactValue", "readable", "decimal_text", "MAX_DECIMAL_DIGITS", "UpperBound",
           "LowerBound", "Interval"]

#: Longest fractional part printed as a decimal; a finite decimal with more digits (e.g. a
#: multiple of 2⁻¹⁰⁰) is printed as ``n/d``, which is as exact and shorter.
MAX_DECIMAL_DIGITS = FRACTION_DECIMAL_PLACES


def decimal_text(value: Fraction) -> str:
    """``value`` exactly: its terminating decimal expansion (``4.717``, ``-0.5``, ``12``) when
    it has at most :data:`MAX_DECIMAL_DIGITS` fractional digits, else ``n/d`` (``1/3``) — the
    same text as :func:`odp.budget.format_fraction` gives budgets."""
    return format_fraction(value)


class ExactValue(Fraction):
    """A released exact rational that prints as :func:`decimal_text` (module docstring)."""

    __slots__ = ()

    def __str__(self) -> str:
        return decimal_text(self)

    def __repr__(self) -> str:
        return decimal_text(self)

    def __reduce__(self) -> tuple[type["ExactValue"], tuple[int, int]]:
        return (ExactValue, (self.numerator, self.denominator))

    def __copy__(self) -> "ExactValue":
        return self

    def __deepcopy__(self, memo: Any) -> "ExactValue":
        return self


def readable(value: Fraction | int) -> ExactValue:
    """``value`` as an :class:`ExactValue` (the same number)."""
    if isinstance(value, ExactValue):
        return value
    return ExactValue(value)


class UpperBound(ExactValue):
    """An exact rational that bounds a true value from above (an ε or δ that may be spent).
    Its ``repr`` is exact when short, else rounded up and marked ``≤`` (module docstring)."""

    __slots__ = ()

    def __repr__(self) -> str:  # str() stays exact (decimal_text): text that reads back
        return display_fraction(self, "up")

    def __reduce__(self) -> tuple[type["UpperBound"], tuple[int, int]]:
        return (UpperBound, (self.numerator, self.denominator))


class LowerBound(ExactValue):
    """An exact rational that bounds a true value from below.  Its ``repr`` is exact when
    short, else rounded down and marked ``≥`` (module docstring)."""

    __slots__ = ()

    def __repr__(self) -> str:  # str() stays exact (decimal_text): text that reads back
        return display_fraction(self, "down")

    def __reduce__(self) -> tuple[type["LowerBound"], tuple[int, int]]:
        return (LowerBound, (self.numerator, self.denominator))


def upper_bound(value: Fraction | int) -> UpperBound:
    """``value`` as an :class:`UpperBound` (the same number)."""
    return value if isinstance(value, UpperBound) else UpperBound(value)


def lower_bound(value: Fraction | int) -> LowerBound:
    """``value`` as a :class:`LowerBound` (the same number)."""
    return value if isinstance(value, LowerBound) else LowerBound(value)


class _Ends(NamedTuple):
    lower: Fraction
    upper: Fraction | float


class Interval(_Ends):
    """A closed interval ``[lower, upper]`` of exact rationals that contains a true value:
    ``lower`` is a :class:`LowerBound`, ``upper`` an :class:`UpperBound` -- or ``math.inf``
    when no finite bound exists (e.g. ε for a δ below the mass of distinguishing events).

    A ``NamedTuple``: ``lo, up = interval`` works; it prints as
    ``Interval(lower=633.929519402, upper=633.930302311)`` (short decimals, marked when
    rounded; the exact values are the fields themselves, and :meth:`to_json`)."""

    __slots__ = ()

    def __new__(cls, lower: Fraction | int, upper: Fraction | int | float) -> "Interval":
        up: Fraction | float = math.inf if upper == math.inf else upper_bound(Fraction(upper))
        return super().__new__(cls, lower_bound(Fraction(lower)), up)

    @classmethod  # _replace builds through here: through __new__, so the ends keep their types
    def _make(cls, iterable: Iterable[Any]) -> "Interval":  # type: ignore[override]  # same call
        return cls(*iterable)

    @property
    def width(self) -> float:
        return float(self.upper) - float(self.lower)

    def __contains__(self, value: object) -> bool:
        try:
            v = to_fraction(value)
        except InvalidBudget:
            return False
        return self.lower <= v and (self.upper == math.inf or v <= self.upper)

    def to_json(self) -> dict[str, Any]:
        up = self.upper
        return {
            "lower": str(Fraction(self.lower)),
            "upper": "inf" if up == math.inf else str(Fraction(up)),
            "lower_float": float(self.lower),
            "upper_float": float(up),
        }

"""Exact released numbers that print readably (issue 27, item 4).

A release on a grid is an exact rational: ``acc.run(LaplaceMechanism(...), data)`` on the default
grid ``g = Δ/1000`` returns ``4717/1000``.  :class:`ExactValue` is that same
:class:`fractions.Fraction` — equal to it, with the same hash, usable in every arithmetic and
comparison a ``Fraction`` allows — whose ``str`` and ``repr`` are its **exact** decimal
expansion when it has a short one (``4.717``), and ``n/d`` otherwise (``1/3``: never a rounded
decimal that would misstate the release).

Arithmetic on an :class:`ExactValue` returns a plain ``Fraction`` (the standard library's
operators build ``Fraction``); wrap the result with :func:`readable` to print it the same way.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from .budget import FRACTION_DECIMAL_PLACES, format_fraction

__all__ = ["ExactValue", "readable", "decimal_text", "MAX_DECIMAL_DIGITS"]

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

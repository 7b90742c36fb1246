"""Directed conversions between exact rationals and floats (one implementation for odp).

* :func:`float_down` / :func:`float_up`: the nearest float on a chosen side of an exact value
  (overflow-safe: beyond the float range the answer is ``±max float`` on the inner side and
  ``±inf`` on the outer side, never a value on the wrong side);
* :func:`round_down_significant` / :func:`round_up_significant`: a *short* rational (about
  ``digits`` significant decimal digits) on a chosen side of an exact value or of a float —
  used to print rigorous bounds compactly and to keep denominators small.

Every function is exact: the result is compared with the input as a ``Fraction``.
"""

from __future__ import annotations

import math
import sys
from fractions import Fraction
from typing import Any

from .rational import ceil_fraction, floor_fraction

__all__ = [
    "float_down",
    "float_up",
    "round_down_significant",
    "round_up_significant",
    "significant_places",
]

_MAX = sys.float_info.max


def _exact(x: Any) -> Fraction:
    """``x`` as an exact Fraction (ints, Fractions, floats by their binary value)."""
    if isinstance(x, float) and not math.isfinite(x):
        raise ValueError(f"expected a finite number, got {x!r}")
    return x if isinstance(x, Fraction) else Fraction(x)


def _nearest(x: Fraction) -> float:
    """``float(x)`` (correctly rounded: int / int true division), or ``±inf`` beyond the range."""
    try:
        return float(x)
    except OverflowError:
        return math.inf if x > 0 else -math.inf


def float_down(x: Any) -> float:
    """The largest float ``<= x`` (``-inf`` below ``-max float``; ``max float`` above it)."""
    x = _exact(x)
    f = _nearest(x)
    if f == math.inf:
        return _MAX
    if f != -math.inf and Fraction(f) > x:
        f = math.nextafter(f, -math.inf)
    return f


def float_up(x: Any) -> float:
    """The smallest float ``>= x`` (``inf`` above ``max float``; ``-max float`` below it)."""
    x = _exact(x)
    f = _nearest(x)
    if f == -math.inf:
        return -_MAX
    if f != math.inf and Fraction(f) < x:
        f = math.nextafter(f, math.inf)
    return f


def significant_places(x: Fraction, digits: int) -> int:
    """The number of decimal places that keep about ``digits`` significant digits of ``x ≠ 0``
    (``0`` for large ``x``).  Works for Fractions of any size (no float overflow)."""
    exp10 = math.floor(math.log10(abs(x.numerator)) - math.log10(x.denominator))
    return max(0, digits - 1 - exp10)


def round_up_significant(x: Any, digits: int = 12) -> Fraction:
    """A short rational ``>= x``: ``x`` rounded *up* to about ``digits`` significant decimal
    digits (a multiple of ``10**-places``).  ``x`` may be a Fraction, an int or a float (its
    exact binary value); negative values are rounded towards ``+inf`` as well."""
    x = _exact(x)
    if x == 0:
        return Fraction(0)
    if x < 0:
        return -round_down_significant(-x, digits)
    return ceil_fraction(x, 10 ** significant_places(x, digits))


def round_down_significant(x: Any, digits: int = 12) -> Fraction:
    """A short rational ``<= x``: ``x`` rounded *down* to about ``digits`` significant decimal
    digits (see :func:`round_up_significant`)."""
    x = _exact(x)
    if x == 0:
        return Fraction(0)
    if x < 0:
        return -round_up_significant(-x, digits)
    return floor_fraction(x, 10 ** significant_places(x, digits))

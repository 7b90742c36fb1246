"""Amounts as natural numbers in units of ``1/D`` (``D``: the lcm of their denominators).

The certificate text (:mod:`odp.certs.format`) and the ``mech`` rows
(:mod:`odp.certs.mechanisms`) both scale exact amounts this way.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Iterable

from ..errors import CertificateError

__all__ = ["common_denominator", "in_units", "to_units"]


def common_denominator(values: Iterable[Fraction]) -> int:
    """D: the lcm of the denominators, so that every value is a whole number of units 1/D."""
    return math.lcm(1, *((v if type(v) is Fraction else Fraction(v)).denominator
                         for v in values))


def in_units(x: Fraction, d: int) -> int:
    """``x·D`` as a natural number (``x`` must be a non-negative multiple of ``1/D``).

    Integer arithmetic only (this runs on every enforced transition): ``x = p/q`` in lowest
    terms is a whole number of units ``1/D`` iff ``q`` divides ``D``, and then ``x·D = p·(D/q)``.
    """
    f = x if type(x) is Fraction else Fraction(x)
    units, rest = divmod(d, f.denominator)
    if rest or f.numerator < 0:
        raise CertificateError(f"{x} is not a natural number of units 1/{d}")
    return f.numerator * units


def to_units(values: Iterable[Fraction]) -> tuple[int, list[int]]:
    """``(D, [v·D for v in values])`` with ``D = common_denominator(values)``, in one pass of
    integer arithmetic (the same numbers as :func:`common_denominator` and :func:`in_units`;
    this runs on every enforced transition).  A negative value raises :class:`CertificateError`
    like :func:`in_units`."""
    ratios = [(v if type(v) is Fraction else Fraction(v)).as_integer_ratio() for v in values]
    d = math.lcm(1, *[q for _, q in ratios])
    scaled = [n * (d // q) for n, q in ratios]
    if scaled and min(scaled) < 0:
        n, q = next((n, q) for n, q in ratios if n < 0)
        raise CertificateError(f"{Fraction(n, q)} is not a natural number of units 1/{d}")
    return d, scaled

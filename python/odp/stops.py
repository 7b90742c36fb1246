"""Stopping points ``k_1 < … < k_n`` of Alg. 3 (Hartmann et al. 2022): the one parser, shared by
:mod:`odp.composition`, :mod:`odp.mechanisms.iterative` and :mod:`odp.optdel` (which must not
import each other for it)."""

from __future__ import annotations

from typing import Iterable

from .budget import parse_positive_int
from .errors import InvalidParameter

__all__ = ["parse_stops"]


def parse_stops(stops: Iterable[object]) -> tuple[int, ...]:
    """The stopping points ``k_1 < … < k_n`` of Alg. 3: strictly increasing integers ``>= 1``
    (at least one).  Any :class:`numbers.Integral` is accepted (e.g. ``numpy.int64``), ``bool``
    is refused.  The one parser of stopping points in odp (:mod:`odp.optdel` uses it too)."""
    if isinstance(stops, (str, bytes)) or not hasattr(stops, "__iter__"):
        raise InvalidParameter(
            f"stops must be a list of step counts such as [10, 20], got {stops!r}")
    out: list[int] = []
    for raw in stops:
        s = parse_positive_int(raw, name="a stopping point")
        if out and s <= out[-1]:
            raise InvalidParameter(
                f"stopping points must increase strictly, got {out[-1]} then {s}")
        out.append(s)
    if not out:
        raise InvalidParameter("give at least one stopping point")
    return tuple(out)

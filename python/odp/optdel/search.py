"""Bisection over integers, shared by OptDel's searches (grids, cost levels, kernel cuts)."""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["first_true"]


def first_true(ok: Callable[[int], bool], lo: int, hi: int) -> int:
    """Smallest ``m`` in ``[lo, hi]`` with ``ok(m)``, for ``ok`` monotone (false, then true)
    and ``ok(hi)`` true; ``O(log(hi - lo))`` calls."""
    while lo < hi:
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid + 1
    return lo

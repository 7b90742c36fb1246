"""Plain notes on OptDel results that say nothing: a trivial bound or a grid coarser than a step.

Hartmann et al. 2022, Sec. 5.2.  When the exact lattice does not fit ``max_cells``
(:mod:`odp.optdel.bounds` rounds every ``epsilon_k`` to a coarser grid ``h``, Lemma D of
:mod:`odp.optdel.exact`), the bounds stay rigorous but can become useless: OptDel is always in
``[0, 1]``, so an upper bound ``>= 1`` carries no information, and a grid coarser than the
smallest step rounds that step to ``0`` (lower bound) or to a whole ``h`` (upper bound).
:func:`uninformative` detects both and says what it would take to get a useful answer: the
``--max-cells`` at which the exact lattice (or the homogeneous fast path of
:mod:`odp.optdel.homogeneous`) is used, or a finer ``--grid``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

from . import bounds, homogeneous, lattice
from .bounds import OptDelBound
from .problem import EpsProblem

__all__ = ["needed_max_cells", "uninformative"]

#: Above this many cells the exact lattice is not worth suggesting (about an hour of work).
_SUGGEST_CELLS = 10**12


def needed_max_cells(epsilons: Sequence[Fraction], costs: Sequence[Fraction],
                     h: Fraction) -> int:
    """Cells of one lattice pass on the grid ``h`` (the ``max_cells`` at which
    :mod:`odp.optdel.bounds` uses that grid)."""
    eps = list(epsilons)
    return bounds._cells_estimate(eps, h, lattice.default_window(h, eps, costs))


def _homogeneous_cells(eps: Fraction, k_n: int, stops: Sequence[int],
                       costs: Sequence[Fraction]) -> int:
    """The ``max_cells`` at which the homogeneous segment pass is used (``macs / 25``)."""
    window = lattice.default_window(eps, [eps] * k_n, costs)
    inst = lattice.LatticeInstance(eps, (1,) * k_n, (Fraction(0),) * k_n, tuple(stops),
                                   tuple(costs), window)
    macs = homogeneous.segment_macs(inst, eps)
    return -(-macs // bounds._MACS_PER_CELL)


def _nice_below(x: Fraction) -> Fraction:
    """The largest ``1, 2 or 5 x 10^e`` that is ``<= x`` (``x > 0``)."""
    e = len(str(x.numerator)) - len(str(x.denominator)) + 1
    while True:
        for m in (5, 2, 1):
            c = Fraction(m) * Fraction(10) ** e
            if c <= x:
                return c
        e -= 1


def uninformative(results: Mapping[str, OptDelBound | None], problem: EpsProblem, *,
                  max_cells: int, grid_forced: bool = False) -> dict[str, Any] | None:
    """``None`` when every bound says something; otherwise a JSON-ready dict with the names of
    the trivial bounds (upper ``>= 1``), the grid, the smallest step epsilon, the suggested
    ``max_cells`` / ``grid`` and a one-line ``message``.

    ``results`` maps a label (``"thm15"``, ``"lemma11"``) to its bound (``None``: not
    computed) for the ordinary parametrisation ``problem``; ``grid_forced``: the grid was
    given by the caller (the suggestion then says to drop it)."""
    epsilons, stops, costs = problem.epsilons, problem.stops, problem.costs
    positive = [e for e in set(epsilons) if e > 0]
    smallest = min(positive) if positive else None

    def coarse(b: OptDelBound) -> bool:
        return b.grid is not None and smallest is not None and b.grid > smallest

    trivial = [n for n, b in results.items() if b is not None and b.upper >= 1]
    flagged = [n for n, b in results.items() if b is not None and (b.upper >= 1 or coarse(b))]
    if not flagged:
        return None
    grids = [b.grid for b in results.values() if b is not None and b.grid is not None and coarse(b)]
    grid = max(grids) if grids else None
    # exact states (no epsilon rounded, grid not coarse): a finer grid cannot help
    rounded = any(b is not None and n in flagged and (coarse(b) or b.details.get("epsilons_rounded"))
                  for n, b in results.items())
    suggestion: dict[str, Any] = {"max_cells_needed": None, "suggested_grid": None}
    eps = list(epsilons)
    if not rounded:
        pass
    elif problem.homogeneous and smallest is not None:
        suggestion["max_cells_needed"] = _homogeneous_cells(smallest, len(eps), stops, costs)
    else:
        unit = bounds._gcd_unit(eps)
        if unit is not None:
            cells = needed_max_cells(eps, costs, unit)
            if cells <= _SUGGEST_CELLS:
                suggestion["max_cells_needed"] = cells
        if suggestion["max_cells_needed"] is None and smallest is not None:
            h = _nice_below(smallest / 10)
            suggestion = {"max_cells_needed": needed_max_cells(eps, costs, h),
                          "suggested_grid": str(h)}
    what = " and ".join({"thm15": "Thm. 15", "lemma11": "Lemma 11"}.get(n, n) for n in flagged)
    why = []
    if grid is not None and smallest is not None:
        why.append(f"h = {float(grid):.3g} is coarser than the smallest step epsilon "
                   f"{float(smallest):.3g}")
    if trivial:
        why.append("upper >= 1")
    noun = "bounds are" if len(flagged) > 1 else "bound is"
    need = suggestion["max_cells_needed"]
    if not rounded:
        message = (f"the {what} {noun} uninformative ({'; '.join(why)}) without any rounding of "
                   "the epsilons: the costs E(P_i) are too small for these steps")
    else:
        message = f"the {what} {noun} uninformative at this grid ({'; '.join(why)})"
        if need is None:
            message += ": set a finer --grid and a larger --max-cells"
        else:
            if suggestion["suggested_grid"] is None:
                message += f": the exact lattice needs --max-cells {need}"
                if grid_forced:
                    message += " and no --grid"
            else:
                message += f": try --grid {suggestion['suggested_grid']} with --max-cells {need}"
            if need > max_cells and not grid_forced:
                message += f" (now {max_cells})"
    return {
        "bounds": flagged,
        "trivial": trivial,
        "grid": None if grid is None else str(grid),
        "smallest_epsilon": None if smallest is None else str(smallest),
        "max_cells": max_cells,
        **suggestion,
        "message": message,
    }

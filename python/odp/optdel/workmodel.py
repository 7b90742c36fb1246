"""Cost-model constants of OptDel and the rule that picks the homogeneous fast path.

Shared by :mod:`odp.optdel.cost` (the up-front estimate behind the limits and the progress bar)
and :mod:`odp.optdel.bounds` (which algorithm runs), so both agree on when the segment pass of
:mod:`odp.optdel.homogeneous` (Hartmann et al. 2022, Sec. 5.2, Thm. 15) is used.
``bench/optdel.py`` (``cost_model``) measures the per-operation times.
"""

from __future__ import annotations

__all__ = ["MACS_PER_CELL", "fast_path_fits"]

SECONDS_PER_STEP = 3e-5  # per lattice pass, per depth
SECONDS_PER_CELL = 1.5e-8  # per lattice cell visited (3-5 ns measured in 2026; kept high)
SECONDS_EQ4 = 2.3e-9  # Eq. (4) bracket: times k_n**2 * max(n, 10)
BYTES_PER_STEP = 1000  # parsed steps, per-depth tables
BASE_BYTES = 64 * 2**20  # lattice rows and temporaries of one pass (max_cells-bounded width)
# homogeneous fast paths (measured 2026: 0.25-0.65 ns per multiply-add, ~1.5 us per step of
# parsing and set-up, ~0.5 us per factorial product, ~1.5 ms per certified prefix bound)
SECONDS_PER_MAC = 1e-9
SECONDS_PER_STEP_HOMOGENEOUS = 3e-6
SECONDS_PER_PREFIX_BOUND = 3e-3
SECONDS_PER_FACTORIAL_STEP = 1e-6
# The fast path is used while its multiply-adds fit 25 max_cells.  Measured, one lattice cell
# costs about as much as 8 multiply-adds (bench/optdel.py, cost_model); the segment pass gets
# 25 because its alternative at that size is a rounded grid, not the exact lattice.
MACS_PER_CELL = 25


def fast_path_fits(macs: int, k_n: int, max_cells: int) -> bool:
    """Whether the homogeneous segment pass (``macs`` multiply-adds) is used: while it fits
    ``MACS_PER_CELL * max_cells``, and beyond that while it is no slower than one pass of the
    general lattice it would fall back to (``k_n`` per-depth steps and up to ``max_cells``
    cells, on a rounded grid)."""
    if macs <= MACS_PER_CELL * max_cells:
        return True
    return SECONDS_PER_MAC * macs <= SECONDS_PER_STEP * k_n + SECONDS_PER_CELL * max_cells

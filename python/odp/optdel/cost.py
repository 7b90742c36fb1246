"""Up-front cost of the OptDel entry points, and the guard that applies limits and progress.

:func:`guarded` wraps a public entry point (:func:`odp.optdel.optdel`, ...) with two keyword
parameters, ``limits`` (:class:`odp.limits.Limits`) and ``progress`` (:mod:`odp.progress`):
before computing, :func:`estimate` predicts the time and memory from ``k_n`` (the number of
steps), the number of stops and ``max_cells``, and the call is refused above the limits.  The
computation itself is unchanged.

The cost model is measured on a 2-core machine with the lattice of :mod:`odp.optdel.lattice`
(Thm. 15: one pass per bound, each about ``k_n`` per-depth steps plus at most ``max_cells``
cells) and the general Eq. (4) (about ``k_n**2 * n`` work).  Homogeneous steps
(``homogeneous=True``) take the fast paths of :mod:`odp.optdel.homogeneous`: Thm. 15 by segment
correlations with truncated kernels (``~11.5 sqrt(m)`` entries for a segment of ``m`` steps,
:func:`homogeneous_macs`), used while they fit (:func:`fast_path_fits`, also the rule of
:mod:`odp.optdel.bounds`), and Eq. (4) and its costs in closed form (dominated by bounds of
``C(k, u)``, ``O(k)`` once per process).  When the algorithms change, update the constants below
(``bench/optdel.py`` measures them; they live in :mod:`odp.optdel.workmodel`, which
:mod:`odp.optdel.bounds` shares).
"""

from __future__ import annotations

import functools
import math
from typing import Any, Callable

from ..limits import Estimate, Limits
from ..progress import timed

__all__ = ["estimate", "fast_path_fits", "gap_study_estimate", "guarded", "homogeneous_macs"]

from .workmodel import (  # noqa: F401  (the constants are part of this module's interface)
    BASE_BYTES,
    BYTES_PER_STEP,
    MACS_PER_CELL,
    SECONDS_EQ4,
    SECONDS_PER_CELL,
    SECONDS_PER_FACTORIAL_STEP,
    SECONDS_PER_MAC,
    SECONDS_PER_PREFIX_BOUND,
    SECONDS_PER_STEP,
    SECONDS_PER_STEP_HOMOGENEOUS,
    fast_path_fits,
)

_LABELS = {
    "thm15": "OptDel (Thm. 15)",
    "thm15_upper": "OptDel upper bound (Thm. 15)",
    "lemma11": "the Lemma 11 bound (Eq. 4)",
    "lemma11_upper": "the Lemma 11 bound (Eq. 4), upper end",
    "lemma11_costs": "the Lemma 11 costs",
    "saving": "the OptDel saving search",
}


def homogeneous_macs(k_n: int, n_stops: int) -> int:
    """An upper estimate of the multiply-adds of one homogeneous Thm. 15 pass with ``n_stops``
    evenly spaced stops: the segment starting at depth ``a`` has at most ``a + 1`` states and a
    kernel of ``min(m + 1, 12 sqrt(m) + 2)`` entries (the loss window, which usually caps the
    states, is ignored)."""
    m = max(k_n // n_stops, 1)
    kernel = min(m + 1, int(12 * math.sqrt(m)) + 2)
    return sum((i * m + 1) * kernel for i in range(n_stops))


def estimate(quantity: str, k_n: int, n_stops: int, max_cells: int, *,
             homogeneous: bool = False) -> Estimate:
    """Estimated time and peak memory of one entry point (``quantity`` one of ``thm15``,
    ``thm15_upper``, ``lemma11``, ``lemma11_upper``, ``lemma11_costs``, ``saving``);
    ``homogeneous``: every step is the same ``(epsilon, delta)`` (the fast paths)."""
    k_n, n_stops = max(int(k_n), 1), max(int(n_stops), 1)
    cells = min(max_cells, k_n * k_n)  # a pass visits at most ~k_n^2 cells, and max_cells
    one_pass = SECONDS_PER_STEP * k_n + SECONDS_PER_CELL * cells
    eq4 = SECONDS_EQ4 * k_n * k_n * max(n_stops, 10)
    if homogeneous:
        macs = homogeneous_macs(k_n, n_stops)
        setup = SECONDS_PER_STEP_HOMOGENEOUS * k_n
        if fast_path_fits(macs, k_n, max_cells):
            one_pass = setup + SECONDS_PER_MAC * macs + SECONDS_PER_PREFIX_BOUND * n_stops
        # closed form: two bounds per stop, factorial tables up to k_n once
        eq4 = setup + SECONDS_PER_FACTORIAL_STEP * k_n + 2 * SECONDS_PER_PREFIX_BOUND * n_stops
    seconds = {
        "thm15": 2 * one_pass,
        "thm15_upper": one_pass,
        "lemma11": eq4 + 2 * one_pass,
        "lemma11_upper": eq4 / 2 + one_pass,
        "lemma11_costs": eq4 / 2 + 2 * one_pass,
        "saving": 15 * one_pass,  # a bisection of about 15 upper passes
    }[quantity]
    if homogeneous and quantity.startswith("lemma11"):
        # closed forms only (the costs certify about 5 prefix bounds per stop)
        seconds = eq4 * (3 if quantity == "lemma11_costs" else 1)
    return Estimate(_LABELS[quantity], seconds, BYTES_PER_STEP * k_n + BASE_BYTES,
                    knobs=f"k_n = {k_n} steps, {n_stops} stops")


def gap_study_estimate(grid: Any) -> Estimate:
    """Estimated cost of :func:`odp.optdel.gap.gap_study` on ``grid`` = (epsilons, delta_ks,
    k_ns, ns): per row Thm. 15, Eq. (4) and two saving searches."""
    epsilons, deltas, kns, ns = grid
    seconds, memory = 0.0, 0.0
    for k_n in kns:
        for n in ns:
            row = (estimate("thm15", k_n, n, 40_000_000) + estimate("lemma11", k_n, n, 40_000_000)
                   + estimate("saving", k_n, n, 40_000_000) + estimate("saving", k_n, n, 40_000_000))
            seconds += row.seconds * len(epsilons) * len(deltas)
            memory = max(memory, row.memory)
    rows = len(epsilons) * len(deltas) * len(kns) * len(ns)
    return Estimate(f"the gap study ({rows} rows)", seconds, memory,
                    knobs="--quick is about 20x faster")


def _size(value: Any) -> int | None:
    try:
        return len(value)
    except TypeError:
        return None


def _repeated(steps: Any) -> bool:
    """Every raw step is the same object or equal to the first (the homogeneous fast paths;
    numerically equal steps written differently just get the general, larger estimate)."""
    try:
        first = steps[0]
        return all(s is first or s == first for s in steps)
    except (TypeError, IndexError, KeyError):
        return False


def guarded(function: Callable[..., Any], quantity: str) -> Callable[..., Any]:
    """``function(stops, steps, ...)`` with ``limits=`` and ``progress=`` keyword parameters
    (see the module docstring)."""

    @functools.wraps(function)
    def wrapper(stops, steps, *args: Any, limits: Limits | None = None, progress: Any = None,
                **kwargs: Any):
        k_n, n = _size(steps), _size(stops)
        if k_n is None or n is None:  # iterators: the function itself will complain or cope
            return function(stops, steps, *args, **kwargs)
        from .bounds import DEFAULT_MAX_CELLS

        cells = kwargs.get("max_cells") or DEFAULT_MAX_CELLS
        fast = (not kwargs.get("exponential") and kwargs.get("grid") is None
                and _repeated(steps))
        est = (limits if limits is not None else Limits()).check(
            estimate(quantity, k_n, n, cells, homogeneous=fast))
        with timed(progress, est.seconds, est.what):
            return function(stops, steps, *args, **kwargs)

    wrapper.__doc__ = (function.__doc__ or "") + (
        "\n\n    ``limits`` (:class:`odp.limits.Limits`, default 4 GiB / 600 s) and ``progress`` "
        "(:mod:`odp.progress`): the call is estimated first (:func:`odp.optdel.cost.estimate`) "
        "and refused above the limits; a bar shows on a terminal.\n")
    return wrapper

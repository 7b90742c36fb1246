"""Public front end: rigorous brackets of OptDel (Thm. 15) and of the Lemma 11 bound (Eq. (4)).

See the package docstring of :mod:`odp.optdel` for the API and :mod:`odp.optdel.exact` for the
proofs.  This module only chooses an algorithm:

* exponential parametrisation (rational ``w_k``, ``W_i``): exact rational arithmetic -- the
  integer lattice algorithm when all ``w_k`` are equal, otherwise state merging by exact loss;
  if the losses do not merge (more than ``max_states`` states at a depth) it falls back to the
  lattice bounds below, applied to rigorous brackets of ``ln w_k`` and ``ln W_i``;
* ordinary parametrisation (``epsilon_k``, ``E(P_i)``): the rigorous floating-point lattice of
  :mod:`odp.optdel.lattice`, on the exact common unit of the ``epsilon_k`` when that lattice has
  at most ``max_cells`` cells (exact state space, bracket width ~1e-12 relative), otherwise on a
  coarser grid with every ``epsilon_k`` rounded up (upper bound) or down (lower bound).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from ..budget import format_fraction, to_fraction
from ..errors import InvalidParameter
from ..floats import round_down_significant, round_up_significant, significant_places
from ..rational import log_bracket
from . import exact, homogeneous, interp, lattice
from .workmodel import MACS_PER_CELL, fast_path_fits
from .problem import EpsProblem, ExpProblem
from .search import first_true
from ..types import Number

__all__ = [
    "DEFAULT_MAX_CELLS",
    "OptDelBound",
    "lemma11_delta",
    "lemma11_delta_upper",
    "optdel",
    "optdel_upper",
    "round_down_significant",
    "round_up_significant",
]

#: Lattice cells per pass (about 3-5 ns each on one core, ``bench/optdel.py``): ~0.2 s.
DEFAULT_MAX_CELLS = 40_000_000


@dataclass(frozen=True)
class OptDelBound:
    """A rigorous bracket ``lower <= value <= upper`` of Eq. (3) (``quantity="thm15"``, the
    optimal ODP delta of Thm. 15) or of Eq. (4) (``quantity="lemma11"``).

    ``lower`` is ``None`` when only the upper bound was asked for.  ``exact`` is true when the
    value itself is known (``lower == upper``).  ``exact_states`` says the state space was not
    approximated (no rounding of epsilons, no truncation): the bracket then only reflects
    floating-point rounding.  ``grid`` is the lattice step ``h`` (``None`` for rational
    arithmetic).
    """

    quantity: str
    lower: Fraction | None
    upper: Fraction
    method: str
    grid: Fraction | None = None
    exact_states: bool = True
    details: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def exact(self) -> bool:
        return self.lower is not None and self.lower == self.upper

    @property
    def relative_width(self) -> float | None:
        if self.lower is None:
            return None
        if self.upper == 0:
            return 0.0
        return float((self.upper - self.lower) / self.upper)

    def to_json(self) -> dict[str, Any]:
        """Exact ``p/q`` strings (``None`` if longer than 4000 digits) and decimals."""
        return {
            "quantity": self.quantity,
            "lower": None if self.lower is None else _fraction_text(self.lower),
            "upper": _fraction_text(self.upper),
            "lower_decimal": None if self.lower is None else _decimal_text(self.lower),
            "upper_decimal": _decimal_text(self.upper),
            "exact": self.exact,
            "exact_states": self.exact_states,
            "method": self.method,
            "grid": None if self.grid is None else str(self.grid),
            **({"details": self.details} if self.details else {}),
        }

    def __repr__(self) -> str:
        lo = "None" if self.lower is None else _decimal_text(self.lower)
        return (
            f"OptDelBound({self.quantity}: {lo} <= value <= {_decimal_text(self.upper)}, "
            f"method={self.method!r}, grid={self.grid})"
        )


def _fraction_text(x: Fraction) -> str | None:
    """Exact ``p/q`` text, or ``None`` when it is too long to print (> 4000 digits)."""
    if x.numerator.bit_length() > 13000 or x.denominator.bit_length() > 13000:
        return None
    return str(x)


def _decimal_text(x: Fraction, digits: int = 17) -> str:
    """A short decimal of ``x`` (nearest, for display only; bounds keep their exact values)."""
    if x == 0:
        return "0"
    places = significant_places(x, digits)
    return f"{float(Fraction(round(x * 10**places), 10**places)):.{digits}g}"


# --------------------------------------------------------------------------------------------
# grid selection
# --------------------------------------------------------------------------------------------


def _gcd_unit(values: Sequence[Fraction]) -> Fraction | None:
    """The largest rational ``u`` with every value an integer multiple of ``u``."""
    nz = [Fraction(v) for v in values if v != 0]
    if not nz:
        return None
    den = 1
    for v in nz:
        den = math.lcm(den, v.denominator)
    g = 0
    for v in nz:
        g = math.gcd(g, v.numerator * (den // v.denominator))
    return Fraction(g, den)


def _cells_estimate(eps: Sequence[Fraction], h: Fraction, window: tuple[int, int]) -> int:
    """Cells of one pass: ``sum_k min(R_k + 1, window width / 2 + 1)``."""
    total, R = 1, 0
    width_cap = (window[1] - window[0]) // 2 + 1
    for e in eps:
        R += -((-e) // h)  # ceil
        total += min(R + 1, width_cap)
    return int(total)


def _nice_grid(lower: Fraction, fits) -> Fraction:
    """The smallest step ``1, 2 or 5 x 10^e`` that is ``>= lower`` and satisfies the monotone
    predicate ``fits`` (coarser steps need fewer cells), found by bisection."""
    e10 = math.floor(math.log10(lower.numerator) - math.log10(lower.denominator)) - 1
    cands = [
        Fraction(m) * Fraction(10) ** e
        for e in range(e10, e10 + 40)
        for m in (1, 2, 5)
        if Fraction(m) * Fraction(10) ** e >= lower
    ]
    return cands[first_true(lambda i: fits(cands[i]), 0, len(cands) - 1)]


def _lattice_grid(
    eps: Sequence[Fraction], costs: Sequence[Fraction], max_cells: int
) -> tuple[Fraction, bool]:
    """``(h, exact)``: the exact common unit of the epsilons if its lattice fits in
    ``max_cells``, else a nice coarser step (epsilons then get rounded)."""
    unit = _gcd_unit(eps)
    if unit is None:
        return Fraction(1), True

    def cells_of(h: Fraction) -> int:
        return _cells_estimate(eps, h, lattice.default_window(h, eps, costs))

    if cells_of(unit) <= max_cells:
        return unit, True
    return _nice_grid(unit, lambda h: cells_of(h) <= max_cells), False


def _interp_cells_estimate(eps: Sequence[Fraction], h: Fraction, window: tuple[int, int]) -> int:
    total, J = 1, 0
    cap = window[1] - window[0] + 1
    for e in eps:
        J += int(e // h) + 1
        total += min(2 * J + 1, cap)
    return total


def _interp_grid(eps: Sequence[Fraction], costs: Sequence[Fraction], max_cells: int) -> Fraction:
    """Grid for :mod:`odp.optdel.interp` (its cells cost about twice a lattice cell)."""
    budget = max(1, max_cells // 2)
    tot = sum(eps, Fraction(0))
    if tot == 0:
        return Fraction(1)

    def fits(h: Fraction) -> bool:
        return _interp_cells_estimate(eps, h, lattice.default_window(h, eps, costs)) <= budget

    return _nice_grid(max(eps) / 10**6, fits)


def _instance(
    *,
    eps: Sequence[Fraction], deltas, stops, costs, h: Fraction, up: bool, window: tuple[int, int]
) -> lattice.LatticeInstance:
    if up:
        units = tuple(int(-((-e) // h)) for e in eps)
    else:
        units = tuple(int(e // h) for e in eps)
    return lattice.LatticeInstance(h, units, tuple(deltas), tuple(stops), tuple(costs), window)


def _lattice_bound(
    quantity: str,
    *,
    eps_up,
    eps_lo,
    deltas,
    stops,
    costs_up,
    costs_lo,
    grid,
    max_cells: int,
    want_lower: bool,
    method_prefix: str = "",
) -> OptDelBound:
    eps_up, eps_lo = list(eps_up), list(eps_lo)
    costs_up, costs_lo = list(costs_up), list(costs_lo)
    same = eps_up == eps_lo and costs_up == costs_lo
    if grid is not None:
        h = to_fraction(grid, name="grid")
        if h <= 0:
            raise InvalidParameter(f"grid must be > 0, got {format_fraction(h)}")
        h_lo, h_up = h, h
        exact_unit = same and all((e / h).denominator == 1 for e in eps_up)
        need = _cells_estimate(eps_up, h, lattice.default_window(h, eps_up, costs_up))
        if need > max_cells:
            raise InvalidParameter(
                f"grid {_decimal_text(h, 6)} gives a lattice of about {need:.3g} cells per pass, "
                f"more than max_cells = {max_cells} (--max-cells); use a coarser grid, or none "
                "(the automatic grid fits max_cells)")
    else:
        h_lo, exact_unit = _lattice_grid(eps_up, costs_up, max_cells)
        exact_unit = exact_unit and same
        h_up = h_lo if exact_unit else _interp_grid(eps_up, costs_up, max_cells)
    window = lattice.default_window(h_lo, eps_up, costs_up)
    inst_lo = _instance(eps=eps_lo, deltas=deltas, stops=stops, costs=costs_lo, h=h_lo, up=False, window=window)
    details: dict[str, Any] = {"epsilons_rounded": not exact_unit}
    if exact_unit:
        inst_up = _instance(eps=eps_up, deltas=deltas, stops=stops, costs=costs_up, h=h_lo, up=True, window=window)
        total_units = sum(inst_up.units)
        exact_states = window[0] <= -total_units and window[1] >= total_units
        details["cells_per_pass"] = lattice.cells(inst_up)
        if quantity == "thm15":
            upper = Fraction(lattice.thm15_pass(inst_up, True))
        else:
            upper = lattice.eq4_pass(inst_up, True)
        method = "lattice"
        grid_used = h_lo
    else:
        exact_states = False
        w_up = lattice.default_window(h_up, eps_up, costs_up)
        inst_i = interp.InterpInstance(
            h_up, tuple(eps_up), tuple(deltas), tuple(stops), tuple(costs_up), w_up
        )
        details["interp_cells"] = interp.interp_cells(inst_i)
        details["upper_grid"] = str(h_up)
        if quantity == "thm15":
            upper = Fraction(interp.interp_upper(inst_i))
        else:
            upper = interp.eq4_interp_upper(inst_i)
        method = "interp-upper/rounded-lower"
        grid_used = h_up
    lower = None
    if want_lower:
        details["lower_grid"] = str(h_lo)
        details["lower_cells"] = lattice.cells(inst_lo)
        if quantity == "thm15":
            lower = Fraction(lattice.thm15_pass(inst_lo, False))
        else:
            lower = lattice.eq4_pass(inst_lo, False)
    if quantity != "thm15":
        # the exact (1 - prod(1 - delta)) parts have huge denominators: round outwards
        upper = round_up_significant(upper, 20)
        lower = None if lower is None else round_down_significant(lower, 20)
    return OptDelBound(
        quantity,
        lower,
        upper,
        method_prefix + method,
        grid=grid_used,
        exact_states=exact_states,
        details=details,
    )


def _exp_fallback(quantity: str, problem: ExpProblem, *, grid, max_cells, want_lower) -> OptDelBound:
    """Lattice bounds for rational ``w_k`` whose losses do not merge: ``eps_k`` and ``E(P_i)``
    enclosed by :func:`odp.rational.log_bracket` (monotonicity, Lemma D)."""
    eps_b = [log_bracket(w) for w in problem.ws]
    E_b = [log_bracket(W) for W in problem.Ws]
    eps_up = [hi for _, hi in eps_b]
    eps_lo = [max(lo, Fraction(0)) for lo, _ in eps_b]
    costs_up = [max(lo, Fraction(0)) for lo, _ in E_b]  # smaller cost, larger delta
    costs_lo = [hi for _, hi in E_b]
    return _lattice_bound(
        quantity,
        eps_up=eps_up,
        eps_lo=eps_lo,
        deltas=problem.deltas,
        stops=problem.stops,
        costs_up=costs_up,
        costs_lo=costs_lo,
        grid=grid,
        max_cells=max_cells,
        want_lower=want_lower,
        method_prefix="log-bracket ",
    )


#: Multiply-adds of the homogeneous segment pass allowed per lattice cell of ``max_cells``
#: (one constant shared with the up-front estimate, :mod:`odp.optdel.workmodel`).
_MACS_PER_CELL = MACS_PER_CELL


def _homogeneous_bound(
    quantity: str, problem: EpsProblem, max_cells: int, want_lower: bool
) -> OptDelBound | None:
    """Homogeneous steps (:mod:`odp.optdel.homogeneous`): Eq. (4) in closed form (exact state
    space, only directed decimal rounding) and Eq. (3) by one correlation per segment between
    stops, on the exact lattice ``h = epsilon``.  ``None`` when the segment pass does not fit
    (:func:`odp.optdel.workmodel.fast_path_fits`; the caller then uses the general lattice code)."""
    eps, delta = problem.epsilons[0], problem.deltas[0]
    if eps == 0:
        return None
    stops, costs = problem.stops, problem.costs
    if quantity != "thm15":
        upper = homogeneous.eq4_bound(stops, epsilon=eps, delta=delta, costs=costs, up=True)
        lower = homogeneous.eq4_bound(stops, epsilon=eps, delta=delta, costs=costs, up=False) if want_lower else None
        return OptDelBound(
            quantity,
            None if lower is None else round_down_significant(lower, 20),
            round_up_significant(upper, 20),
            "homogeneous closed form",
            grid=eps,
            exact_states=True,
        )
    window = lattice.default_window(eps, problem.epsilons, costs)
    inst = lattice.LatticeInstance(eps, (1,) * problem.k_n, problem.deltas, stops, costs, window)
    macs = homogeneous.segment_macs(inst, eps)
    if not fast_path_fits(macs, problem.k_n, max_cells):
        return None
    upper = Fraction(homogeneous.thm15_pass(inst, eps, delta, True))
    lower = Fraction(homogeneous.thm15_pass(inst, eps, delta, False)) if want_lower else None
    return OptDelBound(
        quantity,
        lower,
        upper,
        "homogeneous segments",
        grid=eps,
        exact_states=window[0] <= -problem.k_n and window[1] >= problem.k_n,
        details={"multiply_adds_per_pass": macs, "epsilons_rounded": False},
    )


def _compute(
    quantity: str,
    *,
    stops,
    steps,
    costs,
    exponential: bool,
    grid,
    max_cells: int,
    max_states: int,
    want_lower: bool,
) -> OptDelBound:
    if exponential:
        problem = ExpProblem.parse(stops, steps, costs)
        lat = exact.common_lattice(problem)
        try:
            if lat is not None:
                w0, units = lat
                fn = exact.thm15_lattice_exact if quantity == "thm15" else exact.eq4_lattice_exact
                value = fn(w0, units=units, deltas=problem.deltas, stops=problem.stops,
                           Ws=problem.Ws)
                method = "exact integer lattice"
            else:
                fn2 = exact.thm15_exact if quantity == "thm15" else exact.eq4_exact
                value = fn2(problem, max_states=max_states)
                method = "exact state merging"
        except InvalidParameter:
            if lat is not None:
                raise
            return _exp_fallback(quantity, problem, grid=grid, max_cells=max_cells, want_lower=want_lower)
        return OptDelBound(quantity, value, value, method)
    eproblem = EpsProblem.parse(stops, steps, costs)
    if grid is None and homogeneous.is_homogeneous(eproblem.epsilons, eproblem.deltas):
        fast = _homogeneous_bound(quantity, eproblem, max_cells, want_lower)
        if fast is not None:
            return fast
    return _lattice_bound(
        quantity,
        eps_up=eproblem.epsilons,
        eps_lo=eproblem.epsilons,
        deltas=eproblem.deltas,
        stops=eproblem.stops,
        costs_up=eproblem.costs,
        costs_lo=eproblem.costs,
        grid=grid,
        max_cells=max_cells,
        want_lower=want_lower,
    )


def optdel(
    stops: Sequence[int],
    steps: Sequence[tuple[Number, Number]],
    costs: Sequence[Number],
    *,
    exponential: bool = False,
    grid: Any = None,
    max_cells: int = DEFAULT_MAX_CELLS,
    max_states: int = exact.DEFAULT_MAX_STATES,
) -> OptDelBound:
    """Rigorous bracket of ``OptDel({k_i}, {(eps_k, delta_k)}, E)`` of Thm. 15 (Eq. (3)).

    ``steps`` are ``(epsilon_k, delta_k)`` pairs, ``costs`` the values ``E(P_i)``, one per
    stopping point.  With ``exponential=True`` they are ``(w_k, delta_k)`` with ``w_k =
    e**epsilon_k`` and ``W_i = e**E(P_i)``, exact rationals, and the result is exact.
    ``grid`` forces the lattice step ``h`` (ordinary parametrisation only).
    """
    return _compute("thm15", stops=stops, steps=steps, costs=costs, exponential=exponential, grid=grid, max_cells=max_cells, max_states=max_states, want_lower=True)


def optdel_upper(
    stops: Sequence[int],
    steps: Sequence[tuple[Number, Number]],
    costs: Sequence[Number],
    *,
    exponential: bool = False,
    grid: Any = None,
    max_cells: int = DEFAULT_MAX_CELLS,
    digits: int | None = 12,
) -> Fraction:
    """A rigorous rational upper bound of OptDel (Thm. 15): the delta with which the iterative
    mechanism (Alg. 3) satisfies ``(P, E, delta)``-ODP for *every* choice of
    ``(epsilon_k, delta_k)``-DP steps and stopping rules.

    Exact (the value itself) for the exponential parametrisation; otherwise the upper end of
    :func:`optdel`, rounded up to ``digits`` significant decimal digits (``None``: the raw
    binary fraction).  This is the stable entry point for accountants ("optimal" composition).
    """
    b = _compute(
        "thm15", stops=stops, steps=steps, costs=costs, exponential=exponential, grid=grid, max_cells=max_cells, max_states=exact.DEFAULT_MAX_STATES, want_lower=False
    )
    if b.exact or exponential or digits is None:
        return b.upper
    return round_up_significant(b.upper, digits)


def lemma11_delta(
    stops: Sequence[int],
    steps: Sequence[tuple[Number, Number]],
    costs: Sequence[Number],
    *,
    exponential: bool = False,
    grid: Any = None,
    max_cells: int = DEFAULT_MAX_CELLS,
    max_states: int = exact.DEFAULT_MAX_STATES,
) -> OptDelBound:
    """Rigorous bracket of Eq. (4): the delta of Lemma 11 with the optimal (Murtagh-Vadhan)
    composition of every prefix ``k_i`` at ``epsilon = E(P_i)``."""
    return _compute("lemma11", stops=stops, steps=steps, costs=costs, exponential=exponential, grid=grid, max_cells=max_cells, max_states=max_states, want_lower=True)


def lemma11_delta_upper(
    stops,
    steps,
    costs,
    *,
    exponential: bool = False,
    grid: Any = None,
    max_cells: int = DEFAULT_MAX_CELLS,
) -> Fraction:
    """Upper end of :func:`lemma11_delta` (exact for the exponential parametrisation)."""
    return _compute(
        "lemma11",
        stops=stops,
        steps=steps,
        costs=costs,
        exponential=exponential,
        grid=grid,
        max_cells=max_cells,
        max_states=exact.DEFAULT_MAX_STATES,
        want_lower=False,
    ).upper

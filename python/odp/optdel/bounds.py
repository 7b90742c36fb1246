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
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Sequence

from ..budget import format_fraction, to_fraction
from ..errors import InvalidParameter
from ..rational import ceil_fraction, floor_fraction, log_bracket
from . import exact, lattice
from .problem import EpsProblem, ExpProblem

__all__ = [
    "OptDelBound",
    "optdel",
    "optdel_upper",
    "lemma11_delta",
    "lemma11_delta_upper",
    "DEFAULT_MAX_CELLS",
    "round_up_significant",
    "round_down_significant",
]

#: Lattice cells per pass (about 10-15 ns each on one core): ~0.5 s.
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


def _places(x: Fraction, digits: int) -> int:
    exp10 = math.floor(_log10(x))
    return max(0, digits - 1 - exp10)


def _log10(x: Fraction) -> float:
    # log10 of a positive Fraction of any size (floats would overflow)
    return math.log10(x.numerator) - math.log10(x.denominator)


def round_up_significant(x: Fraction, digits: int = 12) -> Fraction:
    """``x`` rounded *up* to ``digits`` significant decimal digits (``x >= 0``)."""
    x = Fraction(x)
    if x <= 0:
        return Fraction(0)
    return ceil_fraction(x, 10 ** _places(x, digits))


def round_down_significant(x: Fraction, digits: int = 12) -> Fraction:
    """``x`` rounded *down* to ``digits`` significant decimal digits (``x >= 0``)."""
    x = Fraction(x)
    if x <= 0:
        return Fraction(0)
    return floor_fraction(x, 10 ** _places(x, digits))


def _fraction_text(x: Fraction) -> str | None:
    """Exact ``p/q`` text, or ``None`` when it is too long to print (> 4000 digits)."""
    if x.numerator.bit_length() > 13000 or x.denominator.bit_length() > 13000:
        return None
    return str(x)


def _decimal_text(x: Fraction, digits: int = 17) -> str:
    """A short decimal of ``x`` (nearest, for display only; bounds keep their exact values)."""
    if x == 0:
        return "0"
    places = _places(x, digits)
    q = round(x * 10**places)
    return format(Fraction(q, 10**places).__float__(), ".%dg" % digits) if places < 300 else (
        f"{float(x):.{digits}g}")


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


def _choose_grid(eps: Sequence[Fraction], costs: Sequence[Fraction], grid: Any,
                 max_cells: int) -> Fraction:
    if grid is not None:
        h = to_fraction(grid, name="grid")
        if h <= 0:
            raise InvalidParameter(f"grid must be > 0, got {format_fraction(h)}")
        return h
    unit = _gcd_unit(eps)
    if unit is None:
        return Fraction(1)
    h = unit
    window = lattice.default_window(h, eps, costs)
    c = _cells_estimate(eps, h, window)
    if c <= max_cells:
        return h
    # coarsen: the smallest "nice" step 1, 2 or 5 times a power of ten that fits the budget
    target = h * c / max_cells
    e10 = math.floor(math.log10(target.numerator) - math.log10(target.denominator)) - 1
    while True:
        for mant in (1, 2, 5):
            cand = Fraction(mant) * Fraction(10) ** e10
            if cand < target:
                continue
            window = lattice.default_window(cand, eps, costs)
            if _cells_estimate(eps, cand, window) <= max_cells:
                return cand
        e10 += 1


def _instance(eps: Sequence[Fraction], deltas, stops, costs, h: Fraction, up: bool,
              window: tuple[int, int]) -> lattice.LatticeInstance:
    if up:
        units = tuple(int(-((-e) // h)) for e in eps)
    else:
        units = tuple(int(e // h) for e in eps)
    return lattice.LatticeInstance(h, units, tuple(deltas), tuple(stops), tuple(costs), window)


def _lattice_bound(quantity: str, eps_up, eps_lo, deltas, stops, costs_up, costs_lo, grid,
                   max_cells: int, want_lower: bool, method_prefix: str = "") -> OptDelBound:
    h = _choose_grid(list(eps_up), list(costs_up), grid, max_cells)
    window = lattice.default_window(h, list(eps_up), list(costs_up))
    inst_up = _instance(eps_up, deltas, stops, costs_up, h, True, window)
    inst_lo = _instance(eps_lo, deltas, stops, costs_lo, h, False, window)
    total_units = sum(inst_up.units)
    full = window[0] <= -total_units and window[1] >= total_units
    exact_states = inst_up.units == inst_lo.units and full and list(costs_up) == list(costs_lo)
    if quantity == "thm15":
        upper = Fraction(lattice.thm15_pass(inst_up, True))
        lower = Fraction(lattice.thm15_pass(inst_lo, False)) if want_lower else None
    else:
        # the exact (1 - prod(1 - delta)) parts have huge denominators: round outwards
        upper = round_up_significant(lattice.eq4_pass(inst_up, True), 20)
        lower = (
            round_down_significant(lattice.eq4_pass(inst_lo, False), 20) if want_lower else None
        )
    return OptDelBound(
        quantity,
        lower,
        upper,
        method_prefix + ("lattice" if exact_states else "lattice-grid"),
        grid=h,
        exact_states=exact_states,
        details={"cells_per_pass": lattice.cells(inst_up)},
    )


def _exp_fallback(quantity: str, problem: ExpProblem, grid, max_cells, want_lower) -> OptDelBound:
    """Lattice bounds for rational ``w_k`` whose losses do not merge: ``eps_k`` and ``E(P_i)``
    enclosed by :func:`odp.rational.log_bracket` (monotonicity, Lemma D)."""
    eps_b = [log_bracket(w) for w in problem.ws]
    E_b = [log_bracket(W) for W in problem.Ws]
    eps_up = [hi for _, hi in eps_b]
    eps_lo = [max(lo, Fraction(0)) for lo, _ in eps_b]
    costs_up = [max(lo, Fraction(0)) for lo, _ in E_b]  # smaller cost, larger delta
    costs_lo = [hi for _, hi in E_b]
    return _lattice_bound(quantity, eps_up, eps_lo, problem.deltas, problem.stops, costs_up,
                          costs_lo, grid, max_cells, want_lower, method_prefix="log-bracket ")


def _compute(quantity: str, stops, steps, costs, exponential: bool, grid, max_cells: int,
             max_states: int, want_lower: bool) -> OptDelBound:
    if exponential:
        problem = ExpProblem.parse(stops, steps, costs)
        lat = exact.common_lattice(problem)
        try:
            if lat is not None:
                w0, units = lat
                fn = exact.thm15_lattice_exact if quantity == "thm15" else exact.eq4_lattice_exact
                value = fn(w0, units, problem.deltas, problem.stops, problem.Ws)
                method = "exact integer lattice"
            else:
                fn2 = exact.thm15_exact if quantity == "thm15" else exact.eq4_exact
                value = fn2(problem, max_states=max_states)
                method = "exact state merging"
        except InvalidParameter:
            if lat is not None:
                raise
            return _exp_fallback(quantity, problem, grid, max_cells, want_lower)
        return OptDelBound(quantity, value, value, method)
    problem = EpsProblem.parse(stops, steps, costs)
    return _lattice_bound(quantity, problem.epsilons, problem.epsilons, problem.deltas,
                          problem.stops, problem.costs, problem.costs, grid, max_cells,
                          want_lower)


def optdel(
    stops: Sequence[int],
    steps: Sequence[tuple[Any, Any]],
    costs: Sequence[Any],
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
    return _compute("thm15", stops, steps, costs, exponential, grid, max_cells, max_states, True)


def optdel_upper(
    stops: Sequence[int],
    steps: Sequence[tuple[Any, Any]],
    costs: Sequence[Any],
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
    b = _compute("thm15", stops, steps, costs, exponential, grid, max_cells,
                 exact.DEFAULT_MAX_STATES, False)
    if b.exact or exponential or digits is None:
        return b.upper
    return round_up_significant(b.upper, digits)


def lemma11_delta(
    stops: Sequence[int],
    steps: Sequence[tuple[Any, Any]],
    costs: Sequence[Any],
    *,
    exponential: bool = False,
    grid: Any = None,
    max_cells: int = DEFAULT_MAX_CELLS,
    max_states: int = exact.DEFAULT_MAX_STATES,
) -> OptDelBound:
    """Rigorous bracket of Eq. (4): the delta of Lemma 11 with the optimal (Murtagh-Vadhan)
    composition of every prefix ``k_i`` at ``epsilon = E(P_i)``."""
    return _compute("lemma11", stops, steps, costs, exponential, grid, max_cells, max_states,
                    True)


def lemma11_delta_upper(stops, steps, costs, *, exponential: bool = False, grid: Any = None,
                        max_cells: int = DEFAULT_MAX_CELLS) -> Fraction:
    """Upper end of :func:`lemma11_delta` (exact for the exponential parametrisation)."""
    return _compute("lemma11", stops, steps, costs, exponential, grid, max_cells,
                    exact.DEFAULT_MAX_STATES, False).upper

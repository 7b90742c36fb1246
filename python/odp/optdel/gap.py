"""The gap between Lemma 11 (Eq. (4)) and Thm. 15 (Eq. (3)), left open by Hartmann et al. 2022,
Sec. 5.2.

For a grid of settings, the costs ``E(P_i)`` are chosen the way a user of Lemma 11 would: the
smallest ones whose Eq. (4) delta, split equally over the ``n`` stopping points, is at most a
total ``delta`` (:func:`odp.optdel.lemma11_costs`).  For those costs the study reports

* ``ratio``: Eq. (4) / OptDel, as a rigorous lower bound ``lower(Eq. 4) / upper(OptDel)``;
* ``saving_last``: the largest ``t`` such that OptDel with the last cost lowered to
  ``E(P_n) - t`` is still ``<= delta`` (:func:`odp.optdel.optdel_saving`) -- the epsilon that
  Thm. 15 gives back on a run that never stops early, at the same total delta;
* ``saving_uniform``: the same with every cost lowered by ``t`` (limited by the first stops,
  whose costs are often already those of simple composition).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from ..budget import to_fraction
from ..errors import InvalidParameter
from .bounds import OptDelBound, lemma11_delta, optdel
from .costs import lemma11_costs, optdel_saving

__all__ = ["DEFAULT_GRID", "QUICK_GRID", "GapRow", "gap_row", "gap_study"]


@dataclass(frozen=True)
class GapRow:
    label: str
    epsilon: str
    delta_k: str
    k_n: int
    n: int
    delta_total: Fraction
    costs: tuple[Fraction, ...] | None
    thm15: OptDelBound | None
    eq4: OptDelBound | None
    ratio: float | None
    saving_last: Fraction | None
    saving_uniform: Fraction | None
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "epsilon": self.epsilon,
            "delta_k": self.delta_k,
            "k_n": self.k_n,
            "n": self.n,
            "delta_total": float(self.delta_total),
            "costs": None if self.costs is None else [float(c) for c in self.costs],
            "thm15_upper": None if self.thm15 is None else float(self.thm15.upper),
            "eq4_lower": None if self.eq4 is None else float(self.eq4.lower),
            "ratio_eq4_over_thm15_at_least": self.ratio,
            "saving_last": None if self.saving_last is None else float(self.saving_last),
            "saving_uniform": None if self.saving_uniform is None else float(self.saving_uniform),
            "note": self.note,
        }


def even_stops(k_n: int, n: int) -> list[int]:
    """``n`` evenly spaced stopping points ending at ``k_n``."""
    if n < 1 or n > k_n:
        raise InvalidParameter(f"need 1 <= n <= k_n, got n = {n}, k_n = {k_n}")
    return sorted({round(k_n * (i + 1) / n) for i in range(n)})


def gap_row(
    steps: Sequence[tuple[Any, Any]],
    stops: Sequence[int],
    delta_total: Any,
    *,
    label: str = "",
    epsilon: str = "",
    delta_k: str = "",
    resolution: Any = "1e-4",
) -> GapRow:
    total = to_fraction(delta_total, name="delta_total")
    k_n = len(steps)
    try:
        costs = lemma11_costs(stops, steps, total, resolution=resolution)
    except InvalidParameter as exc:
        return GapRow(
            label,
            epsilon,
            delta_k,
            k_n,
            len(stops),
            total,
            None,
            None,
            None,
            None,
            None,
            None,
            note=f"infeasible (Lemma 11, equal split): {exc}",
        )
    b15 = optdel(stops, steps, costs)
    b4 = lemma11_delta(stops, steps, costs)
    ratio = float(b4.lower / b15.upper) if b15.upper > 0 else None
    last = optdel_saving(stops, steps, costs, total, mode="last", resolution=resolution)
    uniform = optdel_saving(stops, steps, costs, total, mode="uniform", resolution=resolution)
    return GapRow(
        label, epsilon, delta_k, k_n, len(stops), total, tuple(costs), b15, b4, ratio, last, uniform
    )


#: (epsilons, delta_ks, k_ns, ns) of the documented study (docs/optdel.md).
DEFAULT_GRID = (("0.01", "0.1", "0.5"), ("0", "1e-12", "1e-10"), (100, 1000), (2, 5, 10, 20))
QUICK_GRID = (("0.1",), ("0", "1e-10"), (100,), (2, 5, 10))


def gap_study(
    grid=DEFAULT_GRID,
    delta_total: Any = "1e-6",
    progress: Callable[[int, int], None] | None = None,
    extra: Iterable[tuple[str, Sequence[tuple[Any, Any]]]] = (),
) -> list[GapRow]:
    """Rows for every ``(epsilon, delta_k, k_n, n)`` of ``grid`` (homogeneous steps, evenly
    spaced stops), plus heterogeneous ``extra`` cases ``(label, steps)`` for each ``n``."""
    epsilons, deltas, kns, ns = grid
    jobs: list[tuple[str, str, str, list[tuple[Any, Any]], int]] = []
    for e in epsilons:
        for d in deltas:
            for k_n in kns:
                for n in ns:
                    jobs.append(("homogeneous", e, d, [(e, d)] * k_n, n))
    for label, steps in extra:
        for n in ns:
            jobs.append((label, "mixed", "mixed", list(steps), n))
    rows = []
    for idx, (label, e, d, steps, n) in enumerate(jobs):
        rows.append(
            gap_row(
                steps, even_stops(len(steps), n), delta_total, label=label, epsilon=e, delta_k=d
            )
        )
        if progress is not None:
            progress(idx + 1, len(jobs))
    return rows

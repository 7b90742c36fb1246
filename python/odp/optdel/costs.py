"""Costs ``E(P_i)`` that meet a total delta (Hartmann et al. 2022, Sec. 5.1 and 5.2).

* :func:`lemma11_costs`: Lemma 11 with the optimal composition of every prefix and an equal split
  ``delta^{k_i} = delta / n``: ``E(P_i)`` is the smallest grid value whose *rigorous upper bound*
  of the prefix's optimal-composition delta is ``<= delta / n``.  So Eq. (4) ``<= delta`` holds
  for the returned costs (and OptDel ``<=`` Eq. (4) as well).
* :func:`optdel_saving`: the largest ``t`` (on a grid) such that OptDel with the last cost
  (or every cost) lowered by ``t`` is still ``<= delta`` (rigorous upper bound) -- how much
  epsilon Thm. 15 saves over Lemma 11 at the same total delta.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction

import numpy as np

from ..budget import parse_delta, to_fraction
from ..errors import InvalidParameter
from . import homogeneous, lattice
from .bounds import DEFAULT_MAX_CELLS, _instance, _lattice_grid, optdel_upper
from .problem import EpsProblem
from .search import first_true
from ..types import Number

__all__ = ["lemma11_costs", "optdel_saving"]


def lemma11_costs(
    stops: Sequence[int],
    steps: Sequence[tuple[Number, Number]],
    delta: Number,
    *,
    resolution: Number = "1e-4",
    max_cells: int = DEFAULT_MAX_CELLS,
) -> list[Fraction]:
    """Costs ``E(P_i)`` (multiples of ``resolution``) with
    ``OptComp(M_1..M_{k_i}; E(P_i)) <= delta / n`` for every ``i`` (rigorous upper bounds), hence
    Eq. (4) ``<= delta``.  Raises :class:`InvalidParameter` if even ``E = sum eps_k`` (simple
    composition) leaves more than ``delta / n`` (the ``delta_k`` alone are too large)."""
    n = len(list(stops))
    problem = EpsProblem.parse(stops, steps, [0] * n)
    target = parse_delta(delta) / n
    res = to_fraction(resolution, name="resolution")
    if res <= 0:
        raise InvalidParameter("resolution must be > 0")
    eps = list(problem.epsilons)
    if homogeneous.is_homogeneous(problem.epsilons, problem.deltas) and eps[0] > 0:
        return _homogeneous_costs(problem, target, res)
    total_eps = [sum(eps[:k], Fraction(0)) for k in problem.stops]
    # the window only needs the likely losses (mass above it counts fully in the upper bound)
    h = _lattice_grid(eps, [Fraction(0)], max_cells)[0]
    window = lattice.default_window(h, eps, [Fraction(0)])
    inst = _instance(eps=eps, deltas=problem.deltas, stops=problem.stops, costs=[Fraction(0)] * n, h=h, up=True, window=window)
    table = lattice.stop_table_for(inst, [total_eps[-1] + res])
    out: list[Fraction] = []
    for i, R, lo, hi, pmf, overflow, survive in lattice.forward_prefixes(inst, True):
        top = math.ceil(total_eps[i] / res) + 1

        def ok(m: int, *, R=R, lo=lo, hi=hi, pmf=pmf, overflow=overflow, survive=survive) -> bool:
            return (
                lattice.prefix_term(table, E=m * res, R=R, lo=lo, hi=hi, pmf=pmf, overflow=overflow, survive=survive, up=True)
                <= target
            )

        if not ok(top):
            raise InvalidParameter(
                f"delta / n = {float(target):.3g} is below what the delta_k of the first "
                f"{problem.stops[i]} steps force (1 - prod(1 - delta_k)); raise delta"
            )
        out.append(first_true(ok, 0, top) * res)
    return out


def _float_model(k: int, eps: float) -> tuple[np.ndarray, np.ndarray]:
    """Losses ``(2u - k) eps`` and (floating-point) binomial weights ``C(k,u) q^u (1-q)^(k-u)``
    of the ``1,2``-only paths after ``k`` homogeneous steps."""
    u = np.arange(k + 1, dtype=float)
    log_c = np.concatenate([[0.0], np.cumsum(np.log((k - u[:-1]) / (u[:-1] + 1)))])
    # log q = -log(1 + e^-eps), log(1-q) = -log(1 + e^eps) = -eps - log(1 + e^-eps): no overflow
    log_q = -math.log1p(math.exp(-eps))
    log_r = -eps + log_q
    return (2 * u - k) * eps, np.exp(log_c + u * log_q + (k - u) * log_r)


def _float_prefix_delta(model, survive: float, E: float) -> float:
    """Floating-point estimate of the optimal-composition delta of a homogeneous prefix at
    ``E``; only used to *locate* a cost, which is then certified with rigorous bounds."""
    losses, weights = model
    mask = losses > E
    tail = float(np.sum(weights[mask] * -np.expm1(E - losses[mask])))
    return 1.0 - survive + survive * tail


def _homogeneous_costs(problem: EpsProblem, target: Fraction, res: Fraction) -> list[Fraction]:
    """:func:`lemma11_costs` for homogeneous steps: the closed form of
    :mod:`odp.optdel.homogeneous`, located with a float estimate and then certified on the grid
    (``ok(m)`` and not ``ok(m - 1)`` with the rigorous upper bound)."""
    eps, delta = problem.epsilons[0], problem.deltas[0]
    out: list[Fraction] = []
    for k in problem.stops:
        def ok(m: int, k=k) -> bool:
            return homogeneous.prefix_delta(k, epsilon=eps, delta=delta, E=m * res, up=True) <= target

        top = math.ceil(k * eps / res) + 1
        if not ok(top):
            raise InvalidParameter(
                f"delta / n = {float(target):.3g} is below what the delta_k of the first "
                f"{k} steps force (1 - prod(1 - delta_k)); raise delta"
            )
        lo_e, hi_e = 0.0, float(top * res)
        t, model = float(target), _float_model(k, float(eps))
        survive = (1.0 - float(delta)) ** k
        for _ in range(60):
            mid = (lo_e + hi_e) / 2
            if _float_prefix_delta(model, survive, mid) <= t:
                hi_e = mid
            else:
                lo_e = mid
        guess = min(max(math.ceil(hi_e / float(res)), 0), top)
        # certify: the smallest m with ok(m), searched outwards from the guess
        if ok(guess):
            step, hi = 1, guess
            while hi > 0 and ok(max(hi - step, 0)):
                hi, step = max(hi - step, 0), step * 2
            lo = max(hi - step, 0)  # not ok(lo) unless lo == 0 == hi
        else:
            step, lo = 1, guess
            while not ok(min(lo + step, top)):
                lo, step = min(lo + step, top), step * 2
            hi = min(lo + step, top)
        out.append(first_true(ok, lo, hi) * res)
    return out


def optdel_saving(
    stops: Sequence[int],
    steps: Sequence[tuple[Number, Number]],
    costs: Sequence[Number],
    delta: Number,
    *,
    mode: str = "last",
    resolution: Number = "1e-4",
    max_cells: int = DEFAULT_MAX_CELLS,
) -> Fraction:
    """How much cost Thm. 15 gives back at the same total ``delta``: the largest multiple ``t``
    of ``resolution`` such that the rigorous upper bound of OptDel is still ``<= delta`` when
    ``t`` is subtracted from the *last* cost ``E(P_n)`` (``mode="last"``: the cost of a run that
    never stops early) or from *every* cost (``mode="uniform"``, ``t <= min E(P_i)``).
    ``0`` if even ``t = 0`` exceeds ``delta``."""
    if mode not in ("last", "uniform"):
        raise InvalidParameter(f"mode must be 'last' or 'uniform', got {mode!r}")
    problem = EpsProblem.parse(stops, steps, costs)
    target = parse_delta(delta)
    res = to_fraction(resolution, name="resolution")
    if res <= 0:
        raise InvalidParameter("resolution must be > 0")
    base = problem.costs
    top = math.floor((base[-1] if mode == "last" else min(base)) / res)
    pairs = list(zip(problem.epsilons, problem.deltas))

    def ok(m: int) -> bool:  # t = (top - m) * res; ok is monotone in m
        t = (top - m) * res
        if mode == "last":
            shifted = list(base[:-1]) + [base[-1] - t]
        else:
            shifted = [c - t for c in base]
        return (
            optdel_upper(problem.stops, pairs, shifted, max_cells=max_cells, digits=None) <= target
        )

    if not ok(top):
        return Fraction(0)
    return (top - first_true(ok, 0, top)) * res

"""Brute-force references for Thm. 15 / Eq. (3) and for Eq. (4) (Hartmann et al. 2022, Sec. 5.2,
App. C).

Nothing here is clever; it exists to test :mod:`odp.optdel.exact` and :mod:`odp.optdel.lattice`.
Every function enumerates the output sequences ``q in {0,1,2,3}^k`` of the randomized-response
mechanisms of Lemma 12 explicitly (no merging of states, no use of the privacy loss), with
whatever exact number type the step tables hold (``Fraction`` for exact tests, ``mpmath.mpf`` for
high-precision checks of the ``epsilon`` parametrisation).

Notation.  ``P0[k][o]`` / ``P1[k][o]`` is the probability that step ``k+1`` outputs ``o`` under
database ``b = 0`` / ``b = 1`` (Lemma 12)::

    o :    0        1                   2                   3
    b=0:   delta    (1-delta) w/(1+w)   (1-delta)/(1+w)     0
    b=1:   0        (1-delta)/(1+w)     (1-delta) w/(1+w)   delta

For a sequence ``q`` of length ``k_i``, ``phi(q) = Pr0(q) - W_i Pr1(q)`` with ``W_i = e**E(P_i)``.

* :func:`eq3_by_families` -- Eq. (3) *literally*: the maximum of ``sum phi`` over all families
  ``(Q_{k_1}, ..., Q_{k_n})`` with ``Q_{k_i}`` a subset of the sequences of length exactly
  ``k_i`` and no member of ``Q_{k_j}`` a prefix of a member of ``Q_{k_l}`` (``j < l``).  Every
  family is enumerated, so this is feasible only for tiny trees.
* :func:`eq3_tree` -- Eq. (3) by the per-prefix stop-or-continue recursion on the explicit tree
  (4**k_n leaves, feasible for ``k_n <= 6``).  Why the recursion equals Eq. (3) is argued
  (on paper, not machine-checked) in :mod:`odp.optdel.exact` (Lemma A there); the tests check it against :func:`eq3_by_families`
  and :func:`eq12_by_stopping_rules`.
* :func:`eq12_by_stopping_rules` -- the other side of the proof of Thm. 15, Eq. (12): the maximum
  over every deterministic stopping rule ``h`` of the optimal delta of the iterative mechanism
  with that rule (``sum`` of the positive parts of ``phi`` over the sequences where it stops).
* :func:`eq4_tree` -- Eq. (4), Lemma 11 with the optimal composition of Murtagh and Vadhan:
  ``sum_i max_Q [Pr0(Q) - W_i Pr1(Q)]``; the maximising ``Q`` is the set of sequences with
  ``phi > 0``, so the inner maximum is ``sum_q max(phi(q), 0)`` (checked literally for tiny
  ``k`` by :func:`max_over_subsets`).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Sequence
from fractions import Fraction
from typing import Any

from ..errors import InvalidParameter
from .problem import ExpProblem

__all__ = [
    "MAX_TREE_DEPTH",
    "eq3_by_families",
    "eq3_tree",
    "eq4_tree",
    "eq12_by_stopping_rules",
    "max_over_subsets",
    "rr_tables",
    "tables_from_problem",
]

#: The explicit tree has 4**k_n leaves; refuse anything larger than this depth.
MAX_TREE_DEPTH = 7

Table = tuple[Any, Any, Any, Any]


def rr_tables(w: Any, delta: Any, one: Any = 1) -> tuple[Table, Table]:
    """Lemma 12's ``M~_(eps, delta)`` with ``w = e**eps``: ``(P0, P1)`` over outputs 0..3."""
    zero = one * 0
    p_hi = (one - delta) * w / (one + w)
    p_lo = (one - delta) / (one + w)
    return (delta, p_hi, p_lo, zero), (zero, p_lo, p_hi, delta)


def tables_from_problem(problem: ExpProblem) -> tuple[list[Table], list[Table], list[Fraction]]:
    P0s, P1s = [], []
    for w, d in zip(problem.ws, problem.deltas):
        p0, p1 = rr_tables(w, d, Fraction(1))
        P0s.append(p0)
        P1s.append(p1)
    return P0s, P1s, list(problem.Ws)


def _check(stops: Sequence[int], P0s: Sequence[Table], P1s: Sequence[Table], Ws: Sequence[Any]):
    if not stops or list(stops) != sorted(set(stops)) or stops[0] < 1:
        raise InvalidParameter("stops must be strictly increasing positive integers")
    if len(P0s) != stops[-1] or len(P1s) != stops[-1] or len(Ws) != len(stops):
        raise InvalidParameter("need k_n step tables and one W per stopping point")
    if stops[-1] > MAX_TREE_DEPTH:
        raise InvalidParameter(
            f"brute force enumerates 4**k_n sequences; k_n = {stops[-1]} > {MAX_TREE_DEPTH}"
        )


def eq3_tree(stops: Sequence[int], P0s: Sequence[Table], P1s: Sequence[Table], Ws: Sequence[Any]):
    """Eq. (3) on the explicit output tree: value(q) = max(phi(q), sum over children) at a
    stopping depth ``k_i < k_n``, ``max(phi(q), 0)`` at ``k_n``, the children's sum elsewhere.

    The tree is stored depth by depth (``layers[k][4 * parent + o]`` is the child of ``parent``
    through output ``o``), so no state is ever merged."""
    _check(stops, P0s, P1s, Ws)
    stop_index = {k: i for i, k in enumerate(stops)}
    k_n = stops[-1]
    one = P0s[0][1] * 0 + 1
    layers = [[(one, one)]]
    for k in range(k_n):
        layers.append([(a * P0s[k][o], b * P1s[k][o]) for a, b in layers[-1] for o in range(4)])
    W = Ws[-1]
    values = []
    for a, b in layers[k_n]:
        phi = a - W * b
        values.append(phi if phi > 0 else phi * 0)
    for k in range(k_n - 1, -1, -1):
        sums = [
            values[4 * j] + values[4 * j + 1] + values[4 * j + 2] + values[4 * j + 3]
            for j in range(len(layers[k]))
        ]
        i = stop_index.get(k)
        if i is not None:
            W = Ws[i]
            sums = [max(a - W * b, s) for (a, b), s in zip(layers[k], sums)]
        values = sums
    return values[0]


def _sequences(k: int) -> list[tuple[int, ...]]:
    return list(itertools.product(range(4), repeat=k))


def _masses(q: Sequence[int], P0s: Sequence[Table], P1s: Sequence[Table]) -> tuple[Any, Any]:
    a = P0s[0][1] * 0 + 1
    b = a
    for k, o in enumerate(q):
        a = a * P0s[k][o]
        b = b * P1s[k][o]
    return a, b


def _subsets(items: Sequence[Any]) -> Iterator[tuple[Any, ...]]:
    for r in range(len(items) + 1):
        yield from itertools.combinations(items, r)


def eq3_by_families(
    stops: Sequence[int],
    P0s: Sequence[Table],
    P1s: Sequence[Table],
    Ws: Sequence[Any],
    *,
    max_families: int = 200_000,
):
    """Eq. (3) by enumerating *every* prefix-disjoint family ``(Q_{k_1}, ..., Q_{k_n})``.

    Sequences with ``Pr0 = Pr1 = 0`` are left out of the enumeration (their ``phi`` is 0, so
    dropping one from a family never lowers the sum and only relaxes the prefix constraint).
    Raises :class:`InvalidParameter` if more than ``max_families`` families would be visited.
    Returns ``(maximum, number_of_families)``.
    """
    _check(stops, P0s, P1s, Ws)
    levels = []
    for i, k in enumerate(stops):
        items = []
        for q in _sequences(k):
            a, b = _masses(q, P0s, P1s)
            if a != 0 or b != 0:
                items.append((q, a - Ws[i] * b))
        levels.append(items)
    best: list[Any] = [None]
    count = [0]

    def rec(i: int, chosen: list[tuple[int, ...]], acc: Any) -> None:
        if i == len(stops):
            count[0] += 1
            if count[0] > max_families:
                raise InvalidParameter(f"more than {max_families} families; use a smaller tree")
            if best[0] is None or acc > best[0]:
                best[0] = acc
            return
        allowed = [(q, phi) for q, phi in levels[i] if not any(q[: len(p)] == p for p in chosen)]
        for subset in _subsets(allowed):
            total = acc
            for _, phi in subset:
                total = total + phi
            rec(i + 1, chosen + [q for q, _ in subset], total)

    zero = P0s[0][1] * 0
    rec(0, [], zero)
    return best[0], count[0]


def eq12_by_stopping_rules(
    stops: Sequence[int],
    P0s: Sequence[Table],
    P1s: Sequence[Table],
    Ws: Sequence[Any],
    *,
    max_rules: int = 100_000,
):
    """Eq. (12): ``max over deterministic stopping rules h`` of the optimal delta of the
    iterative mechanism (Alg. 3) run on Lemma 12's mechanisms with rule ``h``.

    For a fixed rule every output sequence ``s`` is released at exactly one length, so the
    smallest delta with ``Pr0(S) <= sum_i W_i Pr1(S cap P_i) + delta`` for all ``S`` is
    ``sum_s max(Pr0(s) - W_{i(s)} Pr1(s), 0)``.  Every function ``h^{k_i}: {0..3}^{k_i} -> {0,1}``
    (``i < n``) is enumerated, so this is feasible only for tiny trees.
    Returns ``(maximum, number_of_rules)``.
    """
    _check(stops, P0s, P1s, Ws)
    domains = [_sequences(k) for k in stops[:-1]]
    n_rules = 1
    for d in domains:
        n_rules *= 2 ** len(d)
    if n_rules > max_rules:
        raise InvalidParameter(f"{n_rules} stopping rules > {max_rules}; use a smaller tree")
    zero = P0s[0][1] * 0
    best = None
    leaves = _sequences(stops[-1])
    masses = {q: _masses(q, P0s, P1s) for k in stops for q in _sequences(k)}
    for bits in itertools.product((0, 1), repeat=sum(len(d) for d in domains)):
        rule: dict[tuple[int, ...], int] = {}
        pos = 0
        for d in domains:
            for q in d:
                rule[q] = bits[pos]
                pos += 1
        released: set[tuple[tuple[int, ...], int]] = set()
        for leaf in leaves:
            for i, k in enumerate(stops):
                if i == len(stops) - 1 or rule[leaf[:k]] == 1:
                    released.add((leaf[:k], i))
                    break
        total = zero
        for q, i in released:
            a, b = masses[q]
            phi = a - Ws[i] * b
            if phi > 0:
                total = total + phi
        if best is None or total > best:
            best = total
    return best, n_rules


def eq4_tree(stops: Sequence[int], P0s: Sequence[Table], P1s: Sequence[Table], Ws: Sequence[Any]):
    """Eq. (4): ``sum_i sum_{q in {0..3}^{k_i}} max(Pr0(q) - W_i Pr1(q), 0)`` (all ``4**k_i``
    sequences, their masses built depth by depth)."""
    _check(stops, P0s, P1s, Ws)
    zero = P0s[0][1] * 0
    total = zero
    stop_index = {k: i for i, k in enumerate(stops)}
    layer = [(zero + 1, zero + 1)]
    for k in range(stops[-1]):
        layer = [(a * P0s[k][o], b * P1s[k][o]) for a, b in layer for o in range(4)]
        i = stop_index.get(k + 1)
        if i is not None:
            for a, b in layer:
                phi = a - Ws[i] * b
                if phi > 0:
                    total = total + phi
    return total


def max_over_subsets(values: Sequence[Any], key: Callable[[Any], Any] = lambda v: v):
    """``max over all subsets S of sum(S)`` by literal enumeration (for tiny inputs)."""
    best = None
    for subset in _subsets(list(values)):
        s = sum((key(v) for v in subset), key(values[0]) * 0) if values else 0
        if best is None or s > best:
            best = s
    return best

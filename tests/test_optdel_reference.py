"""The brute-force references of Thm. 15 / Eq. (3) and Eq. (4) agree with the definitions.

* Eq. (3) by the explicit tree recursion == Eq. (3) by enumerating every prefix-disjoint family
  (the per-prefix stop-or-continue decomposition, Lemma A of odp.optdel.exact, checked, not
  assumed), including families whose Q_{k_i} leave out some sequences of length k_i.
* == Eq. (12): the maximum over every deterministic stopping rule (the other side of the proof).
* n = 1 reduces to the optimal composition of Kairouz-Oh-Viswanath / Murtagh-Vadhan, whose
  closed form (a binomial sum) is an independent formula.
"""

from __future__ import annotations

import itertools
from fractions import Fraction as F
from math import comb

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from odp.errors import InvalidParameter
from odp.optdel import reference as R

WS = [F(1), F(3, 2), F(2), F(5)]
DELTAS = [F(0), F(1, 10), F(1, 3)]
BIG_WS = [F(1), F(6, 5), F(2), F(3), F(9)]


def tables(ws, deltas):
    P0, P1 = [], []
    for w, d in zip(ws, deltas):
        a, b = R.rr_tables(w, d, F(1))
        P0.append(a)
        P1.append(b)
    return P0, P1


def kov_closed_form(k, w, delta, W):
    """delta(eps) of the k-fold composition of (eps0, delta)-DP, w = e**eps0, W = e**eps:
    1 - (1-delta)^k + (1-delta)^k sum_l C(k,l) max(w^(k-l) - W w^l, 0) / (1+w)^k."""
    s = sum((comb(k, l) * max(w ** (k - l) - W * w**l, F(0)) for l in range(k + 1)), F(0))
    return 1 - (1 - delta) ** k + (1 - delta) ** k * s / (1 + w) ** k


def test_rr_tables_are_distributions_and_eps_delta_dp():
    for w, d in itertools.product(WS, DELTAS):
        p0, p1 = R.rr_tables(w, d, F(1))
        assert sum(p0) == 1 and sum(p1) == 1
        # (eps, delta)-DP of Lemma 12's mechanism: every set S (16 of them)
        for S in itertools.product((0, 1), repeat=4):
            a = sum(p for p, s in zip(p0, S) if s)
            b = sum(p for p, s in zip(p1, S) if s)
            assert a <= w * b + d and b <= w * a + d


@pytest.mark.parametrize(
    "stops,ws,deltas,Ws",
    [
        ((1, 2), [F(3, 2), F(2)], [F(1, 10), F(1, 5)], [F(6, 5), F(3, 2)]),
        ((1, 2), [F(2), F(2)], [F(1, 4), F(1, 4)], [F(1), F(1)]),
        ((2,), [F(3, 2), F(3)], [F(1, 10), F(0)], [F(2)]),
        ((1, 2, 3), [F(3), F(3, 2), F(2)], [F(0)] * 3, [F(2), F(3), F(2)]),
        ((1, 3), [F(2), F(5, 2), F(3, 2)], [F(0)] * 3, [F(3, 2), F(2)]),
        ((2, 3), [F(2), F(2), F(2)], [F(0)] * 3, [F(3), F(1)]),
        ((1, 2, 3), [F(4), F(4), F(4)], [F(0)] * 3, [F(9), F(5, 4), F(1)]),
    ],
)
def test_tree_recursion_equals_enumeration_of_all_families(stops, ws, deltas, Ws):
    P0, P1 = tables(ws, deltas)
    by_families, count = R.eq3_by_families(stops, P0, P1, Ws)
    assert count > 1
    assert R.eq3_tree(stops, P0, P1, Ws) == by_families


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.sampled_from(BIG_WS[1:]), min_size=3, max_size=3),
    st.lists(st.sampled_from(BIG_WS), min_size=3, max_size=3),
    st.sampled_from([(1, 2, 3), (1, 3), (2, 3), (3,)]),
)
def test_tree_recursion_equals_families_random_pure(ws, Ws, stops):
    # delta = 0: the support is {1,2}^k and every family of a depth-3 tree can be enumerated
    P0, P1 = tables(ws, [F(0)] * 3)
    Ws = Ws[: len(stops)]
    assert R.eq3_tree(stops, P0, P1, Ws) == R.eq3_by_families(stops, P0, P1, Ws)[0]


@settings(max_examples=12, deadline=None)
@given(
    st.lists(st.sampled_from(WS), min_size=2, max_size=2),
    st.lists(st.sampled_from(DELTAS), min_size=2, max_size=2),
    st.lists(st.sampled_from(BIG_WS), min_size=2, max_size=2),
)
def test_tree_recursion_equals_families_random_with_delta(ws, deltas, Ws):
    P0, P1 = tables(ws, deltas)
    assert R.eq3_tree((1, 2), P0, P1, Ws) == R.eq3_by_families((1, 2), P0, P1, Ws)[0]


@settings(max_examples=40, deadline=None)
@given(
    st.integers(2, 4),
    st.data(),
)
def test_tree_recursion_equals_max_over_stopping_rules(k_n, data):
    ws = data.draw(st.lists(st.sampled_from(WS), min_size=k_n, max_size=k_n))
    deltas = data.draw(st.lists(st.sampled_from(DELTAS), min_size=k_n, max_size=k_n))
    Ws = data.draw(st.lists(st.sampled_from(BIG_WS), min_size=2, max_size=2))
    P0, P1 = tables(ws, deltas)
    stops = (1, k_n)
    best, n_rules = R.eq12_by_stopping_rules(stops, P0, P1, Ws)
    assert n_rules == 16
    assert R.eq3_tree(stops, P0, P1, Ws) == best


def test_single_stop_is_kov_optimal_composition():
    for k in range(1, 5):
        for w, d, W in itertools.product(WS[1:], DELTAS, BIG_WS[1:]):
            P0, P1 = tables([w] * k, [d] * k)
            expected = kov_closed_form(k, w, d, W)
            assert R.eq3_tree((k,), P0, P1, [W]) == expected
            assert R.eq4_tree((k,), P0, P1, [W]) == expected


def test_eq4_inner_maximum_is_positive_part():
    # max over all subsets Q of {1,2}^2 (delta = 0) and of {0..3}^1 equals the positive part
    for w, W in itertools.product(WS, BIG_WS):
        P0, P1 = tables([w, w], [F(0), F(0)])
        phis = []
        for q in itertools.product((1, 2), repeat=2):
            a = P0[0][q[0]] * P0[1][q[1]]
            b = P1[0][q[0]] * P1[1][q[1]]
            phis.append(a - W * b)
        assert R.max_over_subsets(phis) == R.eq4_tree((2,), P0, P1, [W])
        for d in DELTAS:
            P0, P1 = tables([w], [d])
            phis = [P0[0][o] - W * P1[0][o] for o in range(4)]
            assert R.max_over_subsets(phis) == R.eq4_tree((1,), P0, P1, [W])


def test_wrong_recursion_fails_the_family_check():
    """A variant that may stop at a prefix *and* keep its extensions (ignoring prefix
    disjointness, i.e. Eq. (4)) must disagree with the literal enumeration."""
    stops, ws, deltas, Ws = (1, 2), [F(3, 2), F(2)], [F(1, 10), F(1, 5)], [F(6, 5), F(3, 2)]
    P0, P1 = tables(ws, deltas)
    assert R.eq4_tree(stops, P0, P1, Ws) != R.eq3_by_families(stops, P0, P1, Ws)[0]


def test_references_refuse_large_trees():
    P0, P1 = tables([F(2)] * 8, [F(0)] * 8)
    with pytest.raises(InvalidParameter):
        R.eq3_tree((8,), P0, P1, [F(2)])
    P0, P1 = tables([F(2)] * 3, [F(1, 10)] * 3)
    with pytest.raises(InvalidParameter):
        R.eq12_by_stopping_rules((2, 3), P0, P1, [F(2), F(2)], max_rules=1000)
    with pytest.raises(InvalidParameter):
        R.eq3_by_families((1, 2, 3), P0, P1, [F(2)] * 3, max_families=1000)

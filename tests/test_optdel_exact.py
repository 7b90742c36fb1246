"""The exact algorithms of odp.optdel.exact agree *exactly* with the brute force (k_n <= 6).

Brute force: odp.optdel.reference (explicit 4**k_n tree, no merging of states, no use of the
privacy loss), itself checked against the literal enumeration of families and of stopping rules
in test_optdel_reference.py.  Also: the paper's claim that Thm. 15 is strictly smaller than
Eq. (4) when n >= 2 and all delta_k > 0, and the monotonicity (Lemma D) that makes grid
rounding sound.
"""

from __future__ import annotations

import itertools
from dataclasses import replace
from fractions import Fraction as F

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from odp.errors import InvalidParameter
from odp.optdel import exact as X
from odp.optdel import optdel, optdel_upper
from odp.optdel import reference as R
from odp.optdel.problem import ExpProblem

from selection import examples

W_VALUES = [F(1), F(5, 4), F(3, 2), F(2), F(3)]
DELTA_VALUES = [F(0), F(1, 100), F(1, 10), F(1, 3)]
COST_VALUES = [F(1), F(6, 5), F(2), F(3), F(7), F(30)]


def brute(problem: ExpProblem):
    P0, P1, Ws = R.tables_from_problem(problem)
    return R.eq3_tree(problem.stops, P0, P1, Ws), R.eq4_tree(problem.stops, P0, P1, Ws)


def all_stop_sets(k_n):
    for r in range(k_n):
        for subset in itertools.combinations(range(1, k_n), r):
            yield tuple(subset) + (k_n,)


def small_grid():
    """Every stop set with k_n <= 5; homogeneous (w, delta) in a 3 x 2 grid with two cost
    patterns, and one heterogeneous pattern."""
    for k_n in range(1, 6):
        for stops in all_stop_sets(k_n):
            n = len(stops)
            for w, d in itertools.product([F(1), F(3, 2), F(3)], [F(0), F(1, 10)]):
                for Wpat in ([F(2)] * n, [COST_VALUES[(3 * i + 1) % 6] for i in range(n)]):
                    yield ExpProblem.parse(stops, [(w, d)] * k_n, Wpat)
            het = [(W_VALUES[(2 * k) % 5], DELTA_VALUES[k % 4]) for k in range(k_n)]
            yield ExpProblem.parse(stops, het, [COST_VALUES[(i + 2) % 6] for i in range(n)])


@pytest.fixture(scope="module")
def grid_cases():
    return [(p, *brute(p)) for p in small_grid()]


def mismatches(fn, cases, which=0):
    return [p for p, *ref in cases if fn(p) != ref[which]]


def lattice_thm15(p: ExpProblem):
    lat = X.common_lattice(p)
    if lat is None:
        return X.thm15_exact(p)
    return X.thm15_lattice_exact(lat[0], units=lat[1], deltas=p.deltas, stops=p.stops, Ws=p.Ws)


def lattice_eq4(p: ExpProblem):
    lat = X.common_lattice(p)
    if lat is None:
        return X.eq4_exact(p)
    return X.eq4_lattice_exact(lat[0], units=lat[1], deltas=p.deltas, stops=p.stops, Ws=p.Ws)


@pytest.mark.slow  # the grid's brute force: ~6 CPU-s; the [quick] cases below run by default
def test_exhaustive_small_grid_thm15(grid_cases):
    assert len(grid_cases) == 31 * 13
    assert mismatches(X.thm15_exact, grid_cases) == []
    assert mismatches(lattice_thm15, grid_cases) == []
    assert (
        mismatches(
            lambda p: optdel(p.stops, zip(p.ws, p.deltas), p.Ws, exponential=True).upper, grid_cases
        )
        == []
    )


@pytest.mark.slow  # the grid's brute force: ~6 CPU-s; the [quick] cases below run by default
def test_exhaustive_small_grid_eq4(grid_cases):
    assert mismatches(X.eq4_exact, grid_cases, 1) == []
    assert mismatches(lattice_eq4, grid_cases, 1) == []


@pytest.mark.slow  # the grid's brute force: ~6 CPU-s; the [quick] cases below run by default
def test_deliberately_wrong_variants_fail_the_same_check(grid_cases):
    # ignoring prefix-disjointness (Eq. (4) instead of Eq. (3))
    assert mismatches(X.eq4_exact, grid_cases)
    # dropping the delta-outputs 0/3 (treating them as if they did not exist)
    assert mismatches(lambda p: X.thm15_exact(replace(p, deltas=(F(0),) * p.k_n)), grid_cases)
    # no early stopping option (every mechanism runs to k_n)
    assert mismatches(
        lambda p: X.thm15_exact(replace(p, stops=(p.k_n,), Ws=(p.Ws[-1],))), grid_cases
    )
    # reading E(P_i) of the wrong stop (off by one)
    assert mismatches(lambda p: X.thm15_exact(replace(p, Ws=p.Ws[1:] + p.Ws[:1])), grid_cases)


@st.composite
def exp_problems(draw, max_k=6, positive_delta=False, homogeneous=None, min_stops=1):
    k_n = draw(st.integers(max(1, min_stops), max_k))
    extra = draw(st.lists(st.integers(1, k_n - 1), max_size=k_n)) if k_n > 1 else []
    stops = sorted(set(extra) | {k_n})
    if len(stops) < min_stops:
        stops = list(range(k_n - min_stops + 1, k_n + 1))
    homo = draw(st.booleans()) if homogeneous is None else homogeneous
    w_st = st.fractions(1, 4, max_denominator=6)
    d_st = (
        st.fractions(F(1, 50), F(1, 2), max_denominator=50)
        if positive_delta
        else st.one_of(st.just(F(0)), st.fractions(0, F(1, 2), max_denominator=50))
    )
    if homo:
        steps = [(draw(w_st), draw(d_st))] * k_n
    else:
        steps = [(draw(w_st), draw(d_st)) for _ in range(k_n)]
    Ws = [draw(st.fractions(1, 40, max_denominator=4)) for _ in stops]
    return ExpProblem.parse(stops, steps, Ws)


@examples(quick=40, full=250)
def test_random_cases_agree_exactly_with_brute_force(max_examples):
    @settings(max_examples=max_examples, deadline=None)
    @given(exp_problems())
    def check(p):
        thm15, eq4 = brute(p)
        assert X.thm15_exact(p) == thm15
        assert X.eq4_exact(p) == eq4
        assert lattice_thm15(p) == thm15
        assert thm15 <= eq4

    check()


@examples(quick=20, full=100)
def test_integer_lattice_with_units_agrees(max_examples):
    @settings(max_examples=max_examples, deadline=None)
    @given(st.integers(1, 6), st.data())
    def check(k_n, data):
        w0 = data.draw(st.fractions(F(8, 7), 3, max_denominator=7))
        units = data.draw(st.lists(st.integers(0, 3), min_size=k_n, max_size=k_n))
        deltas = data.draw(
            st.lists(st.fractions(0, F(1, 3), max_denominator=30), min_size=k_n, max_size=k_n)
        )
        extra = data.draw(st.lists(st.integers(1, k_n), max_size=3))
        stops = sorted(set(extra) | {k_n})
        Ws = data.draw(st.lists(st.fractions(1, 20, max_denominator=3),
                                min_size=len(stops), max_size=len(stops)))
        p = ExpProblem.parse(stops, [(w0**u, d) for u, d in zip(units, deltas)], Ws)
        thm15, eq4 = brute(p)
        assert X.thm15_lattice_exact(w0, units=units, deltas=deltas, stops=stops, Ws=Ws) == thm15
        assert X.eq4_lattice_exact(w0, units=units, deltas=deltas, stops=stops, Ws=Ws) == eq4

    check()


@examples(quick=30, full=150)
def test_thm15_strictly_below_eq4_when_all_deltas_positive(max_examples):
    """Paper, after Eq. (4): every maximiser of Eq. (4) contains the all-zero ("all-delta")
    sequence of every length k_i, which Eq. (3) may use only once."""

    @settings(max_examples=max_examples, deadline=None)
    @given(exp_problems(max_k=5, positive_delta=True, min_stops=2))
    def check(p):
        assert len(p.stops) >= 2 and all(d > 0 for d in p.deltas)
        thm15, eq4 = brute(p)
        assert X.thm15_exact(p) == thm15
        assert thm15 < eq4

    check()


def test_no_strict_gap_without_delta_or_with_one_stop():
    # delta = 0 and a single stopping point: the two coincide (sanity of the strictness test)
    p = ExpProblem.parse((3,), [(F(2), F(1, 10))] * 3, [F(2)])
    assert X.thm15_exact(p) == X.eq4_exact(p)


@settings(max_examples=100, deadline=None)
@given(exp_problems(max_k=5), st.data())
def test_monotone_in_w_delta_and_cost(p, data):
    """Lemma D of odp.optdel.exact: larger w_k or delta_k never lower Eq. (3) or Eq. (4);
    larger W_i never raise them."""
    k = data.draw(st.integers(0, p.k_n - 1))
    i = data.draw(st.integers(0, len(p.stops) - 1))
    base3, base4 = X.thm15_exact(p), X.eq4_exact(p)
    ws = list(p.ws)
    ws[k] = ws[k] * data.draw(st.fractions(1, 2, max_denominator=5))
    q = replace(p, ws=tuple(ws))
    assert X.thm15_exact(q) >= base3 and X.eq4_exact(q) >= base4
    ds = list(p.deltas)
    ds[k] = ds[k] + (1 - ds[k]) * data.draw(st.fractions(0, F(1, 2), max_denominator=9))
    q = replace(p, deltas=tuple(ds))
    assert X.thm15_exact(q) >= base3 and X.eq4_exact(q) >= base4
    Ws = list(p.Ws)
    Ws[i] = Ws[i] * data.draw(st.fractions(1, 3, max_denominator=5))
    q = replace(p, Ws=tuple(Ws))
    assert X.thm15_exact(q) <= base3 and X.eq4_exact(q) <= base4


def test_closed_forms_of_extreme_cases():
    # eps = 0, costs 0: only the delta-outputs leak, OptDel = 1 - prod(1 - delta_k)
    deltas = [F(1, 10), F(1, 7), F(1, 3)]
    p = ExpProblem.parse((1, 2, 3), [(1, d) for d in deltas], [1, 1, 1])
    expected = 1 - (1 - deltas[0]) * (1 - deltas[1]) * (1 - deltas[2])
    assert X.thm15_exact(p) == expected
    # Lemma 11 pays the delta of every prefix separately
    assert X.eq4_exact(p) == sum(1 - eval_prod(1 - d for d in deltas[:k]) for k in (1, 2, 3))
    # simple composition costs W_i = prod_{l <= k_i} w_l: only delta-paths remain
    ws = [F(3, 2), F(2), F(5, 4)]
    Ws = [ws[0], ws[0] * ws[1], ws[0] * ws[1] * ws[2]]
    p = ExpProblem.parse((1, 2, 3), list(zip(ws, deltas)), Ws)
    assert X.thm15_exact(p) == expected


def eval_prod(xs):
    out = F(1)
    for x in xs:
        out *= x
    return out


def test_homogeneous_thousand_steps_exact_matches_state_merging_on_prefix():
    """The integer lattice and the Fraction state merging agree on a longer homogeneous case
    (k_n = 60, where the brute force is impossible)."""
    k_n = 60
    stops = (10, 25, 40, 60)
    Ws = [F(2), F(3), F(7, 2), F(4)]
    p = ExpProblem.parse(stops, [(F(11, 10), F(1, 1000))] * k_n, Ws)
    assert X.thm15_lattice_exact(F(11, 10), units=[1] * k_n, deltas=p.deltas, stops=stops, Ws=Ws) == X.thm15_exact(p)
    assert X.eq4_lattice_exact(F(11, 10), units=[1] * k_n, deltas=p.deltas, stops=stops, Ws=Ws) == X.eq4_exact(p)


def test_state_limit_raises_typed_error_and_front_end_falls_back():
    ws = [F(2), F(3), F(5), F(7), F(11), F(13)]
    p = ExpProblem.parse((3, 6), [(w, F(1, 100)) for w in ws], [F(3), F(9)])
    with pytest.raises(InvalidParameter):
        X.thm15_exact(p, max_states=8)
    exact_value = X.thm15_exact(p)
    b = optdel(
        p.stops, zip(p.ws, p.deltas), p.Ws, exponential=True, max_states=8, max_cells=200_000
    )
    assert not b.exact and b.lower <= exact_value <= b.upper
    assert optdel_upper(p.stops, zip(p.ws, p.deltas), p.Ws, exponential=True) == exact_value

"""The rigorous float lattice (odp.optdel.lattice) brackets the true values.

References: the brute force evaluated with mpmath at 50 digits (k_n <= 5, ordinary epsilons),
and the exact rational algorithms evaluated at rational enclosures of e**eps (longer cases; by
the monotonicity of Lemma D the true value lies between them).
"""

from __future__ import annotations

from fractions import Fraction as F

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from odp.errors import InvalidParameter
from odp.optdel import exact as X
from odp.optdel import interp as I
from odp.optdel import lattice as LT
from odp.optdel import lemma11_delta, optdel, optdel_upper
from odp.optdel import reference as R
from odp.rational import exp_bracket

MPMATH_DPS = 50  # per-test precision, set by tests/conftest.py


def mp_reference(stops, eps, deltas, costs):
    one = mpmath.mpf(1)
    P0, P1 = [], []
    for e, d in zip(eps, deltas):
        a, b = R.rr_tables(
            mpmath.exp(mpmath.mpf(e.numerator) / e.denominator),
            mpmath.mpf(d.numerator) / d.denominator,
            one,
        )
        P0.append(a)
        P1.append(b)
    Ws = [mpmath.exp(mpmath.mpf(c.numerator) / c.denominator) for c in costs]
    return R.eq3_tree(stops, P0, P1, Ws), R.eq4_tree(stops, P0, P1, Ws)


def mpf(x: F):
    return mpmath.mpf(x.numerator) / x.denominator


TOL = mpmath.mpf(10) ** -40  # the 50-digit reference is itself rounded


def inside(b, ref):
    """``b.lower <= ref <= b.upper`` up to the reference's own rounding error."""
    return mpf(b.lower) - TOL <= ref <= mpf(b.upper) + TOL


dec = st.integers(0, 40).map(lambda m: F(m, 20))  # eps in {0, 0.05, ..., 2}
delta_st = st.sampled_from([F(0), F(1, 10**6), F(1, 1000), F(1, 20), F(1, 4)])


@st.composite
def eps_cases(draw, max_k=5):
    k_n = draw(st.integers(1, max_k))
    stops = sorted(set(draw(st.lists(st.integers(1, k_n), max_size=3))) | {k_n})
    eps = [draw(dec) for _ in range(k_n)]
    deltas = [draw(delta_st) for _ in range(k_n)]
    costs = [draw(st.integers(0, 60).map(lambda m: F(m, 10))) for _ in stops]
    return stops, eps, deltas, costs


@settings(max_examples=120, deadline=None)
@given(eps_cases())
def test_bracket_contains_high_precision_brute_force(case):
    stops, eps, deltas, costs = case
    ref3, ref4 = mp_reference(stops, eps, deltas, costs)
    steps = list(zip(eps, deltas))
    b3 = optdel(stops, steps, costs)
    b4 = lemma11_delta(stops, steps, costs)
    assert inside(b3, ref3)
    assert inside(b4, ref4)
    assert b3.exact_states  # decimals on a common unit: only float rounding remains
    assert b3.upper - b3.lower <= F(1, 10**12) * max(b3.upper, F(1, 10**300)) + F(1, 10**300)
    assert optdel_upper(stops, steps, costs) >= b3.upper


@settings(max_examples=60, deadline=None)
@given(eps_cases(max_k=4), st.sampled_from(["0.03", "0.07", "0.3"]))
def test_coarse_grid_bounds_are_sound(case, grid):
    """Rounding every epsilon up (down) to a coarser grid keeps an upper (lower) bound."""
    stops, eps, deltas, costs = case
    ref3, ref4 = mp_reference(stops, eps, deltas, costs)
    steps = list(zip(eps, deltas))
    b3 = optdel(stops, steps, costs, grid=grid)
    b4 = lemma11_delta(stops, steps, costs, grid=grid)
    assert inside(b3, ref3)
    assert inside(b4, ref4)


def rational_enclosure(eps: F, digits=40):
    lo, hi = exp_bracket(eps, digits=digits)
    return lo, hi


def test_homogeneous_long_case_against_exact_rational_enclosure():
    """k_n = 300 homogeneous: exact Eq. (3)/(4) at rational w_lo <= e**0.1 <= w_hi (and W
    enclosures) enclose the truth; the float bracket must meet that enclosure and be tight."""
    k_n, eps, delta = 300, F(1, 10), F(1, 10**6)
    stops = [30 * i for i in range(1, 11)]
    costs = [F(15, 10) + F(3, 10) * i for i in range(10)]
    w_lo, w_hi = rational_enclosure(eps, 30)
    W_b = [rational_enclosure(c, 30) for c in costs]
    d = [delta] * k_n
    lo3 = X.thm15_lattice_exact(w_lo, units=[1] * k_n, deltas=d, stops=stops, Ws=[hi for _, hi in W_b])
    hi3 = X.thm15_lattice_exact(w_hi, units=[1] * k_n, deltas=d, stops=stops, Ws=[lo for lo, _ in W_b])
    lo4 = X.eq4_lattice_exact(w_lo, units=[1] * k_n, deltas=d, stops=stops, Ws=[hi for _, hi in W_b])
    hi4 = X.eq4_lattice_exact(w_hi, units=[1] * k_n, deltas=d, stops=stops, Ws=[lo for lo, _ in W_b])
    assert lo3 <= hi3 and hi3 - lo3 < F(1, 10**20)
    steps = [(eps, delta)] * k_n
    b3 = optdel(stops, steps, costs)
    b4 = lemma11_delta(stops, steps, costs)
    assert b3.lower <= hi3 and lo3 <= b3.upper
    assert b4.lower <= hi4 and lo4 <= b4.upper
    assert float((b3.upper - b3.lower) / b3.upper) < 1e-11
    assert b3.upper < b4.lower  # n >= 2, delta > 0: Thm. 15 strictly better


def test_heterogeneous_grid_bound_is_close_to_exact_lattice():
    """eps_k in {0.07, 0.1, 0.13}: the exact lattice (unit 0.01) vs a forced non-aligned grid.
    The bounds enclose the exact bracket and tighten as the grid is refined; the upper bound
    (convex interpolation, second order) is within 0.05 % already at h = 0.0009, the lower bound
    (epsilons rounded down, first order) within 3 % at h = 0.0003."""
    import random

    rng = random.Random(3)
    k_n = 60
    eps = [rng.choice([F(7, 100), F(1, 10), F(13, 100)]) for _ in range(k_n)]
    steps = [(e, F(1, 10**7)) for e in eps]
    stops = list(range(6, 61, 6))
    costs = [F(1) + F(1, 5) * i for i in range(10)]
    ex = optdel(stops, steps, costs)
    assert ex.exact_states and ex.grid == F(1, 100)
    coarse = optdel(stops, steps, costs, grid=F(9, 10000))
    g = optdel(stops, steps, costs, grid=F(3, 10000))
    for b in (coarse, g):
        assert not b.exact_states
        assert b.lower <= ex.lower and ex.upper <= b.upper
    assert g.upper - g.lower < coarse.upper - coarse.lower
    assert coarse.upper <= ex.upper * F(10005, 10000)
    assert g.upper <= coarse.upper and g.lower >= ex.lower * F(97, 100)
    # a deliberately wrong variant, rounding the epsilons DOWN for the "upper" bound, is not
    # an upper bound any more
    wrong = optdel(stops, [(F(int(e / F(9, 10000)) * F(9, 10000)), d) for e, d in steps], costs)
    assert wrong.upper < ex.lower


def test_window_truncation_stays_sound():
    k_n, eps, delta = 80, F(1, 10), F(1, 10**5)
    stops = (20, 40, 80)
    costs = (F(2), F(5, 2), F(3))
    exact_b = optdel(stops, [(eps, delta)] * k_n, costs)
    for window in [(-5, 40), (-2, 25), (0, 10), (-30, 0)]:
        inst = LT.LatticeInstance(eps, (1,) * k_n, (delta,) * k_n, stops, costs, window)
        up = F(LT.thm15_pass(inst, True))
        lo = F(LT.thm15_pass(inst, False))
        assert lo <= exact_b.lower and exact_b.upper <= up
        assert LT.eq4_pass(inst, False) <= lemma11_delta(stops, [(eps, delta)] * k_n, costs).upper
        assert LT.eq4_pass(inst, True) >= lemma11_delta(stops, [(eps, delta)] * k_n, costs).lower
    with pytest.raises(InvalidParameter):
        LT.LatticeInstance(eps, (1,) * k_n, (delta,) * k_n, stops, costs, (1, 5))


# the directed float conversions and significant-digit rounding: tests/test_floats.py


@st.composite
def odd_eps_cases(draw, max_k=5):
    """Epsilons with awkward denominators (7, 11, 13): no convenient common unit."""
    k_n = draw(st.integers(1, max_k))
    stops = sorted(set(draw(st.lists(st.integers(1, k_n), max_size=3))) | {k_n})
    eps = [draw(st.fractions(0, 2, max_denominator=13)) for _ in range(k_n)]
    deltas = [draw(delta_st) for _ in range(k_n)]
    costs = [draw(st.fractions(0, 6, max_denominator=11)) for _ in stops]
    return stops, eps, deltas, costs


@settings(max_examples=80, deadline=None)
@given(odd_eps_cases(), st.sampled_from(["0.05", "0.01", "0.003"]))
def test_interpolation_upper_bound_is_sound(case, grid):
    stops, eps, deltas, costs = case
    ref3, ref4 = mp_reference(stops, eps, deltas, costs)
    inst = I.InterpInstance(F(grid), tuple(eps), tuple(deltas), tuple(stops), tuple(costs))
    assert ref3 <= mpf(F(I.interp_upper(inst))) + TOL
    assert ref4 <= mpf(I.eq4_interp_upper(inst)) + TOL


def test_interpolation_is_exact_on_the_lattice_and_second_order_off_it():
    """Costs off the atoms of the loss distribution (a kink of the value function exactly on
    an atom costs O(h x atom mass), which is why the exact lattice is preferred there)."""
    k_n, stops = 120, (30, 60, 90, 120)
    costs = (F(41, 20), F(51, 20), F(61, 20), F(71, 20))
    on = [(F(1, 10), F(1, 10**6))] * k_n
    inst = I.InterpInstance(
        F(1, 100), tuple(e for e, _ in on), tuple(d for _, d in on), stops, costs
    )
    lat = optdel(stops, on, costs)
    up = F(I.interp_upper(inst))
    assert lat.lower <= up and (up - lat.upper) <= lat.upper * F(1, 10**11)
    # off the lattice: eps = 0.1 exactly, grid 0.003 (0.1 = 33 h + 0.001): errors shrink ~h^2
    errs = []
    for h in (F(3, 1000), F(3, 2000)):
        inst = I.InterpInstance(h, tuple(e for e, _ in on), tuple(d for _, d in on), stops, costs)
        up = F(I.interp_upper(inst))
        assert up >= lat.upper
        errs.append(float(up / lat.upper - 1))
    assert errs[0] < 2e-3 and errs[1] < errs[0] / 3
    up4 = I.eq4_interp_upper(
        I.InterpInstance(F(3, 2000), tuple(e for e, _ in on), tuple(d for _, d in on), stops, costs)
    )
    b4 = lemma11_delta(stops, on, costs)
    assert b4.upper <= up4 <= b4.upper * F(1001, 1000)

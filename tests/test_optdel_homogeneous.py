"""Homogeneous steps (odp.optdel.homogeneous): Eq. (4) in closed form and Thm. 15 by segment
correlations must bracket the references -- the 50-digit brute force (k_n <= 6), the exact
rational algorithms at enclosures of e**eps (k_n = 300), KOV Thm. 3.3 (k up to 2000) -- and
agree with the general lattice code they replace."""

from __future__ import annotations

from fractions import Fraction as F

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from odp.errors import InvalidBudget
from odp.kov import kov_delta
from odp.optdel import bounds, homogeneous as H
from odp.optdel import exact as X
from odp.optdel import lattice as LT
from odp.optdel import lemma11_costs, lemma11_delta, optdel, optdel_upper
from odp.optdel import reference as R
from odp.optdel.problem import EpsProblem
from odp.rational import exp_bracket

from selection import examples

MPMATH_DPS = 50
TOL = mpmath.mpf(10) ** -40


def mpf(x: F):
    return mpmath.mpf(x.numerator) / x.denominator


def brute_force(stops, eps, delta, costs):
    P0, P1 = [], []
    for _ in range(stops[-1]):
        a, b = R.rr_tables(mpmath.exp(mpf(eps)), mpf(delta), mpmath.mpf(1))
        P0.append(a)
        P1.append(b)
    Ws = [mpmath.exp(mpf(c)) for c in costs]
    return R.eq3_tree(stops, P0, P1, Ws), R.eq4_tree(stops, P0, P1, Ws)


def inside(b, ref):
    return mpf(b.lower) - TOL <= ref <= mpf(b.upper) + TOL


@st.composite
def homogeneous_cases(draw, max_k=6):
    k_n = draw(st.integers(1, max_k))
    stops = sorted(set(draw(st.lists(st.integers(1, k_n), max_size=3))) | {k_n})
    eps = draw(st.integers(1, 40).map(lambda m: F(m, 20)))
    delta = draw(st.sampled_from([F(0), F(1, 10**6), F(1, 1000), F(1, 20)]))
    costs = [draw(st.integers(0, 60).map(lambda m: F(m, 10))) for _ in stops]
    return stops, eps, delta, costs


@examples(quick=25, full=120)
def test_fast_paths_bracket_the_brute_force(max_examples):
    @settings(max_examples=max_examples, deadline=None)
    @given(homogeneous_cases())
    def check(case):
        stops, eps, delta, costs = case
        ref3, ref4 = brute_force(stops, eps, delta, costs)
        steps = [(eps, delta)] * stops[-1]
        b3, b4 = optdel(stops, steps, costs), lemma11_delta(stops, steps, costs)
        assert b3.method == "homogeneous segments" and b4.method == "homogeneous closed form"
        assert inside(b3, ref3) and inside(b4, ref4)
        assert b3.upper - b3.lower <= F(1, 10**12) * b3.upper + F(1, 10**300)
        assert optdel_upper(stops, steps, costs) >= b3.upper

    check()


def test_long_case_against_the_exact_rational_enclosure():
    """k_n = 300: exact Eq. (3)/(4) at rational w_lo <= e**0.1 <= w_hi enclose the truth."""
    k_n, eps, delta = 300, F(1, 10), F(1, 10**6)
    stops = [30 * i for i in range(1, 11)]
    costs = [F(15, 10) + F(3, 10) * i for i in range(10)]
    w_lo, w_hi = exp_bracket(eps, digits=30)
    W_b = [exp_bracket(c, digits=30) for c in costs]
    d = [delta] * k_n
    lo3 = X.thm15_lattice_exact(w_lo, units=[1] * k_n, deltas=d, stops=stops, Ws=[hi for _, hi in W_b])
    hi3 = X.thm15_lattice_exact(w_hi, units=[1] * k_n, deltas=d, stops=stops, Ws=[lo for lo, _ in W_b])
    lo4 = X.eq4_lattice_exact(w_lo, units=[1] * k_n, deltas=d, stops=stops, Ws=[hi for _, hi in W_b])
    hi4 = X.eq4_lattice_exact(w_hi, units=[1] * k_n, deltas=d, stops=stops, Ws=[lo for lo, _ in W_b])
    steps = [(eps, delta)] * k_n
    b3, b4 = optdel(stops, steps, costs), lemma11_delta(stops, steps, costs)
    assert b3.lower <= hi3 and lo3 <= b3.upper
    assert b4.lower <= hi4 and lo4 <= b4.upper
    assert float((b3.upper - b3.lower) / b3.upper) < 1e-11
    assert float((b4.upper - b4.lower) / b4.upper) < 1e-15
    assert b3.upper < b4.lower


@pytest.mark.parametrize("k,eps,delta0", [(40, "0.1", "0"), (500, "0.1", "1e-9"),
                                          pytest.param(1000, "0.05", "1e-12", marks=pytest.mark.slow),
                                          (300, "1", "0")])
def test_closed_form_meets_kov_theorem_3_3(k, eps, delta0):
    """On KOV's grid E = (k - 2i) eps the optimal-composition delta is KOV Thm. 3.3's."""
    e, d0 = F(eps), F(delta0)
    for i in (i for i in (1, 2, 10, 40) if i <= k // 2):
        lo, hi = kov_delta(k, e, d0, i)
        E = (k - 2 * i) * e
        up, down = H.prefix_delta(k, epsilon=e, delta=d0, E=E, up=True), H.prefix_delta(k, epsilon=e, delta=d0, E=E, up=False)
        assert down <= hi and lo <= up
        assert up - down <= F(1, 10**25) * up + F(1, 10**300)


def test_a_wrong_closed_form_is_caught_by_kov():
    """Dropping the boundary term u0 (a deliberately wrong variant) falls below KOV."""
    k, e = 200, F(1, 10)
    i = 20
    lo, _ = kov_delta(k, e, 0, i)
    E = (k - 2 * i) * e
    wrong = H.prefix_delta(k, epsilon=e, delta=0, E=E + 2 * e, up=True)  # shifts the sum by one term
    assert wrong < lo
    assert H.prefix_delta(k, epsilon=e, delta=0, E=E, up=True) >= lo


def test_segments_agree_with_the_general_lattice_and_windows_stay_sound():
    k_n, eps, delta = 120, F(1, 10), F(1, 10**5)
    stops = (20, 50, 90, 120)
    costs = (F(2), F(3), F(7, 2), F(4))
    steps = [(eps, delta)] * k_n
    p = EpsProblem.parse(stops, steps, costs)
    general = bounds._lattice_bound("thm15", eps_up=p.epsilons, eps_lo=p.epsilons,
                                    deltas=p.deltas, stops=p.stops, costs_up=p.costs,
                                    costs_lo=p.costs, grid=None,
                                    max_cells=bounds.DEFAULT_MAX_CELLS, want_lower=True)
    fast = optdel(stops, steps, costs)
    assert fast.lower <= general.upper and general.lower <= fast.upper
    for window in [(-5, 40), (-2, 25), (0, 10), (-30, 0), (-200, 200)]:
        inst = LT.LatticeInstance(eps, (1,) * k_n, (delta,) * k_n, stops, costs, window)
        up = F(H.thm15_pass(inst, eps, delta, True))
        lo = F(H.thm15_pass(inst, eps, delta, False))
        assert lo <= fast.upper and fast.lower <= up
        assert lo <= F(LT.thm15_pass(inst, True)) and F(LT.thm15_pass(inst, False)) <= up


def test_kernel_is_a_bracket_of_the_binomial_law():
    from math import comb

    m, eps, delta = 30, F(1, 5), F(1, 1000)
    up, d_up = H.kernel(m, eps, delta, True)
    down, d_down = H.kernel(m, eps, delta, False)
    w = mpmath.exp(mpf(eps))
    q = w / (1 + w)
    s = (1 - mpf(delta)) ** m
    for j in range(m + 1):
        exact = s * comb(m, j) * q**j * (1 - q) ** (m - j)
        assert down[j] <= exact <= up[j]
    assert d_down <= 1 - s <= d_up


@pytest.mark.parametrize("k,delta,res", [(40, "1e-9", "0.01"), (300, "1e-10", "1e-3")])
def test_homogeneous_costs_equal_the_general_search(monkeypatch, k, delta, res):
    stops = list(range(k // 4, k + 1, k // 4))
    steps = [("0.1", delta)] * k
    fast = lemma11_costs(stops, steps, "1e-6", resolution=res)
    monkeypatch.setattr(H, "is_homogeneous", lambda *a: False)  # force the general lattice
    general = lemma11_costs(stops, steps, "1e-6", resolution=res)
    step = F(res)
    assert all(abs(a - b) <= step for a, b in zip(fast, general))
    for i, kk in enumerate(stops):  # minimal on the grid under the closed form's own bound
        assert H.prefix_delta(kk, epsilon=F(1, 10), delta=F(delta), E=fast[i], up=True) <= F(1, 4 * 10**6)
        if fast[i] > 0:
            assert H.prefix_delta(kk, epsilon=F(1, 10), delta=F(delta), E=fast[i] - step, up=True) > F(1, 4 * 10**6)


def test_parsing_repeated_steps_keeps_per_step_errors():
    steps = [("0.1", "1e-9")] * 5 + [("-0.1", "1e-9")] + [("0.1", "1e-9")] * 4
    with pytest.raises(InvalidBudget, match="epsilon_6"):
        EpsProblem.parse([10], steps, [1])
    p = EpsProblem.parse([3], [(1, 0), (True and 1, 0), ("1", 0)], [1])
    assert p.epsilons == (1, 1, 1) and p.homogeneous
    with pytest.raises(InvalidBudget):
        EpsProblem.parse([2], [(1, 0), (True, 0)], [1])

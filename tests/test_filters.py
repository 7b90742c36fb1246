"""Privacy filters and odometers (papers 001, 004): monotone, order-insensitive, exact at the
boundary, refusal changes nothing, and exact privacy checks with randomized response."""

from __future__ import annotations

import threading
from fractions import Fraction

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import odp
from odp.errors import BudgetExceeded, InvalidParameter
from odp.exact import satisfies_dp
from odp.filters import (
    RDP,
    ZCDP,
    BasicFilter,
    BasicOdometer,
    RDPFilter,
    RDPOdometer,
    WhitehouseFilter,
    WhitehouseOdometer,
    ZCDPFilter,
    ZCDPOdometer,
)
from odp.rational import exp_bracket, log_upper

MPMATH_DPS = 60  # per-test precision, set by tests/conftest.py

costs = st.fractions(min_value=0, max_value=Fraction(3, 4), max_denominator=20)
deltas = st.fractions(min_value=0, max_value=Fraction(1, 50), max_denominator=1000)


def make_filters():
    """One of each filter, with budgets that a few of the drawn costs exhaust."""
    return [
        BasicFilter(1),
        BasicFilter("1.5", "0.03"),
        WhitehouseFilter(2, "0.05", "0.01"),
        ZCDPFilter("0.5"),
        ZCDPFilter("0.5", "0.03"),
        RDPFilter(3, "1.2"),
    ]


def cost_for(f, eps, dlt):
    if isinstance(f, ZCDPFilter):
        return ZCDP(eps, dlt if f.budget.delta else 0)
    if isinstance(f, RDPFilter):
        return eps
    if isinstance(f, BasicFilter) and f.budget.delta == 0:
        return eps
    return (eps, dlt)


pairs = st.lists(st.tuples(costs, deltas), max_size=12)


# ---------------------------------------------------------------- generic properties
@settings(max_examples=60, deadline=None)
@given(seq=pairs, ext=pairs)
def test_every_filter_is_monotone(seq, ext):
    """Once the rule halts on a sequence it halts on every extension (and a sequence it
    admits has every prefix admitted)."""
    for f in make_filters():
        s = [cost_for(f, e, d) for e, d in seq]
        t = [cost_for(f, e, d) for e, d in ext]
        if not f.admits_sequence(s):
            assert not f.admits_sequence(s + t), f
        if f.admits_sequence(s + t):
            assert f.admits_sequence(s), f


@settings(max_examples=60, deadline=None)
@given(seq=pairs, data=st.data())
def test_every_filter_is_order_insensitive(seq, data):
    perm = data.draw(st.permutations(seq))
    for f in make_filters():
        a = f.admits_sequence([cost_for(f, e, d) for e, d in seq])
        b = f.admits_sequence([cost_for(f, e, d) for e, d in perm])
        assert a == b, f


@settings(max_examples=60, deadline=None)
@given(seq=pairs)
def test_incremental_decisions_equal_the_rule_on_the_pending_sequence(seq):
    """continue_with accepts exactly when the whole pending sequence is admitted; a refusal
    changes nothing (refuse-and-continue), and privacy_loss is the odometer of the accepted."""
    for f in make_filters():
        accepted = []
        for e, d in seq:
            c = cost_for(f, e, d)
            before = (f.rounds, f.privacy_loss(), f.remaining())
            expected = f.admits_sequence(accepted + [c])
            assert f.would_continue(c) == expected
            assert f.continue_with(c) == expected
            if expected:
                accepted.append(c)
            else:
                assert (f.rounds, f.privacy_loss(), f.remaining()) == before
        assert len(f) == len(accepted)


def test_halt_on_refusal_halts_for_ever():
    f = BasicFilter(1, halt_on_refusal=True)
    assert f.continue_with("0.5")
    assert not f.continue_with("0.6")
    assert f.halted and not f.continue_with("0.1") and not f.would_continue(0)
    g = BasicFilter(1)
    assert g.continue_with("0.5") and not g.continue_with("0.6") and g.continue_with("0.5")
    assert not g.halted and g.remaining() == odp.Budget(0)


def test_invalid_costs_raise_and_change_nothing():
    for f in make_filters():
        for bad in ["-1", float("nan"), "abc", None, (1, 2, 3)]:
            with pytest.raises(InvalidParameter):
                f.continue_with(bad)
        assert len(f) == 0
    with pytest.raises(InvalidParameter):
        RDPFilter(3, 1).continue_with(RDP(2, "0.1"))  # order fixed at construction
    with pytest.raises(InvalidParameter):
        WhitehouseFilter(1, "1e-6", "1e-5")  # tail δ″ larger than δ
    with pytest.raises(InvalidParameter):
        WhitehouseFilter(1, "1e-6", 0)


def test_charge_raises_budget_exceeded():
    f = BasicFilter("0.5", "1e-6")
    f.charge(("0.5", "1e-6"))
    with pytest.raises(BudgetExceeded, match="basic composition filter refused"):
        f.charge(("0", "1e-9"))


# ---------------------------------------------------------------- exact at the boundary
def test_basic_filter_exact_thousand_thousandths():
    f = BasicFilter(1)
    assert all(f.continue_with("0.001") for _ in range(1000))
    assert not f.continue_with("0.001") and f.continue_with(0)
    assert f.privacy_loss() == odp.Budget(1) and f.remaining() == odp.Budget(0)


def test_basic_filter_product_order_and_opendp_docs_example():
    # OpenDP docs (G9): Laplace count ε = 1, clamped sum ε = 2; odometer 0 → 3
    odo = BasicOdometer()
    assert odo.privacy_loss() == odp.Budget(0)
    odo.record(odp.DP(2))
    odo.record(odp.LaplaceMechanism(lambda x: x, epsilon=1))
    assert odo.privacy_loss() == odp.Budget(3)
    f = BasicFilter(2)
    assert f.continue_with(1) and f.continue_with(1) and not f.continue_with(1)
    assert f.privacy_loss() == odp.Budget(2)
    g = BasicFilter(1, "1e-6")
    assert g.continue_with(("0.5", "1e-6"))
    assert not g.continue_with(("0.1", "1e-12"))  # ε fits, δ does not
    assert g.continue_with(("0.5", 0))


@pytest.mark.parametrize("f,cost,n", [
    (ZCDPFilter("0.5"), "0.05", 10),
    (ZCDPFilter("0.5", "1e-6"), ZCDP("0.25", "5e-7"), 2),
    (RDPFilter(3, 2), lambda a: odp.conversions.gaussian_rdp(1, 1, a), 1),  # G8: 1.5 then 3.0
    (RDPFilter(2, 1), ZCDP("0.25"), 2),
])
def test_sum_filters_exact_boundary(f, cost, n):
    for _ in range(n):
        assert f.continue_with(cost)
    assert not f.continue_with(cost)


def test_rdp_golden_and_zcdp_consistency():
    f = RDPFilter(3, 2)
    assert f.continue_with(lambda a: odp.conversions.gaussian_rdp(1, 1, a))
    assert f.privacy_loss() == RDP(3, "1.5")
    odo = RDPOdometer(3)
    odo.record(odp.conversions.gaussian_rdp(1, 1, 3))
    odo.record(odp.conversions.gaussian_rdp(1, 1, 3))
    assert odo.privacy_loss() == RDP(3, 3)
    # zCDP filter at ρ agrees with the RDP filter at α·ρ for every order α
    zo = ZCDPOdometer()
    for rho in ["0.1", "0.3", "1/7"]:
        zo.record(rho)
    for alpha in [Fraction(3, 2), 2, 10]:
        ro = RDPOdometer(alpha)
        for rho in ["0.1", "0.3", "1/7"]:
            ro.record(ZCDP(rho))
        assert ro.privacy_loss().epsilon == alpha * zo.privacy_loss().rho


def whitehouse_kmax_reference(eps, tail, e):
    """Largest k with √(2 ln(1/δ″) k e²) + k e²/2 ≤ ε, by 60-digit mpmath search."""
    def mp(x):
        x = Fraction(x)
        return mpmath.mpf(x.numerator) / x.denominator

    L = mpmath.log(1 / mp(tail))
    E, e2 = mp(eps), mp(e) ** 2
    f = lambda k: mpmath.sqrt(2 * L * k * e2) + k * e2 / 2  # noqa: E731
    k = int(mpmath.floor((mpmath.sqrt(2 * L + 2 * E) - mpmath.sqrt(2 * L)) ** 2 / e2))
    while f(k + 1) <= E:
        k += 1
    while k and f(k) > E:
        k -= 1
    return k


@pytest.mark.parametrize("eps,tail,e,golden", [
    ("1", "1e-4", "0.001", 51525), ("1", "1e-5", "0.01", 416), ("1", "1e-5", "0.1", 4),
    ("1", "1e-6", "0.01", 349), ("1", "1e-6", "0.1", 3),
])
def test_whitehouse_golden_round_counts(eps, tail, e, golden):
    f = WhitehouseFilter(eps, tail, tail)
    assert f.max_rounds(e) == golden == whitehouse_kmax_reference(eps, tail, e)


def test_whitehouse_boundary_run_is_exact():
    """Rounds of ε_i are accepted up to k_max exactly, the next one refused."""
    f = WhitehouseFilter(1, "1e-5", "1e-5")
    for _ in range(416):
        assert f.continue_with("0.01")
    assert not f.continue_with("0.01")
    loss = f.privacy_loss()
    assert loss.epsilon <= 1 and loss.delta == Fraction(1, 10**5)
    exact = mpmath.sqrt(2 * mpmath.log(10**5) * 416 * mpmath.mpf("0.0001")) + 416 * mpmath.mpf("0.0001") / 2
    assert 0 <= loss.epsilon - Fraction(mpmath.nstr(exact, 40)) < Fraction(1, 10**12) + Fraction(1, 10**30)


@settings(max_examples=30, deadline=None)
@given(eps=st.fractions(min_value=Fraction(1, 10), max_value=3, max_denominator=10),
       exp10=st.integers(1, 9), e=st.fractions(min_value=Fraction(1, 1000), max_value=Fraction(1, 2),
                                               max_denominator=1000))
def test_whitehouse_max_rounds_matches_high_precision(eps, exp10, e):
    tail = Fraction(1, 10**exp10)
    assert WhitehouseFilter(eps, tail, tail).max_rounds(e) == whitehouse_kmax_reference(eps, tail, e)


def test_whitehouse_remaining_is_a_lower_bound():
    f = WhitehouseFilter(1, "2e-6", "1e-6")
    for _ in range(100):
        f.continue_with(("0.01", "1e-9"))
    rem = f.remaining()
    assert f.would_continue((rem.epsilon, rem.delta))
    assert not f.would_continue((rem.epsilon + Fraction(1, 10**9), 0))
    assert rem.delta == Fraction(1, 10**6) - Fraction(100, 10**9)


def test_whitehouse_admits_more_rounds_than_basic_for_small_epsilon():
    """Worked example: ε = 1, δ = 1e-6, rounds of ε_i = 0.001."""
    basic, white = BasicFilter(1, "1e-6"), WhitehouseFilter(1, "1e-6", "1e-6")
    nb = nw = 0
    while basic.continue_with("0.001"):
        nb += 1
    while nw < 40000 and white.continue_with("0.001"):
        nw += 1
    assert (nb, nw) == (1000, whitehouse_kmax_reference(1, "1e-6", "0.001")) and nw > 30 * nb
    # … and fewer for large ε_i (ε_i = 0.1, δ″ = 1e-5: 4 versus 10)
    assert WhitehouseFilter(1, "1e-5", "1e-5").max_rounds("0.1") == 4
    assert BasicFilter(1).admits_sequence(["0.1"] * 10)


def test_odometers_are_idempotent_and_match_filters():
    wo = WhitehouseOdometer("1e-6")
    wf = WhitehouseFilter(5, "1e-3", "1e-6")
    for c in [("0.1", "1e-7"), ("0.2", 0), ("0.05", "1e-8")]:
        wo.record(c)
        assert wf.continue_with(c)
    assert wo.privacy_loss() == wo.privacy_loss() == wf.privacy_loss()
    assert wo.privacy_loss_with("0.3").epsilon > wo.privacy_loss().epsilon
    assert len(wo) == 3


# ---------------------------------------------------------------- exact RR experiments
RATIOS = [Fraction(2), Fraction(3, 2), Fraction(5, 4), Fraction(11, 10), Fraction(3)]


def rr_filter_views(choose, admit, max_proposals):
    """Exact view laws of an adaptive adversary against randomized response through a
    filter.  ``choose(history) -> r`` (the RR likelihood ratio e^{ε_i}, rational);
    ``admit(accepted_eps, eps) -> bool``; refused proposals are part of the view."""
    out0, out1 = {}, {}

    def walk(history, accepted, p0, p1, left):
        if left == 0:
            out0[history] = out0.get(history, 0) + p0
            out1[history] = out1.get(history, 0) + p1
            return
        r = choose(history)
        eps = log_upper(r)
        if not admit(accepted, eps):
            walk(history + (("refused", r),), accepted, p0, p1, left - 1)
            return
        hi, lo = r / (1 + r), 1 / (1 + r)
        walk(history + ((r, 0),), accepted + [eps], p0 * hi, p1 * lo, left - 1)
        walk(history + ((r, 1),), accepted + [eps], p0 * lo, p1 * hi, left - 1)

    walk((), [], Fraction(1), Fraction(1), max_proposals)
    return out0, out1


def adaptive_choice(table):
    return lambda history: table[hash(history) % len(table)]


def basic_admit(budget):
    f = BasicFilter(budget)
    return lambda accepted, eps: f.admits_sequence(accepted + [eps])


def off_by_one_admit(budget):
    """A deliberately wrong filter: checks the rounds so far, not the pending one."""
    return lambda accepted, eps: sum(accepted, Fraction(0)) <= budget


@settings(max_examples=40, deadline=None)
@given(table=st.lists(st.sampled_from(RATIOS), min_size=1, max_size=6),
       budget=st.fractions(min_value=Fraction(1, 2), max_value=3, max_denominator=4))
def test_realised_loss_of_accepted_runs_never_exceeds_the_basic_budget(table, budget):
    v0, v1 = rr_filter_views(adaptive_choice(table), basic_admit(budget), 7)
    bound = exp_bracket(budget)[0]  # e^budget from below: a rigorous check
    for view, p0 in v0.items():
        ratio = p0 / v1[view]
        assert 1 / bound <= ratio <= bound, (view, budget)


def test_off_by_one_filter_fails_the_same_check():
    v0, v1 = rr_filter_views(adaptive_choice([Fraction(2)]), off_by_one_admit(Fraction(1)), 4)
    bound = exp_bracket(Fraction(1))[0]
    assert any(p0 / v1[v] > bound for v, p0 in v0.items())


def test_whitehouse_filtered_rr_composition_is_dp_exactly():
    """(ε, δ) = (1/2, 1/4), δ″ = 1/4: the filter lets 8 rounds of RR with e^{ε_i} = 11/10
    through (basic composition: 5); the exact view laws satisfy (1/2, 1/4)-DP."""
    eps, delta = Fraction(1, 2), Fraction(1, 4)
    wf = WhitehouseFilter(eps, delta, delta)
    admit = lambda accepted, e: wf.admits_sequence(accepted + [e])  # noqa: E731
    v0, v1 = rr_filter_views(adaptive_choice([Fraction(11, 10)]), admit, 10)
    accepted_rounds = max(sum(1 for x in v if x[0] != "refused") for v in v0)
    assert accepted_rounds == 8
    assert not BasicFilter(eps).admits_sequence([log_upper(Fraction(11, 10))] * 6)  # basic: 5
    assert satisfies_dp(v0, v1, eps, delta) and satisfies_dp(v1, v0, eps, delta)


# ---------------------------------------------------------------- threads
def test_concurrent_continue_with_never_overspends():
    """Two threads ask each filter at once for a cost that fits only once.  The filters' decision
    waits for the other thread (tests/racy.py), so without the filter's lock both would pass the
    check before either recorded, every time; with it exactly one is accepted."""
    from racy import (PausedBasicFilter, PausedRDPFilter, PausedWhitehouseFilter,
                      PausedZCDPFilter, race)

    cases = [(PausedBasicFilter(1), "0.6"), (PausedBasicFilter(1, "1e-6"), ("0.6", "1e-7")),
             (PausedWhitehouseFilter(1, "1e-6", "1e-6"), "0.15"),
             (PausedZCDPFilter(1), ZCDP("0.6")), (PausedRDPFilter(4, 1), "0.6")]
    for f, cost in cases:
        assert f.admits_sequence([cost]) and not f.admits_sequence([cost, cost])
        outcomes = race(lambda: f.continue_with(cost), lambda: f.continue_with(cost))
        assert sorted(outcomes) == [False, True], (type(f).__name__, outcomes)
        assert len(f) == 1 and f.admits_sequence(f.rounds)
        assert not f.callers_met  # the lock kept the second caller out of the decision


def test_many_threads_continue_with_never_overspend():
    """A stress run of plain filters (it rarely hits the race by itself; the test above makes
    the race certain)."""
    f = BasicFilter(1, "1e-6")
    wins = []
    lock = threading.Lock()

    def worker():
        for _ in range(200):
            if f.continue_with(("0.003", "1e-9")):
                with lock:
                    wins.append(1)

    threads = [threading.Thread(target=worker) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(wins) == len(f) == 333
    assert f.privacy_loss().fits_in(f.budget)


# ---------------------------------------------------------------- reading RDP / zCDP as (ε, δ)
def _gaussian_delta(eps, mu):
    e = mpmath.mpf(eps.numerator) / eps.denominator
    m = mpmath.mpf(mu.numerator) / mu.denominator
    return mpmath.ncdf(m / 2 - e / m) - mpmath.exp(e) * mpmath.ncdf(-m / 2 - e / m)


def test_odometers_read_as_dp_with_the_tight_conversion():
    """RDPOdometer.dp_epsilon is the CKS/Balle conversion of its reading (below Mironov's
    Prop. 3), ZCDPOdometer.dp_epsilon the zCDP one; both are sound for the Gaussians recorded
    (4 Gaussians of σ = 2 are one Gaussian of σ = 1: exact δ(ε) by Balle–Wang)."""
    ro, zo = RDPOdometer(5), ZCDPOdometer()
    for _ in range(4):
        ro.record(odp.conversions.gaussian_rdp(2, 1, 5))
        zo.record(odp.conversions.gaussian_zcdp(2))
    assert ro.privacy_loss() == RDP(5, Fraction(5, 2))
    eps = ro.dp_epsilon("1e-5")
    assert eps == odp.conversions.rdp_to_dp_epsilon(ro.privacy_loss(), "1e-5")
    assert eps < odp.conversions.rdp_to_dp_epsilon_mironov(5, Fraction(5, 2), "1e-5")
    assert _gaussian_delta(eps, Fraction(1)) <= mpmath.mpf("1e-5")
    z_eps = zo.dp_epsilon("1e-5")
    assert z_eps == odp.conversions.zcdp_to_dp_epsilon(zo.privacy_loss(), "1e-5")
    assert _gaussian_delta(z_eps, Fraction(1)) <= mpmath.mpf("1e-5")
    # approximate zCDP has no conversion here: refused
    approx = ZCDPOdometer()
    approx.record(ZCDP("0.1", "1e-9"))
    with pytest.raises(InvalidParameter, match="approximate"):
        approx.dp_epsilon("1e-6")


@pytest.mark.parametrize("alpha,eps,delta", [(20, 1, "1e-5"), ("4.5", 4, "1e-6"), (64, "0.5", "1e-9")])
def test_rdp_filter_for_a_dp_target(alpha, eps, delta):
    """RDPFilter.for_dp: the largest grid budget whose conversion is ≤ ε (one grid step more
    exceeds it), and the filter's dp_epsilon reports it."""
    f = RDPFilter.for_dp(alpha, eps, delta)
    b = f.budget.epsilon
    assert f.dp_epsilon(delta) <= Fraction(eps)
    assert odp.conversions.rdp_to_dp_epsilon(alpha, b + Fraction(2, 10**12), delta) > Fraction(eps)
    assert f.continue_with(b) and not f.continue_with(Fraction(1, 10**12))


def test_zcdp_filter_for_a_dp_target_and_refusals():
    z = ZCDPFilter.for_dp(1, "1e-5")
    rho = z.budget.rho
    assert z.dp_epsilon("1e-5") <= 1
    assert odp.conversions.zcdp_to_dp_epsilon(rho + Fraction(2, 10**12), "1e-5") > 1
    # the conversion through the best RDP order admits more than Bun–Steinke Prop. 1.3 alone
    L = mpmath.log(10**5)
    assert mpmath.mpf(rho.numerator) / rho.denominator > (mpmath.sqrt(L + 1) - mpmath.sqrt(L)) ** 2
    with pytest.raises(InvalidParameter, match="no RDP budget"):
        RDPFilter.for_dp(2, "0.1", "1e-9")
    with pytest.raises(InvalidParameter):
        RDPFilter.for_dp(1, 1, "1e-5")
    with pytest.raises(InvalidParameter):
        ZCDPFilter.for_dp(-1, "1e-5")

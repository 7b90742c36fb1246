"""Exact mirrors of Defs. 1/2/5 and Lemmas 3, 4, 6 (Hartmann et al. 2022, Sec. 3) on random finite
mechanisms.  Lean counterparts: ``Odp.Core.ODP_iff_ODPcost``, ``Odp.Core.odp_of_dp``, ``Odp.Core.dp_of_odp``,
``Odp.Core.dp_of_odp_sup``, ``Odp.Core.odp_of_subsetDP`` (see ``Odp/paper_mapping.md``)."""

from __future__ import annotations

from fractions import Fraction

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from odp import exact
from odp.exact import FiniteDist, all_subsets, satisfies_dp, satisfies_odp, tight_delta_upper
from odp.guarantees import DP, ODP, SubsetDP
from odp.rational import exp_bracket

from strategies import mechanism_pairs, small_epsilons

costs_st = st.fractions(min_value=0, max_value=3, max_denominator=6)


def _brute_force_odp(p, q, outcomes, partition, costs, delta) -> bool:
    """Def. 2 literally: every subset S, the sum over classes, decided with brackets."""
    for digits in (30, 90, 270):
        undecided = False
        for S in all_subsets(outcomes):
            lhs = p.prob(S)
            lo = hi = Fraction(delta)
            for k, e in costs.items():
                mass = q.prob(o for o in S if partition(o) == k)
                e_lo, e_hi = exp_bracket(Fraction(e), digits)
                lo += e_lo * mass
                hi += e_hi * mass
            if lhs > hi:
                return False
            if lhs > lo:
                undecided = True
        if not undecided:
            return True
    raise AssertionError("undecided")


@st.composite
def partitioned(draw):
    outcomes, p, q = draw(mechanism_pairs())
    n_classes = draw(st.integers(1, len(outcomes)))
    labels = [draw(st.integers(0, n_classes - 1)) for _ in outcomes]
    assignment = dict(zip(outcomes, labels))
    costs = {k: draw(costs_st) for k in range(n_classes)}
    return outcomes, p, q, assignment.__getitem__, costs


@settings(max_examples=150, deadline=None)
@given(partitioned(), st.data())
def test_odp_iff_odpcost_matches_brute_force(case, data):
    """The output-wise check (worst set S*) decides Def. 2 exactly as the all-subsets form."""
    outcomes, p, q, partition, costs = case
    tight = tight_delta_upper(p, q, lambda o: costs[partition(o)])
    delta = data.draw(st.sampled_from([Fraction(0), tight, tight * Fraction(999, 1000),
                                       tight + Fraction(1, 10**6), tight / 2]))
    fast = satisfies_odp(p, q, partition=partition, costs=costs, delta=delta)
    assert fast == _brute_force_odp(p, q, outcomes, partition, costs, delta)


@settings(max_examples=150, deadline=None)
@given(mechanism_pairs(), small_epsilons, st.data())
def test_lemma3_dp_gives_odp_for_any_partition(case, eps, data):
    outcomes, p, q = case
    delta = max(tight_delta_upper(p, q, lambda o: eps), tight_delta_upper(q, p, lambda o: eps))
    assume(delta < 1)
    mech = {0: p, 1: q}
    nbrs = [(0, 1), (1, 0)]
    assert exact.mechanism_satisfies(mech, nbrs, DP(eps, delta))
    labels = [data.draw(st.integers(0, 2)) for _ in outcomes]
    partition = dict(zip(outcomes, labels)).__getitem__
    odp_g = DP(eps, delta).to_odp(partition, labels=(0, 1, 2))
    assert odp_g.costs == {0: eps, 1: eps, 2: eps} and odp_g.delta == delta
    assert exact.mechanism_satisfies(mech, nbrs, odp_g)


@settings(max_examples=150, deadline=None)
@given(partitioned())
def test_lemma4_odp_gives_dp_with_sup(case):
    outcomes, p, q, partition, costs = case
    cost = lambda o: costs[partition(o)]  # noqa: E731
    delta = max(tight_delta_upper(p, q, cost), tight_delta_upper(q, p, cost))
    assume(delta < 1)
    g = ODP(partition, costs, delta)
    mech, nbrs = {0: p, 1: q}, [(0, 1), (1, 0)]
    assert exact.mechanism_satisfies(mech, nbrs, g)
    dp = g.to_dp()  # sup form
    assert dp.epsilon == max(costs.values()) and dp.delta == delta
    assert exact.mechanism_satisfies(mech, nbrs, dp)
    # bound form: any ε ≥ every class cost
    assert exact.mechanism_satisfies(mech, nbrs, DP(dp.epsilon + Fraction(1, 3), delta))


def test_lemma4_wrong_claim_min_instead_of_sup_is_detected():
    """Charging the *smallest* class cost as the DP ε is violated on a concrete mechanism."""
    p = FiniteDist({"a": Fraction(6, 10), "b": Fraction(1, 10), "c": Fraction(3, 10)})
    q = FiniteDist({"a": Fraction(1, 10), "b": Fraction(6, 10), "c": Fraction(3, 10)})
    partition = {"a": "hi", "b": "hi", "c": "lo"}.__getitem__
    costs = {"hi": 2, "lo": 0}  # e^2 > 6 covers the ratios in class hi; class lo has ratio 1
    assert satisfies_odp(p, q, partition=partition, costs=costs, delta=0) and satisfies_odp(q, p, partition=partition, costs=costs, delta=0)
    assert satisfies_dp(p, q, 2, 0)
    assert not satisfies_dp(p, q, 0, 0)  # the wrong claim (min cost) fails the same check


@settings(max_examples=150, deadline=None)
@given(partitioned())
def test_lemma6_subset_dp_per_class_gives_odp_with_summed_delta(case):
    outcomes, p, q, partition, costs = case
    per_class = {}
    for k, e in costs.items():
        region = lambda o, k=k: partition(o) == k  # noqa: E731
        dk = max(tight_delta_upper(p, q, lambda o: e, region=region),
                 tight_delta_upper(q, p, lambda o: e, region=region))
        assert exact.satisfies_subset_dp(p, q, region=region, epsilon=e, delta=dk)
        assert exact.satisfies_subset_dp(q, p, region=region, epsilon=e, delta=dk)
        per_class[k] = SubsetDP(k, e, dk) if dk < 1 else None
    assume(all(per_class.values()) and sum(s.delta for s in per_class.values()) < 1)
    g = ODP.from_subset_dp(partition, per_class)
    assert g.delta == sum(s.delta for s in per_class.values())
    assert exact.mechanism_satisfies({0: p, 1: q}, [(0, 1), (1, 0)], g)


@settings(max_examples=100, deadline=None)
@given(partitioned())
def test_lemma6_summed_delta_is_sharp_for_exact_costs(case):
    """With costs 0 (so e^ℰ = 1 exactly) the per-class Δ's are exact, and ODP with any δ
    below Σ Δ fails: Lemma 6's sum cannot be replaced by something smaller here."""
    outcomes, p, q, partition, costs = case
    zero = {k: Fraction(0) for k in costs}
    deltas = [exact.excess_bracket(p, q, lambda o: 0, region=lambda o, k=k: partition(o) == k)[1]
              for k in zero]
    total = sum(deltas)
    assert satisfies_odp(p, q, partition=partition, costs=zero, delta=total)
    if total > 0:
        assert not satisfies_odp(p, q, partition=partition, costs=zero, delta=total - Fraction(1, 10**9))
        assert not satisfies_odp(p, q, partition=partition, costs=zero, delta=max(deltas)) or max(deltas) == total

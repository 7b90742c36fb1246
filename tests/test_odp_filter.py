"""The ODP filter (Hartmann et al. 2022, App. A: Def. 19, Alg. 6) as Accountant admission."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import odp
from odp.errors import BudgetExceeded, InvalidParameter
from odp.exact import FiniteDist, satisfies_dp
from odp.filters import ODPFilter, realised_sequence, sum_filter
from odp.guarantees import ODP, GuaranteeRecord
from odp.rational import log_upper

from strategies import finite_dists


def scripted_run(acc, script):
    """Run a script of steps on an accountant; returns the outcome of each step."""
    outcomes = []
    for kind, eps in script:
        try:
            if kind == "toy":
                outcomes.append(acc.run(odp.ToyMechanism(lambda x: x, epsilon=eps), 3))
            elif kind == "laplace":
                outcomes.append(acc.run(odp.LaplaceMechanism(lambda x: x, epsilon=eps), 3))
            elif kind == "rr":
                outcomes.append(acc.run(odp.RandomizedResponse(lambda x: x > 0, epsilon=eps), 3))
            elif kind == "gauss":
                outcomes.append(acc.charge(odp.DP(eps, "1e-7")).label)
            else:  # an interactive reservation settled in its cheap class
                g = ODP(lambda r: r, {"hi": eps, "lo": 0}, 0)
                with acc.reserve(g, interactive=True) as res:
                    outcomes.append(res.settle_class("lo").charged)
        except BudgetExceeded:
            outcomes.append("refused")
    return outcomes


def ledger_view(acc):
    return [(r.index, r.mechanism, r.params, r.guarantee, r.sup_epsilon, r.delta, r.label,
             r.charged, r.reason, r.status, r.interactive) for r in acc.history]


steps = st.lists(st.tuples(st.sampled_from(["toy", "laplace", "rr", "gauss", "interactive"]),
                           st.sampled_from(["0.1", "0.25", "0.5", "1"])), max_size=14)


@settings(max_examples=40, deadline=None)
@given(script=steps, seed=st.integers(0, 2**32))
def test_alg1_and_alg6_with_the_sum_filter_produce_identical_ledgers(script, seed):
    runs = []
    for admission in [None, ODPFilter(),
                      ODPFilter(sum_filter, proof="Def. 19 form of the sum filter (Thm. 7)")]:
        acc = odp.Accountant(epsilon="1.5", delta="3e-7", rng=odp.SeededRandom(seed),
                             admission=admission)
        out = scripted_run(acc, script)
        runs.append((out, ledger_view(acc), acc.remaining))
    assert runs[0] == runs[1] == runs[2]


def test_sum_filter_refusal_names_the_rule_and_records_nothing():
    acc = odp.Accountant(epsilon=1, admission=ODPFilter())
    acc.charge(odp.DP("0.75"))
    with pytest.raises(BudgetExceeded, match="odp_sum_filter"):
        acc.charge(odp.DP("0.5"))
    assert len(acc.history) == 1 and acc.remaining == odp.Budget("0.25")


def test_realised_sequence_holds_pending_rounds_at_sup():
    seen = []

    def spy(budget, sequence):
        seen.append(list(sequence))
        return sum_filter(budget, sequence)

    acc = odp.Accountant(epsilon=2, admission=ODPFilter(spy, proof="test spy around the sum filter"))
    toy = ODP(lambda r: r, {"value": "0.5", "bottom": 0}, 0)
    acc.charge(toy, "bottom")  # realised ε^1 = 0
    res = acc.reserve(odp.DP("0.25"))  # pending: held at sup
    acc.charge(odp.DP("0.1"))
    res.settle(None)
    assert seen[-1] == [(Fraction(0), 0), (Fraction(1, 4), 0), (Fraction(1, 10), 0)]


def test_a_custom_filter_function_needs_a_stated_proof():
    # the heuristic Rogers, Roth, Ullman, Vadhan 2016 show invalid
    def advanced_on_realised(budget, sequence):
        return True

    with pytest.raises(InvalidParameter, match="valid ODP filter"):
        ODPFilter(advanced_on_realised)
    with pytest.raises(InvalidParameter):
        ODPFilter("not callable", proof="x")
    f = ODPFilter(advanced_on_realised, proof="my lemma 3")
    assert "my lemma 3" in repr(f)


# ---------------------------------------------------------------- exact Alg. 6 views
def alg6_views(adversary, admit, budget, rounds):
    """Exact view laws of Alg. 6 for a deterministic adversary ``history -> (p0, p1, ODP)``;
    ``admit(budget, sequence) -> bool`` is the filter function of line 4."""
    out0, out1 = {}, {}

    def walk(history, realised, w0, w1, left):
        if left == 0:
            out0[history] = out0.get(history, 0) + w0
            out1[history] = out1.get(history, 0) + w1
            return
        p0, p1, g = adversary(history)
        if not admit(budget, realised + [(g.sup_epsilon, g.delta)]):
            out0[history + ("HALT",)] = out0.get(history + ("HALT",), 0) + w0
            out1[history + ("HALT",)] = out1.get(history + ("HALT",), 0) + w1
            return
        for o in set(p0) | set(p1):
            eps_k = g.cost(g.classify(o))
            walk(history + (o,), realised + [(eps_k, g.delta)], w0 * p0[o], w1 * p1[o], left - 1)

    walk((), [], Fraction(1), Fraction(1), rounds)
    return FiniteDist(out0), FiniteDist(out1)


def pointwise_odp(p0, p1):
    """The tightest output-wise ODP guarantee of a full-support pair (δ = 0): class = output,
    ℰ(o) = |ln(p0(o)/p1(o))| rounded up."""
    costs = {o: max(log_upper(p0[o] / p1[o]), log_upper(p1[o] / p0[o])) for o in p0}
    return ODP(lambda o: o, costs, 0)


@settings(max_examples=30, deadline=None)
@given(pairs=st.lists(st.tuples(finite_dists([0, 1, 2], allow_zero=False),
                                finite_dists([0, 1, 2], allow_zero=False)), min_size=1, max_size=3),
       budget=st.fractions(min_value=Fraction(1, 4), max_value=3, max_denominator=4))
def test_alg6_with_the_sum_filter_is_dp_exactly(pairs, budget):
    mechs = [(p, q, pointwise_odp(p, q)) for p, q in pairs]
    adversary = lambda h: mechs[hash(h) % len(mechs)]  # noqa: E731
    v0, v1 = alg6_views(adversary, sum_filter, odp.Budget(budget), 4)
    assert satisfies_dp(v0, v1, budget, 0) and satisfies_dp(v1, v0, budget, 0)


def test_a_filter_that_ignores_the_candidate_fails_the_same_check():
    p, q = FiniteDist({0: Fraction(9, 10), 1: Fraction(1, 10)}), FiniteDist({0: Fraction(1, 10), 1: Fraction(9, 10)})
    mech = (p, q, pointwise_odp(p, q))  # ε = ln 9 ≈ 2.2 in both classes

    def prefix_only(budget, sequence):  # wrong: checks the realised prefix, not the candidate
        return sum_filter(budget, sequence[:-1])

    v0, v1 = alg6_views(lambda h: mech, prefix_only, odp.Budget(1), 2)
    assert not satisfies_dp(v0, v1, 1, 0)
    v0, v1 = alg6_views(lambda h: mech, sum_filter, odp.Budget(1), 2)
    assert satisfies_dp(v0, v1, 1, 0)


def test_realised_sequence_reads_a_ledger():
    acc = odp.Accountant(epsilon=1)
    acc.charge(ODP(lambda r: r, {"a": "0.5", "b": "0.2"}, 0), "b")
    state = acc.ledger.snapshot()
    from odp.ledger import RoundRequest
    req = RoundRequest("x", "m", {}, GuaranteeRecord((("all", Fraction(1, 3)),), Fraction(0)),
                       Fraction(1, 3), Fraction(0))
    assert realised_sequence(state, req) == [(Fraction(1, 5), 0), (Fraction(1, 3), 0)]


def test_the_sum_filter_keeps_the_transition_recheck_on_by_default():
    """ODPFilter() decides with Alg. 1's sum rule, which the generated Lean ledger rules
    describe: enforce="auto" keeps the re-check on for it (and for odp.ledger.sum_rule), and
    off for a genuinely custom filter, which may validly admit more."""
    from odp.certs.enforce import generated_check
    from odp.filters import IncrementalFilter
    from odp.ledger import sum_rule

    class Fold(IncrementalFilter):
        def start(self, budget):
            return Fraction(0)

        def fold(self, state, epsilon, delta):
            return state + epsilon

        def admits(self, budget, state):
            return state <= budget.epsilon

    class Subclass(ODPFilter):
        pass

    for admission in [None, ODPFilter(), sum_rule]:
        acc = odp.Accountant(1, admission=admission)
        assert acc.enforce == "generated" and acc._check is generated_check
        assert ODPFilter().is_sum_rule
        acc.run(odp.ToyMechanism(len, epsilon="0.5"), [1])  # a refund, re-checked
        assert acc.last_round.charged is not None and acc.last_round.status == "settled"
    for admission in [ODPFilter(sum_filter, proof="Thm 7"), ODPFilter(Fold(), proof="Thm 7"),
                      Subclass(), lambda state, request: True]:
        acc = odp.Accountant(1, admission=admission)
        assert acc.enforce is None and acc._check is None
        assert not getattr(admission, "is_sum_rule", False)

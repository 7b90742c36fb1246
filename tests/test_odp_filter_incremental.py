"""Incremental ODP filters (IncrementalFilter): the same decisions as the plain fold over the
realised sequence (Hartmann et al. 2022, Alg. 6 line 4), with settled rounds folded once each."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import odp
from odp.errors import BudgetExceeded, InvalidParameter
from odp.filters import IncrementalFilter, ODPFilter, sum_filter
from odp.guarantees import ODP


class SumFold(IncrementalFilter):
    """The sum filter (Theorem 7) as a fold."""

    symmetric = True

    def start(self, budget):
        return Fraction(0), Fraction(0)

    def fold(self, state, epsilon, delta):
        return state[0] + epsilon, state[1] + delta

    def admits(self, budget, state):
        return state[0] <= budget.epsilon and state[1] <= budget.delta


class SquaresFold(IncrementalFilter):
    """Order-insensitive but not a sum of the ε: Σ ε² ≤ ε_t²/2 and Σ δ ≤ δ_t (a test rule, not
    a claimed valid filter)."""

    symmetric = True

    def start(self, budget):
        return Fraction(0), Fraction(0)

    def fold(self, state, epsilon, delta):
        return state[0] + epsilon * epsilon, state[1] + delta

    def admits(self, budget, state):
        return 2 * state[0] <= budget.epsilon ** 2 and state[1] <= budget.delta


class WeightedFold(IncrementalFilter):
    """Order-sensitive: the j-th element weighs (j mod 3 + 1)/2 (a test rule only)."""

    def __init__(self, symmetric=False):
        self.symmetric = symmetric

    def start(self, budget):
        return 0, Fraction(0), Fraction(0)

    def fold(self, state, epsilon, delta):
        j, eps, dlt = state
        return j + 1, eps + epsilon * Fraction(j % 3 + 1, 2), dlt + delta

    def admits(self, budget, state):
        return state[1] <= budget.epsilon and state[2] <= budget.delta


def plain(fold: IncrementalFilter):
    """The old form: the whole realised sequence folded from scratch at every admission."""
    def function(budget, sequence):
        state = fold.start(budget)
        for e, d in sequence:
            state = fold.fold(state, e, d)
        return fold.admits(budget, state)
    return function


COSTS = ["0.05", "0.1", "0.25", "0.5"]
step = st.one_of(
    st.tuples(st.just("charge"), st.sampled_from(COSTS), st.sampled_from(["0", "1e-7"])),
    st.tuples(st.just("toy"), st.sampled_from(COSTS), st.sampled_from(["value", "bottom"])),
    st.tuples(st.just("open"), st.sampled_from(COSTS), st.just("")),
    st.tuples(st.just("hold"), st.sampled_from(COSTS), st.just("")),
    st.tuples(st.just("settle"), st.integers(0, 5), st.sampled_from(["hi", "lo", "abort"])),
)


def run_script(acc, script):
    """Outcomes of a script of charges, ODP charges, and reservations (interactive: "open";
    non-interactive, refunded to their class whatever was reserved after: "hold") left open
    and settled later (in any order)."""
    outcomes, open_rounds = [], []
    for kind, a, b in script:
        try:
            if kind == "charge":
                outcomes.append(acc.charge(odp.DP(a, b)).charged)
            elif kind == "toy":
                g = ODP(lambda r: r, {"value": a, "bottom": 0}, 0)
                outcomes.append(acc.charge(g, b).charged)
            elif kind in ("open", "hold"):
                g = ODP(lambda r: r, {"hi": a, "lo": 0}, 0)
                open_rounds.append(acc.reserve(g, interactive=kind == "open"))
                outcomes.append(kind)
            elif open_rounds:
                res = open_rounds.pop(a % len(open_rounds))
                rec = res.abort() if b == "abort" else res.settle_class(b)
                outcomes.append((rec.charged, rec.reason))
        except BudgetExceeded:
            outcomes.append("refused")
    return outcomes


def ledger_view(acc):
    return [(r.index, r.sup_epsilon, r.delta, r.label, r.charged, r.reason, r.status)
            for r in acc.history]


def both(fold, script, ledger=None, tmp_path=None):
    runs = []
    for i, admission in enumerate([ODPFilter(fold, proof="test rule"),
                                   ODPFilter(plain(fold), proof="test rule")]):
        where = None if tmp_path is None else str(tmp_path / f"l{i}.db")
        acc = odp.Accountant(epsilon="1.5", delta="3e-7", admission=admission, ledger=where)
        runs.append((run_script(acc, script), ledger_view(acc)))
        acc.close()
    return runs


@settings(max_examples=60, deadline=None)
@given(script=st.lists(step, max_size=30),
       fold=st.sampled_from([SumFold(), SquaresFold(), WeightedFold()]))
def test_incremental_filter_decides_exactly_like_the_fold_from_scratch(script, fold):
    incremental, from_scratch = both(fold, script)
    assert incremental == from_scratch


@settings(max_examples=10, deadline=None)
@given(script=st.lists(step, max_size=12))
def test_incremental_filter_on_a_sqlite_ledger(tmp_path_factory, script):
    tmp = tmp_path_factory.mktemp("inc")
    incremental, from_scratch = both(WeightedFold(), script, tmp_path=tmp)
    assert incremental == from_scratch


@settings(max_examples=30, deadline=None)
@given(script=st.lists(step, max_size=25))
def test_the_incremental_sum_filter_gives_alg1s_ledger(script):
    runs = []
    for admission in [None, ODPFilter(SumFold(), proof="Theorem 7 (the sum filter as a fold)")]:
        acc = odp.Accountant(epsilon="1.5", delta="3e-7", admission=admission)
        runs.append((run_script(acc, script), ledger_view(acc)))
    assert runs[0] == runs[1]


def test_a_false_symmetry_claim_changes_decisions():
    """The symmetric fast path folds settled rounds in settlement order: for an order-sensitive
    F that is wrong, and the equivalence check above would catch it."""
    script = [("open", "0.5", ""), ("open", "0.5", ""), ("charge", "0.25", "0"),
              ("open", "0.5", "")]
    honest, reference = both(WeightedFold(symmetric=False), script)
    assert honest == reference
    lying, reference = both(WeightedFold(symmetric=True), script)
    assert lying != reference


def test_an_incremental_filter_is_itself_the_filter_function():
    budget = odp.Budget("1", "1e-6")
    seq = [(Fraction(1, 2), Fraction(0)), (Fraction(1, 2), Fraction(1, 10**6))]
    assert SumFold()(budget, seq) is sum_filter(budget, seq) is True
    assert SumFold()(budget, seq + [(Fraction(1, 10**9), Fraction(0))]) is False


def test_an_incremental_filter_still_needs_a_stated_proof():
    with pytest.raises(InvalidParameter, match="valid ODP filter"):
        ODPFilter(SumFold())
    f = ODPFilter(SumFold(), proof="Theorem 7")
    assert "SumFold" in repr(f) and "Theorem 7" in repr(f)


def test_settled_rounds_are_folded_once_each():
    calls = []

    class Counting(SumFold):
        symmetric = False

        def fold(self, state, epsilon, delta):
            calls.append(epsilon)
            return super().fold(state, epsilon, delta)

    acc = odp.Accountant(epsilon=1000, admission=ODPFilter(Counting(), proof="Theorem 7"))
    for _ in range(300):
        acc.charge(odp.DP("0.001"))
    # each admission folds the new settled round (once) and the candidate: 2 per charge
    assert len(calls) <= 2 * 300


class CountingOrdered(WeightedFold):
    """WeightedFold (order-sensitive) counting its folds."""

    def __init__(self):
        super().__init__(symmetric=False)
        self.calls = 0

    def fold(self, state, epsilon, delta):
        self.calls += 1
        return super().fold(state, epsilon, delta)


def test_ordered_fold_with_a_round_held_open_folds_each_later_round_once():
    """A long-open interactive reservation no longer makes an ordered fold refold every later
    round at each admission (that was O(rounds) per charge)."""
    fold = CountingOrdered()
    acc = odp.Accountant(epsilon=1000, admission=ODPFilter(fold, proof="test rule"))
    held = acc.reserve(ODP(lambda r: r, {"hi": "0.5", "lo": 0}, 0), interactive=True)
    fold.calls = 0
    for _ in range(300):
        acc.charge(odp.DP("0.001"))
    # per charge: the round settled since the last admission, and the candidate
    assert fold.calls <= 2 * 300 + 1
    # the open round settles: the next admission refolds it and the 300 rounds after it, once
    held.settle_class("lo")
    fold.calls = 0
    acc.charge(odp.DP("0.001"))
    assert fold.calls == 302
    fold.calls = 0
    acc.charge(odp.DP("0.001"))
    assert fold.calls == 2


def test_ordered_fold_refolds_from_the_earliest_round_settled_since():
    """Rounds opened and settled out of order between charges: at every admission the cached
    ordered fold decides exactly like the fold of the whole sequence from scratch."""
    script = []
    for i in range(6):
        script += [("hold", COSTS[i % 4], ""), ("charge", "0.05", "0"), ("open", "0.1", ""),
                   ("toy", "0.05", "value"), ("settle", i * 7 % 5, ["hi", "lo", "abort"][i % 3]),
                   ("charge", "0.05", "1e-8"), ("hold", "0.1", "")]
    script += [("settle", 0, "lo")] * 14 + [("charge", "0.25", "0")] * 6
    incremental, reference = both(WeightedFold(), script)
    assert incremental == reference
    outcomes = reference[0]
    assert "refused" in outcomes and (0, "released") in outcomes  # refunds reached later rounds


def test_one_filter_shared_by_two_accountants_keeps_them_apart():
    f = ODPFilter(SumFold(), proof="Theorem 7")
    a = odp.Accountant(epsilon=1, admission=f)
    b = odp.Accountant(epsilon=1, admission=f)
    for _ in range(4):
        a.charge(odp.DP("0.25"))
    b.charge(odp.DP("0.75"))
    with pytest.raises(BudgetExceeded):
        a.charge(odp.DP("0.25"))
    b.charge(odp.DP("0.25"))
    assert a.remaining.epsilon == b.remaining.epsilon == 0

"""BudgetState's (ε_r, δ_r) before a round, and the undo of a batch that failed part-way.

``state_before`` reads Alg. 1's state just before a round from a lazily built Fenwick tree when
the round lies far back (O(log rounds) instead of one addition per later round); a batch
refused part-way is undone in O(its rounds) instead of replaying the ledger.  Both are checked
here against the plain definitions, on random histories."""

from __future__ import annotations

import os
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import odp
from odp.errors import BudgetExceeded
from odp.ledger import records
from odp.ledger.base import MemoryLedger
from odp.ledger.records import BudgetState, RoundRequest
from odp.ledger.sqlite import SQLiteLedger

BUDGET = odp.Budget("50", "1/2")


def _request(i: int, sup: Fraction, delta: Fraction) -> RoundRequest:
    g = odp.ODP(lambda r: "a" if r == "a" else "b", {"a": sup, "b": sup / 2}, delta)
    return RoundRequest(f"round-{i}", "m", {}, g.record(), g.sup_epsilon, g.delta)


def _naive_before(state: BudgetState, round_id: str) -> tuple[Fraction, Fraction]:
    """Alg. 1's (ε_r, δ_r) before ``round_id``: the budget minus what every round reserved
    earlier holds now (its charge once settled, its sup while pending)."""
    pos = state.by_id[round_id]
    earlier = state.rounds[:pos]
    return (BUDGET.epsilon - sum((r.epsilon_held for r in earlier), Fraction(0)),
            BUDGET.delta - sum((r.delta for r in earlier), Fraction(0)))


amounts = st.fractions(min_value=0, max_value=1, max_denominator=12)
# an operation: ("reserve", sup, δ) | ("charge", sup, δ) | ("settle", which pending, full?)
operations = st.lists(st.one_of(
    st.tuples(st.just("reserve"), amounts, st.fractions(0, Fraction(1, 400), max_denominator=400)),
    st.tuples(st.just("charge"), amounts, st.fractions(0, Fraction(1, 400), max_denominator=400)),
    st.tuples(st.just("settle"), st.integers(0, 10_000), st.booleans())), max_size=90)


def _apply(state: BudgetState, ops, start: int = 0) -> None:
    seq = state.last_seq
    for i, op in enumerate(ops, start):
        if op[0] == "settle":
            pending = [r for r in state.rounds if r.status == "pending"]
            if not pending:
                continue
            rec = pending[op[1] % len(pending)]
            charged = rec.sup_epsilon if op[2] else rec.sup_epsilon / 2
            seq += 1
            state.apply_settle(seq, rec.round_id, "a" if op[2] else "b", charged,
                               reason="released", at=0.0)
        elif op[0] == "reserve":
            seq += 1
            state.apply_reserve(seq, _request(i, op[1], op[2]), 0.0)
        else:
            seq += 2
            state.apply_charge(seq - 1, seq, _request(i, op[1], op[2]), "b",
                               charged=op[1] / 2, reason="released", at=0.0)


def _check_every_round(state: BudgetState) -> None:
    for rec in state.rounds:
        assert state.state_before(rec.round_id) == _naive_before(state, rec.round_id)


@pytest.mark.parametrize("short_suffix", [0, 3, records._SHORT_SUFFIX])
@settings(max_examples=60, deadline=None)
@given(ops=operations, probes=st.lists(st.integers(0, 89), max_size=6))
def test_state_before_is_the_budget_minus_what_earlier_rounds_hold(short_suffix, ops, probes):
    saved = records._SHORT_SUFFIX
    records._SHORT_SUFFIX = short_suffix  # 0: always through the Fenwick tree
    try:
        state = BudgetState(BUDGET)
        # query part-way (the tree is built, then extended and updated by later settles)
        cuts = sorted({min(p, len(ops)) for p in probes}) + [len(ops)]
        done = 0
        for cut in cuts:
            _apply(state, ops[done:cut], done)
            done = cut
            _check_every_round(state)
    finally:
        records._SHORT_SUFFIX = saved


class _Refused(Exception):
    """What makes a batch fail part-way in these tests."""


def _snapshot(state: BudgetState):
    return (list(state.rounds), dict(state.by_id), state.eps_left, state.delta_left,
            state.last_reserve_seq, state.last_seq)


@settings(max_examples=60, deadline=None)
@given(before=operations, batch=operations, query_mid=st.booleans())
def test_an_undone_batch_leaves_the_state_as_it_was(before, batch, query_mid):
    state = BudgetState(BUDGET)
    _apply(state, before)
    if before and state.rounds:
        state.state_before(state.rounds[0].round_id)  # build the tree before the batch
    expected = _snapshot(state)

    def failing_batch():
        _apply(state, batch, len(before))
        if query_mid and state.rounds:
            _check_every_round(state)  # the tree extended over the batch, settles update it
        raise _Refused

    with pytest.raises(_Refused):
        state.applying(failing_batch)
    assert _snapshot(state) == expected
    _check_every_round(state)
    _apply(state, batch, len(before) + len(batch))  # and it goes on correctly afterwards
    _check_every_round(state)


@pytest.mark.parametrize("backend", ["memory", "sqlite"])
def test_settling_a_large_batch_in_order_and_out_of_order(tmp_path, backend):
    ledger = (MemoryLedger(odp.Budget(100)) if backend == "memory"
              else SQLiteLedger(tmp_path / "l.db", odp.Budget(100)))
    acc = odp.Accountant(ledger=ledger)
    g = odp.ODP(lambda r: "hit" if r == "hit" else "miss", {"hit": "1/100", "miss": "1/400"})
    reservations = acc.reserve_many([g] * 300)
    order = reservations[::2] + reservations[1::2][::-1]
    acc.settle_many([(r, "miss") for r in order])  # each transition re-checked (enforce on)
    assert acc.spent.epsilon == Fraction(300, 400)
    acc.certificate()  # replays under the generated rules
    ledger.close()


@pytest.mark.parametrize("backend", ["memory", "sqlite"])
def test_a_refused_batch_is_undone_in_place(tmp_path, backend):
    path = tmp_path / "l.db"
    ledger = (MemoryLedger(odp.Budget(1)) if backend == "memory"
              else SQLiteLedger(path, odp.Budget(1)))
    acc = odp.Accountant(ledger=ledger)
    for _ in range(50):
        acc.charge(odp.DP("0.01"))
    open_round = acc.reserve(odp.DP("0.1"))
    state = ledger.snapshot()
    before = _snapshot(state)
    with pytest.raises(BudgetExceeded):  # the third does not fit: none of them is recorded
        acc.charge_many([odp.DP("0.2"), odp.DP("0.15"), odp.DP("0.2")])
    assert ledger.snapshot() is state  # undone where it was, not rebuilt from every row
    assert _snapshot(state) == before
    open_round.settle(None)
    acc.charge_many([odp.DP("0.2"), odp.DP("0.15")])
    assert acc.spent.epsilon == Fraction(1, 2) + Fraction(1, 10) + Fraction(35, 100)
    acc.certificate()
    ledger.close()
    if backend == "sqlite":  # what is on disk agrees
        again = SQLiteLedger(path)
        assert again.snapshot().eps_left == state.eps_left
        assert [r.round_id for r in again.rounds()] == [r.round_id for r in state.rounds]
        again.close()
        assert os.path.exists(path)


def test_the_tree_follows_settles_and_undone_batches(monkeypatch):
    """The cases the random histories above reach only sometimes, spelled out: a round the
    Fenwick tree already holds is settled; a batch that settled such a round is undone."""
    monkeypatch.setattr(records, "_SHORT_SUFFIX", 0)
    one, zero = Fraction(1), Fraction(0)
    state = BudgetState(BUDGET)
    _apply(state, [("reserve", one, zero), ("reserve", one, zero), ("charge", one, zero)])
    _check_every_round(state)  # builds the tree over the three rounds
    _apply(state, [("settle", 0, False)], 3)  # round 0 (in the tree) charged 1/2
    _check_every_round(state)

    def failing_batch():
        _apply(state, [("settle", 0, True), ("reserve", one, zero)], 4)  # round 1 settled at sup
        _check_every_round(state)
        raise _Refused

    with pytest.raises(_Refused):
        state.applying(failing_batch)
    assert state.rounds[1].status == "pending" and len(state.rounds) == 3
    _check_every_round(state)
    _apply(state, [("settle", 0, False)], 6)
    _check_every_round(state)

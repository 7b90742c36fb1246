"""Concurrent composition of interactive mechanisms (Haney et al. 2023): launches charged once,
free interleaving, nesting, sequential-only approximate zCDP, ODP refund rule, threads."""

from __future__ import annotations

import threading
from fractions import Fraction

import pytest

import odp
from odp.interactive import (
    ConcurrentComposition,
    ConcurrentCompositionRefused,
    InteractiveMechanism,
    Queryable,
    QueryableClosed,
    SubComposition,
)
from odp.errors import BudgetExceeded, InvalidParameter
from odp.filters import ZCDP, BasicFilter, RDPFilter, WhitehouseFilter, ZCDPFilter
from odp.guarantees import ODP
from odp.ledger import REASON_CLOSED, REASON_OVERLAP

DATA = [1, 0, 1, 1, 0, 1]


def rr(eps):
    return odp.RandomizedResponse(lambda d: sum(d) > 2, epsilon=eps)


def interleaved_scenario(root, make_child, third, queries=4):
    """Two children interleaved query by query; a third created mid-way from inside the
    first; returns the parent's odometer readings along the way."""
    c1 = root.launch(make_child("0.4"))
    c2 = root.launch(make_child("0.3"))
    readings = [root.privacy_loss()]
    c3 = None
    for i in range(queries):
        c1.run(rr("0.05"))
        readings.append(root.privacy_loss())
        c2.run(rr("0.05"))
        readings.append(root.privacy_loss())
        if i == queries // 2:
            c3 = c1.launch(third)  # a grandchild, paid from the first child's budget
        if c3 is not None:
            c3.run(rr("0.05"))
            readings.append(root.privacy_loss())
    return c1, c2, c3, readings


@pytest.mark.parametrize("make_root,make_child,third_cost", [
    (lambda: BasicFilter(1), lambda b: SubComposition(BasicFilter(b)), "0.1"),
    (lambda: BasicFilter(1, "1e-6"), lambda b: SubComposition(BasicFilter(b, "1e-7")), "0.1"),
    (lambda: WhitehouseFilter(5, "1e-5", "1e-6"), lambda b: SubComposition(BasicFilter(b)), "0.1"),
    (lambda: ZCDPFilter(1), lambda b: SubComposition(ZCDPFilter(b)), "0.01"),
    (lambda: RDPFilter(2, 2), lambda b: SubComposition(RDPFilter(2, b)), "0.1"),
])
def test_parent_ledger_equals_launch_charges(make_root, make_child, third_cost):
    root_filter = make_root()
    root = ConcurrentComposition(DATA, root_filter, rng=odp.SeededRandom(7))
    third = make_child(third_cost)
    c1, c2, c3, readings = interleaved_scenario(root, make_child, third)
    # the parent paid exactly the two launches, once each, whatever the children answered
    assert root_filter.rounds == (root_filter.parse(make_child("0.4").cost),
                                  root_filter.parse(make_child("0.3").cost))
    # the parent's odometer is constant between launches, however many child queries ran
    assert all(r == readings[0] for r in readings) and root.privacy_loss() == readings[0]
    assert readings[0] == root_filter.accumulator.loss(
        root_filter.accumulator.add(root_filter.accumulator.add(
            root_filter.accumulator.zero(), root_filter.rounds[0]), root_filter.rounds[1]))
    # the first child paid its queries and the third child's launch from its own budget
    inner = c1.queryable.budget
    assert third.cost is not None and inner.parse(third.cost) in inner.rounds
    assert c3.queryable.answered >= 1 and c2.queryable.answered == 4


def test_children_budgets_are_enforced_inside_and_queries_never_refused_by_parent():
    root = ConcurrentComposition(DATA, BasicFilter(1), rng=odp.SeededRandom(1))
    c1 = root.launch(SubComposition(BasicFilter("0.1")))
    c1.run(rr("0.1"))
    with pytest.raises(BudgetExceeded):
        c1.run(rr("0.05"))  # the child's own budget, not the parent's
    assert root.budget.remaining() == odp.Budget("0.9")
    with pytest.raises(BudgetExceeded):
        root.launch(SubComposition(BasicFilter("0.95")))
    assert len(root.children()) == 1 and root.budget.remaining() == odp.Budget("0.9")


def test_approximate_zcdp_child_is_refused_while_others_are_open():
    root_filter = ZCDPFilter(1, "1e-5")
    root = ConcurrentComposition(DATA, root_filter, rng=odp.SeededRandom(3))
    c1 = root.launch(SubComposition(ZCDPFilter("0.4")))
    c2 = root.launch(SubComposition(ZCDPFilter("0.3")))
    c1.run(rr("0.1"))
    c2.run(rr("0.1"))
    approx = SubComposition(ZCDPFilter("0.1", "1e-6"), name="approx-zCDP session")
    with pytest.raises(ConcurrentCompositionRefused, match="no concurrent composition theorem"):
        root.launch(approx)
    assert len(root_filter) == 2 and root.privacy_loss() == ZCDP("0.7")  # nothing charged
    # sequentially it is fine: close the others first
    c1.close()
    c2.close()
    with pytest.raises(QueryableClosed):
        c1.run(rr("0.1"))
    a = root.launch(approx)
    with pytest.raises(ConcurrentCompositionRefused, match="close it first"):
        root.launch(SubComposition(ZCDPFilter("0.1")))
    with pytest.raises(ConcurrentCompositionRefused):
        root.run(rr("0.1"))
    a.close()
    root.launch(SubComposition(ZCDPFilter("0.1")))
    assert root.privacy_loss() == ZCDP("0.9", "1e-6")


# ---------------------------------------------------------------- ODP children and refunds
class Session(Queryable):
    """A test child whose realised class is 'few' if it answered ≤ 2 queries."""

    name = "session"

    def __init__(self, data):
        super().__init__()
        self.data = data

    def _answer(self, query):
        return query(self.data)

    def _finish(self):
        return "few" if self.answered <= 2 else "many"


class SessionMechanism(InteractiveMechanism):
    name = "session"
    cost = ODP(lambda label: label, {"few": "0.2", "many": "1"}, 0)

    def start(self, data, rng):
        return Session(data)


def test_odp_refund_only_without_overlap():
    acc = odp.Accountant(epsilon=3)
    root = ConcurrentComposition(DATA, acc)
    s1 = root.launch(SessionMechanism())
    s1.query(len)
    s1.close()
    assert acc.history[-1].charged == Fraction(1, 5) and acc.remaining == odp.Budget("2.8")
    s2 = root.launch(SessionMechanism())
    s3 = root.launch(SessionMechanism())  # reserved while s2 is open
    s2.query(len)
    s3.query(len)
    s2.close()
    s3.close()
    r2, r3 = acc.history[-2:]
    assert (r2.charged, r2.reason) == (1, REASON_OVERLAP)  # overlapped: charged its sup
    assert r3.charged == Fraction(1, 5)  # nothing reserved after it while it was open
    assert acc.spent == odp.Budget("1.4")


def test_accountant_budget_refuses_and_records_nothing():
    acc = odp.Accountant(epsilon="1.5")
    root = ConcurrentComposition(DATA, acc)
    root.launch(SessionMechanism())
    with pytest.raises(BudgetExceeded):
        root.launch(SessionMechanism())
    assert len(acc.history) == 1
    with pytest.raises(InvalidParameter):
        root.launch("not a mechanism")


class RecordingMechanism(SessionMechanism):
    """Remembers the rng its child was started with; its child reports no class on close."""

    def __init__(self):
        self.rngs = []

    def start(self, data, rng):
        self.rngs.append(rng)
        session = Session(data)
        session._finish = lambda: None  # no realised class: settled at sup on close
        return session


def test_rng_override_is_refused_under_an_accountant():
    acc = odp.Accountant(epsilon=3)
    with pytest.raises(InvalidParameter, match="rng"):
        ConcurrentComposition(DATA, acc, rng=odp.SeededRandom(1))
    assert acc.history == []
    ConcurrentComposition(DATA, acc, rng=acc.rng)  # the accountant's own rng is no override


@pytest.mark.parametrize("rng,flagged", [(odp.SeededRandom(1), True), (None, False)])
def test_children_and_runs_use_the_accountant_rng_and_the_ledger_says_so(rng, flagged):
    acc = odp.Accountant(epsilon=3, rng=rng)
    root = ConcurrentComposition(DATA, acc)
    mech = RecordingMechanism()
    child = root.launch(mech)
    assert mech.rngs == [acc.rng]
    child.close()
    root.run(rr("0.1"))
    launched, ran = acc.history
    for record in (launched, ran):
        assert record.params.get("insecure_rng", False) is flagged
    # a child that closes without reporting a class is charged its sup, reason "closed"
    assert (launched.reason, launched.charged) == (REASON_CLOSED, 1)


def test_seeded_accountant_makes_a_composition_reproducible():
    def session_answers():
        acc = odp.Accountant(epsilon=3, rng=odp.SeededRandom(5))
        root = ConcurrentComposition(DATA, acc)
        inner = root.launch(SubComposition(BasicFilter(1)))
        return [inner.run(rr("0.05")) for _ in range(12)] + [root.run(rr("0.5"))]

    assert session_answers() == session_answers()


def test_filter_composition_uses_the_given_rng():
    mech = RecordingMechanism()
    seeded = odp.SeededRandom(2)
    ConcurrentComposition(DATA, BasicFilter(3), rng=seeded).launch(mech)
    ConcurrentComposition(DATA, BasicFilter(3)).launch(mech)
    assert mech.rngs[0] is seeded and isinstance(mech.rngs[1], odp.SecureRandom)


# ---------------------------------------------------------------- threads
def _racing_launches_overspend_nothing():
    """Two threads launch at once children that fit only once (and run a mechanism that fits
    only once).  The root filter's decision waits for the other thread (tests/racy.py): without
    the launch lock and the filter's lock both would pass the check before either recorded."""
    from racy import PausedBasicFilter, race

    root_filter = PausedBasicFilter(1)
    root = ConcurrentComposition(DATA, root_filter, rng=odp.SeededRandom(5))
    outcomes = race(lambda: root.launch(SubComposition(BasicFilter("0.6"))),
                    lambda: root.launch(SubComposition(BasicFilter("0.6"))))
    assert sorted(type(o).__name__ for o in outcomes) == ["BudgetExceeded", "ChildHandle"]
    assert len(root_filter) == 1 and root.privacy_loss() == odp.Budget("0.6")
    assert not root_filter.callers_met
    runs = PausedBasicFilter(1)
    root = ConcurrentComposition(DATA, runs, rng=odp.SeededRandom(5))
    outcomes = race(lambda: root.run(rr("0.6")), lambda: root.run(rr("0.6")))
    assert sum(isinstance(o, BudgetExceeded) for o in outcomes) == 1
    assert len(runs) == 1 and root.privacy_loss() == odp.Budget("0.6")


def _racing_approximate_zcdp_launches_stay_sequential():
    """Two threads launch approximate-zCDP children at once: only one may be open (Haney et al.
    2023, Sec. 4).  The decision waits as above, after the sequentiality check and before the child
    is registered: without the launch lock the second launch would pass that check too."""
    from racy import PausedZCDPFilter, race

    root_filter = PausedZCDPFilter(1, "1e-5")
    root = ConcurrentComposition(DATA, root_filter, rng=odp.SeededRandom(5))
    outcomes = race(lambda: root.launch(SubComposition(ZCDPFilter("0.1", "1e-6"))),
                    lambda: root.launch(SubComposition(ZCDPFilter("0.1", "1e-6"))))
    assert sorted(type(o).__name__ for o in outcomes) == ["ChildHandle",
                                                          "ConcurrentCompositionRefused"]
    assert len(root_filter) == 1 and len(root.children()) == 1


def test_concurrent_launches_and_queries_from_threads_never_overspend():
    _racing_launches_overspend_nothing()
    _racing_approximate_zcdp_launches_stay_sequential()
    # and a stress run of many threads launching and querying (plain filters)
    root_filter = BasicFilter(1)
    root = ConcurrentComposition(DATA, root_filter, rng=odp.SeededRandom(11))
    handles, answers, errors = [], [], []
    lock = threading.Lock()

    def worker():
        for _ in range(15):
            try:
                h = root.launch(SubComposition(BasicFilter("0.03")))
            except BudgetExceeded:
                continue
            with lock:
                handles.append(h)
            for other in list(handles)[-3:]:  # interleave with other threads' children
                try:
                    answers.append(other.run(rr("0.01")))
                except BudgetExceeded:
                    pass
                except Exception as exc:  # noqa: BLE001
                    errors.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(handles) == len(root_filter) == 33  # ⌊1 / 0.03⌋ launches, each charged once
    assert root.privacy_loss() == odp.Budget("0.99")
    for h in handles:  # no child overspent its own budget either
        assert h.privacy_loss().fits_in(odp.Budget("0.03"))
    assert len(answers) == sum(len(h.queryable.budget) for h in handles)


# ---------------------------------------------------------------- refused before the charge
@pytest.mark.parametrize("budget", [lambda: BasicFilter(2, "1e-5"),
                                    lambda: odp.Accountant(epsilon=2, delta="1e-5")])
def test_run_refuses_a_wrong_call_before_charging(budget):
    """As Accountant.run does: a query that cannot take (data) is refused with nothing spent
    (it used to charge the filter, then raise TypeError from inside the release)."""
    b = budget()
    root = ConcurrentComposition(DATA, b, rng=None if isinstance(b, odp.Accountant)
                                 else odp.SeededRandom(3))
    with pytest.raises(InvalidParameter, match="nothing was reserved or charged"):
        root.run(odp.LaplaceMechanism(lambda x, y: sum(x), epsilon="0.5"))
    assert root.privacy_loss() == odp.Budget(0)
    assert root.run(odp.LaplaceMechanism(lambda x: sum(x), epsilon="0.5")) is not None
    assert root.privacy_loss() == odp.Budget("0.5")


@pytest.mark.parametrize("budget", [lambda: BasicFilter(2, "1e-5"),
                                    lambda: odp.Accountant(epsilon=2, delta="1e-5")])
def test_run_refuses_a_wrong_public_shape_before_charging(budget):
    from odp.mechanisms.ptr.mechanism import IQRMechanism

    b = budget()
    root = ConcurrentComposition([1, 2, 3], b)
    with pytest.raises(InvalidParameter, match="n=10"):
        root.run(IQRMechanism(epsilon="1/2", delta="1e-6", n=10))
    assert root.privacy_loss() == odp.Budget(0)
    if isinstance(b, BasicFilter):
        assert len(b) == 0
    else:
        assert b.history == []

"""odp.Accountant: Alg. 1 as a filter (admit → reserve → release → classify → settle)."""

from __future__ import annotations

from fractions import Fraction

import pytest

import odp
from odp.errors import BudgetExceeded, InvalidGuarantee, InvalidParameter
from odp.guarantees import ODP
from odp.ledger import REASON_FAILED, REASON_OVERLAP, REASON_UNCLASSIFIABLE


class SpyMechanism(odp.Mechanism):
    """Returns a fixed release and counts how often it was asked to draw noise."""

    name = "spy"

    def __init__(self, guarantee, release):
        self._g, self._release, self.calls = guarantee, release, 0

    @property
    def guarantee(self):
        return self._g

    def release(self, data, rng):
        self.calls += 1
        if isinstance(self._release, Exception):
            raise self._release
        return self._release


def test_public_names_importable_from_top_level():
    for name in ["Accountant", "Budget", "DP", "ODP", "SubsetDP", "OdpError", "BudgetExceeded",
                 "InvalidGuarantee", "InvalidBudget", "LedgerError", "CertificateError"]:
        assert hasattr(odp, name), name
    assert issubclass(odp.BudgetExceeded, odp.OdpError)
    assert odp.DP(epsilon="0.1", delta="1e-6").delta == Fraction(1, 10**6)


def test_thousand_charges_of_a_thousandth_then_refusal():
    acc = odp.Accountant(epsilon=1)
    g = odp.DP("0.001")
    for _ in range(1000):
        acc.charge(g)
    assert acc.remaining == odp.Budget(0) and acc.spent == odp.Budget(1)
    with pytest.raises(BudgetExceeded) as info:
        acc.charge(g)
    assert info.value.remaining == odp.Budget(0)
    assert len(acc.history) == 1000


def test_over_budget_raises_before_any_noise_and_records_nothing():
    acc = odp.Accountant(epsilon="0.5", delta="1e-6")
    spy = SpyMechanism(odp.DP("0.6"), 1)
    with pytest.raises(BudgetExceeded):
        acc.run(spy, None)
    assert spy.calls == 0 and acc.history == [] and acc.remaining == acc.budget
    spy_delta = SpyMechanism(odp.DP("0.1", "2e-6"), 1)
    with pytest.raises(BudgetExceeded):
        acc.run(spy_delta, None)
    assert spy_delta.calls == 0 and acc.history == []


def test_admission_uses_the_sup_over_classes_lemma4():
    """A cheap class does not make an expensive mechanism affordable (line 4 checks the sup)."""
    acc = odp.Accountant(epsilon="0.5")
    g = ODP(lambda r: "cheap" if r == 0 else "dear", {"cheap": "0.1", "dear": "0.6"})
    spy = SpyMechanism(g, 0)
    with pytest.raises(BudgetExceeded):
        acc.run(spy, None)
    assert spy.calls == 0


def test_settle_charges_the_realised_class_and_delta_whatever_the_class():
    acc = odp.Accountant(epsilon=1, delta="1e-5")
    g = ODP(lambda r: "bottom" if r is odp.BOTTOM else "value", {"value": "0.4", "bottom": "0.1"},
            "2e-6")
    assert acc.run(SpyMechanism(g, odp.BOTTOM), None) is odp.BOTTOM
    rec = acc.last_round
    assert rec.label == "bottom" and rec.charged == Fraction(1, 10) and rec.refund == Fraction(3, 10)
    assert acc.remaining == odp.Budget("0.9", "8e-6")  # δ_i charged although ⊥ was cheap
    acc.run(SpyMechanism(g, 7), None)
    assert acc.remaining == odp.Budget("0.5", "6e-6")
    assert [r.index for r in acc.history] == [1, 2]


def test_toy_mechanism_refunds_bottom():
    acc = odp.Accountant(epsilon=1, rng=odp.SeededRandom(3))
    toy = odp.ToyMechanism(len, epsilon="0.25")
    labels = []
    while True:
        try:
            acc.run(toy, [1, 2, 3])
        except BudgetExceeded:
            break
        labels.append(acc.last_round.label)
    values = labels.count("value")
    assert values == 4 and labels.count("bottom") >= 1  # exactly 4 costly releases fit in 1
    assert acc.remaining.epsilon == 0
    assert all(r.params.get("insecure_rng") for r in acc.history)


def test_failed_mechanism_is_charged_its_sup_and_reraised():
    acc = odp.Accountant(epsilon=1)
    spy = SpyMechanism(odp.DP("0.3"), RuntimeError("boom"))
    with pytest.raises(RuntimeError):
        acc.run(spy, None)
    assert acc.last_round.reason == REASON_FAILED and acc.last_round.charged == Fraction(3, 10)
    assert acc.remaining.epsilon == Fraction(7, 10)


def test_unclassifiable_release_in_run_is_charged_sup():
    acc = odp.Accountant(epsilon=1)
    g = ODP(lambda r: "x" if r == 1 else "unknown", {"x": "0.2", "y": "0.5"})
    with pytest.raises(InvalidGuarantee):
        acc.run(SpyMechanism(g, 2), None)
    assert acc.last_round.reason == REASON_UNCLASSIFIABLE and acc.last_round.charged == Fraction(1, 2)


def test_charge_with_unclassifiable_release_records_nothing():
    acc = odp.Accountant(epsilon=1)
    g = ODP(lambda r: {1: "x"}[r], {"x": "0.2"})
    with pytest.raises(InvalidGuarantee):
        acc.charge(g, 5)
    with pytest.raises(InvalidGuarantee):
        acc.charge("not a guarantee")
    with pytest.raises(InvalidParameter):
        acc.run(object(), None)
    assert acc.history == [] and acc.remaining == acc.budget


def test_reservation_context_manager():
    acc = odp.Accountant(epsilon=1)
    g = ODP(lambda r: r, {"a": "0.1", "b": "0.5"})
    with acc.reserve(g, mechanism="mine") as res:
        assert acc.remaining.epsilon == Fraction(1, 2)  # held at sup while pending
        res.settle("a")
    assert acc.remaining.epsilon == Fraction(9, 10)
    with acc.reserve(g) as res:
        pass  # never settled: charged the sup
    assert acc.last_round.charged == Fraction(1, 2)
    with pytest.raises(odp.LedgerError):
        res.settle("a")


def test_interactive_round_refunded_only_without_overlap():
    acc = odp.Accountant(epsilon=2)
    g = ODP(lambda r: r, {"few": "0.2", "many": "1"})
    lone = acc.reserve(g, mechanism="svt", interactive=True)
    assert lone.settle_class("few").charged == Fraction(1, 5)
    open_round = acc.reserve(g, mechanism="svt", interactive=True)
    acc.charge(odp.DP("0.1"))  # another round reserved while the interactive one is open
    rec = open_round.settle_class("few")
    assert rec.reason == REASON_OVERLAP and rec.charged == 1


def test_accountant_reopens_a_sqlite_ledger_without_budget(tmp_path):
    path = tmp_path / "budget.db"
    with odp.Accountant(epsilon="1", delta="1e-6", ledger=path) as acc:
        acc.charge(odp.DP("0.25", "1e-7"))
    with odp.Accountant(ledger=path) as again:
        assert again.budget == odp.Budget(1, "1e-6")
        assert again.remaining == odp.Budget("0.75", "9e-7")
    with pytest.raises(odp.LedgerError):
        odp.Accountant(epsilon=2, ledger=path)
    with pytest.raises(InvalidParameter):
        odp.Accountant()


def test_float_pitfalls_of_peers_do_not_happen():
    acc = odp.Accountant(epsilon="0.3")
    for _ in range(3):
        acc.charge(odp.DP("0.1"))  # OpenDP and diffprivlib refuse the third (anchors §2.5)
    assert acc.remaining.epsilon == 0
    acc = odp.Accountant(epsilon="0.5")
    for _ in range(5):
        acc.charge(odp.DP("0.1"))
    assert acc.spent.epsilon == Fraction(1, 2)


def test_custom_admission_rule_runs_atomically_and_refuses_cleanly(backend):
    """The admission hook (Alg. 6's filter) sees the up-to-date state; a refusal records
    nothing, for both ledgers."""
    seen = []

    def at_most_two_rounds(state, request):
        seen.append((len(state.rounds), request.sup_epsilon))
        return len(state.rounds) < 2

    for ledger in (None, backend.create(1)):
        acc = odp.Accountant(1, ledger=ledger, admission=at_most_two_rounds)
        acc.charge(odp.DP("0.1"))
        acc.reserve(odp.DP("0.2")).settle(None)
        with pytest.raises(BudgetExceeded, match="at_most_two_rounds refused"):
            acc.charge(odp.DP("0.1"))
        assert len(acc.history) == 2 and acc.remaining.epsilon == Fraction(7, 10)
    assert seen[:3] == [(0, Fraction(1, 10)), (1, Fraction(1, 5)), (2, Fraction(1, 10))]
    with pytest.raises(InvalidParameter):
        odp.Accountant(1, admission="sum")


def test_params_must_be_json_and_nothing_is_recorded_otherwise(backend):
    for ledger in (None, backend.create(1)):
        acc = odp.Accountant(1, ledger=ledger)
        with pytest.raises(InvalidParameter, match="JSON"):
            acc.reserve(odp.DP("0.1"), params={"x": Fraction(1, 2)})
        with pytest.raises(InvalidParameter, match="JSON"):
            acc.charge(odp.DP("0.1"), params={"x": object()})
        assert acc.history == [] and acc.remaining == acc.budget


def test_numpy_integer_labels_are_recorded_as_int(tmp_path):
    import numpy as np

    acc = odp.Accountant(1, ledger=tmp_path / "l.db")
    g = ODP(lambda r: np.int64(r), {np.int64(0): "0.1", np.int64(1): "0.5"})
    rec = acc.charge(g, 1)
    assert rec.label == 1 and type(rec.label) is int and rec.charged == Fraction(1, 2)
    with pytest.raises(InvalidGuarantee):
        ODP(lambda r: r, {True: "0.1"})


def test_custom_admission_beyond_the_sum_rule_keeps_state_valid_and_certificates_refuse():
    acc = odp.Accountant(1, admission=lambda state, request: True)
    acc.charge(odp.DP("0.8"))
    acc.charge(odp.DP("0.8"))
    assert acc.remaining == odp.Budget(0)  # never a negative, invalid Budget
    with pytest.raises(odp.CertificateError, match="custom admission rule"):
        acc.certificate()

"""A query that raises, returns NaN, or a mechanism with the wrong call signature.
Programming errors that can be seen before the reservation cost nothing; a failure after it is
charged the worst case and the error says so.  Real SQLite ledgers, read back from the file."""

from __future__ import annotations

import traceback
from fractions import Fraction

import pytest

import odp
from odp.errors import InvalidGuarantee, InvalidParameter
from odp.ledger import REASON_FAILED, REASON_UNCLASSIFIABLE, SQLiteLedger


def _spent(path) -> Fraction:
    ledger = SQLiteLedger(path, readonly=True)
    try:
        return ledger.snapshot().budget.epsilon - ledger.snapshot().remaining.epsilon
    finally:
        ledger.close()


def _rows(path) -> int:
    ledger = SQLiteLedger(path, readonly=True)
    try:
        return len(ledger.rounds())
    finally:
        ledger.close()


def _note(exc: BaseException) -> str:
    return " ".join(getattr(exc, "__notes__", []))


class MissingRng(odp.Mechanism):
    """A user's mechanism whose release forgot the rng parameter."""

    name = "missing_rng"

    @property
    def guarantee(self):
        return odp.DP("0.5")

    def release(self, data):  # wrong signature: Accountant.run calls release(data, rng)
        return 1


@pytest.mark.parametrize("make", [
    lambda: MissingRng(),
    lambda: odp.LaplaceMechanism(lambda: 1, epsilon="0.5"),  # query takes no argument
    lambda: odp.LaplaceMechanism(lambda rows, extra: 1, epsilon="0.5"),  # two arguments
    lambda: odp.RandomizedResponse(lambda a, b: True, epsilon="0.5"),
    lambda: odp.mechanisms.SparseVectorMechanism([len, lambda a, b: 1], 1, epsilon1="0.1",
                                      epsilon2="0.2", c=1),
])
def test_wrong_signatures_are_refused_before_the_reservation(make, tmp_path):
    path = tmp_path / "l.db"
    acc = odp.Accountant("1", ledger=path)
    with pytest.raises(InvalidParameter, match="nothing was reserved or charged"):
        acc.run(make(), [1, 2, 3])
    acc.close()
    assert _spent(path) == 0 and _rows(path) == 0  # a programming error cost nothing


@pytest.mark.parametrize("query, error", [
    (lambda rows: 1 / 0, ZeroDivisionError),
    (lambda rows: float("nan"), InvalidParameter),
    (lambda rows: rows["no such column"], TypeError),
])
def test_a_failing_query_is_charged_its_worst_case_and_the_error_says_so(query, error, tmp_path):
    path = tmp_path / "l.db"
    acc = odp.Accountant("1", ledger=path)
    with pytest.raises(error) as info:
        acc.run(odp.LaplaceMechanism(query, epsilon="0.3"), [1, 2, 3])
    acc.close()
    note = _note(info.value)
    assert "charged its worst case epsilon=0.3, delta=0" in note
    assert f"raised {type(info.value).__name__}" in note and "after the round was reserved" in note
    assert note in "".join(traceback.format_exception(info.value))  # shown in the traceback
    assert info.value.odp_round.charged == Fraction(3, 10)
    assert info.value.odp_round.reason == REASON_FAILED
    assert _spent(path) == Fraction(3, 10) and _rows(path) == 1  # and it really was charged


def test_an_unclassifiable_release_says_what_was_charged(tmp_path):
    class Odd(odp.Mechanism):
        name = "odd"

        @property
        def guarantee(self):
            return odp.ODP(lambda r: {"a": "a"}[r] if r == "a" else "unknown",
                           {"a": "0.1", "b": "0.4"})

        def release(self, data, rng):
            return "c"

    path = tmp_path / "l.db"
    acc = odp.Accountant("1", ledger=path)
    with pytest.raises(InvalidGuarantee) as info:
        acc.run(Odd(), None)
    acc.close()
    assert "charged its worst case epsilon=0.4" in _note(info.value)
    assert "fits none of the declared classes" in _note(info.value)
    assert info.value.odp_round.reason == REASON_UNCLASSIFIABLE
    assert _spent(path) == Fraction(2, 5)


def test_the_cli_prints_the_charge_on_its_one_line(tmp_path, capsys, monkeypatch):
    """A command whose round fails after its reservation: the one-line error carries the note."""
    import odp.cli.table1 as command
    from odp.cli import main

    def run(args):  # a command that runs a user's query through a real ledger
        acc = odp.Accountant("1", ledger=tmp_path / "l.db")
        acc.run(odp.LaplaceMechanism(lambda r: float("nan"), epsilon="0.3"), [1])

    monkeypatch.setattr(command, "run", run)
    assert main(["table1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "charged its worst case epsilon=0.3" in err
    assert _spent(tmp_path / "l.db") == Fraction(3, 10)


@pytest.mark.parametrize("bad, message", [
    ((odp.DP("0.1"), None, 3), "item 1 is a tuple of 3"),
    (("0.1",), "item 1 is a tuple of 1"),
    ((), "item 1 is a tuple of 0"),
    ("0.1", "item 1: expected an odp.DP or odp.ODP"),
    ((None, None), "item 1: expected an odp.DP or odp.ODP"),
])
def test_malformed_charge_many_items_are_refused_naming_the_item(bad, message, tmp_path):
    path = tmp_path / "l.db"
    acc = odp.Accountant(epsilon=1, ledger=str(path))
    with pytest.raises(InvalidParameter, match=message) as info:
        acc.charge_many([odp.DP("0.1"), bad, odp.DP("0.2")])
    assert "nothing was charged" in str(info.value)
    assert acc.history == [] and acc.last_round is None
    acc.close()
    assert _rows(path) == 0 and _spent(path) == 0


@pytest.mark.parametrize("bad", [lambda res: (res,), lambda res: (res, None, 1),
                                 lambda res: ("not a reservation", None), lambda res: res])
def test_malformed_settle_many_items_are_refused_before_settling(bad, tmp_path):
    path = tmp_path / "l.db"
    acc = odp.Accountant(epsilon=1, ledger=str(path))
    first, second = acc.reserve_many([odp.DP("0.1"), odp.DP("0.2")])
    with pytest.raises(InvalidParameter, match="settle_many item 1"):
        acc.settle_many([(first, None), bad(second)])
    assert first.open and second.open
    assert [r.status for r in acc.history] == ["pending", "pending"]
    assert acc.settle_many([(first, None), [second, None]])[1].charged == Fraction(1, 5)
    acc.close()
    assert _spent(path) == Fraction(3, 10)

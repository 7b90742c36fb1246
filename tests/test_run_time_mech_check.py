"""The run-time check applies each round's ``mech`` row: before the settle
row of a round recorded as made by one of odp's own mechanisms is committed, the declared classes,
costs and δ must be the Lean cost function (``Odp/LedgerCore.lean``, generated checker) of the
recorded parameters.  A round that declares anything else is refused at run time: it is charged
its declared sup with reason ``enforcement-mismatch`` and a :class:`CertificateError` is raised
— on every settle path (reserve + settle, the one-step charge of the in-memory and the chained
ledgers).  Real SQLite ledgers; the honest runs of the same mechanisms pass."""

from __future__ import annotations

import json
import sqlite3
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

import odp
from odp.certs import verify
from odp.composition import BucketsComposition, PrefixDeltaSum, StepSpec
from odp.errors import CertificateError
from odp.guarantees import ODP
from odp.ledger import SQLiteLedger
from odp.mechanisms.dpsgd import DPSGD, LogisticRegressionModel
from odp.mechanisms.iterative import IterativeMechanism, NoisyGradientDescent
from odp.mechanisms.noise import LaplaceMechanism, ToyMechanism, value_or_bottom
from odp.mechanisms.builtin import BUILTIN_KEY
from odp.mechanisms.svt import SparseVectorMechanism
from odp.accountant import _request


class CheapToy(ToyMechanism):
    """A subclass of odp's M_toy declaring the values class at ε/2: not odp's own mechanism, so
    the accountant records it as declared (odp.mechanisms.builtin), whatever its name."""

    @property
    def guarantee(self) -> ODP:
        return ODP(value_or_bottom, {"value": self.epsilon / 2, "bottom": 0}, 0)


def _as_builtin(guarantee, key: str, params: dict, name: str | None = None):
    """A round request recorded as made by odp's own mechanism ``key`` (as Accountant.run
    records one, params[BUILTIN_KEY]) but declaring ``guarantee`` — what a built-in mechanism
    with a wrong guarantee would send; only the ledger API takes it (the public calls refuse
    the key)."""
    return _request(odp.guarantees.as_odp(guarantee), name or key,
                    {**params, BUILTIN_KEY: key}, False)


def _rows(path: Path) -> list[tuple[str, str, str, str, str]]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute("SELECT kind, round_id, mechanism, charged, reason FROM events "
                            "ORDER BY seq").fetchall()
    finally:
        conn.close()


def _settles(path: Path) -> list[tuple[str, str | None]]:
    """(mechanism, reason) of every settle (one-step charges included), in ledger order; the
    mechanism is recorded on the round's reserve row."""
    rows = _rows(path)
    names = {rid: mechanism for kind, rid, mechanism, _, _ in rows if mechanism is not None}
    return [(names[rid], reason) for kind, rid, _, _, reason in rows if reason is not None]


def test_a_built_in_round_with_another_guarantee_is_refused_before_its_settle_row(tmp_path):
    """A round recorded as odp's M_toy (ε = 1/5) whose declared values class costs ε/2: the
    reserve + settle path refuses it at the settle (reason enforcement-mismatch, charged its
    sup), and the certificate names the round.  A subclass doing the same through run() is
    not odp's own mechanism: recorded as declared, its settle passes."""
    path = tmp_path / "run.db"
    acc = odp.Accountant("2", ledger=path, rng=odp.SeededRandom(1))
    acc.run(ToyMechanism(len, epsilon="1/5"), [1, 2])  # the honest round passes
    acc.run(CheapToy(len, epsilon="1/5"), [1, 2])  # declared: nothing to check against
    assert BUILTIN_KEY not in acc.last_round.params and acc.last_round.reason == "released"
    cheap = CheapToy(len, epsilon="1/5").guarantee
    record = acc.ledger.reserve(_as_builtin(cheap, "toy", {"epsilon": "1/5"}), None)
    with pytest.raises(CertificateError, match="enforcement-mismatch"):
        acc.ledger.settle(record.round_id, "value", Fraction(1, 10), check=acc._check)
    bad = acc.ledger.snapshot().get(record.round_id)
    assert bad.reason == "enforcement-mismatch" and bad.charged == Fraction(1, 10)  # its sup
    spent = sum((r.charged for r in acc.history), Fraction(0))
    acc.close()
    settles = _settles(path)
    assert settles[0] == ("toy", "released") and settles[1] == ("toy", "released")
    assert settles[-1] == ("toy", "enforcement-mismatch")
    assert [r for r in settles if r[1] == "enforcement-mismatch"] == [settles[-1]]
    with SQLiteLedger(path, readonly=True) as ledger:  # the file replays
        assert ledger.snapshot().eps_left == 2 - spent
    # its certificate names the round: the declared guarantee is not M_toy's
    with SQLiteLedger(path, readonly=True) as ledger:
        from odp.certs import certificate_of

        cert = certificate_of(ledger)
    result = verify(cert.text, cert.sidecar)
    assert not result.ok and result.row == 3 and result.rule == "Odp.LedgerCore.mechOk"


@pytest.mark.parametrize("backend", ["sqlite", "memory"])
def test_a_charge_recorded_as_laplace_must_cost_its_epsilon(tmp_path, backend):
    """The one-step charge path (chained ledger for SQLite, the in-memory ledger's own): a
    round recorded as odp's Laplace must cost its ε.  A label ``mechanism="laplace"`` through
    the public charge() records nothing built-in: declared, not checked against Laplace."""
    ledger = tmp_path / "c.db" if backend == "sqlite" else None
    acc = odp.Accountant("1", ledger=ledger)
    acc.ledger.charge(_as_builtin(odp.DP("1/5"), "laplace", {"epsilon": "1/5"}), "all",
                      Fraction(1, 5), check=acc._check)  # honest
    acc.charge(odp.DP("1/10"), mechanism="laplace", params={"epsilon": "1/5"})  # a label
    with pytest.raises(CertificateError, match="enforcement-mismatch"):
        acc.ledger.charge(_as_builtin(odp.DP("1/10"), "laplace", {"epsilon": "1/5"}), "all",
                          Fraction(1, 10), check=acc._check)
    history = acc.history
    assert [r.reason for r in history] == ["released", "released", "enforcement-mismatch"]
    assert acc.remaining.epsilon == 1 - Fraction(1, 5) - Fraction(1, 10) - Fraction(1, 10)
    acc.close()
    if ledger is not None:
        assert _settles(ledger) == [
            ("laplace", "released"), ("laplace", "released"),
            ("laplace", "enforcement-mismatch")]


def test_reserve_then_settle_with_a_wrong_delta_is_refused(tmp_path):
    """A Gaussian round (``mech gaussian ε δ``) reserved with another δ: the explicit
    reservation's settle (base ``settlement``) is refused."""
    path = tmp_path / "g.db"
    acc = odp.Accountant("1", "1e-3", ledger=path)
    params = {"epsilon": "1/2", "delta": "1/100000"}
    ok = acc.ledger.reserve(_as_builtin(odp.DP("1/2", "1/100000"), "gaussian", params))
    acc.ledger.settle(ok.round_id, "all", Fraction(1, 2), check=acc._check)
    bad = acc.ledger.reserve(_as_builtin(odp.DP("1/2", "1/1000000"), "gaussian", params))
    with pytest.raises(CertificateError, match="enforcement-mismatch"):
        acc.ledger.settle(bad.round_id, "all", Fraction(1, 2), check=acc._check)
    acc.close()
    assert _settles(path)[-1] == ("gaussian", "enforcement-mismatch")


def test_the_built_in_mechanisms_pass_the_run_time_mech_check(tmp_path):
    """Normal runs of built-in mechanisms on a SQLite ledger: every built-in round's mech row
    is derived and every settle passes (no enforcement-mismatch)."""
    from odp.certs import certificate_of, mechanisms

    path = tmp_path / "ok.db"
    acc = odp.Accountant("60", "1e-2", ledger=path, rng=odp.SeededRandom(7))
    x = np.array([[0.5], [-2.0], [3.0]])
    y = np.array([1.0, -1.0, 1.0])
    acc.run(LaplaceMechanism(len, epsilon="1/3"), [1, 2, 3])
    for _ in range(4):
        acc.run(ToyMechanism(len, epsilon="1/4"), [1])
    acc.run(SparseVectorMechanism([len, len], 1, epsilon1="1/10", epsilon2="1/5", c=1), [1, 2])
    acc.run(NoisyGradientDescent(n=3, dim=1, epsilon_step="1/10", stops=[2, 4]), (x, y))
    acc.run(IterativeMechanism(lambda h, d, rng: 0, stops=[1, 3],
                               steps=StepSpec(Fraction(1, 10), Fraction(1, 10**6)),
                               rule=PrefixDeltaSum(BucketsComposition())), None)
    # one relation per accountant: DP-SGD by group privacy for the others' replace-one
    acc.run(DPSGD(LogisticRegressionModel(1), n=3, sampling_rate=1, noise_multiplier=1,
                  epochs=2, delta="1e-3", clip=1, granularity="1/4",
                  neighbours="replace-one"), (x, y))
    acc.close()
    assert all(reason != "enforcement-mismatch" for _, reason in _settles(path))
    with SQLiteLedger(path, readonly=True) as ledger:
        cert = certificate_of(ledger)
        rounds = ledger.snapshot().rounds
    kinds = [mechanisms.row_for(r.mechanism, r.params, list(r.guarantee.classes)).kind
             for r in rounds]
    # the user's IterativeMechanism (its own step and StepSpecs) is declared
    assert kinds == ["laplace", "toy", "toy", "toy", "toy", "svt", "iter", "declared",
                     "lemma11"]
    assert verify(cert.text, cert.sidecar).ok
    assert json.loads(json.dumps(cert.sidecar))["text_version"] == 3

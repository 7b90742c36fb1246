"""Laned ledgers on disk (SQLite) and on a server (PostgreSQL): the lanes are recorded once and
bound by the genesis hash, lane rounds are ordinary chained rows, and kill -9, several processes
and tampering leave every lane's sums exact (the ledger contract of test_ledger_contract.py, for
lanes)."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from fractions import Fraction
from pathlib import Path

import pytest

import odp
from odp.errors import BudgetExceeded, LedgerCorrupted, LedgerError
from odp.guarantees import ZCDP
from odp.ledger import SQLiteLedger
from odp.ledger.lanes import Lane, lanes_json

SRC = str(Path(__file__).resolve().parents[1] / "python")
DATA = list(range(20))


def _python(code: str, *args: str) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code), *args], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _lanes() -> list[Lane]:
    return [Lane.odp("0.1"), Lane.zcdp(1, "1e-6")]


def test_a_laned_ledger_reopens_with_its_lanes(backend):
    lanes = _lanes()
    spec = backend.create("1.1", "1e-6", lanes=lanes)
    acc = odp.Accountant(ledger=spec)
    assert acc.ledger.lanes == tuple(lanes)
    acc.run(odp.GaussianMechanism(len, epsilon=1, sigma=10), DATA)
    acc.charge(odp.DP("0.05"))
    acc.charge(ZCDP("0.01"))
    spent = acc.spent
    acc.close()
    again = odp.Accountant(ledger=spec)
    assert again.spent == spent and [s.spent for s in again.lanes] == [
        (Fraction(1, 20), Fraction(0)), (Fraction(3, 200),)]
    assert [r.lane for r in again.history] == ["zcdp", None, "zcdp"]
    head = again.ledger.chain_head
    assert head.rows == 6 and head.rounds == 3  # lane rounds are chained rows like any other
    again.close()
    with pytest.raises(LedgerError, match="not the lanes given"):
        odp.Accountant("1.1", "1e-6", ledger=spec, lanes=[Lane.odp("0.6"), Lane.zcdp("0.5", "1e-6")])
    with pytest.raises(LedgerError, match="not the lanes given"):
        odp.Accountant("1.1", "1e-6", ledger=spec, composition="zcdp")
    # the lane definition is metadata written once, beside the budget
    meta = backend.table("meta")
    values = dict(backend.sql(spec, f"SELECT key, value FROM {meta}"))
    assert values["lanes"] == lanes_json(lanes)


def test_lanes_are_bound_by_the_genesis_hash(tmp_path):
    path = tmp_path / "l.db"
    lanes = _lanes()
    SQLiteLedger(path, odp.Budget("1.1", "1e-6"), lanes=lanes).close()
    moved = [Lane.odp("0.05"), Lane.zcdp("1.05", "1e-6")]  # budget moved between lanes
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("DROP TRIGGER meta_no_update")
    conn.execute("UPDATE meta SET value = ? WHERE key = 'lanes'", (lanes_json(moved),))
    conn.execute("CREATE TRIGGER meta_no_update BEFORE UPDATE ON meta\n"
                 "BEGIN SELECT RAISE(ABORT, 'odp ledger metadata is write-once'); END")
    conn.close()
    with pytest.raises(LedgerCorrupted, match="genesis hash does not match"):
        odp.Accountant(ledger=path)


def test_a_lane_charge_is_all_or_nothing_under_sigkill(backend):
    lane = Lane.zcdp(1, "1e-6")
    rho = lane.budget[0] / 50
    spec = backend.create(1, "1e-6", lanes=[lane])
    child = _python(
        """
        import sys, odp
        from fractions import Fraction
        acc = odp.Accountant(ledger=sys.argv[1])
        rho = Fraction(sys.argv[2])
        for i in range(10**6):
            acc.charge(odp.ZCDP(rho))
            if i == 5:
                print("charging", flush=True)
        """, spec, str(rho))
    assert child.stdout.readline().strip() == "charging"
    time.sleep(0.2)
    child.send_signal(signal.SIGKILL)
    child.wait()
    child.stdout.close()
    child.stderr.close()
    acc = odp.Accountant(ledger=spec)
    n = len(acc.history)
    assert 6 <= n <= 50 and all(r.status == "settled" and r.lane == "zcdp" for r in acc.history)
    assert acc.lanes[0].spent == (n * rho,)  # every committed charge, no half of one
    fit = 0
    while True:
        try:
            acc.charge(ZCDP(rho))
        except BudgetExceeded:
            break
        fit += 1
    assert n + fit == 50  # exactly the lane's budget, however the crash fell


def test_four_processes_share_one_laned_ledger_exactly(backend):
    zlane = Lane.zcdp(1, "1e-6")
    spec = backend.create("1.1", "1e-6", lanes=[Lane.odp("0.1"), zlane])
    rho = zlane.budget[0] / 100  # exactly 100 fit in the zCDP lane, 100 of 0.001 in the ODP lane
    worker = """
        import sys, odp
        from fractions import Fraction
        acc = odp.Accountant(ledger=sys.argv[1])
        rho, ok = Fraction(sys.argv[2]), [0, 0]
        for _ in range(40):
            for i, g in enumerate((odp.ZCDP(rho), odp.DP("0.001"))):
                try:
                    acc.charge(g)
                    ok[i] += 1
                except odp.BudgetExceeded:
                    pass
        print(ok[0], ok[1])
        """
    procs = [_python(worker, spec, str(rho)) for _ in range(4)]
    outs = [p.communicate(timeout=600) for p in procs]
    assert all(p.returncode == 0 for p in procs), [o[1] for o in outs]
    counts = [tuple(map(int, o[0].split())) for o in outs]
    assert sum(c[0] for c in counts) == 100 and sum(c[1] for c in counts) == 100
    final = odp.Accountant(ledger=spec)
    assert final.lanes[1].spent == (zlane.budget[0],)
    assert final.lanes[0].spent == (Fraction(1, 10), Fraction(0))
    assert sorted(r.index for r in final.history) == list(range(1, 201))


def test_a_forged_lane_row_that_overspends_is_refused_when_read(tmp_path):
    """A row rewritten without the key (chain and head recomputed, as tests/ledger_forgery.py
    does) that puts a lane over its budget is not a valid transition: opening refuses it."""
    from odp.ledger.chain import ChainVerifier, EventRow
    from odp.ledger.head import HeadRecord, head_path, write_head
    from odp.ledger.schema import genesis_of

    path = tmp_path / "l.db"
    lane = Lane.zcdp(1, "1e-6")
    acc = odp.Accountant(1, "1e-6", ledger=path, lanes=[lane])
    for _ in range(3):
        acc.charge(ZCDP(lane.budget[0] / 4))
    acc.close()
    conn = sqlite3.connect(path, isolation_level=None)
    meta = dict(conn.execute("SELECT key, value FROM meta"))
    rows = conn.execute("SELECT seq, kind, round_id, mechanism, params, guarantee, sup_epsilon, "
                        "delta, interactive, label, charged, reason, owner, created FROM events "
                        "ORDER BY seq").fetchall()
    conn.execute("DROP TRIGGER events_no_update")
    verifier = ChainVerifier(genesis_of(meta, str(path)))
    for stored in rows:
        stored = list(stored)
        if stored[0] == 1:  # the first charge doubled: the three now exceed the lane
            stored[5] = stored[5].replace(str(lane.budget[0] / 4), str(3 * lane.budget[0] / 4))
        row = EventRow.from_stored(stored)
        prev = verifier.state.head
        digest = verifier.check(row, None, None)
        conn.execute("UPDATE events SET guarantee = ?, prev_hash = ?, row_hash = ? WHERE seq = ?",
                     (stored[5], prev, digest, row.seq))
    conn.execute("CREATE TRIGGER events_no_update BEFORE UPDATE ON events\n"
                 "BEGIN SELECT RAISE(ABORT, 'odp ledger rows are append-only'); END")
    conn.close()
    write_head(head_path(path), HeadRecord(meta["ledger_id"], verifier.state.rows,
                                           verifier.state.rounds, verifier.state.head), force=True)
    with pytest.raises(LedgerCorrupted, match="not a valid transition"):
        odp.Accountant(ledger=path)

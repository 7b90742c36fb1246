"""The ledger contract, on every durable backend (``backend``: a SQLite file and a real
PostgreSQL server started by the tests, see conftest.py): durability, crash recovery,
multi-process safety, append-only rows, group commit, and 'a failed call changes nothing'
(byte for byte).  SQLite-only details (pragmas, foreign files) are marked as such; the
PostgreSQL-only ones are in test_ledger_postgres.py."""

from __future__ import annotations

import json
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
from odp.errors import BudgetExceeded, InvalidBudget, InvalidGuarantee, LedgerError
from odp.ledger import REASON_RECOVERED, SCHEMA_VERSION, SQLiteLedger

SRC = str(Path(__file__).resolve().parents[1] / "python")


def _python(code: str, *args: str, **kwargs) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code), *args], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kwargs)


def _files(path: Path) -> dict[str, bytes]:
    """The ledger's bytes: the database file and its write-ahead log.  A missing WAL and an
    empty one hold the same (no) data; some SQLite versions create an empty WAL on open."""
    out = {}
    for suffix in ("", "-wal"):
        p = Path(str(path) + suffix)
        out[suffix] = p.read_bytes() if p.exists() else b""
    return out


def test_sqlite_pragmas_and_schema_version(tmp_path):
    path = tmp_path / "l.db"
    acc = odp.Accountant(1, "1e-6", ledger=path)
    acc.charge(odp.DP("0.1"))
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    meta = dict(conn.execute("SELECT key, value FROM meta"))
    assert meta["schema_version"] == str(SCHEMA_VERSION)
    conn.close()
    acc.close()


def test_rows_are_append_only_and_amounts_exact_text(backend):
    spec = backend.create(1, "1e-6")
    acc = odp.Accountant(ledger=spec)
    acc.charge(odp.DP("0.1"))
    acc.close()
    events, meta = backend.table("events"), backend.table("meta")
    values = dict(backend.sql(spec, f"SELECT key, value FROM {meta}"))
    assert Fraction(values["epsilon"]) == 1 and values["delta"] == "1/1000000"
    for statement in (f"UPDATE {events} SET charged = '0'", f"DELETE FROM {events}",
                      f"UPDATE {meta} SET value = '100' WHERE key = 'epsilon'",
                      f"DELETE FROM {meta}"):
        with pytest.raises(backend.db_error, match="append-only|write-once"):
            backend.sql(spec, statement)
    rows = backend.sql(spec, f"SELECT kind, sup_epsilon, charged FROM {events} ORDER BY seq")
    assert [tuple(r) for r in rows] == [("reserve", "1/10", None), ("settle", None, "1/10")]


def test_newer_schema_and_foreign_files_are_refused(tmp_path):
    path = tmp_path / "future.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    conn.executemany("INSERT INTO meta VALUES (?, ?)",
                     [("schema_version", str(SCHEMA_VERSION + 1)), ("epsilon", "1"), ("delta", "0")])
    conn.commit()
    conn.close()
    with pytest.raises(LedgerError, match="upgrade"):
        SQLiteLedger(path)
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is not a database" * 100)
    with pytest.raises(LedgerError):
        SQLiteLedger(junk)
    with pytest.raises(LedgerError):
        SQLiteLedger(tmp_path / "missing.db")  # no budget given: nothing is created
    assert not (tmp_path / "missing.db").exists()


def test_bad_inputs_leave_the_ledger_byte_for_byte_unchanged(backend):
    path = backend.create("1", "1e-6")
    acc = odp.Accountant("1", "1e-6", ledger=path)
    acc.charge(odp.DP("0.5", "1e-7"))
    before = backend.dump(path)
    bad_calls = [
        lambda: acc.charge(odp.DP("nan")),
        lambda: acc.charge(odp.DP("inf")),
        lambda: acc.charge(odp.DP("-0.1")),
        lambda: acc.charge(odp.DP("0.1", "1")),
        lambda: acc.charge(odp.DP("abc")),
        lambda: acc.charge(odp.DP(0.1j)),
        lambda: acc.charge(odp.DP("0.6")),  # over budget
        lambda: acc.charge(odp.DP("0.1", "1e-6")),  # δ over budget
        lambda: acc.reserve(odp.DP("2")),
        lambda: acc.charge(odp.ODP(lambda r: "nope", {"x": "0.1"}), 1),
        lambda: acc.charge(odp.ODP(lambda r: "x", {"x": "-1"}), 1),
        lambda: acc.charge("not a guarantee"),
        lambda: odp.Accountant("2", ledger=path),  # budget mismatch
        lambda: odp.Accountant("nan", ledger=path),
    ]
    expected = (InvalidBudget, InvalidGuarantee, BudgetExceeded, LedgerError)
    for call in bad_calls:
        with pytest.raises(expected):
            call()
        assert backend.dump(path) == before
    for batch in ([odp.DP("0.3"), odp.DP("0.3")], [odp.DP("0.1"), odp.DP("0.1", "1e-6")]):
        with pytest.raises(expected):  # a group commit is all or nothing
            acc.reserve_many(batch)
        assert backend.dump(path) == before
    assert acc.remaining == odp.Budget("0.5", "9e-7")


def test_sigkill_between_reserve_and_settle_is_recovered_at_sup(backend):
    path = backend.create("1")
    child = _python(
        """
        import sys, time, odp
        acc = odp.Accountant(ledger=sys.argv[1])
        g = odp.ODP(lambda r: r, {"cheap": "0.05", "dear": "0.3"})
        res = acc.reserve(g, mechanism="crashing")
        print("reserved", flush=True)
        time.sleep(120)
        res.settle("cheap")
        """,
        str(path),
    )
    assert child.stdout.readline().strip() == "reserved"
    mid = odp.Accountant(ledger=path)  # owner alive: the round stays pending, held at sup
    assert mid.history[0].status == "pending" and mid.remaining.epsilon == Fraction(7, 10)
    mid.close()
    child.send_signal(signal.SIGKILL)
    child.wait()
    child.stdout.close()
    child.stderr.close()
    after = _recovered(path)
    (rec,) = after.history
    assert rec.status == "settled" and rec.reason == REASON_RECOVERED
    assert rec.charged == Fraction(3, 10)  # the sup, never less
    assert after.remaining.epsilon == Fraction(7, 10)


def _recovered(spec: str, timeout: float = 30.0) -> odp.Accountant:
    """Open the ledger until the killed owner's round is recovered (a PostgreSQL server notices
    a dead client's session within moments, not at once)."""
    deadline = time.monotonic() + timeout
    while True:
        acc = odp.Accountant(ledger=spec)
        if all(r.status == "settled" for r in acc.history) or time.monotonic() > deadline:
            return acc
        acc.close()
        time.sleep(0.1)


@pytest.mark.slow
def test_four_processes_share_one_budget_without_overspending(backend):
    path = backend.create("1")
    worker = """
        import sys, odp
        acc = odp.Accountant(ledger=sys.argv[1])
        g = odp.DP("1/1000")
        ok = 0
        for _ in range(300):
            try:
                acc.charge(g)
                ok += 1
            except odp.BudgetExceeded:
                pass
        print(ok)
        """
    procs = [_python(worker, str(path)) for _ in range(4)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert all(p.returncode == 0 for p in procs), [o[1] for o in outs]
    successes = [int(o[0]) for o in outs]
    assert sum(successes) == 1000
    final = odp.Accountant(ledger=path)
    assert final.remaining.epsilon == 0 and len(final.history) == 1000
    assert sorted(r.index for r in final.history) == list(range(1, 1001))


def test_readonly_open_writes_nothing(backend):
    path = backend.create("1")
    acc = odp.Accountant(ledger=path)
    acc.charge(odp.DP("0.1"))
    acc.close()
    before = backend.dump(path)
    ro = backend.open(path, readonly=True)
    assert ro.remaining.epsilon == Fraction(9, 10)
    with pytest.raises(LedgerError):
        ro.charge(None, None, None)
    with pytest.raises(LedgerError):
        ro.reserve_many([])
    ro.close()
    assert backend.dump(path) == before


@pytest.mark.parametrize("memory", [False, True])
def test_group_commit_is_sequential_admission_all_or_nothing(backend, memory):
    """reserve_many / settle_many / charge_many: each request admitted against what the ones
    before it left, one transaction, nothing recorded when one does not fit."""
    acc = odp.Accountant("1") if memory else odp.Accountant(ledger=backend.create("1"))
    g = odp.ODP(lambda r: "lo" if r < 5 else "hi", {"lo": "1/10", "hi": "3/10"})
    rows = acc.ledger.chain_head.rows
    with pytest.raises(BudgetExceeded, match=r"only ε=0\.1,"):
        acc.reserve_many([g, g, g, g])  # 3 × 3/10 fit, the fourth does not
    assert acc.ledger.chain_head.rows == rows and acc.history == []
    res = acc.reserve_many([g, g, g])
    assert [r.record.index for r in res] == [1, 2, 3] and acc.remaining.epsilon == Fraction(1, 10)
    records = acc.settle_many([(res[0], 1), (res[1], 9), (res[2], object())])
    assert [(r.charged, r.reason) for r in records] == [
        (Fraction(1, 10), "released"), (Fraction(3, 10), "released"),
        (Fraction(3, 10), "unclassifiable")]
    assert not any(r.open for r in res) and acc.remaining.epsilon == Fraction(3, 10)
    with pytest.raises(LedgerError, match="already settled"):
        acc.settle_many([(res[0], 1)])
    with pytest.raises(BudgetExceeded):
        acc.charge_many([odp.DP("1/10")] * 4)
    assert acc.remaining.epsilon == Fraction(3, 10)
    done = acc.charge_many([(g, 1), odp.DP("1/10"), odp.DP("1/10")])  # g: sup 3/10 fits first
    assert [r.charged for r in done] == [Fraction(1, 10)] * 3 and acc.remaining.epsilon == 0
    assert acc.ledger.chain_head.rows == rows + 12
    if not memory:  # what is on disk is what the accountant saw
        again = odp.Accountant(ledger=backend_spec(acc))
        assert [r.charged for r in again.history] == [r.charged for r in acc.history]
        again.close()
    cert = acc.certificate()
    from odp.certs import verify

    assert verify(cert.text, cert.sidecar).ok
    acc.close()


def backend_spec(acc: odp.Accountant) -> str:
    ledger = acc.ledger
    return str(ledger.path) if hasattr(ledger, "path") else ledger._net.url


def test_odp_ledger_init_creates_and_refuses_to_overwrite(backend, capsys):
    from odp.cli import main

    spec = (str(backend.tmp_path / "new.db") if backend.name == "sqlite"
            else backend.server.new_database())
    assert main(["ledger", "init", spec, "--epsilon", "1/2", "--delta", "1e-9", "--json"]) == 0
    created = json.loads(capsys.readouterr().out)
    assert created["budget"] == {"epsilon": "1/2", "delta": "1/1000000000"}
    with odp.Accountant(ledger=spec) as acc:
        assert acc.ledger.ledger_id == created["ledger_id"] and acc.remaining.epsilon == \
            Fraction(1, 2)
        acc.charge(odp.DP("1/4"))
    before = backend.dump(spec)
    assert main(["ledger", "init", spec, "--epsilon", "1"]) == 2  # a refused request: exit 2, nothing written
    assert "already" in capsys.readouterr().err
    assert backend.dump(spec) == before
    assert main(["ledger", "init", spec + "x" if backend.name == "sqlite" else spec,
                 "--epsilon", "nan"]) == 2
    assert not Path(spec + "x").exists()

"""The ledger cannot lose or quietly rewrite spent budget.

Every edit is made the way an operator or an attacker would: with plain ``sqlite3`` (the
triggers dropped and put back exactly), by editing bytes of the file, by deleting or truncating
the ``-wal`` file of a killed process, or by restoring an older copy.  Each must give a clear
refusal on the next open, naming the first bad row where there is one.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import sqlite3
import struct
import subprocess
import sys
import textwrap
import warnings
from fractions import Fraction
from pathlib import Path

import pytest

import odp
from odp.errors import LedgerCorrupted, LedgerError
from odp.ledger import SQLiteLedger, reanchor_ledger, upgrade_ledger
from odp.ledger.chain import (
    ChainVerifier,
    EventRow,
    Genesis,
    encode_value,
    row_hash,
    write_key,
)
from odp.ledger.head import (JOURNAL_SIZE, JOURNAL_START, HeadRecord, _encode_slot, head_path,
                             read_head, read_heads, read_tail, write_head)
from odp.ledger.sqlite import LedgerHeadWarning

SRC = str(Path(__file__).resolve().parents[1] / "python")


def _python(code: str, *args: str) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code), *args], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _killed_child(path: Path, code: str, *args: str, timeout: float = 120) -> str:
    """Make a new ledger at ``path``, run ``code`` on it in a child process that ends with
    SIGKILL (a crash: nothing is closed or flushed), and return what the child printed."""
    SQLiteLedger(path, odp.Budget(1)).close()
    child = _python(code, str(path), *args)
    out, err = child.communicate(timeout=timeout)
    assert child.returncode == -signal.SIGKILL, err
    return out


def _ledger(path: Path, charges=("0.1", "0.2", "0.05"), **kwargs) -> None:
    acc = odp.Accountant("1", "1e-6", ledger=SQLiteLedger(path, odp.Budget("1", "1e-6"),
                                                          **kwargs))
    for eps in charges:
        acc.charge(odp.DP(eps))
    acc.close()


def _tamper(path: Path, *statements: str) -> None:
    """Run ``statements`` with plain sqlite3, the append-only triggers dropped first and put
    back exactly as they were (so only the edit itself remains)."""
    conn = sqlite3.connect(path, isolation_level=None)
    triggers = conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'").fetchall()
    for name, _ in triggers:
        conn.execute(f"DROP TRIGGER {name}")
    for statement in statements:
        conn.execute(statement)
    for _, sql in triggers:
        conn.execute(sql)
    conn.close()


def _spent(path: Path) -> Fraction:
    with SQLiteLedger(path, readonly=True) as ledger:
        return ledger.spent.epsilon


# ------------------------------------------------------------------ the audit's edits
def test_a_byte_edited_in_a_value_names_the_row(tmp_path):
    path = tmp_path / "l.db"
    _ledger(path, charges=("1/10", "3/17", "1/10"))
    data = path.read_bytes()  # closed cleanly: everything is checkpointed into the file
    assert data.count(b"3/17") == 3 and not Path(str(path) + "-wal").exists()
    for at in (i for i in range(len(data)) if data.startswith(b"3/17", i)):
        path.write_bytes(data[:at] + b"2/17" + data[at + 4:])  # guarantee, sup or charge
        with pytest.raises(LedgerCorrupted, match=r"row [34]: its values do not match its "
                                                  r"hash") as err:
            odp.Accountant(ledger=path)
        assert err.value.row in (3, 4)
    with pytest.raises(LedgerCorrupted):  # read-only inspection refuses too
        SQLiteLedger(path, readonly=True)


def test_a_zeroed_charge_is_caught(tmp_path):
    path = tmp_path / "l.db"
    _ledger(path)
    _tamper(path, "UPDATE events SET charged = '0' WHERE seq = 4")
    with pytest.raises(LedgerCorrupted, match=r"row 4: its values do not match its hash") as err:
        odp.Accountant(ledger=path)
    assert err.value.row == 4
    # users catch it from the top-level package, as a LedgerError and as an OdpError
    assert odp.LedgerCorrupted is LedgerCorrupted and isinstance(err.value, odp.LedgerError)
    assert isinstance(err.value, odp.OdpError)


def test_a_deleted_row_is_caught(tmp_path):
    path = tmp_path / "l.db"
    _ledger(path)
    _tamper(path, "DELETE FROM events WHERE seq = 3")
    with pytest.raises(LedgerCorrupted, match=r"row 4: row 3 is missing"):
        odp.Accountant(ledger=path)


def test_deleted_last_rows_are_caught_by_the_head(tmp_path):
    path = tmp_path / "l.db"
    _ledger(path)
    _tamper(path, "DELETE FROM events WHERE seq >= 5")  # the whole third round
    with pytest.raises(LedgerCorrupted, match=r"lost committed rounds 3\.\.3 \(rows 5\.\.6\); "
                                              r"the spent budget is unknown"):
        odp.Accountant(ledger=path)


def test_a_raised_budget_is_caught(tmp_path):
    path = tmp_path / "l.db"
    _ledger(path)
    _tamper(path, "UPDATE meta SET value = '1000' WHERE key = 'epsilon'")
    with pytest.raises(LedgerCorrupted, match="recorded budget or identity was edited"):
        odp.Accountant(ledger=path)


def _raise_budget_with_its_genesis(path: Path) -> None:
    """Raise ε to 1000 and recompute the genesis hash to match (no key: anyone can)."""
    conn = sqlite3.connect(path)
    meta = dict(conn.execute("SELECT key, value FROM meta"))
    conn.close()
    forged = Genesis(meta["ledger_id"], Fraction(1000), Fraction(meta["delta"]),
                     neighbours=meta.get("neighbours")).hash
    _tamper(path, "UPDATE meta SET value = '1000' WHERE key = 'epsilon'",
            f"UPDATE meta SET value = '{forged}' WHERE key = 'genesis_hash'")


def test_a_raised_budget_with_its_genesis_recomputed_breaks_row_1(tmp_path):
    path = tmp_path / "l.db"
    _ledger(path)
    _raise_budget_with_its_genesis(path)
    with pytest.raises(LedgerCorrupted, match="row 1: its link to the previous row"):
        odp.Accountant(ledger=path)


def test_a_raised_budget_on_an_empty_ledger_is_caught_by_the_head(tmp_path):
    path = tmp_path / "l.db"
    _ledger(path, charges=())
    _raise_budget_with_its_genesis(path)
    with pytest.raises(LedgerCorrupted, match="history was rewritten"):
        odp.Accountant(ledger=path)


@pytest.mark.parametrize("trigger", ["events_no_update", "events_no_delete", "meta_no_update",
                                     "meta_no_delete"])
def test_a_dropped_trigger_is_caught(tmp_path, trigger):
    path = tmp_path / "l.db"
    _ledger(path)
    conn = sqlite3.connect(path)
    conn.execute(f"DROP TRIGGER {trigger}")
    conn.commit()
    conn.close()
    with pytest.raises(LedgerCorrupted, match=f"trigger {trigger} is missing"):
        odp.Accountant(ledger=path)


def test_an_added_trigger_or_a_row_outside_the_chain_is_caught(tmp_path):
    path = tmp_path / "l.db"
    _ledger(path)
    conn = sqlite3.connect(path)
    conn.execute("CREATE TRIGGER sneaky AFTER INSERT ON events BEGIN SELECT 1; END")
    conn.commit()
    conn.close()
    with pytest.raises(LedgerCorrupted, match="unexpected schema objects trigger sneaky"):
        odp.Accountant(ledger=path)
    path2 = tmp_path / "l2.db"
    _ledger(path2)
    conn = sqlite3.connect(path2)
    conn.execute("INSERT INTO events (seq, kind, round_id, created) VALUES (0, 'settle', 'x', 0)")
    conn.commit()
    conn.close()
    with pytest.raises(LedgerCorrupted, match="rows were added outside odp"):
        odp.Accountant(ledger=path2)


def test_a_consistently_rewritten_chain_passes_without_a_key_but_not_with_one(tmp_path):
    """Without a key anyone who can write the files can rewrite history consistently (the
    documented limit); with a key the rewrite fails its HMAC tags."""

    def rewrite(path: Path) -> None:
        conn = sqlite3.connect(path)
        meta = dict(conn.execute("SELECT key, value FROM meta"))
        rows = conn.execute("SELECT seq, kind, round_id, mechanism, params, guarantee, "
                            "sup_epsilon, delta, interactive, label, charged, reason, owner, "
                            "created FROM events ORDER BY seq").fetchall()
        conn.close()
        genesis = Genesis(meta["ledger_id"], Fraction(meta["epsilon"]), Fraction(meta["delta"]),
                          meta.get("key_id"), neighbours=meta.get("neighbours"))
        verifier = ChainVerifier(genesis)
        statements = []
        for stored in rows:
            stored = list(stored)
            if stored[1] == "settle":
                stored[10] = "0"  # every charge zeroed
            row = EventRow.from_stored(stored)
            prev = verifier.state.head
            digest = verifier.check(row, None, None)
            statements.append(f"UPDATE events SET charged = {stored[10]!r}, prev_hash = "
                              f"'{prev}', row_hash = '{digest}' WHERE seq = {row.seq}"
                              if stored[1] == "settle" else
                              f"UPDATE events SET prev_hash = '{prev}', row_hash = '{digest}' "
                              f"WHERE seq = {row.seq}")
        _tamper(path, *statements)
        head = read_head(head_path(path))
        write_head(head_path(path), HeadRecord(head.ledger_id, verifier.state.rows,
                                               verifier.state.rounds, verifier.state.head),
                   force=True)

    plain = tmp_path / "plain.db"
    _ledger(plain)
    rewrite(plain)
    assert _spent(plain) == 0  # the limit of an unkeyed ledger, stated in docs/ledger.md

    key = tmp_path / "ledger.key"
    write_key(key)
    keyed = tmp_path / "keyed.db"
    _ledger(keyed, key_file=key)
    rewrite(keyed)
    with pytest.raises(LedgerCorrupted, match="HMAC tag does not verify"):
        SQLiteLedger(keyed, key_file=key)


# ------------------------------------------------------------------ lost commits and rollback
_CHARGE_THEN_DIE = """
    import os, signal, sys, odp
    from odp.ledger import SQLiteLedger
    ledger = SQLiteLedger(sys.argv[1], odp.Budget(1), checkpoint=sys.argv[2] or None,
                          head_sync=sys.argv[3] == "sync")
    acc = odp.Accountant(ledger=ledger)
    for i in range(5):
        acc.charge(odp.DP("0.1"))
        if i + 1 == int(sys.argv[4]):
            ledger.flush()  # rows 1..2(i+1) synced in the -wal: the journal starts again
    os.kill(os.getpid(), signal.SIGKILL)  # a crash: the WAL is not checkpointed on close
    """


def _lose_wal(path: Path, how: str = "delete") -> None:
    """What a power loss (or a careless clean-up) can do to the -wal of a crashed writer:
    delete it (with its -shm index) or truncate it to nothing."""
    wal = Path(str(path) + "-wal")
    if how == "delete":
        wal.unlink()
        Path(str(path) + "-shm").unlink(missing_ok=True)
    else:
        os.truncate(wal, 0)


def _crashed_ledger(path: Path, checkpoint: str = "", sync: str = "sync",
                    flush_after: int = 0) -> Path:
    _killed_child(path, _CHARGE_THEN_DIE, checkpoint, sync, str(flush_after))
    return Path(str(path) + "-wal")


@pytest.mark.parametrize("damage", ["delete", "truncate"])
def test_rows_a_crash_took_from_the_database_come_back_from_the_journal(tmp_path, damage,
                                                                         capsys):
    """Journal mode (the default): SQLite commits without a flush, and the head file's one
    fdatasync makes the new rows durable in its journal.  The rows of a crashed process that
    the database lost (here the whole -wal, as a power loss could) are put back, verified
    against the chain, with a warning; a read-only open says how to put them back."""
    path = tmp_path / "l.db"
    _crashed_ledger(path)
    head = read_head(head_path(path))
    assert (head.rows, head.synced) == (10, 0) and head.tail[1] > 0
    _lose_wal(path, damage)
    with pytest.raises(LedgerError, match=r"lacks rows 1\.\.10: a crash took them .* "
                                          r"`odp ledger restore"):
        SQLiteLedger(path, readonly=True)
    with pytest.raises(LedgerError, match="lacks rows"):  # not a loss to accept
        reanchor_ledger(path, accept_loss=True)
    if damage == "delete":
        with pytest.warns(LedgerHeadWarning, match=r"put back rows 1\.\.10 from the journal"):
            acc = odp.Accountant(ledger=path)
    else:
        from odp.cli import main

        assert main(["ledger", "restore", str(path)]) == 0
        assert "put back rows 1..10 from the head file; 10 rows" in capsys.readouterr().out
        assert main(["ledger", "restore", str(path)]) == 0
        assert "nothing to put back" in capsys.readouterr().out
        acc = odp.Accountant(ledger=path)
    assert acc.spent.epsilon == Fraction(1, 2) and len(acc.history) == 5
    acc.close()
    with SQLiteLedger(path, readonly=True) as ledger:  # on disk now, and the journal emptied
        assert ledger.chain_head.rows == 10
    assert read_head(head_path(path)).synced == 10


def test_a_torn_journal_falls_back_to_the_head_before_it(tmp_path):
    """A crash during the head file's write can leave the new slot durable and its journal
    bytes not (two pages, one fdatasync): that charge never returned, so the head before it
    is the one to extend — as with a torn slot.  Rows the previous head names are still
    required."""
    path = tmp_path / "l.db"
    _crashed_ledger(path)
    newest, previous = read_heads(head_path(path))
    assert (newest.rows, previous.rows) == (10, 8)
    data = bytearray(head_path(path).read_bytes())
    end = JOURNAL_START + newest.tail[1]
    data[end - 40:end] = b"#" * 40  # the last row's line, torn
    head_path(path).write_bytes(bytes(data))
    _lose_wal(path)
    with pytest.warns(LedgerHeadWarning) as caught:
        odp.Accountant(ledger=path).close()
    messages = [str(w.message) for w in caught]
    assert any("put back rows 1..8 " in m for m in messages)
    # the torn newest head (rows 10) is replaced: left in place it would block every later
    # head write, and the next charges would be neither journaled nor synced
    assert any("newest head (rows 10) was torn" in m for m in messages)
    assert read_heads(head_path(path))[0].rows == 8
    child = _python(_CHARGE_THEN_DIE, str(path), "", "sync", "0")  # 5 more, then SIGKILL
    child.communicate(timeout=120)
    assert read_head(head_path(path)).rows == 18
    _lose_wal(path)  # and a power loss takes the -wal again
    with pytest.warns(LedgerHeadWarning, match=r"put back rows 9\.\.18 "):
        acc = odp.Accountant(ledger=path)
    assert acc.spent.epsilon == Fraction(9, 10)  # 4 + 5 charges that returned, none lost
    acc.close()


def test_reanchor_extends_the_head_before_a_torn_one(tmp_path):
    path = tmp_path / "l.db"
    _crashed_ledger(path)
    newest = read_head(head_path(path))
    data = bytearray(head_path(path).read_bytes())
    end = JOURNAL_START + newest.tail[1]
    data[end - 40:end] = b"#" * 40  # the fifth charge's head write was torn ...
    head_path(path).write_bytes(bytes(data))
    _tamper(path, "DELETE FROM events WHERE seq > 8")  # ... and its rows never reached the file
    head, previous = reanchor_ledger(path)  # no loss to accept: that charge never returned
    assert (head.rows, previous.rows) == (8, 8)
    assert read_heads(head_path(path))[0].rows == 8
    acc = odp.Accountant(ledger=path)
    assert acc.spent.epsilon == Fraction(2, 5)
    acc.close()


_CHARGE_UNTIL_KILLED = """
    import sys, odp
    from odp.ledger import SQLiteLedger
    acc = odp.Accountant(ledger=SQLiteLedger(sys.argv[1]))
    g = odp.ODP(odp.mechanisms.value_or_bottom, {"value": "1/1000", "bottom": 0}, 0)
    print("ready", flush=True)
    for i in range(100000):
        if i % 3:
            acc.charge(odp.DP("1/1000"))
        else:
            acc.reserve(g).settle(odp.BOTTOM)  # a lazy settle among the charges
        print(i + 1, flush=True)  # this many calls returned
    """


def test_processes_killed_mid_charge_then_a_power_loss_lose_no_returned_charge(tmp_path):
    """Four writers share a ledger and are killed at once; then a power loss takes every row
    the database had not synced.  The journal gives back at least every charge that returned
    (and at most one more per process: one whose call was under way)."""
    import time

    path = tmp_path / "l.db"
    SQLiteLedger(path, odp.Budget(1000)).close()
    children = [_python(_CHARGE_UNTIL_KILLED, str(path)) for _ in range(4)]
    for child in children:
        assert child.stdout.readline().strip() == "ready"
    time.sleep(1.5)
    for child in children:
        child.send_signal(signal.SIGKILL)
    returned = 0
    for child in children:
        out, _ = child.communicate(timeout=60)
        done = [int(x) for x in out.split()]
        returned += sum(1 for i in range(1, (done[-1] if done else 0) + 1) if i % 3 != 1)
    head = read_head(head_path(path))
    _tamper(path, f"DELETE FROM events WHERE seq > {head.synced}")  # the power loss
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        acc = odp.Accountant(ledger=path)
    # (the journal holds rows the database never synced, unless the kill came right after a
    # journal restart: then nothing was lost)
    assert any("put back rows" in str(w.message) for w in caught) == (head.rows > head.synced)
    charged = acc.spent.epsilon * 1000
    assert returned <= charged <= returned + 4 * 2, (returned, charged)
    acc.close()


_FAIL_THEN_SHARE = """
    import os, signal, sqlite3, sys, odp
    from odp.ledger import SQLiteLedger

    class FailingCommit:  # the real connection, whose next COMMIT fails (an I/O error)
        def __init__(self, conn):
            self.conn, self.fail = conn, True
        def execute(self, sql, *args):
            if sql == "COMMIT" and self.fail:
                self.fail = False
                raise sqlite3.OperationalError("disk I/O error (injected)")
            return self.conn.execute(sql, *args)
        def __getattr__(self, name):
            return getattr(self.conn, name)

    mine, other = SQLiteLedger(sys.argv[1]), SQLiteLedger(sys.argv[1])
    acc, acc2 = odp.Accountant(ledger=mine), odp.Accountant(ledger=other)
    acc.charge(odp.DP("1/10"))  # rows 1-2
    real, mine._conn = mine._conn, FailingCommit(mine._conn)
    try:
        acc.charge(odp.DP("1/10"))  # rows 3-4 built, hashed and kept ... never committed
    except Exception as exc:
        print("failed:", type(exc).__name__, flush=True)
    mine._conn = real
    g = odp.ODP(odp.mechanisms.value_or_bottom, {"value": "3/10", "bottom": 0}, 0)
    acc2.reserve(g).settle(odp.BOTTOM)  # the real rows 3-4; row 4 is lazy (no head names it)
    print(acc.spent.epsilon, flush=True)  # read outside a commit: rows 3-4 not kept
    acc.charge(odp.DP("1/10"))  # rows 5-6: the head must not journal the failed row 4
    os.kill(os.getpid(), signal.SIGKILL)
    """


def test_a_failed_commit_leaves_nothing_in_the_journal(tmp_path):
    path = tmp_path / "l.db"
    out = _killed_child(path, _FAIL_THEN_SHARE)
    assert out.split() == ["failed:", "OperationalError", "1/10"]
    head = read_head(head_path(path))
    assert head.rows == 6
    assert len(read_tail(head_path(path), head)) == head.rows - head.synced
    assert head.synced == 0  # every row since the ledger was opened is in the journal
    _tamper(path, f"DELETE FROM events WHERE seq > {head.synced}")  # a power loss
    with pytest.warns(LedgerHeadWarning, match=r"put back rows 1\.\.6 "):
        acc = odp.Accountant(ledger=path)
    assert acc.spent.epsilon == Fraction(1, 5) and acc.ledger.chain_head.rows == 6
    acc.close()


def test_a_keyed_ledgers_journal_is_checked_with_its_key(tmp_path, monkeypatch):
    """Journal rows carry their HMAC tags: a journal line rewritten with a recomputed hash
    (no key) is not put back, and the loss is refused.  (Damage to the *last* commit's lines
    alone cannot be told from a crash during that commit's own head write: the head before it
    is then extended, as docs/ledger.md says; an anchor catches that.)"""
    key = tmp_path / "k.key"
    write_key(key)
    monkeypatch.setenv("ODP_LEDGER_KEY_FILE", str(key))
    path = tmp_path / "l.db"
    _crashed_ledger(path)
    head = read_head(head_path(path))
    assert head.mac is not None and (head.rows, head.synced) == (10, 0)
    pristine = head_path(path).read_bytes()
    lines = read_tail(head_path(path), head)
    values = json.loads(lines[1])  # row 2 (a settle): charge 1/10 → 0
    row = EventRow.from_stored(values[:-3])
    forged = EventRow.from_stored(["0" if i == 10 else v for i, v in enumerate(values[:-3])])
    assert row.charged == Fraction(1, 10) and forged.charged == 0
    values[10], values[-2] = "0", row_hash(values[-3], forged)
    lines[1] = json.dumps(values, separators=(",", ":")).encode()
    data = bytearray(pristine)
    tail = b"".join(line + b"\n" for line in lines)
    data[JOURNAL_START:JOURNAL_START + len(tail)] = tail
    _lose_wal(path)
    head_path(path).write_bytes(bytes(data))
    with pytest.raises(LedgerCorrupted, match=r"lost committed rounds 1\.\.5"):
        odp.Accountant(ledger=path)
    head_path(path).write_bytes(pristine)  # the journal as written: every row comes back
    with pytest.warns(LedgerHeadWarning, match=r"put back rows 1\.\.10 "):
        acc = odp.Accountant(ledger=path)
    assert acc.spent.epsilon == Fraction(1, 2) and acc.ledger.mac_checked
    acc.close()


_MANY_THEN_DIE = """
    import os, signal, sys, odp
    from fractions import Fraction
    acc = odp.Accountant(ledger=sys.argv[1])
    for i in range(300):
        acc.charge(odp.DP(Fraction(1, 1000 + i)))
    os.kill(os.getpid(), signal.SIGKILL)  # no close(): the journal stays as it is
    """


def test_the_journal_wraps_and_still_gives_back_every_row_after_the_last_sync(tmp_path):
    """Hundreds of charges fill the 64 KiB journal several times (each time the database is
    flushed and the journal starts again); rows past the last sync, taken from the database
    by hand as a power loss would, come back exactly.  A journal line edited without the
    chain's consent gives nothing back: the loss is refused."""
    path = tmp_path / "l.db"
    _killed_child(path, _MANY_THEN_DIE, timeout=300)
    spent = sum(Fraction(1, 1000 + i) for i in range(300))
    head = read_head(head_path(path))
    assert head.rows == 600 and 0 < head.synced < 600 and head.tail[1] <= JOURNAL_SIZE
    backup = head_path(path).read_bytes()
    _tamper(path, f"DELETE FROM events WHERE seq > {head.synced}")
    with pytest.warns(LedgerHeadWarning, match=rf"put back rows {head.synced + 1}\.\.600 "):
        again = odp.Accountant(ledger=path)
    assert again.spent.epsilon == spent and len(again.history) == 300
    again.close()
    # the same loss with one journal line's amount edited: not given back, refused
    _tamper(path, f"DELETE FROM events WHERE seq > {head.synced}")
    data = bytearray(backup)
    line_at = data.index(b'"1/', JOURNAL_START + head.tail[0])
    data[line_at + 1:line_at + 2] = b"0"
    head_path(path).write_bytes(bytes(data))
    with pytest.raises(LedgerCorrupted, match=rf"lost committed rounds {head.synced // 2 + 1}"
                                              r"\.\.300"):
        odp.Accountant(ledger=path)


_TWO_WRITERS_THEN_DIE = """
    import os, signal, sys, odp
    from odp.ledger import SQLiteLedger
    one = odp.Accountant(ledger=SQLiteLedger(sys.argv[1]))
    two = odp.Accountant(ledger=SQLiteLedger(sys.argv[1]))
    g = odp.ODP(odp.mechanisms.value_or_bottom, {"value": "3/10", "bottom": 0}, 0)
    one.reserve(g).settle(odp.BOTTOM)  # rows 1-2: the settle is lazy (no head names it)
    two.charge(odp.DP("1/10"))  # rows 3-4: its journal must take row 2 as well
    os.kill(os.getpid(), signal.SIGKILL)
    """


def test_another_writers_lazy_settle_goes_into_the_journal(tmp_path):
    path = tmp_path / "l.db"
    _killed_child(path, _TWO_WRITERS_THEN_DIE)
    head = read_head(head_path(path))
    assert (head.rows, head.synced) == (4, 0)
    _lose_wal(path)
    with pytest.warns(LedgerHeadWarning, match=r"put back rows 1\.\.4 "):
        acc = odp.Accountant(ledger=path)
    assert acc.spent.epsilon == Fraction(1, 10)  # the refund on ⊥ came back with the rows
    assert [r.status for r in acc.history] == ["settled", "settled"]
    acc.close()


@pytest.mark.parametrize("damage,sync,flush_after", [
    ("delete", "sync", 2), ("truncate", "sync", 2), ("delete", "nosync", 0)])
def test_a_lost_wal_is_refused_with_the_lost_rounds(tmp_path, damage, sync, flush_after):
    """Rows that were synced in the -wal are no longer in the journal: losing them is refused
    (and with ``head_sync=False`` there is no journal: every commit is flushed by SQLite)."""
    path = tmp_path / "l.db"
    wal = _crashed_ledger(path, sync=sync, flush_after=flush_after)
    assert wal.stat().st_size > 0
    _lose_wal(path, damage)
    with pytest.raises(LedgerCorrupted, match=r"the ledger lost committed rounds 1\.\.5 "
                                              r"\(rows 1\.\.10\); the spent budget is unknown"):
        odp.Accountant(ledger=path)


def test_with_checkpointing_a_deleted_wal_loses_nothing(tmp_path):
    path = tmp_path / "l.db"
    wal = _crashed_ledger(path, "truncate")
    wal.unlink(missing_ok=True)
    Path(str(path) + "-shm").unlink(missing_ok=True)
    acc = odp.Accountant(ledger=path)
    assert acc.spent.epsilon == Fraction(1, 2) and len(acc.history) == 5
    acc.close()


def test_a_restored_older_copy_is_refused(tmp_path):
    path = tmp_path / "l.db"
    _ledger(path, charges=("0.1", "0.1"))
    backup = tmp_path / "backup.db"
    shutil.copyfile(path, backup)  # yesterday's copy (the ledger was closed: no -wal)
    _ledger(path, charges=())  # reopen: nothing changes
    acc = odp.Accountant(ledger=path)
    for _ in range(3):
        acc.charge(odp.DP("0.1"))
    acc.close()
    shutil.copyfile(backup, path)
    with pytest.raises(LedgerCorrupted, match=r"lost committed rounds 3\.\.5 \(rows 5\.\.10\)"):
        odp.Accountant(ledger=path)


def test_a_deleted_ledger_file_is_not_silently_recreated(tmp_path):
    path = tmp_path / "l.db"
    _ledger(path)
    path.unlink()
    with pytest.raises(LedgerCorrupted, match="records 6 committed rows"):
        odp.Accountant("1", "1e-6", ledger=path)
    assert not path.exists()


def test_a_restored_pair_needs_an_anchor_kept_elsewhere(tmp_path):
    """Restoring the ledger *and* its head file together is only caught by an anchor that
    was not restored with them."""
    path, anchor = tmp_path / "l.db", tmp_path / "elsewhere" / "l.anchor"
    anchor.parent.mkdir()
    _ledger(path, charges=("0.1",), anchors=[anchor])
    saved = {p: p.read_bytes() for p in (path, head_path(path))}
    _ledger(path, charges=("0.1", "0.1"), anchors=[anchor])
    for p, data in saved.items():
        p.write_bytes(data)
    odp.Accountant(ledger=SQLiteLedger(path)).close()  # without the anchor: not detectable
    for p, data in saved.items():
        p.write_bytes(data)
    with pytest.raises(LedgerCorrupted, match=r"lost committed rounds 2\.\.3"):
        SQLiteLedger(path, anchors=[anchor])


def test_a_missing_head_file_is_refused_and_reanchor_accepts_the_rows(tmp_path, capsys):
    path = tmp_path / "l.db"
    _ledger(path)
    head_path(path).unlink()
    with pytest.raises(LedgerCorrupted, match="no head file"):
        odp.Accountant(ledger=path)
    from odp.cli import main

    assert main(["ledger", "reanchor", str(path)]) == 0
    assert "re-anchored" in capsys.readouterr().out
    acc = odp.Accountant(ledger=path)
    assert acc.spent.epsilon == Fraction(35, 100)
    acc.close()


def test_reanchor_after_a_loss_needs_accept_loss(tmp_path, capsys):
    path = tmp_path / "l.db"
    _ledger(path)
    _tamper(path, "DELETE FROM events WHERE seq >= 5")
    with pytest.raises(LedgerCorrupted, match="--accept-loss"):
        reanchor_ledger(path)
    head, previous = reanchor_ledger(path, accept_loss=True)
    assert (head.rows, previous.rows) == (4, 6)
    assert _spent(path) == Fraction(3, 10)


def test_a_head_file_of_another_ledger_is_refused(tmp_path):
    a, b = tmp_path / "a.db", tmp_path / "b.db"
    _ledger(a)
    _ledger(b)
    shutil.copyfile(head_path(b), head_path(a))
    with pytest.raises(LedgerCorrupted, match="belongs to ledger"):
        odp.Accountant(ledger=a)


def test_the_head_file_is_written_atomically_and_only_forward(tmp_path):
    path = tmp_path / "l.db"
    _ledger(path, charges=("0.1",))
    record = read_head(head_path(path))
    assert (record.rows, record.rounds) == (2, 1)
    older = HeadRecord(record.ledger_id, 1, 1, "0" * 64)
    assert write_head(head_path(path), older) is False  # never moves back
    assert read_head(head_path(path)) == record
    body = json.dumps(record.to_json(), sort_keys=True, separators=(",", ":"))
    assert _encode_slot(record).rstrip() == json.dumps(  # the slot format, byte for byte
        {"record": record.to_json(), "sha256": hashlib.sha256(body.encode()).hexdigest()},
        sort_keys=True, separators=(",", ":")).encode()
    # two 512-byte slots and the journal area
    assert head_path(path).stat().st_size == JOURNAL_START + JOURNAL_SIZE == 1024 + 65536
    assert sorted(p.name for p in tmp_path.iterdir()) == ["l.db", "l.db.head"]


def test_a_torn_head_slot_leaves_the_previous_head(tmp_path):
    """A crash while a head is written damages at most the slot being written: the other
    slot's (older) head is a prefix of the ledger and is accepted."""
    path = tmp_path / "l.db"
    _ledger(path, charges=("0.1", "0.1"))
    head = head_path(path)
    data = bytearray(head.read_bytes())
    newest = read_head(head)
    slot = 0 if bytes(data[:512]) == _encode_slot(newest) else 1
    data[slot * 512 + 40: slot * 512 + 60] = b"#" * 20  # tear the newest slot
    head.write_bytes(bytes(data))
    assert read_head(head) != newest and read_head(head).rows <= newest.rows
    acc = odp.Accountant(ledger=path)  # opens, and moves the head forward again
    assert acc.spent.epsilon == Fraction(1, 5)
    acc.close()
    assert read_head(head) == newest
    head.write_bytes(b"\x00" * 1024)
    with pytest.raises(LedgerCorrupted, match="unreadable"):
        odp.Accountant(ledger=path)


# ------------------------------------------------------------------ keys
def test_keyed_ledger_needs_its_key_to_write_and_refuses_a_wrong_one(tmp_path, monkeypatch):
    key, other = tmp_path / "k", tmp_path / "other"
    kid = write_key(key)
    write_key(other)
    path = tmp_path / "l.db"
    _ledger(path, key_file=key)
    with pytest.raises(LedgerError, match="is keyed"):
        odp.Accountant(ledger=path)
    with pytest.raises(LedgerError, match="is not this ledger's"):
        SQLiteLedger(path, key_file=other)
    ro = SQLiteLedger(path, readonly=True)  # inspection without the key: tags unchecked
    assert not ro.mac_checked and ro.genesis.key_id == kid
    ro.close()
    monkeypatch.setenv("ODP_LEDGER_KEY_FILE", str(key))
    acc = odp.Accountant(ledger=path)
    assert acc.ledger.mac_checked
    acc.charge(odp.DP("0.1"))
    acc.close()
    assert read_head(head_path(path)).mac is not None
    with pytest.raises(LedgerError, match="already exists"):
        write_key(key)
    short = tmp_path / "short"
    short.write_text("abcd")
    with pytest.raises(LedgerError, match="at least 32"):
        SQLiteLedger(path, key_file=short)


def test_a_key_removed_from_a_keyed_ledger_is_noticed_by_its_owner(tmp_path):
    key = tmp_path / "k"
    write_key(key)
    path = tmp_path / "l.db"
    _ledger(path, charges=(), key_file=key)
    conn = sqlite3.connect(path)
    meta = dict(conn.execute("SELECT key, value FROM meta"))
    conn.close()
    genesis = Genesis(meta["ledger_id"], Fraction(meta["epsilon"]), Fraction(meta["delta"]),
                      neighbours=meta.get("neighbours"))
    _tamper(path, "DELETE FROM meta WHERE key = 'key_id'",
            f"UPDATE meta SET value = '{genesis.hash}' WHERE key = 'genesis_hash'")
    with pytest.raises(LedgerError, match="records no key"):
        SQLiteLedger(path, key_file=key)


# ------------------------------------------------------------------ the encoding
def test_the_row_encoding_is_the_documented_byte_string():
    """Pins the canonical encoding (a server backend must reproduce it byte for byte)."""
    row = EventRow(7, "settle", "r1", None, None, None, None, None, None, '"all"',
                   Fraction(1, 10), "released", '{"pid":1}', 1.5)
    expected = (b"i1:7" b"s6:settle" b"s2:r1" b"N" b"N" b"N" b"N" b"N" b"N" b"s5:\"all\""
                b"q4:1/10" b"s8:released" b"s9:{\"pid\":1}"
                b"f16:" + struct.pack(">d", 1.5).hex().encode())
    assert row.encode() == expected
    prev = "ab" * 32
    assert row_hash(prev, row) == hashlib.sha256(
        b"odp-ledger-row-v1\0" + bytes.fromhex(prev) + expected).hexdigest()
    genesis = Genesis("id", Fraction(1), Fraction(1, 1000000))
    assert genesis.hash == hashlib.sha256(
        b"odp-ledger-genesis-v1\0" b"s2:id" b"q3:1/1" b"q9:1/1000000" b"N").hexdigest()
    assert encode_value(Fraction(2, 20)) == encode_value(Fraction(1, 10))
    assert encode_value(-3) == b"i2:-3" and encode_value("é") == b"s2:\xc3\xa9"
    for bad in (True, 1.0j, float("nan"), [1]):
        with pytest.raises(TypeError):
            encode_value(bad)


def test_memory_and_sqlite_ledgers_hash_the_same_rows_alike(tmp_path):
    """The chain is a function of the rows' values only: replaying a SQLite ledger's rows into
    a fresh verifier gives the hashes stored on disk, and an in-memory run's events verify."""
    path = tmp_path / "l.db"
    _ledger(path)
    ledger = SQLiteLedger(path, readonly=True)
    events = ledger.events()
    verifier = ChainVerifier(ledger.genesis)
    assert [verifier.check(r, None, None) for r, _ in events] == [h for _, h in events]
    assert verifier.state.head == ledger.chain_head.head
    ledger.close()
    acc = odp.Accountant(1)
    acc.charge(odp.ODP(lambda r: r, {"a": "0.1", "b": "0.2"}), "a")
    mem = acc.ledger
    v = ChainVerifier(mem.genesis)
    assert [v.check(r, None, None) for r, _ in mem.events()] == [h for _, h in mem.events()]
    assert mem.chain_head.rows == 2


# ------------------------------------------------------------------ foreign files, versions
def _files(path: Path) -> dict[str, bytes]:
    return {s: Path(str(path) + s).read_bytes() for s in ("", "-wal", "-shm", ".head")
            if Path(str(path) + s).exists()}


def test_an_unrelated_sqlite_database_is_refused_and_left_byte_identical(tmp_path):
    """Accountant(ledger=path) on a database of another program."""
    path = tmp_path / "app.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)")
    conn.execute("INSERT INTO users (name) VALUES ('ada')")
    conn.commit()
    conn.close()
    half = tmp_path / "half.db"  # an odp-looking meta table, but no odp schema version
    conn = sqlite3.connect(half)
    conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    conn.execute("INSERT INTO meta VALUES ('owner', 'someone else')")
    conn.commit()
    conn.close()
    text = tmp_path / "notes.txt"
    text.write_bytes(b"\x00\xffnot a database at all\n" * 50)
    for target, message in ((path, "another program"), (half, "no schema version"),
                            (text, "not an odp ledger")):
        before = _files(target)
        for call in (lambda: odp.Accountant("1", ledger=target),
                     lambda: odp.Accountant(ledger=target),
                     lambda: SQLiteLedger(target, readonly=True)):
            with pytest.raises(LedgerError, match=message):
                call()
            assert _files(target) == before
        assert not head_path(target).exists()


_V1_SCHEMA = [
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    """CREATE TABLE events (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    kind        TEXT NOT NULL CHECK (kind IN ('reserve', 'settle')),
    round_id    TEXT NOT NULL,
    mechanism   TEXT,
    params      TEXT,
    guarantee   TEXT,
    sup_epsilon TEXT,
    delta       TEXT,
    interactive INTEGER,
    label       TEXT,
    charged     TEXT,
    reason      TEXT,
    owner       TEXT,
    created     REAL NOT NULL
)""",
    "CREATE UNIQUE INDEX events_one_reserve ON events (round_id) WHERE kind = 'reserve'",
    "CREATE UNIQUE INDEX events_one_settle ON events (round_id) WHERE kind = 'settle'",
    "CREATE TRIGGER events_no_update BEFORE UPDATE ON events\n"
    "BEGIN SELECT RAISE(ABORT, 'odp ledger rows are append-only'); END",
    "CREATE TRIGGER events_no_delete BEFORE DELETE ON events\n"
    "BEGIN SELECT RAISE(ABORT, 'odp ledger rows are append-only'); END",
    "CREATE TRIGGER meta_no_update BEFORE UPDATE ON meta\n"
    "BEGIN SELECT RAISE(ABORT, 'odp ledger metadata is write-once'); END",
    "CREATE TRIGGER meta_no_delete BEFORE DELETE ON meta\n"
    "BEGIN SELECT RAISE(ABORT, 'odp ledger metadata is write-once'); END",
]


def _v1_ledger(path: Path) -> None:
    """A ledger exactly as odp 0.1.0 (schema version 1) wrote it: two rounds."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    for statement in _V1_SCHEMA:
        conn.execute(statement)
    conn.executemany("INSERT INTO meta VALUES (?, ?)", [
        ("schema_version", "1"), ("epsilon", "1"), ("delta", "1/1000000"),
        ("ledger_id", "0123456789abcdef0123456789abcdef"), ("created", "1700000000.0")])
    owner = json.dumps({"host": "h", "pid": 1, "start": "1"}, sort_keys=True,
                       separators=(",", ":"))
    guarantee = '{"costs":[["all","1/10"]],"delta":"0","type":"ODP"}'
    for i, (round_id, eps) in enumerate((("a", "1/10"), ("b", "1/10"))):
        g = guarantee.replace("1/10", eps)
        conn.execute("INSERT INTO events (kind, round_id, mechanism, params, guarantee, "
                     "sup_epsilon, delta, interactive, owner, created) VALUES "
                     "('reserve', ?, 'external', '{}', ?, ?, '0', 0, ?, ?)",
                     (round_id, g, eps, owner, 1700000000.0 + i))
        conn.execute("INSERT INTO events (kind, round_id, label, charged, reason, owner, created) "
                     "VALUES ('settle', ?, '\"all\"', ?, 'released', ?, ?)",
                     (round_id, eps, owner, 1700000000.5 + i))
    conn.close()


def test_a_version_1_ledger_opens_read_only_and_upgrades_in_place(tmp_path, capsys):
    from odp.cli import main

    path = tmp_path / "old.db"
    _v1_ledger(path)
    ro = SQLiteLedger(path, readonly=True)  # inspection works as before
    assert ro.schema_version == 1 and not ro.chained and ro.spent.epsilon == Fraction(1, 5)
    in_memory_chain = ro.events()
    ro.close()
    before = _files(path)
    with pytest.raises(LedgerError, match=r"odp ledger upgrade .*old\.db"):
        odp.Accountant(ledger=path)
    assert _files(path) == before  # refused without writing
    assert main(["ledger", "show", str(path)]) == 0
    assert "odp ledger upgrade" in capsys.readouterr().out
    assert main(["ledger", "upgrade", str(path)]) == 0
    assert "4 rows hash-chained" in capsys.readouterr().out
    acc = odp.Accountant(ledger=path)
    assert acc.ledger.schema_version == 2 and acc.spent.epsilon == Fraction(1, 5)
    assert acc.ledger.events() == in_memory_chain  # the same chain the v1 rows implied
    acc.charge(odp.DP("0.1"))
    assert acc.certificate().sidecar["ledger"]["head"]["rows"] == 6
    acc.close()
    with pytest.raises(LedgerError, match="only version 1 is upgraded"):
        upgrade_ledger(path)


# ------------------------------------------------------------------ read-only show
@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_ledger_show_works_on_a_read_only_ledger_without_writing(tmp_path):
    import tempfile

    from odp.cli import main
    import odp.cli.ledger  # noqa: F401 - loaded before privileges are dropped

    base = Path(tempfile.mkdtemp(prefix="odp-ro-"))
    try:
        path = base / "l.db"
        _ledger(path)
        before = _files(path)
        for p in base.iterdir():
            p.chmod(0o444)
        base.chmod(0o555)
        out = base.parent / f"{base.name}.out"
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child reports through its exit code
            code = 3
            try:
                if os.getuid() == 0:  # root ignores permissions: become nobody
                    os.setgid(65534)
                    os.setuid(65534)
                with open(out, "w") as fh:
                    sys.stdout = fh
                    code = main(["ledger", "show", str(path)])
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        text = out.read_text()
        assert os.waitstatus_to_exitcode(status) == 0, text
        assert "remaining  ε=0.65" in text and "6 rows verified" in text
        assert _files(path) == before and sorted(p.name for p in base.iterdir()) == sorted(
            ["l.db", "l.db.head"])
    finally:
        base.chmod(0o755)
        shutil.rmtree(base, ignore_errors=True)
        Path(str(base) + ".out").unlink(missing_ok=True)


# ------------------------------------------------------------------ settles: flushed lazily
_SETTLE_THEN_DIE = """
    import os, signal, sys, odp
    from odp.ledger import SQLiteLedger
    acc = odp.Accountant(ledger=SQLiteLedger(sys.argv[1], odp.Budget(1)))
    g = odp.ODP(odp.mechanisms.value_or_bottom, {"value": "3/10", "bottom": 0}, 0)
    for _ in range(3):
        acc.reserve(g).settle(odp.BOTTOM)  # a bottom: refunded down to 0
    print(acc.spent.epsilon, flush=True)
    os.kill(os.getpid(), signal.SIGKILL)  # no close(): the settles were never flushed
    """


def test_settles_advance_the_head_only_when_flushed(tmp_path):
    path = tmp_path / "l.db"
    acc = odp.Accountant(ledger=SQLiteLedger(path, odp.Budget(1)))
    g = odp.ODP(odp.mechanisms.value_or_bottom, {"value": "3/10", "bottom": 0}, 0)
    acc.reserve(g).settle(odp.BOTTOM)
    assert acc.spent.epsilon == 0 and acc.ledger._verifier.state.rows == 2
    assert read_head(head_path(path)).rows == 1  # the reservation: durable, in the head
    acc.charge(odp.DP("1/10"))  # a durable commit flushes the earlier settle too
    assert read_head(head_path(path)).rows == acc.ledger._verifier.state.rows == 4
    acc.reserve(g).settle(odp.BOTTOM)
    assert read_head(head_path(path)).rows == 5
    acc.certificate()  # a certificate records only rows that are on disk
    assert read_head(head_path(path)).rows == 6
    acc.reserve(g).settle(odp.BOTTOM)
    assert read_head(head_path(path)).rows == 7
    acc.close()  # close() flushes
    assert read_head(head_path(path)).rows == 8
    eager = tmp_path / "eager.db"
    acc = odp.Accountant(ledger=SQLiteLedger(eager, odp.Budget(1), settle_sync=True))
    acc.reserve(g).settle(odp.BOTTOM)
    assert read_head(head_path(eager)).rows == 2  # settle_sync: durable before it returns
    acc.close()


def test_a_lost_settle_charges_its_round_the_worst_case_never_less(tmp_path):
    """What a power loss can do to a settle that was not flushed yet, made by hand: the crashed
    process's last settle row is gone.  The ledger is not corrupt (the head covers the
    reservations only); the round is recovered as reserved, at its worst case."""
    path = tmp_path / "l.db"
    assert _killed_child(path, _SETTLE_THEN_DIE).strip() == "0"
    head = read_head(head_path(path))
    assert head.rows == 5  # three reservations and the first two settles, flushed by them
    _tamper(path, "DELETE FROM events WHERE seq = 6")  # the unflushed settle, lost
    acc = odp.Accountant(ledger=path)  # opens: rows 1..5 match the head
    assert acc.spent.epsilon == Fraction(3, 10)  # the lost refund: charged its sup
    recovered = acc.history[-1]
    assert recovered.charged == Fraction(3, 10) and recovered.reason == "recovered"
    acc.close()
    # the same loss of a *reservation* is refused: reservations are in the head
    _tamper(path, "DELETE FROM events WHERE seq >= 5")
    with pytest.raises(LedgerCorrupted, match="lost committed rounds"):
        odp.Accountant(ledger=path)


_FLUSH_THEN_SHARE = """
    import os, subprocess, sys, odp
    from odp.ledger import SQLiteLedger
    p = sys.argv[1]
    acc = odp.Accountant(ledger=SQLiteLedger(p, odp.Budget(1)))
    g = odp.ODP(odp.mechanisms.value_or_bottom, {"value": "3/10", "bottom": 0}, 0)
    acc.reserve(g).settle(odp.BOTTOM)
    acc.certificate()  # flushes
    other = "import odp; from odp.ledger import SQLiteLedger; SQLiteLedger(%r).close()" % p
    subprocess.run([sys.executable, "-c", other], check=True)  # another worker comes and goes
    for _ in range(3):
        acc.reserve(g).settle(odp.BOTTOM)
    print(os.path.exists(p + "-wal"), acc.ledger._verifier.state.rows, flush=True)
    os._exit(0)  # no close()
    """


def test_flushing_keeps_sqlites_locks_so_other_processes_never_drop_the_wal(tmp_path):
    """Review finding: flush() used to fsync the database file through a descriptor of its
    own, and closing it dropped this process's POSIX locks; the next process to close the
    ledger then thought it was the last user and deleted the -wal under a live writer."""
    path = tmp_path / "l.db"
    SQLiteLedger(path, odp.Budget(1)).close()
    child = _python(_FLUSH_THEN_SHARE, str(path))
    out, err = child.communicate(timeout=120)
    assert child.returncode == 0, err
    assert out.split() == ["True", "8"]
    with SQLiteLedger(path, readonly=True) as ledger:  # every row reached the file
        assert ledger.chain_head.rows == 8 and ledger.spent.epsilon == 0


def test_a_head_names_only_rows_already_on_disk(tmp_path, monkeypatch):
    """Lazy settles of one ledger are fsynced before any head names them: when another ledger
    on the same file opens, on flush(), and on a certificate."""
    import odp.ledger.sqlite as sqlite_module

    events: list[tuple[str, int]] = []
    real_fsync, real_write_head = os.fsync, sqlite_module.write_head

    def fsync(fd):
        if os.readlink(f"/proc/self/fd/{fd}").endswith("-wal"):
            events.append(("wal fsync", 0))
        return real_fsync(fd)

    def write_head(where, record, **kwargs):
        events.append(("head", record.rows))
        return real_write_head(where, record, **kwargs)

    path = tmp_path / "l.db"
    g = odp.ODP(odp.mechanisms.value_or_bottom, {"value": "3/10", "bottom": 0}, 0)
    acc = odp.Accountant(ledger=SQLiteLedger(path, odp.Budget(1)))
    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(sqlite_module, "write_head", write_head)
    acc.reserve(g).settle(odp.BOTTOM)  # row 2: a lazy settle, not yet on disk
    assert events == [("head", 1)]
    events.clear()
    SQLiteLedger(path).close()  # another worker opens: syncs the WAL, then names row 2
    assert events[:2] == [("wal fsync", 0), ("head", 2)]
    acc.reserve(g).settle(odp.BOTTOM)
    events.clear()
    acc.certificate()
    assert events == [("wal fsync", 0), ("head", 4)]
    acc.close()

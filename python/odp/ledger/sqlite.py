"""A durable, multi-process ledger on SQLite (standard library).

* WAL journal with ``synchronous=FULL``: a committed row survives a crash or power loss.
* ``BEGIN IMMEDIATE`` around admit + reserve: the admission check (Alg. 1 line 4) and the
  reservation row are one atomic step, serialised across processes sharing the file.
* Append-only: triggers refuse ``UPDATE`` and ``DELETE``; a settle is a new row.
* A schema version in the ``meta`` table; a ledger made by a newer schema is refused.
* Recovery on open: a reservation whose owning process is gone (same host, pid no longer
  running, or running with another start time) is settled at its sup (reason ``recovered``).
  Reservations of live processes, or of other hosts, stay pending — and pending rounds are
  always counted at their sup, so nothing is ever under-charged.

The SQL is plain and portable (no SQLite-only types) so that a server backend can follow.
Do not put the file on a network file system: SQLite's WAL mode needs shared memory.
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import threading
import time
from fractions import Fraction
from pathlib import Path
from typing import Any

from ..budget import Budget
from ..errors import LedgerError
from .base import (
    Admission,
    Ledger,
    TransitionCheck,
    budget_exceeded,
    enforcement_error,
    realised_blocks,
    settlement,
    sum_rule,
    validate_charge,
)
from .records import (
    REASON_ENFORCED,
    REASON_RECOVERED,
    REASON_RELEASED,
    SCHEMA_VERSION,
    BudgetState,
    RoundRecord,
    RoundRequest,
    dumps,
)

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
)""",
    """CREATE TABLE IF NOT EXISTS events (
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
    """CREATE UNIQUE INDEX IF NOT EXISTS events_one_reserve ON events (round_id) WHERE kind = 'reserve'""",
    """CREATE UNIQUE INDEX IF NOT EXISTS events_one_settle ON events (round_id) WHERE kind = 'settle'""",
    """CREATE TRIGGER IF NOT EXISTS events_no_update BEFORE UPDATE ON events
BEGIN SELECT RAISE(ABORT, 'odp ledger rows are append-only'); END""",
    """CREATE TRIGGER IF NOT EXISTS events_no_delete BEFORE DELETE ON events
BEGIN SELECT RAISE(ABORT, 'odp ledger rows are append-only'); END""",
    """CREATE TRIGGER IF NOT EXISTS meta_no_update BEFORE UPDATE ON meta
BEGIN SELECT RAISE(ABORT, 'odp ledger metadata is write-once'); END""",
    """CREATE TRIGGER IF NOT EXISTS meta_no_delete BEFORE DELETE ON meta
BEGIN SELECT RAISE(ABORT, 'odp ledger metadata is write-once'); END""",
)

_COLUMNS = ("seq, kind, round_id, mechanism, params, guarantee, sup_epsilon, delta, interactive, "
            "label, charged, reason, owner, created")


def _process_start(pid: int) -> str | None:
    """Start time of ``pid`` in clock ticks since boot (Linux), '' for a zombie, None if gone
    or unknown."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            data = fh.read().decode("ascii", "replace")
    except OSError:
        return None
    rest = data[data.rfind(")") + 2:].split()
    if rest and rest[0] in ("Z", "X"):
        return ""  # zombie / dead: it will never settle
    return rest[19] if len(rest) > 19 else None


def _owner_token() -> dict[str, Any]:
    pid = os.getpid()
    return {"host": socket.gethostname(), "pid": pid, "start": _process_start(pid)}


def _owner_is_dead(owner: dict[str, Any]) -> bool:
    """True only when we are sure the reserving process is gone (same host)."""
    if owner.get("host") != socket.gethostname():
        return False
    pid = owner.get("pid")
    if not isinstance(pid, int):
        return False
    start = _process_start(pid)
    if start is None:
        if not os.path.exists("/proc/self/stat"):  # no procfs: fall back to kill(pid, 0)
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return True
            except OSError:
                return False
            return False
        return True
    if start == "":
        return True
    recorded = owner.get("start")
    return recorded is not None and recorded != start


class SQLiteLedger(Ledger):
    """Ledger stored in a SQLite file.  Several processes may share one file.

    ``budget`` is required to create a new file; for an existing file it may be omitted (the
    file's budget is used) or must equal the recorded budget.  ``readonly=True`` opens without
    writing anything (no recovery), for inspection.
    """

    def __init__(self, path: str | os.PathLike, budget: Budget | None = None, *,
                 readonly: bool = False, busy_timeout: float = 120.0):
        self.path = Path(path)
        self._lock = threading.Lock()
        self._readonly = readonly
        self._owner = dumps(_owner_token())
        exists = self.path.exists() and self.path.stat().st_size > 0
        if not exists and (readonly or budget is None):
            raise LedgerError(
                f"no ledger at {self.path}; give a budget to create one"
                if not readonly else f"no ledger at {self.path}"
            )
        try:
            if readonly:
                uri = f"file:{self.path.resolve()}?mode=ro"
                self._conn = sqlite3.connect(uri, uri=True, isolation_level=None,
                                             check_same_thread=False, timeout=busy_timeout)
            else:
                self._conn = sqlite3.connect(str(self.path), isolation_level=None,
                                             check_same_thread=False, timeout=busy_timeout)
            self._conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
            if not readonly:
                mode = self._conn.execute("PRAGMA journal_mode").fetchone()[0]
                if mode.lower() != "wal":
                    self._conn.execute("PRAGMA journal_mode = WAL")
                self._conn.execute("PRAGMA synchronous = FULL")
        except sqlite3.Error as exc:
            raise LedgerError(f"cannot open ledger {self.path}: {exc}") from None
        try:
            if exists:
                self._budget = self._read_meta(budget)
            else:
                self._budget = self._create(budget)
            self._state = BudgetState(self._budget)
            with self._lock:
                self._refresh()
            if not readonly:
                self._recover()
        except sqlite3.DatabaseError as exc:
            self._conn.close()
            raise LedgerError(f"{self.path} is not a usable odp ledger: {exc}") from None
        except Exception:
            self._conn.close()
            raise

    # ------------------------------------------------------------------ setup
    def _read_meta(self, budget: Budget | None) -> Budget:
        try:
            meta = dict(self._conn.execute("SELECT key, value FROM meta").fetchall())
        except sqlite3.OperationalError as exc:
            if "no such table" in str(exc) and budget is not None and not self._readonly:
                return self._create(budget)  # another process is creating this file right now
            raise LedgerError(f"{self.path} is not an odp ledger ({exc})") from None
        except sqlite3.DatabaseError as exc:
            raise LedgerError(f"{self.path} is not an odp ledger ({exc})") from None
        if "schema_version" not in meta:
            raise LedgerError(f"{self.path} is not an odp ledger (no schema version)")
        version = int(meta["schema_version"])
        if version > SCHEMA_VERSION:
            raise LedgerError(
                f"{self.path} has schema version {version}; this odp reads up to "
                f"{SCHEMA_VERSION} — upgrade odp"
            )
        recorded = Budget(meta["epsilon"], meta["delta"])
        if budget is not None and budget != recorded:
            raise LedgerError(
                f"{self.path} holds the budget {recorded}, not {budget}; open it without a "
                "budget (or with the same one) to continue it"
            )
        self.ledger_id = meta.get("ledger_id", "")
        return recorded

    def _create(self, budget: Budget) -> Budget:
        import uuid

        self._conn.execute("BEGIN IMMEDIATE")
        try:
            for statement in _SCHEMA:
                self._conn.execute(statement)
            present = self._conn.execute("SELECT COUNT(*) FROM meta").fetchone()[0]
            if not present:
                rows = [("schema_version", str(SCHEMA_VERSION)), ("epsilon", str(budget.epsilon)),
                        ("delta", str(budget.delta)), ("ledger_id", uuid.uuid4().hex),
                        ("created", repr(time.time()))]
                self._conn.executemany("INSERT INTO meta (key, value) VALUES (?, ?)", rows)
            self._conn.execute("COMMIT")
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise
        return self._read_meta(budget)

    # ------------------------------------------------------------------ reading
    def _refresh(self) -> None:
        """Apply events written since the last refresh (by any process).  Caller holds _lock."""
        rows = self._conn.execute(
            f"SELECT {_COLUMNS} FROM events WHERE seq > ? ORDER BY seq", (self._state.last_seq,)
        ).fetchall()
        for row in rows:
            self._apply_row(row)

    def _apply_row(self, row: tuple) -> RoundRecord:
        (seq, kind, round_id, mechanism, params, guarantee, sup_eps, delta, interactive, label,
         charged, reason, owner, created) = row
        try:
            if kind == "reserve":
                req = RoundRequest(
                    round_id=round_id, mechanism=mechanism, params=json.loads(params),
                    guarantee=json.loads(guarantee), sup_epsilon=Fraction(sup_eps),
                    delta=Fraction(delta), interactive=bool(interactive),
                )
                rec = self._state.apply_reserve(seq, req, created)
                if owner:
                    rec.extra["owner"] = owner
                return rec
            return self._state.apply_settle(seq, round_id, json.loads(label), Fraction(charged),
                                            reason, created)
        except (ValueError, TypeError, KeyError) as exc:
            raise LedgerError(f"{self.path}: corrupt event #{seq}: {exc}") from None

    @property
    def budget(self) -> Budget:
        return self._budget

    def snapshot(self) -> BudgetState:
        with self._lock:
            self._refresh()
            return self._state

    # ------------------------------------------------------------------ writing
    def _require_writable(self) -> None:
        if self._readonly:
            raise LedgerError(f"{self.path} is open read-only")

    def _write(self, fn):
        """Run ``fn`` inside BEGIN IMMEDIATE after refreshing; commit, then apply its rows."""
        self._require_writable()
        with self._lock:
            try:
                self._conn.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                raise LedgerError(f"cannot lock ledger {self.path}: {exc}") from None
            try:
                self._refresh()
                rows = fn()
                self._conn.execute("COMMIT")
            except BaseException:
                try:
                    self._conn.execute("ROLLBACK")
                except sqlite3.Error:
                    pass
                raise
            return [self._apply_row(r) for r in rows]

    def _insert_reserve(self, req: RoundRequest, now: float) -> tuple:
        values = ("reserve", req.round_id, req.mechanism, dumps(req.params), dumps(req.guarantee),
                  str(req.sup_epsilon), str(req.delta), int(req.interactive), None, None, None,
                  self._owner, now)
        cur = self._conn.execute(
            "INSERT INTO events (kind, round_id, mechanism, params, guarantee, sup_epsilon, "
            "delta, interactive, label, charged, reason, owner, created) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", values)
        return (cur.lastrowid,) + values

    def _insert_settle(self, round_id: str, label: Any, charged: Fraction, reason: str,
                       now: float) -> tuple:
        values = ("settle", round_id, None, None, None, None, None, None, dumps(label),
                  str(charged), reason, self._owner, now)
        cur = self._conn.execute(
            "INSERT INTO events (kind, round_id, mechanism, params, guarantee, sup_epsilon, "
            "delta, interactive, label, charged, reason, owner, created) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", values)
        return (cur.lastrowid,) + values

    def reserve(self, req: RoundRequest, admit: Admission | None = None) -> RoundRecord:
        def op():
            if not (admit or sum_rule)(self._state, req):
                raise budget_exceeded(self._state, req, admit)
            return [self._insert_reserve(req, time.time())]

        return self._write(op)[0]

    def settle(self, round_id: str, label: Any, charged: Fraction, reason: str = REASON_RELEASED,
               *, interactive_rule: bool = True, check: TransitionCheck | None = None
               ) -> RoundRecord:
        failed = []

        def op():
            lab, chg, why, bad = settlement(self._state, round_id, label, charged, reason,
                                            interactive_rule, check)
            failed.append(bad)
            return [self._insert_settle(round_id, lab, chg, why, time.time())]

        rec = self._write(op)[0]
        if failed[-1]:
            raise enforcement_error(round_id)
        return rec

    def charge(self, req: RoundRequest, label: Any, charged: Fraction,
               admit: Admission | None = None, check: TransitionCheck | None = None
               ) -> RoundRecord:
        failed = []
        self._require_writable()
        validate_charge(req.guarantee, req.sup_epsilon, label, charged)

        def op():
            if not (admit or sum_rule)(self._state, req):
                raise budget_exceeded(self._state, req, admit)
            now = time.time()
            if check is not None:  # the round is not in the state yet: check against it directly
                eps_r = self._state.budget.epsilon - self._state.eps_held
                delta_r = self._state.budget.delta - self._state.delta_held
                blocks, realized = realised_blocks(req.guarantee, label)
                if not check(eps_r, delta_r, req.sup_epsilon, charged, req.delta, blocks,
                             realized):
                    failed.append(True)
                    return [self._insert_reserve(req, now),
                            self._insert_settle(req.round_id, None, req.sup_epsilon,
                                                REASON_ENFORCED, now)]
            failed.append(False)
            return [self._insert_reserve(req, now),
                    self._insert_settle(req.round_id, label, charged, REASON_RELEASED, now)]

        rec = self._write(op)[1]
        if failed[-1]:
            raise enforcement_error(req.round_id)
        return rec

    def _recover(self) -> None:
        """Settle at sup the pending reservations of processes that are gone."""
        dead = [r.round_id for r in self._state.rounds
                if r.status == "pending" and _owner_is_dead(json.loads(r.extra.get("owner", "{}")))]
        if not dead:
            return

        def op():
            rows = []
            for round_id in dead:
                rec = self._state.get(round_id)
                if rec.status == "pending":
                    rows.append(self._insert_settle(round_id, None, rec.sup_epsilon,
                                                    REASON_RECOVERED, time.time()))
            return rows

        self._write(op)

    def rounds(self) -> list[RoundRecord]:
        with self._lock:
            self._refresh()
            return list(self._state.rounds)

    def close(self) -> None:
        try:
            self._conn.close()
        except sqlite3.Error:  # pragma: no cover
            pass

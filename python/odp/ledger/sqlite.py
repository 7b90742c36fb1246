"""A durable, multi-process, hash-chained ledger on SQLite (standard library).

* WAL journal; a committed row survives a crash or power loss: SQLite commits without its
  own flush and the head file's one ``fdatasync`` makes the new rows durable in its journal
  (:mod:`odp.ledger.head`); without a synced head file, ``synchronous=FULL`` flushes each
  commit.
* ``BEGIN IMMEDIATE`` around admit + reserve: the admission check (Alg. 1 line 4) and the
  reservation row are one atomic step, serialised across processes sharing the file.
* Append-only: triggers refuse ``UPDATE`` and ``DELETE``; a settle is a new row.
* Hash-chained (:mod:`odp.ledger.chain`): every row carries the previous row's hash and its
  own; opening verifies the whole chain, each refresh the new rows, and any break is a
  :class:`~odp.errors.LedgerCorrupted` naming the first bad row.  With a key (``key_file=`` or
  ``$ODP_LEDGER_KEY_FILE``) every row and the head also carry an HMAC tag.
* A head file ``LEDGER.head`` (and any ``anchors``), written atomically after every commit
  (:mod:`odp.ledger.head`): rows a crash took from the database come back from its journal;
  a lost ``-wal`` beyond it, a truncated file or a restored older copy is refused with "the
  ledger lost committed rounds N..M".
* The schema is checked before anything is written: a file that is not an odp ledger of a
  known version is refused and left byte-identical; an altered schema (a dropped trigger) is
  refused as corrupted.  Version-1 ledgers open read-only; ``odp ledger upgrade`` chains them.
* Recovery on open: a reservation whose owning process is gone (same host, pid no longer
  running, or running with another start time) is settled at its sup (reason ``recovered``).
  Reservations of live processes, or of other hosts, stay pending — and pending rounds are
  always counted at their sup, so nothing is ever under-charged.

The SQL is plain and portable (no SQLite-only types) so that a server backend can follow.
Do not put the file on a network file system: SQLite's WAL mode needs shared memory.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import shutil
import sqlite3
import tempfile
import threading
import time
import warnings
from pathlib import Path
from typing import Any, Callable, Sequence, TypeVar

from ..budget import Budget
from ..errors import LedgerCorrupted, LedgerError
from . import schema
from .chain import ChainHead, ChainVerifier, EventRow, Genesis, key_id, load_key
from .chained import ChainedLedger, OpenSeams, StoredRow, default_clock
from .head import (HeadRecord, check_head, fsync_dir, head_path, read_head, read_heads, read_tail,
                   write_head)
from .head import exclusive as head_exclusive
from .owner import owner_is_dead, owner_token
from ..neighbours import Neighbours
from .base import check_same_neighbours, new_neighbours, recorded_neighbours
from .lanes import Lane, check_lanes, check_same_lanes, lanes_json
from .records import BudgetState, RoundRecord, dumps

#: Environment variable naming the HMAC key file of keyed ledgers (see docs/ledger.md).
KEY_ENV = "ODP_LEDGER_KEY_FILE"
CHECKPOINT_MODES = (None, "passive", "full", "truncate")
_N_ROW = len(schema.ROW_COLUMNS.split(","))
_LINE = json.JSONEncoder(separators=(",", ":"))  # a journal line: the stored values as JSON
_JOURNAL_CACHE = 4096  # rows kept in memory for the journal at most (then a WAL sync)
_INSERT = (f"INSERT INTO events ({schema.ROW_COLUMNS}, {schema.CHAIN_COLUMNS}) VALUES "
           f"({', '.join('?' * (_N_ROW + 3))})")


_T = TypeVar("_T")


class LedgerHeadWarning(UserWarning):
    """About the head file: a commit succeeded but its head file could not be written (the head
    lags behind), or rows a crash took from the database were put back from its journal."""


def _resolve_key(key: bytes | None, key_file: str | os.PathLike[str] | None) -> bytes | None:
    if key is not None:
        if not isinstance(key, (bytes, bytearray)) or len(key) < 32:
            raise LedgerError("a ledger key must be at least 32 bytes")
        return bytes(key)
    if key_file is None:
        key_file = os.environ.get(KEY_ENV) or None
    return None if key_file is None else load_key(key_file)


class _StillLocked(Exception):
    """SQLite answered a lock conflict with "database is locked" without waiting."""


def _is_locked(exc: sqlite3.DatabaseError) -> bool:
    """Whether ``exc`` is SQLite's SQLITE_BUSY / SQLITE_LOCKED ("database is locked",
    "database table is locked")."""
    return isinstance(exc, sqlite3.OperationalError) and "is locked" in str(exc)


class SQLiteLedger(ChainedLedger):
    """Ledger stored in a SQLite file.  Several processes may share one file.

    ``budget`` is required to create a new file; for an existing file it may be omitted (the
    file's budget is used) or must equal the recorded budget.  ``readonly=True`` opens without
    writing anything (no recovery, no head update), for inspection; where the file and its
    directory are not writable it reads a private copy.

    Integrity options (docs/ledger.md): ``key``/``key_file`` — an HMAC key (default
    ``$ODP_LEDGER_KEY_FILE``); a new ledger made with a key is keyed for good.  ``anchors`` —
    further head files (e.g. on another volume) that must be extended like ``LEDGER.head``.
    ``checkpoint`` — after each commit, copy the WAL into the database (``"passive"``,
    ``"full"`` or ``"truncate"``), so deleting the ``-wal`` file loses nothing.
    ``head_sync=False`` writes the head without ``fdatasync`` and without a journal; SQLite
    then flushes every commit itself (a lost ``-wal`` is still detected after a process crash,
    but not after a power loss).
    ``head_file=False`` turns the head file off (for measurements only: lost rows then go
    unnoticed).

    Durability of settles: a reservation (and an a-posteriori charge) is on disk, and the head
    file advanced, before the call returns — the round's worst case is recorded before any noise
    is drawn (Alg. 1).  A *settle* (the refund down to the realised class's cost) is committed
    without waiting for the disk (``synchronous = NORMAL`` for that transaction) and without
    advancing the head: the next durable commit by any process, or :meth:`close`, flushes it.
    A power loss can therefore lose the latest settles; their rounds are then recovered as
    reserved and charged their worst case — never less than was spent.  This halves the flushes
    of :meth:`odp.Accountant.run`: one per round (the head file's, whose journal takes the
    settle along with the next reservation).
    ``settle_sync=True`` makes every settle durable before it returns.
    """

    #: What only :meth:`_open` sets (an instance attribute, before ``__init__`` runs).
    _seams = OpenSeams()

    @classmethod
    def _open(cls, path: str | os.PathLike[str], budget: Budget | None = None, *,
              clock: Callable[[], float] | None = None, ledger_id: str | None = None,
              check_heads: bool = True, **options: Any) -> SQLiteLedger:
        """Not public: the ledger opened with a given ``clock`` (row timestamps), ``ledger_id``
        (if it is created) or, with ``check_heads=False``, without comparing its head files to
        its rows (for :func:`upgrade_ledger` and :func:`reanchor_ledger`, which write them).
        Tests use it for runs that are identical byte for byte; ``options`` are the
        constructor's."""
        ledger = cls.__new__(cls)
        ledger._seams = OpenSeams(clock or default_clock, ledger_id, check_heads)
        cls.__init__(ledger, path, budget, **options)
        return ledger

    def __init__(self, path: str | os.PathLike[str], budget: Budget | None = None, *,
                 readonly: bool = False, busy_timeout: float = 120.0, key: bytes | None = None,
                 key_file: str | os.PathLike[str] | None = None,
                 anchors: Sequence[str | os.PathLike[str]] = (), checkpoint: str | None = None,
                 head_file: bool = True, head_sync: bool = True, settle_sync: bool = False,
                 lanes: Sequence[Lane] | None = None, neighbours: Neighbours | str | None = None):
        if checkpoint not in CHECKPOINT_MODES:
            raise LedgerError(f"checkpoint must be one of {CHECKPOINT_MODES}, got {checkpoint!r}")
        if not str(path):
            raise LedgerError("the ledger path is empty")
        self.path = Path(path)
        if self.path.is_dir():
            raise LedgerError(f"{self.path} is a directory, not a ledger file")
        self._where = str(self.path)
        seams = self._seams
        self._clock = seams.clock
        self._new_id = seams.ledger_id
        self._new_lanes = None if lanes is None else tuple(lanes)
        # the relation a new ledger records, or the one an existing ledger must hold
        self._want_neighbours = None if neighbours is None else Neighbours.parse(neighbours)
        self._lock = threading.Lock()
        self._readonly = readonly
        self._owner = dumps(owner_token())
        self._key = _resolve_key(key, key_file)
        self._checkpoint = checkpoint
        self._head_sync = head_sync
        self._settle_sync = settle_sync
        # The journal (docs/ledger.md): commits skip SQLite's flush and the head file's one
        # fdatasync makes the new rows durable in its journal; off without a synced head file.
        self._journaled = head_file and head_sync and not readonly
        self._primary = head_path(self.path)
        self._heads = ([self._primary] if head_file else []) + [Path(a) for a in anchors]
        self._snapshot_dir: str | None = None
        self.snapshot_copy = False
        # SQLite's busy handler covers the waits of an open, but under load a concurrent first
        # open was seen to get "database is locked" at once (2 of 50 trials of 8 processes;
        # the cause is not identified).  The open is idempotent (creation re-checks emptiness
        # inside BEGIN IMMEDIATE), so it is retried until ``busy_timeout`` has passed.
        deadline = time.monotonic() + busy_timeout
        pause = 0.002
        while True:
            try:
                self._open_once(budget, readonly, busy_timeout, seams.check_heads)
                return
            except _StillLocked as locked:
                if time.monotonic() + pause > deadline:
                    raise LedgerError(f"{self.path} stayed locked by other processes for "
                                      f"{busy_timeout:g} s ({locked})") from None
                time.sleep(pause * (0.5 + random.random()))
                pause = min(2 * pause, 0.25)

    def _open_once(self, budget: Budget | None, readonly: bool, busy_timeout: float,
                   check_heads: bool) -> None:
        """One attempt at opening (and, if missing, creating) the ledger; raises
        :class:`_StillLocked` if SQLite reported a lock conflict without waiting.  Each attempt
        starts from a fresh connection state."""
        # seq → stored values of the rows no head holds yet (encoded only if journaled)
        self._recent: dict[int, Sequence[object]] = {}
        self._caching = False  # whether _refresh keeps rows for the journal (once opened)
        self._unflushed = False  # a settle committed without a flush (see the class docstring)
        # the rows put back from the head file's journal when opened (first, last), if any
        self.restored_range: tuple[int, int] | None = None
        self._wal_synced: tuple[int, int] | None = None  # the -wal whose directory entry is synced
        self._wrote_rows = False  # whether the last commit appended rows (and so synced the WAL)
        self._sync_mode = "FULL"  # the connection's PRAGMA synchronous
        where = str(self.path)
        exists = self.path.exists() and self.path.stat().st_size > 0
        if not exists:
            self._refuse_missing(budget, readonly)
        if exists and not readonly:
            # Decide whether this file is ours through a read-only connection: a file that is
            # not an odp ledger of a known version is refused without a single byte written
            # (a writable connection would at least checkpoint a foreign WAL on close).
            probe = self._connect(True, busy_timeout)
            try:
                if not self._empty(probe):
                    self._check_file(probe, readonly=False, where=where)
            except sqlite3.DatabaseError as exc:
                if _is_locked(exc):
                    raise _StillLocked(str(exc)) from None
                raise LedgerError(f"{self.path} is not a usable odp ledger: {exc}") from None
            finally:
                probe.close()
                self._drop_snapshot()
        self._conn = self._connect(readonly, busy_timeout)
        try:
            if not exists or self._empty():
                if readonly:
                    raise LedgerError(f"no ledger at {self.path}")
                self._create(budget)
            self.schema_version, meta = self._check_file(self._conn, readonly, where)
            if not readonly:
                self._pragmas()
            self._budget = self._open_meta(meta, budget, where)
            self._state = BudgetState.for_genesis(self.genesis)
            check_same_lanes(self.lanes_spec, self._new_lanes, where)
            check_same_neighbours(self.neighbours, self._want_neighbours, where)
            with self._lock:
                self._refresh()
                self._check_rowids(where)
            if self.chained and check_heads:
                self._check_heads()
                if not readonly and self._heads[:1] == [self._primary]:
                    self._repair_head()
            if not readonly:
                self._sync_wal()  # other processes' lazy settles: on disk before a head names them
                self._write_heads(synced=True)
                self._caching = self._journaled  # rows read from now on may go in a journal
                self._recover()
        except sqlite3.DatabaseError as exc:
            self.close()
            if _is_locked(exc):
                raise _StillLocked(str(exc)) from None
            raise LedgerError(f"{self.path} is not a usable odp ledger: {exc}") from None
        except BaseException:
            self.close()
            raise

    # ------------------------------------------------------------------ opening
    def _refuse_missing(self, budget: Budget | None, readonly: bool) -> None:
        for head in self._heads:
            record = read_head(head)
            if record is not None:
                raise LedgerCorrupted(
                    f"the ledger file {self.path} is missing or empty, but {head} records "
                    f"{record.rows} committed rows of ledger {record.ledger_id}: the spent "
                    f"budget is unknown.  Restore the ledger file, or remove {head} to start "
                    "a new ledger")
        if readonly or budget is None:
            raise LedgerError(f"no ledger at {self.path}; give a budget to create one"
                              if not readonly else f"no ledger at {self.path}")

    def _connect(self, readonly: bool, busy_timeout: float) -> sqlite3.Connection:
        def connect(target: str, uri: bool) -> sqlite3.Connection:
            conn = sqlite3.connect(target, uri=uri, isolation_level=None,
                                   check_same_thread=False, timeout=busy_timeout)
            conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
            return conn

        try:
            if not readonly:
                return connect(str(self.path), False)
            if (not Path(str(self.path) + "-wal").exists()
                    and os.access(self.path, os.R_OK | os.W_OK)
                    and os.access(self.path.parent, os.W_OK | os.X_OK)):
                # No -wal: no connection is open and the file is complete.  Read through a
                # query-only connection: as the last one to close it removes the -wal and
                # -shm files that opening a WAL database creates (a mode=ro connection would
                # leave them beside the ledger) and writes nothing else.
                conn = connect(str(self.path), False)
                conn.execute("PRAGMA query_only = ON")
                return conn
            conn = connect(f"file:{self.path.resolve()}?mode=ro", True)
            try:
                conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
                return conn
            except sqlite3.OperationalError as exc:
                conn.close()
                if "readonly" not in str(exc) and "unable to open" not in str(exc):
                    raise
            # A WAL ledger we may not write next to (no -shm): read a private copy instead.
            self._snapshot_dir = tempfile.mkdtemp(prefix="odp-ledger-ro-")
            copy = Path(self._snapshot_dir) / self.path.name
            shutil.copyfile(self.path, copy)
            wal = Path(str(self.path) + "-wal")
            if wal.exists():
                shutil.copyfile(wal, Path(str(copy) + "-wal"))
            self.snapshot_copy = True
            return connect(str(copy), False)
        except sqlite3.DatabaseError as exc:
            if _is_locked(exc):
                raise _StillLocked(str(exc)) from None
            if "not a database" in str(exc):
                raise LedgerError(f"{self.path} is not an odp ledger ({exc}); odp leaves it "
                                  "untouched") from None
            raise LedgerError(f"cannot open ledger {self.path}: {exc}") from None
        except OSError as exc:
            raise LedgerError(f"cannot read ledger {self.path}: {exc}") from None

    def _check_file(self, conn: sqlite3.Connection, readonly: bool, where: str
                    ) -> tuple[int, dict[str, str]]:
        """The schema version and metadata of an odp ledger of a known, unaltered schema;
        else an error (nothing is written)."""
        version, meta = schema.read_version(conn, where)
        schema.check_schema(conn, version, meta, where)
        if version < schema.SCHEMA_VERSION and not readonly:
            raise LedgerError(
                f"{self.path} is a version-{version} ledger without a hash chain; this odp "
                f"writes only version {schema.SCHEMA_VERSION}.  Upgrade it once with "
                f"`{schema.UPGRADE_COMMAND} {self.path}` (it hashes every row; nothing else "
                "changes), or open it read-only")
        return version, meta

    def _drop_snapshot(self) -> None:
        if self._snapshot_dir is not None:
            shutil.rmtree(self._snapshot_dir, ignore_errors=True)
            self._snapshot_dir = None
            self.snapshot_copy = False

    def _empty(self, conn: sqlite3.Connection | None = None) -> bool:
        try:
            return schema.is_empty(conn or self._conn)
        except sqlite3.DatabaseError as exc:
            if _is_locked(exc):
                raise _StillLocked(str(exc)) from None
            raise LedgerError(f"{self.path} is not an odp ledger ({exc}); odp leaves it "
                              "untouched") from None

    def _pragmas(self) -> None:
        mode = self._conn.execute("PRAGMA journal_mode").fetchone()[0]
        if mode.lower() != "wal":
            self._conn.execute("PRAGMA journal_mode = WAL")
        self._sync_mode = "NORMAL" if self._journaled else "FULL"
        self._conn.execute(f"PRAGMA synchronous = {self._sync_mode}")

    def _create(self, budget: Budget | None) -> None:
        import uuid

        if budget is None:
            raise LedgerError(f"no ledger at {self.path}; give a budget to create one")
        self._pragmas()
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            if schema.is_empty(self._conn):  # else another process created it meanwhile
                lanes = None if self._new_lanes is None else lanes_json(
                    check_lanes(self._new_lanes, budget))
                genesis = Genesis(self._new_id or uuid.uuid4().hex, budget.epsilon, budget.delta,
                                  key_id(self._key) if self._key else None, lanes,
                                  new_neighbours(self._want_neighbours))
                rows = [("schema_version", str(schema.SCHEMA_VERSION)),
                        ("epsilon", str(budget.epsilon)), ("delta", str(budget.delta)),
                        ("ledger_id", genesis.ledger_id), ("created", repr(time.time())),
                        ("chain_version", str(schema.CHAIN_VERSION)),
                        ("genesis_hash", genesis.hash)]
                if genesis.key_id:
                    rows.append(("key_id", genesis.key_id))
                if lanes is not None:
                    rows.append(("lanes", lanes))
                rows.append(("neighbours", str(genesis.neighbours)))
                schema.create(self._conn, rows)
            self._conn.execute("COMMIT")
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise

    def _open_meta(self, meta: dict[str, str], budget: Budget | None, where: str) -> Budget:
        self.genesis = schema.genesis_of(meta, where)
        self.ledger_id = self.genesis.ledger_id
        if self.schema_version >= 2 and meta["genesis_hash"] != self.genesis.hash:
            raise LedgerCorrupted(f"{where}: the ledger's recorded budget or identity was "
                                  "edited (its genesis hash does not match); the ledger "
                                  "refuses to charge")
        recorded_neighbours(self.genesis, where)  # a relation this odp does not know: refused
        keyed = self.genesis.key_id
        if self._key is not None and keyed != key_id(self._key):
            raise LedgerError(
                f"{where}: the key given (id {key_id(self._key)}) is not this ledger's "
                + (f"(id {keyed})" if keyed else
                   "(the ledger records no key: it was made without one, or its key id was "
                   "removed)"))
        if keyed and self._key is None and not self._readonly:
            raise LedgerError(f"{where} is keyed (key id {keyed}): give its key with key_file= "
                              f"or ${KEY_ENV} to write to it")
        self._verifier = ChainVerifier(self.genesis, self._key if keyed else None, where)
        try:
            recorded = Budget(meta["epsilon"], meta["delta"])
        except Exception as exc:  # noqa: BLE001 - InvalidBudget is the likely one
            raise LedgerCorrupted(f"{where}: unreadable budget in the metadata ({exc})") from None
        if budget is not None and budget != recorded:
            raise LedgerError(
                f"{self.path} holds the budget {recorded}, not {budget}; open it without a "
                "budget (or with the same one) to continue it")
        return recorded

    @property
    def chained(self) -> bool:
        """Whether the rows on disk carry their hashes (schema version ≥ 2)."""
        return self.schema_version >= 2

    def _check_rowids(self, where: str) -> None:
        n = self._verifier.state.rows  # rows past n are another process's newer commits
        count, low = self._conn.execute("SELECT COUNT(*), MIN(seq) FROM events WHERE seq <= ?",
                                        (n,)).fetchone()
        if count != n or (count and low != 1):
            raise LedgerCorrupted(f"{where}: the events table holds {count} rows but its chain "
                                  f"{self._verifier.state.rows} (rows were added outside odp)")

    def _hash_at(self, n: int) -> str | None:
        """The verified hash of row ``n`` (the genesis hash for 0); None past the end."""
        if n == 0:
            return self.genesis.hash
        if not self.chained:  # version 1: the chain its rows imply, computed in memory
            events = self.events()
            return events[n - 1][1] if n <= len(events) else None
        row = self._conn.execute("SELECT row_hash FROM events WHERE seq = ?", (n,)).fetchone()
        return None if row is None else row[0]

    def _check_heads(self) -> None:
        try:
            self._check_heads_once()
        except LedgerCorrupted:
            if not self._heads:
                raise
            # A writer commits its rows, then writes the head, both under the head file's
            # lock: rows read here may be a commit whose head is still being written (a new
            # ledger's first charge, typically).  Wait for the writers in flight — once the
            # lock is ours, every committed durable row has its head — and look again.  A
            # head still missing then is a real loss.
            with self._writers_queue(create=False):  # no head file: none is created
                pass
            self._check_heads_once()

    def _check_heads_once(self) -> None:
        # Read the heads first, then the rows: a head is written only after its rows were
        # committed, so rows read afterwards include every row a head can name (other
        # processes keep committing meanwhile).
        records = [(path, read_head(path)) for path in self._heads]
        primary = head_path(self.path)
        if self._heads and self._heads[0] == primary:
            records[0] = (primary, self._restore_from_journal(primary, records[0][1]))
        with self._lock:
            self._refresh()
            head = self._verifier.state
        for path, record in records:
            if record is None:
                if head.rows == 0:
                    continue
                if path != head_path(self.path):
                    raise LedgerCorrupted(
                        f"{self.path} has {head.rows} rows but its anchor {path} is missing: "
                        "rows lost since it was last written cannot be ruled out.  Make the "
                        "anchor available again (or open the ledger without it)")
                raise LedgerCorrupted(
                    f"{self.path} has {head.rows} rows but no head file {path}: rows lost since "
                    "it was last written cannot be ruled out.  If you moved or copied the "
                    f"ledger, bring {path.name} with it; to accept the rows as they are, run "
                    f"`odp ledger reanchor {self.path}` (docs/ledger.md)")
            check_head(record, path, self.ledger_id, head, hash_at=self._hash_at,
                       key=self._verifier.key)

    def _restore_from_journal(self, path: Path, best: HeadRecord | None) -> HeadRecord | None:
        """The head of ``path`` the ledger must extend, after putting back the rows a crash took
        from the database that the head file's journal kept (SQLite commits without a flush in
        journal mode; a power loss can lose its latest commits, never the head file's).

        The newest head is returned unless it names rows the database lacks that its journal
        cannot give back although they were never synced (its tail torn: the crash hit its own
        write, so its charge never returned) — then the head before it is the one to extend.
        A head whose synced rows are gone is returned as it is: :func:`check_head` reports the
        loss."""
        with self._lock:
            self._refresh()
            have = self._verifier.state
        if best is None or best.rows <= have.rows:
            return best
        for record in read_heads(path):
            if record.rows <= have.rows:
                return record
            if record.synced is None or record.synced > have.rows:
                return best  # rows that were on disk are gone: a loss, reported by check_head
            rows = self._journal_rows(path, record, have)
            if rows is None:
                continue
            if self._readonly:
                raise LedgerError(
                    f"{self.path} lacks rows {have.rows + 1}..{record.rows}: a crash took them "
                    f"from the database before SQLite wrote them out, and the head file {path} "
                    f"still holds them.  Put them back with `odp ledger restore {self.path}` "
                    "(or open the ledger for writing), then read it")
            self._insert_restored(rows)
            self.restored_range = (have.rows + 1, record.rows)
            warnings.warn(f"{self.path}: put back rows {have.rows + 1}..{record.rows} from the "
                          f"journal of {path} (a crash took them from the database before "
                          "SQLite wrote them out)", LedgerHeadWarning, stacklevel=4)
            return record
        return best

    def _repair_head(self) -> None:
        """After the heads were checked: if the newest head does not match the ledger, the
        check fell back past it (its journal was torn, its charge never returned).  Replace it
        by the verified chain's head: left in place it names rows that do not exist, every
        later head write would defer to it, and the next open would refuse a ledger that lost
        nothing.  Under the writers' lock, so a head another writer moved on meanwhile is left
        alone."""
        with self._lock, self._writers_queue():
            self._refresh()
            state = self._verifier.state
            records = read_heads(self._primary)
            if not records:
                return
            newest = records[0]
            if newest.rows <= state.rows and self._hash_at(newest.rows) == newest.head:
                return  # another process repaired it, or moved it on correctly
            self._sync_wal()
            record = HeadRecord.of(self.ledger_id, state, self._key)
            write_head(self._primary, record.with_journal(record.rows), force=True, held=True)
        warnings.warn(f"{self._primary}: its newest head (rows {newest.rows}) was torn by a crash "
                      f"during its write (that charge never returned); replaced by the ledger's "
                      f"verified head at row {state.rows}", LedgerHeadWarning, stacklevel=4)

    def _journal_rows(self, path: Path, record: HeadRecord, have: ChainHead
                      ) -> list[list[Any]] | None:
        """The rows ``have.rows+1..record.rows`` from ``record``'s journal, verified against the
        chain (links, hashes, tags) and ending in ``record``'s hash; ``None`` if incomplete."""
        assert record.synced is not None
        lines = read_tail(path, record)[have.rows - record.synced:record.rows - record.synced]
        if len(lines) != record.rows - have.rows:
            return None
        verifier = ChainVerifier(self.genesis, self._verifier.key, str(path))
        verifier.state = have
        out: list[list[Any]] = []
        try:
            for line in lines:
                values = json.loads(line)
                if not isinstance(values, list) or len(values) != _N_ROW + 3:
                    return None
                verifier.check(EventRow.from_stored(values[:_N_ROW]), *values[_N_ROW:])
                out.append(values)
        except (ValueError, TypeError, ZeroDivisionError, LedgerCorrupted):
            return None
        return out if verifier.state.head == record.head else None

    def _insert_restored(self, rows: list[list[Any]]) -> None:
        """Append verified journal rows through the one write path (:meth:`_commit`: each row
        checked and applied as a row read back, all inserted and committed, or none), then
        flush them."""
        def op() -> None:
            assert self._batch is not None
            for values in rows:
                if values[0] <= self._verifier.state.rows:
                    continue  # another process put it back meanwhile
                row = EventRow.from_stored(values[:_N_ROW])
                prev, digest, mac = values[_N_ROW:]
                self._apply_stored_row(row, prev, digest, mac)
                self._batch.append((row, prev, digest, mac))

        with self._lock, self._writers_queue():
            self._commit(op)
            self._sync_wal()

    def _write_heads(self, held: bool = False, *, synced: bool = False) -> None:
        """Record the head after a commit (``held``: the first head file's lock is held).
        In journal mode the first head file also journals the rows no head holds yet, unless
        ``synced`` (every committed row was just flushed in the database)."""
        if not self.chained or not self._heads:
            return
        record = HeadRecord.of(self.ledger_id, self._verifier.state, self._key)
        for i, path in enumerate(self._heads):
            own, journal = record, None
            if self._journaled and path is self._primary:
                if synced:
                    own = record.with_journal(record.rows)
                else:
                    journal = self
            journaled = False
            try:
                journaled = write_head(path, own, sync=self._head_sync, held=held and i == 0,
                                       journal=journal)
            except (OSError, LedgerError) as exc:
                warnings.warn(f"the ledger committed, but its head file {path} was not "
                              f"updated ({exc}); lost rows after this commit would go "
                              "unnoticed until it is", LedgerHeadWarning, stacklevel=3)
            if journal is not None and not journaled:
                # not written (an error, or a head with as many rows: see _repair_head), so the
                # new rows are in no journal: flush them in the database
                self._sync_wal()
        self._recent.clear()  # a later head needs none of them: they are in a head or synced

    # The Journal protocol of head.write_head
    def rows_after(self, after: int, upto: int, *, after_hash: str | None,
                   upto_hash: str) -> list[bytes] | None:
        """Journal lines of rows ``after+1..upto`` (kept since they were committed or read),
        if they chain from ``after_hash`` (the genesis for ``None``) to ``upto_hash``."""
        link = self.genesis.hash if after_hash is None else after_hash
        lines = []
        for seq in range(after + 1, upto + 1):
            values = self._recent.get(seq)
            if values is None or values[-3] != link:
                return None
            lines.append(_LINE.encode(values).encode("utf-8") + b"\n")
            link = values[-2]  # type: ignore[assignment]
        return lines if link == upto_hash else None

    def sync(self) -> None:
        self._sync_wal()

    def _keep_row(self, values: Sequence[object]) -> None:
        if len(self._recent) >= _JOURNAL_CACHE:
            self._recent.clear()  # the head write then syncs the database instead
        self._recent[values[0]] = values  # type: ignore[index]

    # ------------------------------------------------------------------ reading
    def _refresh(self) -> None:
        """Verify and apply the rows written since the last refresh (by any process).
        Caller holds _lock."""
        columns = schema.ROW_COLUMNS + (", " + schema.CHAIN_COLUMNS if self.chained else "")
        rows = self._conn.execute(
            f"SELECT {columns} FROM events WHERE seq > ? ORDER BY seq",
            (self._verifier.state.rows,)).fetchall()
        for stored in rows:
            self._apply_stored(stored)

    def _apply_stored(self, stored: StoredRow) -> RoundRecord:
        if self._caching:
            self._keep_row(stored)
        n = _N_ROW
        try:
            row = EventRow.from_stored(stored[:n])
        except (ValueError, TypeError, ZeroDivisionError) as exc:
            raise self._verifier.corrupted(stored[0], f"unreadable value ({exc})") from None
        prev = digest = mac = None
        if self.chained:
            prev, digest, mac = stored[n:]
            if prev is None or digest is None:
                raise self._verifier.corrupted(row.seq, "it carries no hash")
        return self._apply_stored_row(row, prev, digest, mac)

    def events(self) -> list[tuple[EventRow, str]]:
        """Every row with its hash, re-read and re-verified from the file (for certificates)."""
        with self._lock:
            self._refresh()
            columns = schema.ROW_COLUMNS + (", " + schema.CHAIN_COLUMNS if self.chained else "")
            stored = self._conn.execute(
                f"SELECT {columns} FROM events WHERE seq <= ? ORDER BY seq",
                (self._verifier.state.rows,)).fetchall()
        verifier = ChainVerifier(self.genesis, self._verifier.key, str(self.path))
        n = _N_ROW
        out = []
        for values in stored:
            row = EventRow.from_stored(values[:n])
            prev, digest, mac = values[n:] if self.chained else (None, None, None)
            out.append((row, verifier.check(row, prev, digest, mac)))
        return out

    # ------------------------------------------------------------------ writing
    def _write(self, op: Callable[[], _T], what: str = "write",
               rounds: Sequence[str] = (), *, durable: bool = True) -> _T:
        """Run ``op`` inside BEGIN IMMEDIATE after refreshing; store the rows it appended,
        commit, then checkpoint (if asked) and advance the head files.  ``durable=False`` (a
        settle, unless ``settle_sync``): commit without a flush and leave the head as it is."""
        self._require_writable()
        lazy = not durable and not self._settle_sync
        with self._lock, self._writers_queue():
            mode = "NORMAL" if lazy or self._journaled else "FULL"
            if self._sync_mode != mode:  # set outside any transaction (SQLite refuses inside)
                self._conn.execute(f"PRAGMA synchronous = {mode}")
                self._sync_mode = mode
            result = self._commit(op)
            if self._checkpoint:
                try:
                    self._conn.execute(f"PRAGMA wal_checkpoint({self._checkpoint.upper()})")
                except sqlite3.Error:  # busy: the rows are committed in the WAL all the same
                    pass
            if lazy:
                self._unflushed = True
            else:
                # A FULL commit that wrote frames fsynced the WAL, and with it every earlier
                # lazy settle of any process; one that wrote none (nothing to record) did not.
                # In journal mode the head file's journal takes every row no head holds yet.
                if not self._wrote_rows and not self._journaled:
                    self._sync_wal()
                self._unflushed = self._journaled  # close() empties the journal
                self._write_heads(held=bool(self._heads))
        return result

    def _commit(self, op: Callable[[], _T]) -> _T:
        """BEGIN IMMEDIATE; refresh; ``op``; INSERT its rows; COMMIT (or roll back and restore
        the in-memory state).  Caller holds ``_lock`` and the head file's lock."""
        try:
            self._conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise LedgerError(f"cannot lock ledger {self.path}: {exc}") from None
        mark = None
        self._wrote_rows = False
        try:
            self._refresh()
            mark = self._verifier.state.rows
            self._batch = []
            result = self._run_op(op)
            self._wrote_rows = bool(self._batch)
            if self._batch:
                stored = [row.stored_values()
                          + [prev, digest, mac] for row, prev, digest, mac in self._batch]
                self._conn.executemany(_INSERT, stored)
                if self._journaled:
                    for values in stored:
                        self._keep_row(values)
            self._conn.execute("COMMIT")
        except BaseException:
            self._recent.clear()  # lines of rows that may never have been committed
            try:
                self._conn.execute("ROLLBACK")
            except sqlite3.Error:
                pass
            if mark is not None and self._verifier.state.rows != mark:
                self._reload()  # rows were applied in memory but never committed
            raise
        finally:
            self._batch = None
        return result

    def flush(self) -> None:
        """Make every row committed to this ledger so far durable — this process's lazy
        settles and other processes' — and advance the head files over them
        (:meth:`close` does this when this ledger has settles to flush;
        :meth:`odp.Accountant.certificate` always)."""
        if self._readonly:
            return
        with self._lock, self._writers_queue():
            self._refresh()  # the rows the head will name ...
            self._sync_wal()  # ... are on disk before it names them
            self._unflushed = False
            self._write_heads(held=bool(self._heads), synced=True)

    def _writers_queue(self, *, create: bool = True) -> contextlib.AbstractContextManager[object]:
        """Writers queue on the head file's lock (kernel-woken), not by polling SQLite's.
        ``create=False``: only wait for the writers in flight; a missing head file stays
        missing (see :func:`odp.ledger.head.exclusive`)."""
        return (head_exclusive(self._heads[0], create=create) if self._heads
                else contextlib.nullcontext())

    def _sync_wal(self) -> None:
        """``fsync`` the ``-wal`` file.  Never the database file: closing a descriptor of it
        would drop this process's POSIX locks on it, which SQLite relies on.  Rows no longer
        in the WAL were moved by a checkpoint, which syncs the database after copying."""
        try:
            fd = os.open(str(self.path) + "-wal", os.O_RDONLY)
        except FileNotFoundError:
            return
        try:
            os.fsync(fd)
            st = os.fstat(fd)
        finally:
            os.close(fd)
        if (st.st_dev, st.st_ino) != self._wal_synced:  # a new -wal: its name on disk too
            fsync_dir(self.path.parent)
            self._wal_synced = (st.st_dev, st.st_ino)

    def _dead_owner_rounds(self) -> list[str]:
        return [r.round_id for r in self._state.rounds
                if r.status == "pending" and owner_is_dead(json.loads(r.extra.get("owner", "{}")))]

    def close(self) -> None:
        conn = getattr(self, "_conn", None)
        if conn is not None and getattr(self, "_unflushed", False):
            try:
                self.flush()
            except (OSError, sqlite3.Error, LedgerError) as exc:
                warnings.warn(f"closing {self.path}: its latest settles could not be flushed "
                              f"({exc}); a power loss may charge those rounds their worst case",
                              LedgerHeadWarning, stacklevel=2)
        if conn is not None:
            try:
                conn.close()
            except sqlite3.Error:  # pragma: no cover
                pass
        self._drop_snapshot()


def upgrade_ledger(path: str | os.PathLike[str], *, key_file: str | os.PathLike[str] | None = None
                   ) -> int:
    """Upgrade a version-1 ledger to the hash-chained version 2 in place (one transaction),
    then write its head file.  Returns the number of rows chained."""
    path = Path(path)
    if not path.exists() or path.stat().st_size == 0:
        raise LedgerError(f"no ledger at {path}")
    key = _resolve_key(None, key_file)
    try:
        conn = sqlite3.connect(str(path), isolation_level=None, timeout=120.0)
    except sqlite3.Error as exc:
        raise LedgerError(f"cannot open ledger {path}: {exc}") from None
    try:
        n = schema.upgrade_v1(conn, str(path), key)
    except sqlite3.DatabaseError as exc:
        raise LedgerError(f"{path} is not a usable odp ledger: {exc}") from None
    finally:
        conn.close()
    # Verify the new chain and write the first head file (a version-1 ledger has none).
    SQLiteLedger._open(path, key=key, check_heads=False).close()
    return n


def reanchor_ledger(path: str | os.PathLike[str], *, accept_loss: bool = False,
                    key_file: str | os.PathLike[str] | None = None) -> tuple[ChainHead, HeadRecord | None]:
    """Verify the ledger's chain and write its head file from the rows as they are (after the
    head file was lost, or — with ``accept_loss`` — after rows it recorded were lost).
    Returns (the new head, the head file's previous record)."""
    ledger = SQLiteLedger._open(path, key_file=key_file, check_heads=False, readonly=True)
    try:
        if not ledger.chained:
            raise LedgerError(f"{path} is a version-1 ledger: run `odp ledger upgrade` first")
        if ledger.genesis.key_id and not ledger.mac_checked:
            raise LedgerError(f"{path} is keyed (key id {ledger.genesis.key_id}): give its key "
                              f"with --key-file or ${KEY_ENV}")
        target = head_path(ledger.path)
        newest = previous = read_head(target) if target.exists() else None
        if previous is not None:  # rows its journal can put back are not lost: refused
            previous = ledger._restore_from_journal(target, previous)
        # Under the writers' lock: a live writer's journaled rows are synced before the head
        # that no longer journals them replaces its head, and no head moves meanwhile.
        with ledger._lock, head_exclusive(target):
            ledger._refresh()
            head = ChainHead(**ledger._verifier.state.to_json())
            latest = read_head(target) if target.exists() else None
            if latest != newest:  # a live writer moved it meanwhile: check the head it wrote
                previous = latest
            if previous is not None and not accept_loss:
                try:
                    check_head(previous, target, ledger.ledger_id, head,
                               hash_at=ledger._hash_at, key=ledger._verifier.key)
                except LedgerCorrupted as exc:
                    raise LedgerCorrupted(f"{exc}.  Re-anchoring would accept this loss: pass "
                                          "--accept-loss if you are sure") from None
            record = HeadRecord.of(ledger.ledger_id, head, ledger._key)
            ledger._sync_wal()  # the head names only rows on disk
            write_head(target, record, force=True, held=True)
        return head, previous
    finally:
        ledger.close()


def restore_ledger(path: str | os.PathLike[str], *, key_file: str | os.PathLike[str] | None = None
                   ) -> tuple[tuple[int, int] | None, ChainHead]:
    """Open the ledger for writing once: rows a crash took from the database that the head
    file's journal kept are put back (verified against the chain), and crashed processes'
    reservations are settled at their sup.  Returns (the rows put back, first and last, or
    ``None``; the head)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LedgerHeadWarning)  # the caller reports the rows
        ledger = SQLiteLedger(path, key_file=key_file)
    try:
        return ledger.restored_range, ledger.chain_head
    finally:
        ledger.close()

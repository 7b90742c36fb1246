"""A ledger on a PostgreSQL server: one budget shared by processes on many machines.

Selected by a URL — ``Accountant(ledger="postgresql://user@host/db")`` or
``--ledger postgresql://…`` — and created only explicitly, by ``odp ledger init URL --epsilon E``
(:func:`init_postgres_ledger`).  It has the SQLite ledger's semantics exactly: the same rows
(written by :class:`odp.ledger.chained.ChainedLedger`), exact amounts stored as ``p/q`` text (the
server refuses anything else), the same canonical encoding and SHA-256 chain
(:mod:`odp.ledger.chain`), the same reserve → settle protocol of Alg. 1 with its admission and
transition checks, and the same certificates.

* **Concurrency.**  Every write is one transaction: ``SELECT … FOR UPDATE`` on the budget row
  of ``odp_meta`` (serialising writers; readers are never blocked), then — in a new statement,
  so it sees every row committed before the lock was granted — the rows other clients wrote,
  then admission (Alg. 1 line 4) and the new rows, then ``COMMIT``.  One lock taken first, so
  no deadlock; READ COMMITTED, so no serialisation failures — they (and deadlocks an operator's
  settings might cause) are retried anyway, at most :data:`RETRIES` times.
* **Durability.**  ``COMMIT`` of a reservation or charge returns once the server has flushed
  its WAL (``synchronous_commit`` is raised to ``on`` for the session if the server has it
  ``off``); a settle's transaction sets it ``off`` locally (the next durable commit flushes it;
  a lost settle leaves its round recovered at its sup).
  The server's durability replaces the SQLite ledger's head file; within a session the client
  also checks, on every read, that the last row it verified is still there with the same hash
  (a failover to a replica that lacks committed rows, or a restored backup, is refused).
* **Crashes.**  Each writing client holds a shared session-level advisory lock keyed by its
  owner token; the server drops it when the client's session ends (the process was killed, or
  the connection broke).  On open, a pending reservation whose owner holds no such lock is
  settled at its sup (reason ``recovered``) — across machines, not only on the same host.
* **Connection loss.**  A call that cannot reach the server, or loses it, raises
  :class:`~odp.errors.LedgerUnavailable` saying what became of the call (a reserved round stays
  reserved, held at its sup); the next call reconnects.  A call whose first round trip fails on
  a broken connection (nothing was sent that could commit) reconnects and retries once.
* **Credentials** come from the URL or libpq's environment (``PGPASSWORD``, ``~/.pgpass``,
  ``PGSERVICE`` …).  Messages name the server by a URL without its password, and any error
  text is scrubbed of it.
"""

from __future__ import annotations

import hashlib
import os
import random
import re
import threading
import time
import uuid
import warnings
from typing import TYPE_CHECKING, Any, Callable, Sequence, TypeGuard, TypeVar
from urllib.parse import unquote, urlsplit

from ..budget import Budget
from ..errors import LedgerCorrupted, LedgerError, LedgerUnavailable
from . import pg_schema as S
from .chain import CHAIN_VERSION, ChainVerifier, EventRow, Genesis, key_id
from .chained import ChainedLedger, OpenSeams, StoredRow, default_clock
from .owner import owner_token
from ..neighbours import Neighbours
from .base import check_same_neighbours, new_neighbours, recorded_neighbours
from .lanes import Lane, check_lanes, check_same_lanes, lanes_json
from .records import REASON_RECOVERED, BudgetState, RoundRecord, dumps
from .schema import CHAIN_COLUMNS, ROW_COLUMNS

if TYPE_CHECKING:
    from .pg_schema import PgConnection, PgCursor

_T = TypeVar("_T")

URL_PREFIXES = ("postgresql://", "postgres://")
#: How often a write is retried after a serialisation failure or a deadlock.
RETRIES = 8
_N_ROW = len(ROW_COLUMNS.split(","))
_COLUMNS = f"{ROW_COLUMNS}, {CHAIN_COLUMNS}"
_ROW_PLACEHOLDERS = "(" + ", ".join(["%s"] * (_N_ROW + 3)) + ")"
_ROW_TYPES = ("bigint", "text", "text", "text", "text", "text", "text", "text", "smallint",
              "text", "text", "text", "text", "double precision", "text", "text", "text")


def _insert_statement(rows: int) -> str:
    """PREPARE text of an INSERT of ``rows`` rows ($1, $2, … in column order)."""
    width = len(_ROW_TYPES)
    values = ", ".join("(" + ", ".join(f"${r * width + c + 1}" for c in range(width)) + ")"
                       for r in range(rows))
    return (f"PREPARE odp_insert{rows} ({', '.join(_ROW_TYPES * rows)}) AS INSERT INTO "
            f"{S.EVENTS_TABLE} ({_COLUMNS}) VALUES {values}")


#: Statements prepared once per connection (the server parses and plans them once): the
#: budget-row lock, the read of new rows, and inserts of one and two rows (a reserve or a
#: settle, and a charge).
_PREPARE = (
    f"PREPARE odp_lock AS SELECT 1 FROM {S.META_TABLE} WHERE key = 'epsilon' FOR UPDATE",
    f"PREPARE odp_rows (bigint) AS SELECT {_COLUMNS} FROM {S.EVENTS_TABLE} WHERE seq >= $1 "
    "ORDER BY seq",
    _insert_statement(1),
    _insert_statement(2),
)
_INIT_LOCK = int.from_bytes(hashlib.sha256(b"odp-ledger-init").digest()[:8], "big", signed=True)


class LedgerDurabilityWarning(UserWarning):
    """The PostgreSQL server runs with ``fsync = off``: its commits do not survive a crash."""


def is_postgres_url(spec: object) -> TypeGuard[str]:
    """Whether ``spec`` names a PostgreSQL ledger (``postgresql://…`` or ``postgres://…``)."""
    return isinstance(spec, str) and spec.startswith(URL_PREFIXES)


def redact(url: str) -> str:
    """``url`` without its password (in the user part or a ``password=`` parameter)."""
    out = re.sub(r"^(postgres(?:ql)?://)([^:@/?]*):[^@/?]*@", r"\1\2@", url)
    return re.sub(r"(?i)([?&]password=)[^&]*", r"\1***", out)


def _secrets(url: str) -> list[str]:
    found = []
    try:
        parts = urlsplit(url)
        if parts.password:
            found += [parts.password, unquote(parts.password)]
        for m in re.finditer(r"(?i)[?&]password=([^&]*)", url):
            found += [m.group(1), unquote(m.group(1))]
    except ValueError:
        pass
    if os.environ.get("PGPASSWORD"):
        found.append(os.environ["PGPASSWORD"])
    return sorted({s for s in found if len(s) >= 3}, key=len, reverse=True)


def _need_psycopg() -> None:
    """Check that psycopg 3 (the optional ``postgres`` extra) is installed, else say how to
    install it.  Callers then ``import psycopg`` themselves (so it is type-checked)."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        raise LedgerError("a postgresql:// ledger needs psycopg 3: pip install -e "
                          "\".[postgres]\" (the postgres extra)") from None


def _resolve_key(key: bytes | None, key_file: str | os.PathLike[str] | None) -> bytes | None:
    from .sqlite import _resolve_key as resolve

    return resolve(key, key_file)


def _owner_lock_key(schema: str, owner: str) -> int:
    """The advisory-lock key (a signed 64-bit integer) a writing client holds while alive."""
    digest = hashlib.sha256(b"odp-ledger-owner\0" + schema.encode() + b"\0" + owner.encode())
    return int.from_bytes(digest.digest()[:8], "big", signed=True)


class _Conn:
    """Connecting with psycopg, and error messages without credentials."""

    def __init__(self, url: str, connect_timeout: float):
        if not is_postgres_url(url):
            raise LedgerError("a PostgreSQL ledger URL starts with postgresql://")
        self.url = url
        self.where = redact(url)
        self._secrets = _secrets(url)
        self.connect_timeout = connect_timeout

    def scrub(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return text

    def describe(self, exc: BaseException) -> str:
        first = " ".join(str(exc).split())
        return self.scrub(f"{type(exc).__name__}: {first}"[:500])

    def connect(self) -> PgConnection:
        _need_psycopg()
        import psycopg

        # Any: psycopg.connect's keyword arguments (a flag, a cursor class, a timeout).
        kwargs: dict[str, Any] = {"autocommit": True, "cursor_factory": psycopg.ClientCursor}
        try:
            if "connect_timeout" not in psycopg.conninfo.conninfo_to_dict(self.url):
                kwargs["connect_timeout"] = max(1, int(self.connect_timeout))
        except psycopg.Error as exc:
            raise LedgerError(f"not a valid PostgreSQL URL {self.where}: "
                              f"{self.describe(exc)}") from None
        try:
            conn = psycopg.connect(self.url, **kwargs)
        except psycopg.Error as exc:
            raise LedgerUnavailable(f"cannot connect to the ledger server {self.where}: "
                                    f"{self.describe(exc)}") from None
        try:
            sync = conn.execute("SHOW synchronous_commit").fetchone()  # SHOW gives one row
            if sync is not None and sync[0] == "off":
                # a commit must be durable before noise is drawn
                conn.execute("SET synchronous_commit = on")
            fsync = conn.execute("SHOW fsync").fetchone()
            if fsync is not None and fsync[0] == "off":
                warnings.warn(f"the ledger server {self.where} runs with fsync = off: committed "
                              "ledger rows do not survive a crash of the server",
                              LedgerDurabilityWarning, stacklevel=4)
        except psycopg.Error as exc:
            conn.close()
            raise LedgerUnavailable(f"cannot use the ledger server {self.where}: "
                                    f"{self.describe(exc)}") from None
        return conn


class PostgresLedger(ChainedLedger):
    """A ledger in a PostgreSQL database (psycopg 3; the ``postgres`` extra: ``pip install -e ".[postgres]"``).

    ``url`` is a libpq URL (``postgresql://user@host:5432/db``; the password may come from the
    URL, ``PGPASSWORD`` or ``~/.pgpass``).  The ledger must have been created with
    ``odp ledger init URL`` (:func:`init_postgres_ledger`); ``budget``, if given, must equal
    its recorded budget.  ``readonly=True`` writes nothing (no recovery).  ``key``/``key_file``
    as for :class:`~odp.ledger.SQLiteLedger` (default ``$ODP_LEDGER_KEY_FILE``).
    See the module docstring and docs/ledger.md."""

    #: What only :meth:`_open` sets (an instance attribute, before ``__init__`` runs).
    _seams = OpenSeams()

    @classmethod
    def _open(cls, url: str, budget: Budget | None = None, *,
              clock: Callable[[], float] | None = None, **options: Any) -> PostgresLedger:
        """Not public: the ledger opened with a given ``clock`` for its row timestamps (tests
        use it for runs identical to a SQLite ledger's); ``options`` are the constructor's."""
        ledger = cls.__new__(cls)
        ledger._seams = OpenSeams(clock or default_clock)
        cls.__init__(ledger, url, budget, **options)
        return ledger

    def __init__(self, url: str, budget: Budget | None = None, *, readonly: bool = False,
                 key: bytes | None = None, key_file: str | os.PathLike[str] | None = None,
                 connect_timeout: float = 10.0, lanes: Sequence[Lane] | None = None,
                 neighbours: Neighbours | str | None = None):
        _need_psycopg()
        import psycopg

        wanted = None if neighbours is None else Neighbours.parse(neighbours)

        self._net = _Conn(url, connect_timeout)
        self._where = self._net.where
        self._readonly = readonly
        self._lock = threading.Lock()
        self._clock = self._seams.clock
        self._owner = dumps(owner_token())
        self._key = _resolve_key(key, key_file)
        self._conn: PgConnection | None = None
        self._stale = False
        self._closed = False
        self._prepared_on: PgConnection | None = None  # where _PREPARE was run
        self.snapshot_copy = False
        self._heads = []  # the server's durability replaces head files
        self.schema_version = 0
        try:
            conn = self._conn = self._net.connect()
            self._ns, self._schema = S.namespace(conn)
            version, meta = S.read_version(conn, self._ns, self._schema, self._where)
            S.check_schema(conn, self._ns, version, meta, where=self._where)
            if version < S.SCHEMA_VERSION and not readonly:
                raise LedgerError(
                    f"{self._where} holds a version-{version} ledger; this odp writes version "
                    f"{S.SCHEMA_VERSION}.  Upgrade it once with `{S.UPGRADE_COMMAND} "
                    f"{self._where}` (nothing but the schema changes), or open it read-only")
            self.schema_version = version
            self._owner_key = _owner_lock_key(self._schema, self._owner)
            self._budget = self._open_meta(meta, budget)
            self._state = BudgetState.for_genesis(self.genesis)
            check_same_lanes(self.lanes_spec, lanes, self._where)
            check_same_neighbours(self.neighbours, wanted, self._where)
            with self._lock:
                self._refresh()
            if not readonly:
                self._hold_owner_lock(self._live())  # the refresh may have reconnected
                self._recover()
        except psycopg.Error as exc:
            self.close()
            raise LedgerError(f"{self._where} is not a usable odp ledger: "
                              f"{self._net.describe(exc)}") from None
        except BaseException:
            self.close()
            raise

    def __repr__(self) -> str:
        return f"PostgresLedger({self._where!r})"

    # ------------------------------------------------------------------ opening
    def _open_meta(self, meta: dict[str, str], budget: Budget | None) -> Budget:
        from .schema import genesis_of

        where = self._where
        self.genesis = genesis_of(meta, where)
        self.ledger_id = self.genesis.ledger_id
        if meta["genesis_hash"] != self.genesis.hash:
            raise LedgerCorrupted(f"{where}: the ledger's recorded budget or identity was "
                                  "edited (its genesis hash does not match); the ledger "
                                  "refuses to charge")
        recorded_neighbours(self.genesis, where)  # a relation this odp does not know: refused
        keyed = self.genesis.key_id
        if self._key is not None and keyed != key_id(self._key):
            raise LedgerError(f"{where}: the key given (id {key_id(self._key)}) is not this "
                              "ledger's " + (f"(id {keyed})" if keyed else "(it records no key)"))
        if keyed and self._key is None and not self._readonly:
            raise LedgerError(f"{where} is keyed (key id {keyed}): give its key with key_file= "
                              "or $ODP_LEDGER_KEY_FILE to write to it")
        self._verifier = ChainVerifier(self.genesis, self._key if keyed else None, where)
        try:
            recorded = Budget(meta["epsilon"], meta["delta"])
        except Exception as exc:  # noqa: BLE001
            raise LedgerCorrupted(f"{where}: unreadable budget in the metadata ({exc})") from None
        if budget is not None and budget != recorded:
            raise LedgerError(f"{where} holds the budget {recorded}, not {budget}; open it "
                              "without a budget (or with the same one) to continue it")
        return recorded

    def _hold_owner_lock(self, conn: PgConnection) -> None:
        """Hold the shared advisory lock that tells other clients this owner is alive."""
        conn.execute("SELECT pg_advisory_lock_shared(%s)", (self._owner_key,))

    @property
    def chained(self) -> bool:
        return True

    # ------------------------------------------------------------------ connection
    def _usable(self) -> PgConnection | None:
        """The connection, if it is open and not broken."""
        conn = self._conn
        return None if conn is None or conn.closed or conn.broken else conn

    def _live(self) -> PgConnection:
        """The connection inside a call that has just connected (caller holds _lock)."""
        conn = self._conn
        if conn is None:  # pragma: no cover - every caller connects first
            raise LedgerUnavailable(f"not connected to the ledger server {self._where}.  The "
                                    "next call reconnects.")
        return conn

    def _ensure_connection(self) -> PgConnection:
        """The connection, reconnecting after a lost one (caller holds _lock)."""
        usable = self._usable()
        if usable is not None:
            return usable
        conn = self._conn
        if self._closed:
            raise LedgerError(f"the ledger {self._where} is closed")
        if conn is not None:
            try:
                conn.close()
            except Exception:  # noqa: BLE001 - already broken
                pass
        self._conn = None
        conn = self._conn = self._net.connect()
        if not self._readonly:
            self._hold_owner_lock(conn)
        if self._stale:  # a commit's outcome was unknown: re-read everything
            self._stale = False
            self._reload()
        return conn

    def _broken(self) -> bool:
        return self._usable() is None

    def _lost(self, exc: BaseException, phase: str, what: str,
              rounds: Sequence[str]) -> LedgerUnavailable:
        how = self._net.describe(exc)
        if phase == "commit":
            fate = (f"lost the connection to the ledger server {self._where} while committing "
                    f"the {what} ({how}); whether it was recorded is unknown")
        else:
            fate = (f"cannot reach the ledger server {self._where} ({how}); the {what} was not "
                    "recorded")
        held = []
        for round_id in rounds:
            try:
                rec = self._state.get(round_id)
            except LedgerError:
                continue
            if rec.status == "pending":
                held.append(f"round {round_id} stays reserved, held at its sup "
                            f"ε={rec.sup_epsilon}, until it is settled (retry) or recovered at "
                            "its sup")
        if what.startswith("reservation") and phase == "commit":
            held.append("if it was recorded, the round is held at its sup until it is recovered "
                        "at its sup; draw no noise for it")
        return LedgerUnavailable("; ".join([fate] + held) + ".  The next call reconnects.")

    # ------------------------------------------------------------------ reading
    def _prepare(self, conn: PgConnection) -> None:
        """Prepare the hot statements on ``conn`` (once; again after a reconnect)."""
        if self._prepared_on is not conn:
            for statement in _PREPARE:
                conn.execute(statement)
            self._prepared_on = conn

    def _select_rows(self, cursor: PgCursor, from_seq: int) -> None:
        self._prepare(self._live())
        cursor.execute("EXECUTE odp_rows(%s)", (from_seq,))

    def _apply_rows(self, rows: list[StoredRow], known: int) -> None:
        """Apply ``rows`` (seq ≥ ``known``); the first must be the last row this process
        verified, unchanged (else committed rows were lost or rewritten on the server)."""
        if known > 0:
            if not rows or rows[0][0] != known:
                raise LedgerCorrupted(
                    f"{self._where}: row {known}, which this process had verified, is gone from "
                    "the server: committed rows were lost (a failover to a replica that lacks "
                    "them, or an older backup restored?); the spent budget is unknown",
                    row=known)
            if rows[0][_N_ROW + 1] != self._verifier.state.head:
                raise LedgerCorrupted(
                    f"{self._where}: row {known} no longer carries the hash this process "
                    "verified: the ledger's history was rewritten or replaced; the spent "
                    "budget is unknown", row=known)
            rows = rows[1:]
        for stored in rows:
            self._apply_stored(stored)

    def _apply_stored(self, stored: StoredRow) -> RoundRecord:
        try:
            row = EventRow.from_stored(stored[:_N_ROW])
        except (ValueError, TypeError, ZeroDivisionError) as exc:
            raise self._verifier.corrupted(stored[0], f"unreadable value ({exc})") from None
        prev, digest, mac = stored[_N_ROW:]
        return self._apply_stored_row(row, prev, digest, mac)

    def _read(self, fn: Callable[[PgCursor], _T]) -> _T:
        """Run a read (caller holds _lock), reconnecting once if the connection broke."""
        _need_psycopg()
        import psycopg

        for attempt in (0, 1):
            conn = self._ensure_connection()
            try:
                return fn(conn.cursor())
            except psycopg.Error as exc:
                if self._broken() and attempt == 0:
                    continue
                if self._broken():
                    raise LedgerUnavailable(f"cannot reach the ledger server {self._where} "
                                            f"({self._net.describe(exc)}).  The next call "
                                            "reconnects.") from None
                raise LedgerError(f"{self._where}: {self._net.describe(exc)}") from None
        raise AssertionError("unreachable")  # pragma: no cover

    def _refresh(self) -> None:
        known = self._verifier.state.rows

        def read(cur: PgCursor) -> list[StoredRow]:
            self._select_rows(cur, known)
            return cur.fetchall()

        self._apply_rows(self._read(read), known)

    def events(self) -> list[tuple[EventRow, str]]:
        """Every row with its hash, re-read and re-verified from the server (certificates)."""
        with self._lock:
            self._refresh()
            n = self._verifier.state.rows

            def read(cur: PgCursor) -> list[StoredRow]:
                cur.execute(f"SELECT {_COLUMNS} FROM {S.EVENTS_TABLE} WHERE seq <= %s "
                            "ORDER BY seq", (n,))
                return cur.fetchall()

            stored = self._read(read)
        verifier = ChainVerifier(self.genesis, self._verifier.key, self._where)
        out = []
        for values in stored:
            row = EventRow.from_stored(values[:_N_ROW])
            prev, digest, mac = values[_N_ROW:]
            out.append((row, verifier.check(row, prev, digest, mac)))
        if verifier.state.rows != n:
            raise LedgerCorrupted(f"{self._where}: rows vanished while being read", row=n)
        return out

    def _hash_at(self, n: int) -> str | None:
        if n == 0:
            return self.genesis.hash
        with self._lock:
            row = self._read(lambda cur: cur.execute(
                f"SELECT row_hash FROM {S.EVENTS_TABLE} WHERE seq = %s", (n,)).fetchone())
        digest: str | None = None if row is None else row[0]  # a text column
        return digest

    # ------------------------------------------------------------------ writing
    def _write(self, op: Callable[[], _T], what: str = "write",
               rounds: Sequence[str] = (), *, durable: bool = True) -> _T:
        # A settle (durable=False) commits with synchronous_commit = off: the server answers
        # before its WAL record is flushed.  The next durable commit on the server flushes the
        # WAL up to its own record, and with it every earlier one; a settle lost in a server
        # crash leaves its round reserved, recovered at its worst case (never less).
        self._require_writable()
        _need_psycopg()
        import psycopg
        from psycopg import errors as pgerr

        with self._lock:
            reconnected = False
            for attempt in range(RETRIES + 1):
                phase = "connect"
                try:
                    conn = self._ensure_connection()
                    phase = "lock"
                    return self._transaction(conn, op, durable=durable)
                except (pgerr.SerializationFailure, pgerr.DeadlockDetected) as exc:
                    self._rollback()
                    if attempt == RETRIES:
                        raise LedgerError(f"{self._where}: the {what} was not recorded: "
                                          f"{RETRIES + 1} attempts failed "
                                          f"({self._net.describe(exc)})") from None
                    time.sleep(random.uniform(0, 0.005 * 2 ** attempt))
                except _CommitPhase as wrapped:
                    cause = wrapped.__cause__ or wrapped  # always raised from the failure
                    if not self._broken():
                        raise LedgerError(f"{self._where}: the {what} was not recorded "
                                          f"({self._net.describe(cause)})") from None
                    self._stale = True
                    raise self._lost(cause, "commit", what, rounds) from None
                except (psycopg.Error, LedgerUnavailable) as exc:
                    if isinstance(exc, LedgerUnavailable) or self._broken():
                        # Nothing that could commit reached the server: reconnect, retry once.
                        if not reconnected and phase == "lock":
                            reconnected = True
                            continue
                        raise self._lost(exc, phase, what, rounds) from None
                    self._rollback()
                    raise LedgerError(f"{self._where}: the {what} was not recorded "
                                      f"({self._net.describe(exc)})") from None
            raise AssertionError("unreachable")  # pragma: no cover

    def _rollback(self) -> None:
        conn = self._usable()
        if conn is None:
            return
        try:
            if conn.info.transaction_status != 0:  # not idle
                conn.execute("ROLLBACK")
        except Exception:  # noqa: BLE001 - the connection went away meanwhile
            pass

    def _transaction(self, conn: PgConnection, op: Callable[[], _T], *, durable: bool = True
                     ) -> _T:
        """BEGIN; lock the budget row; read the new rows (one round trip), run ``op``, then
        INSERT its rows and COMMIT (one round trip)."""
        self._prepare(conn)
        cur = conn.cursor()
        known = self._verifier.state.rows
        cur.execute("BEGIN ISOLATION LEVEL READ COMMITTED; "
                    + ("" if durable else "SET LOCAL synchronous_commit = off; ")
                    + "EXECUTE odp_lock; "
                    "EXECUTE odp_rows(%s)", (known,))
        for _ in range(2 if durable else 3):  # to the last result: the rows
            cur.nextset()
        rows = cur.fetchall()
        mark = None
        try:
            self._apply_rows(rows, known)
            mark = self._verifier.state.rows
            self._batch = []
            result = self._run_op(op)
            batch = self._batch
            params: list[Any] = []  # Any: the columns' values (int, str, float or None)
            for row, prev, digest, mac in batch:
                params += row.stored_values()
                params += [prev, digest, mac]
            if not batch:
                sql = "COMMIT"
            elif len(batch) <= 2:
                sql = (f"EXECUTE odp_insert{len(batch)}("
                       + ", ".join(["%s"] * len(params)) + "); COMMIT")
            else:
                sql = (f"INSERT INTO {S.EVENTS_TABLE} ({_COLUMNS}) VALUES "
                       + ", ".join([_ROW_PLACEHOLDERS] * len(batch)) + "; COMMIT")
            try:
                cur.execute(sql, params or None)
            except BaseException as exc:
                if self._broken():  # the outcome of the COMMIT is unknown
                    raise _CommitPhase() from exc
                raise
        except BaseException:
            self._rollback()
            if mark is not None and self._verifier.state.rows != mark and not self._broken():
                self._reload()
            elif mark is not None and self._verifier.state.rows != mark:
                self._stale = True
            raise
        finally:
            self._batch = None
        return result

    # ------------------------------------------------------------------ recovery
    def _recover(self) -> list[str]:
        """Settle at sup the pending reservations of owners whose session is gone (no client
        holds their advisory lock), inside the write transaction."""
        with self._lock:
            self._refresh()
        if not any(r.status == "pending" for r in self._state.rounds):
            return []

        def op() -> list[str]:
            owners: dict[str, list[str]] = {}
            for r in self._state.rounds:
                owner = r.extra.get("owner")
                if r.status == "pending" and owner and owner != self._owner:
                    owners.setdefault(owner, []).append(r.round_id)
            if not owners:
                return []
            keys = {_owner_lock_key(self._schema, o): o for o in owners}
            free = self._live().execute(
                "SELECT k, pg_try_advisory_xact_lock(k) FROM unnest(%s::bigint[]) AS k",
                (list(keys),)).fetchall()
            done = []
            now = self._clock()
            for k, dead in free:
                if dead:
                    for round_id in owners[keys[k]]:
                        rec = self._state.get(round_id)
                        self._append_settle(round_id, None, rec.sup_epsilon, REASON_RECOVERED,
                                            now=now)
                        done.append(round_id)
            return done

        return self._write(op, "recovery", ())

    def close(self) -> None:
        conn = getattr(self, "_conn", None)
        self._conn = None
        self._closed = True
        if conn is not None:
            try:
                conn.close()
            except Exception:  # noqa: BLE001
                pass


class _CommitPhase(Exception):
    """Internal: the INSERT … COMMIT round trip failed (its outcome may be unknown)."""


# ---------------------------------------------------------------------------- init, upgrade
def init_postgres_ledger(url: str, budget: Budget, *, key: bytes | None = None,
                         key_file: str | os.PathLike[str] | None = None,
                         lanes: Sequence[Lane] | None = None,
                         neighbours: Neighbours | str | None = None) -> Genesis:
    """Create a ledger for ``budget`` in the URL's database (its current schema), applying
    every migration in one transaction.  Refuses a schema that already has a table, index or
    function of the ledger's names (another program's, or an existing ledger).  ``lanes``: the
    division of the budget into lanes (:mod:`odp.ledger.lanes`); ``neighbours``: the relation
    of its rounds (:mod:`odp.neighbours`, default replace-one); both recorded in the metadata
    and bound by the genesis hash.  Returns the new ledger's genesis."""
    return _init_ledger(url, budget, key=key, key_file=key_file, lanes=lanes,
                        neighbours=neighbours, ledger_id=None)


def _init_ledger(url: str, budget: Budget, *, key: bytes | None = None,
                 key_file: str | os.PathLike[str] | None = None,
                 lanes: Sequence[Lane] | None = None,
                 neighbours: Neighbours | str | None = None,
                 ledger_id: str | None = None) -> Genesis:
    """Not public: :func:`init_postgres_ledger` with a given ``ledger_id`` (tests use it for
    runs identical to a SQLite ledger's)."""
    _need_psycopg()
    import psycopg

    net = _Conn(url, 10.0)
    if not isinstance(budget, Budget):
        raise LedgerError("init needs the ledger's budget")
    key = _resolve_key(key, key_file)
    lanes_text = None if lanes is None else lanes_json(check_lanes(lanes, budget))
    relation = new_neighbours(neighbours)  # an unknown relation: refused before connecting
    conn = net.connect()
    try:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_INIT_LOCK,))
            ns, schema = S.namespace(conn)
            present = S.existing_names(conn, ns)
            if present:
                try:
                    S.read_version(conn, ns, schema, net.where)
                    what = "already holds an odp ledger"
                except LedgerError:
                    what = "has tables or functions of the ledger's names that are not an odp ledger"
                raise LedgerError(f"{net.where} (schema {schema}) {what} ({', '.join(present)}); "
                                  "nothing was created.  Use another database or schema "
                                  "(?options=-csearch_path%3DNAME)")
            genesis = Genesis(ledger_id or uuid.uuid4().hex, budget.epsilon, budget.delta,
                              key_id(key) if key else None, lanes_text, relation)
            for statements in S.MIGRATIONS:
                for statement in statements:
                    conn.execute(statement)
            now = time.time()
            for version in range(1, S.SCHEMA_VERSION + 1):
                conn.execute(f"INSERT INTO {S.SCHEMA_TABLE} (version, applied) VALUES (%s, %s)",
                             (version, now))
            meta = [("epsilon", str(budget.epsilon)), ("delta", str(budget.delta)),
                    ("ledger_id", genesis.ledger_id), ("created", repr(now)),
                    ("chain_version", str(CHAIN_VERSION)), ("genesis_hash", genesis.hash)]
            if genesis.key_id:
                meta.append(("key_id", genesis.key_id))
            if lanes_text is not None:
                meta.append(("lanes", lanes_text))
            meta.append(("neighbours", relation))
            for k, v in meta:
                conn.execute(f"INSERT INTO {S.META_TABLE} (key, value) VALUES (%s, %s)", (k, v))
            S.check_schema(conn, ns, S.SCHEMA_VERSION, dict(meta), where=net.where)
    except psycopg.Error as exc:
        raise LedgerError(f"cannot create a ledger in {net.where}: {net.describe(exc)}") from None
    finally:
        conn.close()
    return genesis


def upgrade_postgres_ledger(url: str) -> tuple[int, int]:
    """Apply the missing migrations to the ledger in one transaction (writers wait for it).
    Returns (version before, version after).  The chain is verified afterwards."""
    _need_psycopg()
    import psycopg

    net = _Conn(url, 10.0)
    target = S.SCHEMA_VERSION
    conn = net.connect()
    try:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_INIT_LOCK,))
            ns, schema = S.namespace(conn)
            version, meta = S.read_version(conn, ns, schema, net.where)
            S.check_schema(conn, ns, version, meta, where=net.where)
            conn.execute(f"LOCK TABLE {S.EVENTS_TABLE} IN EXCLUSIVE MODE")
            now = time.time()
            for v in range(version + 1, target + 1):
                for statement in S.MIGRATIONS[v - 1]:
                    conn.execute(statement)
                conn.execute(f"INSERT INTO {S.SCHEMA_TABLE} (version, applied) VALUES (%s, %s)",
                             (v, now))
            S.check_schema(conn, ns, max(version, target), meta, where=net.where)
    except psycopg.Error as exc:
        raise LedgerError(f"cannot upgrade the ledger in {net.where}: "
                          f"{net.describe(exc)}") from None
    finally:
        conn.close()
    PostgresLedger(url, readonly=True).close()  # verifies the whole chain
    return version, max(version, target)


"""The SQLite ledger's schema: its versions, the check that a file *is* an odp ledger of a
known version (before anything is written to it), and the upgrade from version 1 to 2.

* Version 1 (odp ≤ 0.1.0): ``meta`` and ``events`` tables, append-only triggers.
* Version 2: every ``events`` row also carries ``prev_hash``, ``row_hash`` (the chain of
  :mod:`odp.ledger.chain`) and ``mac`` (an HMAC tag when the ledger has a key); ``meta`` also
  holds ``chain_version``, ``genesis_hash`` and, for a keyed ledger, ``key_id``; for a laned
  ledger ``lanes``; and ``neighbours``, the neighbouring relation of its rounds
  (:mod:`odp.neighbours`), in every ledger made since odp records it (without it: replace-one).

The check compares the file's ``sqlite_master`` with the expected objects (whitespace and case
aside): a foreign database is refused without being touched, and a dropped or altered trigger,
index or table is reported as a corrupted ledger.
"""

from __future__ import annotations

import re
import sqlite3
from fractions import Fraction

from ..errors import LedgerCorrupted, LedgerError
from .chain import CHAIN_VERSION as CHAIN_VERSION  # re-exported for the ledger backends
from .chain import ChainVerifier, EventRow, Genesis, row_mac
from .records import SCHEMA_VERSION as SCHEMA_VERSION  # re-exported likewise

KNOWN_VERSIONS = (1, 2)
UPGRADE_COMMAND = "odp ledger upgrade"

META_TABLE = """CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
)"""
_EVENTS_V1 = """CREATE TABLE IF NOT EXISTS events (
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
)"""
#: Version 2 adds three columns at the end (what ``ALTER TABLE … ADD COLUMN`` gives on upgrade).
_CHAIN_COLUMNS = ("prev_hash TEXT", "row_hash TEXT", "mac TEXT")
_EVENTS_V2 = _EVENTS_V1[:-2] + "\n, " + ", ".join(_CHAIN_COLUMNS) + ")"
_INDEXES = (
    "CREATE UNIQUE INDEX IF NOT EXISTS events_one_reserve ON events (round_id) WHERE kind = 'reserve'",
    "CREATE UNIQUE INDEX IF NOT EXISTS events_one_settle ON events (round_id) WHERE kind = 'settle'",
)
_TRIGGERS = (
    """CREATE TRIGGER IF NOT EXISTS events_no_update BEFORE UPDATE ON events
BEGIN SELECT RAISE(ABORT, 'odp ledger rows are append-only'); END""",
    """CREATE TRIGGER IF NOT EXISTS events_no_delete BEFORE DELETE ON events
BEGIN SELECT RAISE(ABORT, 'odp ledger rows are append-only'); END""",
    """CREATE TRIGGER IF NOT EXISTS meta_no_update BEFORE UPDATE ON meta
BEGIN SELECT RAISE(ABORT, 'odp ledger metadata is write-once'); END""",
    """CREATE TRIGGER IF NOT EXISTS meta_no_delete BEFORE DELETE ON meta
BEGIN SELECT RAISE(ABORT, 'odp ledger metadata is write-once'); END""",
)
_TRIGGER_NAMES = ("events_no_update", "events_no_delete", "meta_no_update", "meta_no_delete")

SCHEMA_V2 = (META_TABLE, _EVENTS_V2) + _INDEXES + _TRIGGERS

#: Columns read for a row, in :data:`odp.ledger.chain.ROW_FIELDS` order, then the chain columns.
ROW_COLUMNS = ("seq, kind, round_id, mechanism, params, guarantee, sup_epsilon, delta, "
               "interactive, label, charged, reason, owner, created")
CHAIN_COLUMNS = "prev_hash, row_hash, mac"

_META_KEYS_V1 = {"schema_version", "epsilon", "delta", "ledger_id", "created"}
_META_KEYS_V2 = _META_KEYS_V1 | {"chain_version", "genesis_hash"}


def _norm(sql: str | None) -> str:
    text = re.sub(r"\s+", "", (sql or "").lower())
    return text.replace("ifnotexists", "")


def _name_of(sql: str) -> str:
    match = re.search(r"(?:TABLE|INDEX|TRIGGER)\s+(?:IF NOT EXISTS\s+)?(\w+)", sql)
    if match is None:  # every statement of this module names what it creates
        raise ValueError(f"no table, index or trigger name in {sql[:40]!r}")
    return match.group(1)


def _expected(version: int) -> dict[tuple[str, str], str | None]:
    events = _EVENTS_V1 if version == 1 else _EVENTS_V2
    out: dict[tuple[str, str], str | None] = {
        ("table", "meta"): _norm(META_TABLE), ("table", "events"): _norm(events),
        ("table", "sqlite_sequence"): None, ("index", "sqlite_autoindex_meta_1"): None,
    }
    for sql in _INDEXES:
        out[("index", _name_of(sql))] = _norm(sql)
    for sql in _TRIGGERS:
        out[("trigger", _name_of(sql))] = _norm(sql)
    return out


def is_empty(conn: sqlite3.Connection) -> bool:
    """True for a database without any table (a new file)."""
    count: int = conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()[0]
    return count == 0


def read_version(conn: sqlite3.Connection, where: str) -> tuple[int, dict[str, str]]:
    """The schema version and the ``meta`` table of an odp ledger; :class:`LedgerError` (and
    nothing written) for any file that is not an odp ledger of a known version."""
    try:
        names = {name for (name,) in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'")}
    except sqlite3.DatabaseError as exc:
        raise LedgerError(f"{where} is not an odp ledger ({exc})") from None
    if "meta" not in names:
        what = "an empty database" if not names else "a SQLite database of another program"
        raise LedgerError(f"{where} is not an odp ledger: it is {what} (tables: "
                          f"{', '.join(sorted(names)) or 'none'}); odp leaves it untouched")
    try:
        rows = conn.execute("SELECT key, value FROM meta").fetchall()
    except sqlite3.DatabaseError as exc:
        raise LedgerError(f"{where} is not an odp ledger ({exc})") from None
    meta = {}
    for key, value in rows:
        if not isinstance(key, str) or not isinstance(value, str):
            raise LedgerError(f"{where} is not an odp ledger (a non-text meta entry)")
        meta[key] = value
    version_text = meta.get("schema_version")
    if version_text is None:
        raise LedgerError(f"{where} is not an odp ledger (no schema version); odp leaves it "
                          "untouched")
    try:
        version = int(version_text)
    except ValueError:
        raise LedgerError(f"{where} is not an odp ledger (schema version "
                          f"{version_text!r})") from None
    if version > SCHEMA_VERSION:
        raise LedgerError(f"{where} has schema version {version}; this odp reads up to "
                          f"{SCHEMA_VERSION} — upgrade odp")
    if version not in KNOWN_VERSIONS or "events" not in names:
        raise LedgerError(f"{where} is not an odp ledger of a known schema version (version "
                          f"{version}, tables: {', '.join(sorted(names))}); odp leaves it "
                          "untouched")
    return version, meta


def check_schema(conn: sqlite3.Connection, version: int, meta: dict[str, str],
                 where: str) -> None:
    """Every table, index and trigger of ``version`` is present and unaltered, nothing else is
    there, and ``meta`` holds exactly the expected keys; else :class:`LedgerCorrupted`."""
    expected = _expected(version)
    found = {(t, n): s for t, n, s in conn.execute(
        "SELECT type, name, sql FROM sqlite_master")}
    for key, sql in expected.items():
        kind, name = key
        if key not in found:
            if name == "sqlite_sequence":
                continue  # created by SQLite with the first AUTOINCREMENT row
            raise LedgerCorrupted(f"{where}: the ledger's {kind} {name} is missing (dropped?): "
                                  "its schema was altered outside odp; the ledger refuses to "
                                  "charge")
        if sql is not None and _norm(found[key]) != sql:
            raise LedgerCorrupted(f"{where}: the ledger's {kind} {name} was altered outside "
                                  "odp; the ledger refuses to charge")
    extra = sorted(f"{t} {n}" for t, n in found if (t, n) not in expected)
    if extra:
        raise LedgerCorrupted(f"{where}: unexpected schema objects {', '.join(extra)} were "
                              "added to the ledger outside odp; the ledger refuses to charge")
    keys = set(meta)
    wanted = _META_KEYS_V1 if version == 1 else _META_KEYS_V2
    # the neighbouring relation (odp.neighbours): recorded by every ledger made since odp records
    # it; a ledger without it (made before) is replace-one
    optional = {"key_id", "lanes", "neighbours"} if version >= 2 else set()
    if not wanted <= keys or keys - wanted - optional:
        missing, added = sorted(wanted - keys), sorted(keys - wanted - optional)
        raise LedgerCorrupted(f"{where}: the ledger's metadata was altered outside odp "
                              f"(missing {missing or 'nothing'}, added {added or 'nothing'})")


def genesis_of(meta: dict[str, str], where: str) -> Genesis:
    """The chain's genesis from ``meta`` (its budget as recorded)."""
    try:
        return Genesis(meta["ledger_id"], Fraction(meta["epsilon"]), Fraction(meta["delta"]),
                       meta.get("key_id"), meta.get("lanes"), meta.get("neighbours"))
    except (KeyError, ValueError, ZeroDivisionError) as exc:
        raise LedgerCorrupted(f"{where}: unreadable ledger metadata ({exc})") from None


def create(conn: sqlite3.Connection, meta_rows: list[tuple[str, str]]) -> None:
    """Create the version-2 schema and its metadata (caller holds BEGIN IMMEDIATE)."""
    for statement in SCHEMA_V2:
        conn.execute(statement)
    conn.executemany("INSERT INTO meta (key, value) VALUES (?, ?)", meta_rows)


def upgrade_v1(conn: sqlite3.Connection, where: str, key: bytes | None) -> int:
    """Upgrade a version-1 ledger to version 2 in one transaction: add the chain columns, hash
    every row in order (exactly as a version-2 ledger would have), record the genesis, and put
    the append-only triggers back.  Returns the number of rows chained.  Nothing changes if
    anything fails."""
    from .chain import key_id

    conn.execute("BEGIN IMMEDIATE")
    try:
        version, meta = read_version(conn, where)
        if version != 1:
            raise LedgerError(f"{where} has schema version {version}; only version 1 is "
                              "upgraded")
        check_schema(conn, 1, meta, where)
        genesis = genesis_of(dict(meta, **({"key_id": key_id(key)} if key else {})), where)
        for name in _TRIGGER_NAMES:
            conn.execute(f"DROP TRIGGER {name}")
        for column in _CHAIN_COLUMNS:
            conn.execute(f"ALTER TABLE events ADD COLUMN {column}")
        verifier = ChainVerifier(genesis, where=where)
        rows = conn.execute(f"SELECT {ROW_COLUMNS} FROM events ORDER BY seq").fetchall()
        for stored in rows:
            try:
                row = EventRow.from_stored(stored)
            except (ValueError, TypeError, ZeroDivisionError) as exc:
                raise LedgerCorrupted(f"{where} row {stored[0]}: unreadable ({exc}); not "
                                      "upgraded", row=stored[0]) from None
            prev = verifier.state.head
            digest = verifier.check(row, None, None)
            conn.execute("UPDATE events SET prev_hash = ?, row_hash = ?, mac = ? WHERE seq = ?",
                         (prev, digest, row_mac(key, digest) if key else None, row.seq))
        conn.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'",
                     (str(SCHEMA_VERSION),))
        extra: list[tuple[str, str | None]] = [("chain_version", str(CHAIN_VERSION)),
                                               ("genesis_hash", genesis.hash)]
        if key:
            extra.append(("key_id", genesis.key_id))
        conn.executemany("INSERT INTO meta (key, value) VALUES (?, ?)", extra)
        for statement in _TRIGGERS:
            conn.execute(statement)
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return len(rows)

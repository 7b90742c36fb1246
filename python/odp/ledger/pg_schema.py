"""The PostgreSQL ledger's schema: numbered migrations, and the check that a database holds an
odp ledger of a known, unaltered version before anything is written to it.

The ledger lives in the connection's current schema (``public`` unless the URL sets another
``search_path``, e.g. ``?options=-csearch_path%3Dteam_a``) in three tables named ``odp_*`` —
``odp_schema`` (one row per applied migration), ``odp_meta`` (write-once metadata: budget,
ledger id, genesis hash, key id) and ``odp_events`` (the append-only rows, the same columns and
values as the SQLite ledger's ``events``: amounts as exact ``p/q`` text, ``created`` as an
IEEE-754 double, and the chain columns of :mod:`odp.ledger.chain`).

* Migration 1: the three tables, the two one-reserve/one-settle indexes, and row triggers that
  refuse ``UPDATE`` and ``DELETE``.
* Migration 2: the server refuses non-exact amounts (a CHECK that every amount is ``p`` or
  ``p/q`` in digits — never a float), and ``TRUNCATE`` of the ledger tables.

``odp ledger init URL`` applies every migration in one transaction (and refuses a schema that
already has a table, index or function of one of these names); ``odp ledger upgrade URL``
applies the missing ones.  Opening compares the catalog (columns, indexes, constraints,
triggers and the trigger function's source) with what the migrations create; any difference
is reported as an altered ledger.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, TypeAlias

from ..errors import LedgerCorrupted, LedgerError

if TYPE_CHECKING:  # psycopg is the optional ``postgres`` extra: imported where it is used
    import psycopg
    from psycopg.rows import TupleRow

    #: A psycopg 3 connection that returns rows as tuples (the default row factory).
    PgConnection: TypeAlias = psycopg.Connection[TupleRow]
    #: A cursor of such a connection.
    PgCursor: TypeAlias = psycopg.Cursor[TupleRow]

#: Tables, index, function names the ledger owns (all start with ``odp_``).
SCHEMA_TABLE, META_TABLE, EVENTS_TABLE = "odp_schema", "odp_meta", "odp_events"
FUNCTION = "odp_refuse_change"
OUR_NAMES = (SCHEMA_TABLE, META_TABLE, EVENTS_TABLE, "odp_events_one_reserve",
             "odp_events_one_settle", "odp_events_pkey", "odp_meta_pkey", "odp_schema_pkey",
             FUNCTION)

_FUNCTION_BODY = """
BEGIN
    RAISE EXCEPTION 'odp ledger rows are append-only (% on %)', TG_OP, TG_TABLE_NAME;
END
"""

_AMOUNT = r"'^[0-9]+(/[0-9]+)?$'"

MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (  # 1: tables, indexes, append-only rows
        f"""CREATE TABLE {SCHEMA_TABLE} (
            version integer PRIMARY KEY,
            applied double precision NOT NULL)""",
        f"""CREATE TABLE {META_TABLE} (
            key   text PRIMARY KEY,
            value text NOT NULL)""",
        f"""CREATE TABLE {EVENTS_TABLE} (
            seq         bigint PRIMARY KEY,
            kind        text NOT NULL CHECK (kind IN ('reserve', 'settle')),
            round_id    text NOT NULL,
            mechanism   text,
            params      text,
            guarantee   text,
            sup_epsilon text,
            delta       text,
            interactive smallint,
            label       text,
            charged     text,
            reason      text,
            owner       text,
            created     double precision NOT NULL,
            prev_hash   text NOT NULL,
            row_hash    text NOT NULL,
            mac         text)""",
        f"CREATE UNIQUE INDEX odp_events_one_reserve ON {EVENTS_TABLE} (round_id) "
        "WHERE kind = 'reserve'",
        f"CREATE UNIQUE INDEX odp_events_one_settle ON {EVENTS_TABLE} (round_id) "
        "WHERE kind = 'settle'",
        f"CREATE FUNCTION {FUNCTION}() RETURNS trigger LANGUAGE plpgsql AS $odp${_FUNCTION_BODY}$odp$",
        f"CREATE TRIGGER odp_events_append_only BEFORE UPDATE OR DELETE ON {EVENTS_TABLE} "
        f"FOR EACH ROW EXECUTE FUNCTION {FUNCTION}()",
        f"CREATE TRIGGER odp_meta_write_once BEFORE UPDATE OR DELETE ON {META_TABLE} "
        f"FOR EACH ROW EXECUTE FUNCTION {FUNCTION}()",
        f"CREATE TRIGGER odp_schema_append_only BEFORE UPDATE OR DELETE ON {SCHEMA_TABLE} "
        f"FOR EACH ROW EXECUTE FUNCTION {FUNCTION}()",
    ),
    (  # 2: exact amounts only; no TRUNCATE
        f"ALTER TABLE {EVENTS_TABLE} ADD CONSTRAINT odp_events_exact_amounts CHECK ("
        f"sup_epsilon ~ {_AMOUNT} AND delta ~ {_AMOUNT} AND charged ~ {_AMOUNT})",
        f"CREATE TRIGGER odp_events_no_truncate BEFORE TRUNCATE ON {EVENTS_TABLE} "
        f"FOR EACH STATEMENT EXECUTE FUNCTION {FUNCTION}()",
        f"CREATE TRIGGER odp_meta_no_truncate BEFORE TRUNCATE ON {META_TABLE} "
        f"FOR EACH STATEMENT EXECUTE FUNCTION {FUNCTION}()",
    ),
)
SCHEMA_VERSION = len(MIGRATIONS)
UPGRADE_COMMAND = "odp ledger upgrade"

_COLUMNS_V1 = {
    SCHEMA_TABLE: "version integer notnull, applied double precision notnull",
    META_TABLE: "key text notnull, value text notnull",
    EVENTS_TABLE: ("seq bigint notnull, kind text notnull, round_id text notnull, mechanism text, "
                   "params text, guarantee text, sup_epsilon text, delta text, interactive "
                   "smallint, label text, charged text, reason text, owner text, created double "
                   "precision notnull, prev_hash text notnull, row_hash text notnull, mac text"),
}
_INDEXES_V1 = {
    "odp_schema_pkey": f"{SCHEMA_TABLE} unique primary (version)",
    "odp_meta_pkey": f"{META_TABLE} unique primary (key)",
    "odp_events_pkey": f"{EVENTS_TABLE} unique primary (seq)",
    "odp_events_one_reserve": f"{EVENTS_TABLE} unique (round_id) where kind=reserve",
    "odp_events_one_settle": f"{EVENTS_TABLE} unique (round_id) where kind=settle",
}
_CHECKS_V1 = {"odp_events_kind_check": "CHECK kind = ANY (ARRAY['reserve', 'settle'])"}
_CHECKS_V2 = {"odp_events_exact_amounts": f"CHECK sup_epsilon ~ {_AMOUNT} AND delta ~ {_AMOUNT} "
                                          f"AND charged ~ {_AMOUNT}"}
# tgtype bits: 1 row, 2 before, 4 insert, 8 delete, 16 update, 32 truncate
_TRIGGERS_V1 = {"odp_events_append_only": (EVENTS_TABLE, 1 | 2 | 8 | 16),
                "odp_meta_write_once": (META_TABLE, 1 | 2 | 8 | 16),
                "odp_schema_append_only": (SCHEMA_TABLE, 1 | 2 | 8 | 16)}
_TRIGGERS_V2 = {"odp_events_no_truncate": (EVENTS_TABLE, 2 | 32),
                "odp_meta_no_truncate": (META_TABLE, 2 | 32)}

META_KEYS = {"epsilon", "delta", "ledger_id", "created", "chain_version",
             "genesis_hash"}
#: ``key_id`` for a keyed ledger; ``lanes`` for a laned one (:mod:`odp.ledger.lanes`: an odp
#: without lanes refuses such a ledger as altered — it could not keep the lanes' budgets);
#: ``neighbours``, the relation its rounds hold for (:mod:`odp.neighbours`; every ledger made
#: since odp records it — an odp that does not refuses such a ledger as altered, as it could not
#: keep its rounds to the relation; a ledger without it is replace-one).
OPTIONAL_META_KEYS = {"key_id", "lanes", "neighbours"}


def expected(version: int) -> dict[str, str]:
    """The catalog description (see :func:`describe`) that migrations 1..version create."""
    out = {f"table {t}": cols for t, cols in _COLUMNS_V1.items()}
    out.update({f"index {n}": d for n, d in _INDEXES_V1.items()})
    checks, triggers = dict(_CHECKS_V1), dict(_TRIGGERS_V1)
    if version >= 2:
        checks.update(_CHECKS_V2)
        triggers.update(_TRIGGERS_V2)
    out.update({f"check {n}": _norm_expr(d) for n, d in checks.items()})
    out.update({f"trigger {n}": f"{t} {bits} enabled {FUNCTION}" for n, (t, bits) in
                triggers.items()})
    out[f"function {FUNCTION}"] = _squash(_FUNCTION_BODY)
    return out


def _squash(text: str | None) -> str:
    return re.sub(r"\s+", " ", text or "").strip()


def _norm_expr(text: str | None) -> str:
    """A deparsed expression with the cosmetics PostgreSQL versions differ in removed."""
    text = (text or "").lower()
    for noise in ("::text[]", "::text", "::character varying", "'", '"', "(", ")", "[", "]",
                  " "):
        text = text.replace(noise, "")
    return text


def namespace(conn: PgConnection) -> tuple[int, str]:
    """The oid and name of the connection's current schema (where the ledger lives)."""
    row = conn.execute("SELECT n.oid, n.nspname FROM pg_namespace n "
                       "WHERE n.nspname = current_schema()").fetchone()
    if row is None:
        raise LedgerError("the connection has no current schema (search_path names no "
                          "existing schema)")
    return int(row[0]), row[1]


def existing_names(conn: PgConnection, ns: int) -> list[str]:
    """Which of the ledger's names already exist in the schema (relations and functions)."""
    rels = [r[0] for r in conn.execute(
        "SELECT relname FROM pg_class WHERE relnamespace = %s AND relname = ANY(%s)",
        (ns, list(OUR_NAMES)))]
    funcs = [r[0] for r in conn.execute(
        "SELECT proname FROM pg_proc WHERE pronamespace = %s AND proname = ANY(%s)",
        (ns, list(OUR_NAMES)))]
    return sorted(set(rels + funcs))


def describe(conn: PgConnection, ns: int) -> dict[str, str]:
    """Columns, indexes, check constraints, triggers and the trigger function of the ledger's
    tables, as normalised text (only objects that belong to them or carry an odp_ name)."""
    tables = (SCHEMA_TABLE, META_TABLE, EVENTS_TABLE)
    out: dict[str, str] = {}
    oids: dict[str, int] = dict(conn.execute("SELECT relname, oid FROM pg_class WHERE relnamespace = %s AND "
                             "relname = ANY(%s) AND relkind IN ('r', 'p')",
                             (ns, list(tables))).fetchall())
    for name, oid in oids.items():
        cols = conn.execute(
            "SELECT attname, format_type(atttypid, atttypmod), attnotnull FROM pg_attribute "
            "WHERE attrelid = %s AND attnum > 0 AND NOT attisdropped ORDER BY attnum",
            (oid,)).fetchall()
        out[f"table {name}"] = ", ".join(f"{a} {t}" + (" notnull" if nn else "")
                                         for a, t, nn in cols)
    rel_of = {oid: name for name, oid in oids.items()}
    if not oids:
        return out
    table_oids = list(oids.values())
    for iname, rel, unique, primary, cols, pred in conn.execute(
            "SELECT c.relname, i.indrelid, i.indisunique, i.indisprimary, "
            "ARRAY(SELECT a.attname FROM unnest(i.indkey) WITH ORDINALITY k(n, o) JOIN "
            "pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.n ORDER BY k.o), "
            "pg_get_expr(i.indpred, i.indrelid) FROM pg_index i JOIN pg_class c ON "
            "c.oid = i.indexrelid WHERE i.indrelid = ANY(%s)", (table_oids,)):
        text = f"{rel_of[rel]}" + (" unique" if unique else "") + (" primary" if primary else "")
        text += f" ({', '.join(cols)})"
        if pred:
            text += f" where {_norm_expr(pred)}"
        out[f"index {iname}"] = text
    for cname, definition in conn.execute(
            "SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = "
            "ANY(%s) AND contype NOT IN ('p')", (table_oids,)):
        out[f"check {cname}"] = _norm_expr(definition)
    for tname, rel, tgtype, enabled, fname in conn.execute(
            "SELECT t.tgname, t.tgrelid, t.tgtype, t.tgenabled, p.proname FROM pg_trigger t "
            "JOIN pg_proc p ON p.oid = t.tgfoid WHERE t.tgrelid = ANY(%s) AND NOT "
            "t.tgisinternal", (table_oids,)):
        state = "enabled" if enabled in ("O", b"O") else f"disabled({enabled})"
        out[f"trigger {tname}"] = f"{rel_of[rel]} {tgtype} {state} {fname}"
    for fname, src in conn.execute(
            "SELECT proname, prosrc FROM pg_proc WHERE pronamespace = %s AND proname = %s",
            (ns, FUNCTION)):
        out[f"function {fname}"] = _squash(src)
    return out


def read_version(conn: PgConnection, ns: int, schema_name: str, where: str
                 ) -> tuple[int, dict[str, str]]:
    """The schema version and metadata of the ledger in this schema; :class:`LedgerError`
    (nothing written) for a database without one or with foreign tables of our names."""
    present = existing_names(conn, ns)
    if not present:
        raise LedgerError(f"{where} holds no odp ledger (schema {schema_name}); create one with "
                          f"`odp ledger init {where} --epsilon E [--delta D]`")
    tables = set(present) & {SCHEMA_TABLE, META_TABLE, EVENTS_TABLE}
    if tables != {SCHEMA_TABLE, META_TABLE, EVENTS_TABLE}:
        raise LedgerError(f"{where} is not an odp ledger: schema {schema_name} has "
                          f"{', '.join(present)} but not the whole odp ledger (foreign tables of "
                          "the same names?); odp leaves it untouched")
    try:
        versions = [r[0] for r in conn.execute(
            f"SELECT version FROM {SCHEMA_TABLE} ORDER BY version")]
        meta_rows = conn.execute(f"SELECT key, value FROM {META_TABLE}").fetchall()
    except Exception as exc:  # noqa: BLE001 - a foreign table with other columns
        raise LedgerError(f"{where} is not an odp ledger ({type(exc).__name__}: "
                          f"{str(exc).splitlines()[0]}); odp leaves it untouched") from None
    if not versions or versions != list(range(1, len(versions) + 1)):
        raise LedgerError(f"{where} is not an odp ledger of a known schema version (migrations "
                          f"{versions}); odp leaves it untouched")
    version = versions[-1]
    if version > SCHEMA_VERSION:
        raise LedgerError(f"{where} has ledger schema version {version}; this odp knows up to "
                          f"{SCHEMA_VERSION} — upgrade odp")
    meta: dict[str, str] = {}
    for key, value in meta_rows:
        if not isinstance(key, str) or not isinstance(value, str):
            raise LedgerError(f"{where} is not an odp ledger (a non-text meta entry)")
        meta[key] = value
    return version, meta


def check_schema(conn: PgConnection, ns: int, version: int, meta: dict[str, str], *,
                 where: str) -> None:
    """Every object of ``version`` is present and unaltered and nothing was added to the
    ledger's tables; ``meta`` holds exactly the expected keys.  Else :class:`LedgerCorrupted`."""
    want, found = expected(version), describe(conn, ns)
    for key, text in want.items():
        if key not in found:
            raise LedgerCorrupted(f"{where}: the ledger's {key} is missing (dropped?): its schema "
                                  "was altered outside odp; the ledger refuses to charge")
        if found[key] != text:
            raise LedgerCorrupted(f"{where}: the ledger's {key} was altered outside odp "
                                  f"({found[key]!r}); the ledger refuses to charge")
    extra = sorted(k for k in found if k not in want)
    if extra:
        raise LedgerCorrupted(f"{where}: unexpected schema objects {', '.join(extra)} were added "
                              "to the ledger outside odp; the ledger refuses to charge")
    keys = set(meta)
    if not META_KEYS <= keys or keys - META_KEYS - OPTIONAL_META_KEYS:
        raise LedgerCorrupted(f"{where}: the ledger's metadata was altered outside odp (missing "
                              f"{sorted(META_KEYS - keys) or 'nothing'}, added "
                              f"{sorted(keys - META_KEYS - OPTIONAL_META_KEYS) or 'nothing'})")

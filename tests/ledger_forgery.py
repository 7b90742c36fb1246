"""A forger without keys rewrites a SQLite ledger's event rows and recomputes the hash chain and
the head file: a self-consistent ledger that no chain or head check can tell from a real one
(what certificates must survive; tests/test_certificate_trust.py, tests/test_cert_mechanisms.py).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path

from odp.ledger.chain import ChainVerifier, EventRow, Genesis
from odp.ledger.head import HeadRecord, head_path, write_head

#: The event columns, in the order of :meth:`EventRow.from_stored`.
COLUMNS = ("seq, kind, round_id, mechanism, params, guarantee, sup_epsilon, delta, interactive, "
           "label, charged, reason, owner, created")
#: The columns an edit may change (indices into a stored row).
EDITABLE = {"guarantee": 5, "sup_epsilon": 6, "label": 9, "charged": 10}


#: ``neighbours=`` of :func:`_rechain` when the relation is kept as recorded.
_KEEP = object()


def _rechain(path: Path, edit: Callable[[list], None] | None = None,
             neighbours: object = _KEEP) -> None:
    """Rewrite a SQLite ledger as a forger without keys can: apply ``edit`` to every stored
    event row (only the :data:`EDITABLE` columns are written back), set the recorded relation
    (``None``: remove it), recompute the genesis hash and every row's hash, and write the head
    file the new chain ends at.  The ledger's triggers (which refuse updates) are dropped for
    the rewrite and put back."""
    conn = sqlite3.connect(path, isolation_level=None)
    meta = dict(conn.execute("SELECT key, value FROM meta"))
    rows = conn.execute(f"SELECT {COLUMNS} FROM events ORDER BY seq").fetchall()
    triggers = conn.execute("SELECT name, sql FROM sqlite_master WHERE type='trigger'").fetchall()
    for name, _ in triggers:
        conn.execute(f"DROP TRIGGER {name}")
    relation = meta.get("neighbours") if neighbours is _KEEP else neighbours
    genesis = Genesis(meta["ledger_id"], Fraction(meta["epsilon"]), Fraction(meta["delta"]),
                      meta.get("key_id"), meta.get("lanes"), relation)
    if neighbours is not _KEEP:
        conn.execute("DELETE FROM meta WHERE key = 'neighbours'")
        if relation is not None:
            conn.execute("INSERT INTO meta (key, value) VALUES ('neighbours', ?)", (relation,))
        conn.execute("UPDATE meta SET value = ? WHERE key = 'genesis_hash'", (genesis.hash,))
    verifier = ChainVerifier(genesis)
    for stored in rows:
        stored = list(stored)
        if edit is not None:
            edit(stored)
        row = EventRow.from_stored(stored)
        prev = verifier.state.head
        digest = verifier.check(row, None, None)
        conn.execute("UPDATE events SET " + ", ".join(f"{c} = ?" for c in EDITABLE)
                     + ", prev_hash = ?, row_hash = ? WHERE seq = ?",
                     (*(stored[i] for i in EDITABLE.values()), prev, digest, row.seq))
    for _, sql in triggers:
        conn.execute(sql)
    conn.close()
    write_head(head_path(path), HeadRecord(meta["ledger_id"], verifier.state.rows,
                                           verifier.state.rounds, verifier.state.head),
               force=True)


def rewrite_events(path: Path, edit: Callable[[list], None]) -> None:
    """Apply ``edit`` to every stored event row (a list, changed in place; only the
    :data:`EDITABLE` columns are written back), recompute every row's hash, and write the head
    file the new chain ends at."""
    _rechain(path, edit)


def rewrite_relation(path: Path, neighbours: str | None) -> None:
    """Set the neighbouring relation a SQLite ledger records (``None``: remove it, as in a ledger
    made before odp recorded one), recompute the genesis hash and every row's hash from it, and
    write the head file the new chain ends at: what a forger without keys can do, and — with
    ``None`` on a ledger — exactly the ledger an odp that did not record relations wrote."""
    _rechain(path, neighbours=neighbours)

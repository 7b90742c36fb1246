"""Ledgers: the durable record of every budget transition (reserve, then settle).

* :class:`MemoryLedger` — in memory, thread-safe, for notebooks and tests.
* :class:`SQLiteLedger` — a SQLite file shared safely by several processes, hash-chained
  (:mod:`odp.ledger.chain`) with a head file (:mod:`odp.ledger.head`); see docs/ledger.md.
* :class:`PostgresLedger` — the same ledger on a PostgreSQL server (``postgresql://…``),
  shared by processes on many machines (:mod:`odp.ledger.postgres`; needs the ``postgres`` extra).

:func:`open_ledger` turns what a user passes to ``Accountant(ledger=…)`` into a ledger.
"""

from __future__ import annotations

import os
from typing import Sequence

from ..budget import Budget
from ..errors import LedgerCorrupted, LedgerError
from ..neighbours import Neighbours
from .base import Admission, Ledger, MemoryLedger, check_same_neighbours, sum_rule
from .chain import ChainHead, EventRow, Genesis
from .chained import ChainedLedger
from .lanes import Lane, LaneBook, LaneCharge, LaneStatus, check_same_lanes
from .records import (
    REASON_ABORTED,
    REASON_CLOSED,
    REASON_FAILED,
    REASON_OVERLAP,
    REASON_RECOVERED,
    REASON_RELEASED,
    REASON_UNCLASSIFIABLE,
    SCHEMA_VERSION,
    BudgetState,
    RoundRecord,
    RoundRequest,
)
from .postgres import (
    PostgresLedger,
    init_postgres_ledger,
    is_postgres_url,
    redact,
    upgrade_postgres_ledger,
)
from .sqlite import (KEY_ENV, LedgerHeadWarning, SQLiteLedger, reanchor_ledger, restore_ledger,
                     upgrade_ledger)

__all__ = [
    "Admission", "sum_rule", "redact", "Ledger", "MemoryLedger", "SQLiteLedger", "open_ledger", "RoundRecord", "RoundRequest",
    "BudgetState", "SCHEMA_VERSION", "REASON_RELEASED", "REASON_FAILED", "REASON_RECOVERED",
    "REASON_ABORTED", "REASON_OVERLAP", "REASON_UNCLASSIFIABLE", "REASON_CLOSED",
    "LedgerCorrupted", "ChainHead", "EventRow", "Genesis", "KEY_ENV", "LedgerHeadWarning",
    "upgrade_ledger", "reanchor_ledger", "restore_ledger", "PostgresLedger", "init_postgres_ledger",
    "upgrade_postgres_ledger", "is_postgres_url", "open_readonly", "Lane", "LaneBook",
    "LaneCharge", "LaneStatus",
]


def open_ledger(spec: object, budget: Budget | None,
                lanes: Sequence[Lane] | None = None,
                neighbours: Neighbours | str | None = None) -> Ledger:
    """``None`` → a new :class:`MemoryLedger`; a ``postgresql://`` URL → :class:`PostgresLedger`
    (created beforehand by ``odp ledger init URL``); a path → :class:`SQLiteLedger`; a ledger →
    itself (its budget must match ``budget`` when one is given).  ``lanes``: the lanes of a new
    ledger (:mod:`odp.ledger.lanes`), or those an existing one must have.  ``neighbours``: the
    neighbouring relation of a new ledger's rounds (:mod:`odp.neighbours`; default
    replace-one), or the one an existing ledger must hold (``None``: whichever it records)."""
    wanted = None if neighbours is None else Neighbours.parse(neighbours)
    if spec is None:
        if budget is None:
            raise LedgerError("an in-memory ledger needs a budget")
        return MemoryLedger(budget, lanes, wanted)
    if isinstance(spec, Ledger):
        if budget is not None and spec.budget != budget:
            raise LedgerError(f"the ledger holds the budget {spec.budget}, not {budget}")
        check_same_lanes(spec.lanes, lanes, "the ledger")
        check_same_neighbours(spec.neighbours, wanted, "the ledger")
        return spec
    if is_postgres_url(spec):
        return PostgresLedger(spec, budget, lanes=lanes, neighbours=wanted)
    if isinstance(spec, (str, os.PathLike)):
        return SQLiteLedger(spec, budget, lanes=lanes, neighbours=wanted)
    raise LedgerError(f"ledger must be None, a path, a postgresql:// URL or an odp Ledger, got "
                      f"{spec!r}")


def open_readonly(spec: str | os.PathLike[str], *,
                  key_file: str | os.PathLike[str] | None = None) -> ChainedLedger:
    """Open a ledger for inspection without writing: a SQLite path or a ``postgresql://``
    URL (what every CLI command that reads a ledger accepts)."""
    if is_postgres_url(spec):
        return PostgresLedger(spec, readonly=True, key_file=key_file)
    return SQLiteLedger(spec, readonly=True, key_file=key_file)

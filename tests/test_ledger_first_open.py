"""Many processes create and open the same new SQLite ledger at once (issue: race-free first
open).

``odp.Accountant(epsilon=…, ledger=PATH)`` creates the file if it is missing and is documented
as safe to share between processes.  A writer commits its rows and then writes the ledger's head
file, both under the head file's lock; a process opening the ledger in between used to read "no
head" and then the new rows, and refused the ledger with ``LedgerCorrupted: … has N rows but no
head file`` (seen in 4 of 100 trials of 8 processes before the fix).  Now an opener that sees rows
without their head waits for the writers in flight and looks again.

Real processes (fork), real SQLite files, one ``DP("0.01")`` charge each; every process must
succeed, and the ledger must end with exactly one charge per process.
"""

from __future__ import annotations

import multiprocessing
import os
import random
import time
from fractions import Fraction
from pathlib import Path

import pytest

import odp

_CTX = multiprocessing.get_context("fork")


def _open_and_charge(path: str, start: float, queue: "multiprocessing.Queue[str | None]") -> None:
    try:
        while time.time() < start:  # start together, within a few milliseconds
            pass
        acc = odp.Accountant(epsilon="1", delta="1e-6", ledger=path)
        acc.charge(odp.DP("0.01"))
        acc.close()
        queue.put(None)
    except BaseException as exc:  # noqa: BLE001 - reported to the parent, which fails the test
        queue.put(f"{type(exc).__name__}: {exc}")


def _trial(directory: Path, processes: int) -> list[str]:
    path = str(directory / "budget.db")
    queue: multiprocessing.Queue[str | None] = _CTX.Queue()
    start = time.time() + 0.2
    workers = [_CTX.Process(target=_open_and_charge,
                            args=(path, start + random.random() * 0.005 * k, queue))
               for k in range(processes)]
    for w in workers:
        w.start()
    outcomes = [queue.get(timeout=300) for _ in workers]
    for w in workers:
        w.join(timeout=60)
    errors = [o for o in outcomes if o is not None]
    if not errors:
        acc = odp.Accountant(ledger=path)
        try:
            spent = acc.spent.epsilon
            rounds = len(acc.history)
        finally:
            acc.close()
        if spent != Fraction(processes, 100) or rounds != processes:
            errors.append(f"the ledger holds {rounds} rounds spending {spent}, expected "
                          f"{processes} spending {Fraction(processes, 100)}")
    return errors


def _run(tmp_path: Path, processes: int, trials: int) -> None:
    failed = []
    for i in range(trials):
        directory = tmp_path / f"trial{i}"
        os.mkdir(directory)
        errors = _trial(directory, processes)
        if errors:
            failed.append((i, errors[:2]))
    assert not failed, f"{len(failed)} of {trials} trials failed: {failed[:3]}"


def test_concurrent_first_open_few_trials(tmp_path: Path) -> None:
    _run(tmp_path, processes=4, trials=5)


@pytest.mark.slow
def test_concurrent_first_open_8_processes_50_trials(tmp_path: Path) -> None:
    _run(tmp_path, processes=8, trials=50)


def test_a_ledger_locked_for_longer_than_busy_timeout_is_refused_by_name(tmp_path: Path) -> None:
    """Another process holding the database's exclusive lock for longer than ``busy_timeout``:
    the open waits for it (SQLite's busy handler, then the open's own retries), then fails with
    a typed error that says the ledger stayed locked, not that it is unusable, and writes
    nothing."""
    import sqlite3

    from odp.errors import LedgerError
    from odp.ledger.sqlite import SQLiteLedger

    path = tmp_path / "budget.db"
    SQLiteLedger(path, odp.Budget("1", "1e-6")).close()
    blocker = sqlite3.connect(str(path), isolation_level=None)
    blocker.execute("PRAGMA locking_mode = EXCLUSIVE")
    blocker.execute("BEGIN EXCLUSIVE")
    size = path.stat().st_size
    try:
        began = time.monotonic()
        with pytest.raises(LedgerError, match=r"stayed locked by other processes for 0.3 s"):
            SQLiteLedger(path, busy_timeout=0.3)
        waited = time.monotonic() - began
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    assert 0.3 <= waited < 30
    assert path.stat().st_size == size
    acc = odp.Accountant(ledger=str(path))  # usable once the lock is gone
    try:
        assert acc.spent.epsilon == 0
    finally:
        acc.close()

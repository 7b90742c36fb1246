#!/usr/bin/env python3
"""Where a durable charge's time goes, and the floor any durable design of odp would hit.

Issue 17 asked for durable SQLite charges within 2× of the disk's flush rate.  This script
measures, in one run and on the same file system, the pieces that decide whether that is
reachable:

1. ``flush`` — a Python loop of ``pwrite`` (512 bytes in place) + ``fdatasync``: the physical
   limit of one durable write per charge (what ``bench/compare.py`` reports as the flush rate).
2. ``sqlite`` — ``Accountant.charge`` on the default SQLite ledger (one flush per charge: the
   head file's journal), on the disk.
3. ``sqlite-tmpfs`` — the same on tmpfs (``/dev/shm``), where a flush costs nothing: its CPU
   time.
4. ``memory`` — ``Accountant.charge`` on the in-memory ledger: the exact accounting and the
   generated-rule re-check, without hashing, encoding or any I/O.
5. ``log-floor`` — a lower bound for *any* durable design that keeps odp's rows: the
   in-memory charge, then its two rows hashed onto the chain, encoded as journal lines and
   written with one ``pwrite`` + ``fdatasync`` — no SQLite, no head slot, no recovery, no
   other process (a sketch of the cheapest possible write path, not a ledger).
6. ``log-floor-tmpfs`` — the same on tmpfs: its CPU time.

Within 2× of the flush rate means a charge may take at most twice one flush in all.  If the
CPU time of the floor (6) alone is above that, no storage design reaches the goal in this
implementation; only less CPU per charge would.

    python bench/durable_floor.py [--charges 2000] [--repeats 3] [--dir DIR]

``--dir`` is where the on-disk cases write (default: the system's temporary directory).
Every number is the median of ``--repeats`` runs; the load average is printed with them.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))

sys.path.insert(0, str(ROOT / "bench"))

import odp  # noqa: E402
from ledger_backends import fsync_rate  # noqa: E402
from odp.ledger import SQLiteLedger  # noqa: E402
from odp.ledger.base import MemoryLedger  # noqa: E402

EPS = "1/1000000"
TMPFS = "/dev/shm"
_LINE = json.JSONEncoder(separators=(",", ":"))


def flush_rate(directory: str, n: int) -> float:
    """Seconds per ``pwrite`` of 512 bytes in place + ``fdatasync`` (the loop of
    ``bench/ledger_backends.py``, whose number ``bench/compare.py`` reports)."""
    return 1 / fsync_rate(directory, n)["rewrite_512B"]


def sqlite_charges(directory: str, n: int) -> float:
    """Seconds per ``Accountant.charge`` on the default SQLite ledger in ``directory``."""
    with tempfile.TemporaryDirectory(dir=directory) as tmp:
        acc = odp.Accountant(ledger=SQLiteLedger(os.path.join(tmp, "l.db"), odp.Budget(1)))
        g = odp.DP(EPS)
        for _ in range(50):
            acc.charge(g)  # warm-up
        start = time.perf_counter()
        for _ in range(n):
            acc.charge(g)
        elapsed = time.perf_counter() - start
        acc.close()
    return elapsed / n


def memory_charges(n: int) -> float:
    acc = odp.Accountant(epsilon=1)
    g = odp.DP(EPS)
    for _ in range(50):
        acc.charge(g)
    start = time.perf_counter()
    for _ in range(n):
        acc.charge(g)
    return (time.perf_counter() - start) / n


def log_floor(directory: str, n: int) -> float:
    """Seconds per charge of the cheapest durable write path that keeps odp's rows: the
    in-memory charge, its two rows chained (SHA-256) and encoded as the SQLite ledger's journal
    lines, one ``pwrite`` and one ``fdatasync`` (the area is preallocated, as the head file's
    journal is, so the flush allocates no blocks)."""
    ledger = MemoryLedger(odp.Budget(1))
    acc = odp.Accountant(ledger=ledger)
    g = odp.DP(EPS)
    size = 1 << 22
    with tempfile.TemporaryDirectory(dir=directory) as tmp:
        fd = os.open(os.path.join(tmp, "journal"), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            os.pwrite(fd, b"\0" * size, 0)
            os.fsync(fd)
            offset = 0

            def one() -> None:
                nonlocal offset
                acc.charge(g)
                ledger.chain_head  # noqa: B018 - hashes the two new rows onto the chain
                lines = b"".join(
                    _LINE.encode(row.stored_values() + [None, digest, None]).encode() + b"\n"
                    for row, digest in ledger._events[-2:])
                if offset + len(lines) > size:
                    offset = 0
                os.pwrite(fd, lines, offset)
                offset += len(lines)
                os.fdatasync(fd)

            for _ in range(50):
                one()
            start = time.perf_counter()
            for _ in range(n):
                one()
            return (time.perf_counter() - start) / n
        finally:
            os.close(fd)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--charges", type=int, default=2000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--dir", default=tempfile.gettempdir(),
                    help="where the on-disk cases write (default: %(default)s)")
    ap.add_argument("--json", help="write the results here")
    args = ap.parse_args()
    n, disk = args.charges, args.dir
    tmpfs = TMPFS if os.path.isdir(TMPFS) and os.access(TMPFS, os.W_OK) else None
    cases = {
        "flush": lambda: flush_rate(disk, n),
        "sqlite": lambda: sqlite_charges(disk, n),
        "memory": lambda: memory_charges(n),
        "log-floor": lambda: log_floor(disk, n),
    }
    if tmpfs:
        cases["sqlite-tmpfs"] = lambda: sqlite_charges(tmpfs, n)
        cases["log-floor-tmpfs"] = lambda: log_floor(tmpfs, n)
    load = os.getloadavg()
    runs: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(args.repeats):  # interleaved: a disturbance hits every case alike
        for name, fn in cases.items():
            runs[name].append(fn())
    med = {name: statistics.median(v) for name, v in runs.items()}
    flush = med["flush"]
    print(f"{n} charges per run, medians of {args.repeats}; disk cases in {disk}; "
          f"load average before {load[0]:.2f}, after {os.getloadavg()[0]:.2f}")
    print(f"{'case':18s} {'µs/charge':>10s} {'per second':>11s} {'× one flush':>12s}")
    for name, s in med.items():
        print(f"{name:18s} {s * 1e6:10.1f} {1 / s:11,.0f} {s / flush:12.2f}")
    print(f"within 2× of the flush rate: at most {2 * flush * 1e6:.1f} µs per charge in all")
    if args.json:
        Path(args.json).write_text(json.dumps({"charges": n, "repeats": args.repeats,
                                               "seconds_per_charge": med, "runs": runs,
                                               "load_before": load}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())

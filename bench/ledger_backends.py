#!/usr/bin/env python3
"""Durable ledger throughput: the disk's flush rate, SQLite vs PostgreSQL, 1/4/16 clients.

Exact charges (``odp.DP("1/1000000")`` against ε_t = 1, each one durable reserve + settle
rows, hash-chained, re-checked by the generated rules) per second of wall-clock time:

1. **The physical limit**: a Python loop of ``pwrite`` + ``fdatasync`` on the ledger's file
   system — 512 bytes rewritten in place (a head slot; the head file's journal adds about
   1 KB per charge in a preallocated area), and 4 KiB appended (what a growing WAL does).
   One durable commit per charge cannot beat it.
2. **One process, SQLite**, in each integrity mode (the default: SQLite commits without its
   own flush and the head file's journal takes the rows — one ``fdatasync`` per charge; with
   ``head_file=False`` or ``head_sync=False`` SQLite flushes each commit), and with group commit (``charge_many``:
   ``--batch`` charges per transaction, one commit for all); and the ``Accountant.run``
   protocol (durable reservation, then settle) with lazy and with synced settles.
3. **1, 4 and 16 client processes** sharing one budget, on SQLite (one file) and on a
   PostgreSQL 15 server that this script starts on a loopback port (tests/pg_server.py:
   ``fsync = on``, ``synchronous_commit = on``, the rest default), each client charging
   ``--per-client`` times (or the group-commit variant with ``--batch``).  Clients connect
   and open the ledger first, then all start together; throughput = all charges / (last
   finish − first start).

    python bench/ledger_backends.py [--repeats 3] [--per-client 500] [--json out.json]

Every number is the median of ``--repeats`` runs; the machine's load is printed with them.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "tests"))

import odp  # noqa: E402
from odp.ledger import SQLiteLedger, init_postgres_ledger  # noqa: E402

EPS = "1/1000000"


# ---------------------------------------------------------------------------- the disk
def fsync_rate(directory: str, n: int = 2000) -> dict[str, float]:
    """Durable writes per second: 512 B rewritten in place, 4 KiB appended."""
    out = {}
    path = os.path.join(directory, "fsync.probe")
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.pwrite(fd, b"\0" * 1024, 0)
        os.fsync(fd)
        start = time.perf_counter()
        for i in range(n):
            os.pwrite(fd, b"x" * 512, (i % 2) * 512)
            os.fdatasync(fd)
        out["rewrite_512B"] = n / (time.perf_counter() - start)
        start = time.perf_counter()
        for i in range(n):
            os.write(fd, b"y" * 4096)
            os.fdatasync(fd)
        out["append_4KiB"] = n / (time.perf_counter() - start)
    finally:
        os.close(fd)
        os.unlink(path)
    return out


def sqlite_commit_rate(directory: str, n: int = 2000) -> float:
    """Commits per second of plain SQLite (WAL, synchronous=FULL), one 2-row INSERT each:
    the limit for one commit per charge on this file system, before any odp code."""
    import sqlite3

    path = os.path.join(directory, "raw.db")
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = FULL")
    conn.execute("CREATE TABLE t (seq INTEGER PRIMARY KEY, row TEXT)")
    start = time.perf_counter()
    for i in range(n):
        conn.execute("BEGIN IMMEDIATE")
        conn.executemany("INSERT INTO t (row) VALUES (?)", [("x" * 400,), ("y" * 300,)])
        conn.execute("COMMIT")
    rate = n / (time.perf_counter() - start)
    conn.close()
    return rate


# ---------------------------------------------------------------------------- one process
def sqlite_one_process(directory: str, n: int, batch: int, **options) -> float:
    path = os.path.join(directory, f"one-{time.monotonic_ns()}.db")
    acc = odp.Accountant(ledger=SQLiteLedger(path, odp.Budget(1), **options))
    g = odp.DP(EPS)
    for _ in range(50):
        acc.charge(g)  # warm-up
    start = time.perf_counter()
    if batch > 1:
        for _ in range(n // batch):
            acc.charge_many([g] * batch)
    else:
        for _ in range(n):
            acc.charge(g)
    elapsed = time.perf_counter() - start
    done = n // batch * batch if batch > 1 else n
    assert acc.spent.epsilon == odp.Budget(EPS).epsilon * (done + 50)
    acc.close()
    return done / elapsed


def sqlite_run_rounds(directory: str, n: int, **options) -> float:
    """Rounds per second of the ``Accountant.run`` protocol — a durable reservation, then a
    settle (half of them refunded to ⊥'s cost 0) — with lazy (default) or synced settles."""
    path = os.path.join(directory, f"run-{time.monotonic_ns()}.db")
    acc = odp.Accountant(ledger=SQLiteLedger(path, odp.Budget(1), **options))
    g = odp.ODP(odp.mechanisms.value_or_bottom, {"value": EPS, "bottom": 0}, 0)
    start = time.perf_counter()
    for i in range(n):
        acc.reserve(g).settle(odp.BOTTOM if i % 2 else 1)
    elapsed = time.perf_counter() - start
    assert acc.spent.epsilon == odp.Budget(EPS).epsilon * ((n + 1) // 2)
    acc.close()
    return n / elapsed


# ---------------------------------------------------------------------------- many clients
_CLIENT = """
import sys, time, odp
spec, n, batch = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
acc = odp.Accountant(ledger=spec)
g = odp.DP("{eps}")
acc.remaining
print("ready", flush=True)
sys.stdin.readline()
start = time.time()
if batch > 1:
    for _ in range(n // batch):
        acc.charge_many([g] * batch)
else:
    for _ in range(n):
        acc.charge(g)
print(start, time.time(), flush=True)
""".format(eps=EPS)


def clients(spec: str, count: int, per_client: int, batch: int) -> float:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    procs = [subprocess.Popen([sys.executable, "-c", textwrap.dedent(_CLIENT), spec,
                               str(per_client), str(batch)], env=env, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(count)]
    for p in procs:
        line = p.stdout.readline()
        if line.strip() != "ready":
            raise RuntimeError(f"client failed: {line} {p.stderr.read()}")
    for p in procs:
        p.stdin.write("go\n")
        p.stdin.flush()
    spans = []
    for p in procs:
        out, err = p.communicate(timeout=900)
        if p.returncode != 0:
            raise RuntimeError(err)
        spans.append(tuple(map(float, out.split())))
    done = count * (per_client // batch * batch if batch > 1 else per_client)
    with odp.Accountant(ledger=spec) as acc:  # every charge is there, exactly
        assert acc.spent.epsilon == odp.Budget(EPS).epsilon * done, acc.spent
    return done / (max(e for _, e in spans) - min(s for s, _ in spans))


def new_sqlite(directory: str) -> str:
    path = os.path.join(directory, f"shared-{time.monotonic_ns()}.db")
    SQLiteLedger(path, odp.Budget(1)).close()
    return path


def new_postgres(server) -> str:
    url = server.new_database("bench")
    init_postgres_ledger(url, odp.Budget(1))
    return url


def median(fn, repeats: int) -> tuple[float, list[float]]:
    runs = [fn() for _ in range(repeats)]
    return statistics.median(runs), runs


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--per-client", type=int, default=500)
    ap.add_argument("--one-process", type=int, default=2000)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--clients", default="1,4,16")
    ap.add_argument("--no-postgres", action="store_true")
    ap.add_argument("--only-clients", action="store_true",
                    help="skip the disk and one-process measurements")
    ap.add_argument("--backends", default="sqlite,postgres")
    ap.add_argument("--json", help="write the results here")
    args = ap.parse_args()
    results: dict = {"load_before": os.getloadavg(), "settings": vars(args)}
    tmp = tempfile.mkdtemp(prefix="odp-bench-", dir=str(ROOT))
    server = None
    try:
        results["fsync_per_s"] = {k: round(v) for k, v in fsync_rate(tmp).items()}
        results["fsync_per_s"]["sqlite_commit"] = round(sqlite_commit_rate(tmp))
        print("disk flush rate (pwrite + fdatasync; plain SQLite commits), per second:",
              results["fsync_per_s"])
        one = {}
        for name, opts, batch in [] if args.only_clients else (("sqlite, chain only (head_file=False)", {"head_file": False}, 1),
                                  ("sqlite, default (head file + journal)", {}, 1),
                                  ("sqlite, head without fdatasync, no journal", {"head_sync": False}, 1),
                                  (f"sqlite, default, group commit of {args.batch}", {},
                                   args.batch)):
            med, runs = median(lambda: sqlite_one_process(tmp, args.one_process, batch, **opts),
                               args.repeats)
            one[name] = {"median": round(med), "runs": [round(r) for r in runs]}
            print(f"one process  {name:45s} {med:8.0f} charges/s  runs {one[name]['runs']}")
        for name, opts in (("sqlite, reserve + settle (lazy settles, default)", {}),
                           ("sqlite, reserve + settle (settle_sync=True)", {"settle_sync": True})):
            if args.only_clients:
                break
            med, runs = median(lambda: sqlite_run_rounds(tmp, args.one_process // 2, **opts),
                               args.repeats)
            one[name] = {"median": round(med), "runs": [round(r) for r in runs]}
            print(f"one process  {name:45s} {med:8.0f} rounds/s   runs {one[name]['runs']}")
        results["one_process"] = one
        wanted = args.backends.split(",")
        backends = [("sqlite", lambda: new_sqlite(tmp))] if "sqlite" in wanted else []
        if not args.no_postgres and "postgres" in wanted:
            from pg_server import PgServer

            server = PgServer().start()
            results["postgres"] = {"version": server_version(server),
                                   "settings": server_settings(server)}
            print("postgres:", results["postgres"])
            backends.append(("postgres", lambda: new_postgres(server)))
        many = {}
        for count in [int(c) for c in args.clients.split(",")]:
            for name, make in backends:
                for batch in (1, args.batch) if count > 1 else (1,):
                    label = f"{name} {count} clients" + (f", group commit {batch}" if batch > 1
                                                          else "")
                    med, runs = median(lambda: clients(make(), count, args.per_client, batch),
                                       args.repeats)
                    many[label] = {"median": round(med), "runs": [round(r) for r in runs]}
                    print(f"{label:45s} {med:8.0f} charges/s  runs {many[label]['runs']}")
        results["clients"] = many
    finally:
        if server is not None:
            server.stop()
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)
    results["load_after"] = os.getloadavg()
    print("load average before/after:", results["load_before"], results["load_after"])
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    return 0


def server_version(server) -> str:
    import psycopg

    with psycopg.connect(server.url()) as conn:
        return conn.execute("SHOW server_version").fetchone()[0]


def server_settings(server) -> dict[str, str]:
    import psycopg

    names = ("fsync", "synchronous_commit", "wal_sync_method", "commit_delay", "shared_buffers",
             "max_connections")
    with psycopg.connect(server.url()) as conn:
        return {n: conn.execute(f"SHOW {n}").fetchone()[0] for n in names}


if __name__ == "__main__":
    sys.exit(main())

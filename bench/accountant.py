#!/usr/bin/env python3
"""Accountant throughput: 2,000 charges of ε = 0.0005 against ε_t = 1.

Measures budget transitions per second for odp's accountant with the in-memory ledger and with
the SQLite ledger (WAL, synchronous=FULL: one durable commit per charge) in each of its
integrity modes (docs/ledger.md): without the head file, with it (the default), with an HMAC key,
and with the WAL checkpointed after every commit; then the cost per charge of each protection
(difference of medians).  If OpenDP is
importable (e.g. run this script with a virtualenv that has ``opendp``) — OpenDP's
``make_privacy_filter(make_fully_adaptive_composition(...))`` on the same workload (pure DP,
Laplace queries of ε = 0.0005), with the ratio.  Goals: in-memory ≥ 50,000/s with the
generated-rule re-check on, SQLite ≥ 500/s.

    python bench/accountant.py [--repeats 5] [--json out.json]

Every number is the median of ``--repeats`` runs (our machines are shared and noisy).  Besides
wall-clock throughput the in-memory rows also give the throughput in *CPU time* of this process
(``time.process_time``), which other load on a shared machine disturbs much less.
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

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

import odp  # noqa: E402

N = 2000
EPS = "0.0005"


def odp_memory(enforce: str | None = "generated") -> tuple[float, int, float]:
    acc = odp.Accountant(epsilon=1, enforce=enforce)
    g = odp.DP(EPS)
    cpu = time.process_time()
    start = time.perf_counter()
    for _ in range(N):
        acc.charge(g)
    elapsed = time.perf_counter() - start
    cpu = time.process_time() - cpu
    assert acc.remaining.epsilon == 0
    return elapsed, N, cpu


def odp_sqlite(**options) -> tuple[float, int]:
    from odp.ledger import SQLiteLedger
    from odp.ledger.chain import write_key

    with tempfile.TemporaryDirectory() as tmp:
        if options.pop("keyed", False):
            options["key_file"] = os.path.join(tmp, "ledger.key")
            write_key(options["key_file"])
        ledger = SQLiteLedger(os.path.join(tmp, "bench.db"), odp.Budget(1), **options)
        acc = odp.Accountant(ledger=ledger)
        g = odp.DP(EPS)
        start = time.perf_counter()
        for _ in range(N):
            acc.charge(g)
        elapsed = time.perf_counter() - start
        assert acc.remaining.epsilon == 0
        acc.close()
    return elapsed, N


def opendp_filter() -> tuple[float, int] | None:
    try:
        import opendp.prelude as dp
    except ImportError:
        return None
    dp.enable_features("contrib")
    space = dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float)
    query = space >> dp.m.then_laplace(1 / float(EPS))  # ε = d_in / scale = 0.0005
    qbl = dp.c.make_privacy_filter(
        dp.c.make_fully_adaptive_composition(*space, dp.max_divergence()), 1.0, 1.0)(0.0)
    accepted = 0
    start = time.perf_counter()
    for _ in range(N):
        try:
            qbl(query)
            accepted += 1
        except Exception:  # the filter refuses once float rounding exhausts it
            pass
    return time.perf_counter() - start, accepted


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", help="write the results to this file")
    args = parser.parse_args()
    results = {}
    cases = [("odp in-memory", odp_memory),
             ("odp in-memory, no re-check", lambda: odp_memory(None)),
             ("odp SQLite, chain only (no head)", lambda: odp_sqlite(head_file=False)),
             ("odp SQLite + head file (default)", odp_sqlite),
             ("odp SQLite + head, no fdatasync", lambda: odp_sqlite(head_sync=False)),
             ("odp SQLite + HMAC key", lambda: odp_sqlite(keyed=True)),
             ("odp SQLite + checkpoint passive", lambda: odp_sqlite(checkpoint="passive")),
             ("odp SQLite + checkpoint truncate", lambda: odp_sqlite(checkpoint="truncate")),
             ("OpenDP make_privacy_filter", opendp_filter)]
    for name, fn in cases:
        runs = []
        for _ in range(args.repeats):
            out = fn()
            if out is None:
                break
            runs.append(out)
        if not runs:
            print(f"{name:36s} skipped (not installed)")
            continue
        seconds = statistics.median(r[0] for r in runs)
        results[name] = {"seconds": seconds, "per_second": N / seconds, "accepted": runs[0][1]}
        cpu = ""
        if len(runs[0]) > 2:
            cpu_s = statistics.median(r[2] for r in runs)
            results[name]["cpu_seconds"] = cpu_s
            results[name]["per_cpu_second"] = N / cpu_s
            cpu = f"  ({N / cpu_s:8.0f}/s of CPU time)"
        print(f"{name:36s} {seconds:8.3f} s  {N / seconds:10.0f} transitions/s  "
              f"accepted {runs[0][1]}/{N}{cpu}")
    base = results["odp SQLite, chain only (no head)"]["seconds"]
    for name in ("odp SQLite + head file (default)", "odp SQLite + head, no fdatasync",
                 "odp SQLite + HMAC key",
                 "odp SQLite + checkpoint passive", "odp SQLite + checkpoint truncate"):
        extra = (results[name]["seconds"] - base) / N * 1e6
        print(f"cost per charge of {name[11:]:26s} over the chain alone: {extra:7.0f} µs "
              f"({results[name]['seconds'] / base:.2f}x)")
    if "OpenDP make_privacy_filter" in results:
        base = results["OpenDP make_privacy_filter"]["seconds"]
        for name in ("odp in-memory", "odp SQLite + head file (default)"):
            print(f"speed-up of {name} over OpenDP's filter: {base / results[name]['seconds']:.1f}x")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()

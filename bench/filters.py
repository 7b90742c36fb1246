#!/usr/bin/env python3
"""Privacy filters: 2,000 adaptive rounds through each odp filter, and OpenDP's
``make_privacy_filter`` on the same workload (if OpenDP is importable).

Workload: round i asks for ε_i = 0.0005 if the previous answer was "odd", else 0.0002 (an
adaptive choice of the privacy parameter), pure DP, budget large enough that all 2,000 rounds
are accepted (so every filter does the same amount of work).  For zCDP/RDP the same ε_i are
converted (ρ = ε²/2; ε(α) = min(ε, αε²/2)).  Reported per filter: median seconds per round over
``--repeats`` runs, and the time for 1,000 vs 2,000 rounds (linear time ⇔ ratio ≈ 2).

* "decision" — ``filter.continue_with(cost)`` only (the accounting OpenDP's filter also does);
* "decision+release" — through :class:`odp.interactive.ConcurrentComposition.run` with an exact
  (discrete, CSPRNG-fed) Laplace release, for comparison with OpenDP's filter, whose query also
  samples its (floating-point-safe) Laplace noise.

    python bench/filters.py [--repeats 5] [--json out.json]
    /tmp/peers-opendp/bin/python bench/filters.py        # with OpenDP 0.16

Numbers are medians of ``--repeats`` runs (shared, noisy 2-core machine).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from fractions import Fraction
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

import odp  # noqa: E402
from odp.interactive import ConcurrentComposition  # noqa: E402
from odp.filters import BasicFilter, RDPFilter, WhitehouseFilter, ZCDPFilter  # noqa: E402

N = 2000
SMALL, LARGE = Fraction(2, 10**4), Fraction(5, 10**4)


def odp_filters():
    return {
        "basic (pure DP)": lambda: (BasicFilter(10), lambda e: e),
        "basic (ε, δ)": lambda: (BasicFilter(10, "1e-5"), lambda e: (e, Fraction(1, 10**9))),
        "Whitehouse et al.": lambda: (WhitehouseFilter(1, "1e-6", "1e-6"), lambda e: e),
        "zCDP": lambda: (ZCDPFilter(1), lambda e: odp.filters.ZCDP(e * e / 2)),
        "RDP (α=4)": lambda: (RDPFilter(4, 1), lambda e: odp.conversions.pure_dp_to_rdp(e, 4)),
    }


def run_decisions(make, n):
    flt, convert = make()
    costs = {SMALL: convert(SMALL), LARGE: convert(LARGE)}
    answer = 0
    start = time.perf_counter()
    for i in range(n):
        eps = LARGE if answer % 2 else SMALL
        assert flt.continue_with(costs[eps])
        answer = i * 7919 % 13  # stand-in for the previous answer (drives the choice)
    return time.perf_counter() - start


def run_with_release(n):
    comp = ConcurrentComposition(3, BasicFilter(10))
    mechs = {e: odp.LaplaceMechanism(lambda x: x, epsilon=e, granularity=1) for e in (SMALL, LARGE)}
    answer = 0
    start = time.perf_counter()
    for _ in range(n):
        eps = LARGE if answer % 2 else SMALL
        answer = int(comp.run(mechs[eps]))
    return time.perf_counter() - start


def opendp_filter(n, measure="pure"):
    try:
        import opendp.prelude as dp
    except ImportError:
        return None
    dp.enable_features("contrib")
    space = dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float)
    if measure == "pure":
        mechs = {e: space >> dp.m.then_laplace(1 / float(e)) for e in (SMALL, LARGE)}
        odo = dp.c.make_fully_adaptive_composition(*space, dp.max_divergence())
        budget = 10.0
    else:
        # Gaussian with ρ = ε²/2 ⇔ scale = 1/ε (d_in = 1)
        mechs = {e: space >> dp.m.then_gaussian(1 / float(e)) for e in (SMALL, LARGE)}
        odo = dp.c.make_fully_adaptive_composition(*space, dp.zero_concentrated_divergence())
        budget = 1.0
    qbl = dp.c.make_privacy_filter(odo, 1.0, budget)(0.0)
    answer = 0
    start = time.perf_counter()
    for _ in range(n):
        eps = LARGE if answer % 2 else SMALL
        answer = round(qbl(mechs[eps]))
    return time.perf_counter() - start


def median_of(fn, repeats):
    runs = []
    for _ in range(repeats):
        t = fn()
        if t is None:
            return None
        runs.append(t)
    return statistics.median(runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", help="write the results to this file")
    args = parser.parse_args()
    results: dict[str, dict] = {}
    for name, make in odp_filters().items():
        t_full = median_of(lambda make=make: run_decisions(make, N), args.repeats)
        t_half = median_of(lambda make=make: run_decisions(make, N // 2), args.repeats)
        results[f"odp {name} decision"] = {"seconds": t_full, "us_per_round": 1e6 * t_full / N,
                                           "time_2000_over_1000": t_full / t_half}
    t = median_of(lambda: run_with_release(N), args.repeats)
    results["odp basic decision+release"] = {"seconds": t, "us_per_round": 1e6 * t / N,
                                             "time_2000_over_1000": t / median_of(
                                                 lambda: run_with_release(N // 2), args.repeats)}
    for label, measure in [("OpenDP make_privacy_filter (pure DP)", "pure"),
                           ("OpenDP make_privacy_filter (zCDP)", "zcdp")]:
        t = median_of(lambda measure=measure: opendp_filter(N, measure), args.repeats)
        if t is None:
            print(f"{label}: skipped (opendp not installed)")
            continue
        th = median_of(lambda measure=measure: opendp_filter(N // 2, measure), args.repeats)
        results[label] = {"seconds": t, "us_per_round": 1e6 * t / N, "time_2000_over_1000": t / th}
    for name, r in results.items():
        print(f"{name:42s} {r['us_per_round']:9.1f} µs/round   2000/1000-round time "
              f"{r['time_2000_over_1000']:.2f}")
    base = results.get("OpenDP make_privacy_filter (pure DP)")
    if base:
        print("\nspeed-up over OpenDP's pure-DP filter (same 2,000 adaptive rounds):")
        for name, r in results.items():
            if name.startswith("odp"):
                print(f"  {name:40s} {base['seconds'] / r['seconds']:8.1f}x")
        z = results.get("OpenDP make_privacy_filter (zCDP)")
        if z:
            print(f"  odp zCDP decision vs OpenDP zCDP filter  "
                  f"{z['seconds'] / results['odp zCDP decision']['seconds']:8.1f}x")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()

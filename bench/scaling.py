#!/usr/bin/env python3
"""No quadratic path: every filter, odometer, ODP-filter admission and concurrent composition
costs O(rounds) in total.  For each case this times n and 10·n rounds and checks that the
larger run costs less than 20× the smaller one (linear: ≈ 10×; quadratic: ≈ 100×).

Cases (n = 2,000 by default, so 10·n = 20,000):

* each odp filter's ``continue_with`` (basic pure / (ε, δ), Whitehouse, zCDP, RDP);
* each odometer's ``record`` followed by ``privacy_loss()`` after every round;
* ``Accountant.charge`` with the default sum rule (enforcement on);
* ``reserve_many`` of all n rounds, then ``settle_many`` of all of them (enforcement on: each
  settle reads Alg. 1's state just before its round), in order and out of order;
* ``Accountant(admission=ODPFilter(custom, proof=…))`` with the custom filter written as an
  :class:`odp.filters.IncrementalFilter` — ordered; ordered with an interactive reservation
  held open the whole time (the rounds after it are folded once each, not at every
  admission); symmetric with a reservation held open;
* the same custom filter as a *plain* function (the whole realised sequence at every
  admission): reported for contrast at n/10 and n, and expected to fail the check;
* :class:`odp.interactive.ConcurrentComposition` launches under a filter and under an
  Accountant, with 10 children kept open and the others closed after one query.

    python bench/scaling.py [--n 2000] [--repeats 3] [--json out.json]

Exit status 1 if a linear case fails the check.  The check uses the fastest of ``--repeats``
runs of each size (the least disturbed by other load on a shared machine; garbage collection
included); medians are reported alongside.
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
from odp.interactive import ConcurrentComposition, InteractiveMechanism, Queryable  # noqa: E402
from odp.filters import (  # noqa: E402
    BasicFilter, BasicOdometer, IncrementalFilter, ODPFilter, RDPFilter, RDPOdometer,
    WhitehouseFilter, WhitehouseOdometer, ZCDP, ZCDPFilter, ZCDPOdometer)

LIMIT = 20.0
EPS = Fraction(1, 10**6)


class SumFold(IncrementalFilter):
    """Alg. 1's sum filter written as a fold (valid: paper 002, Theorem 7)."""

    symmetric = True

    def start(self, budget):
        return Fraction(0), Fraction(0)

    def fold(self, state, epsilon, delta):
        return state[0] + epsilon, state[1] + delta

    def admits(self, budget, state):
        return state[0] <= budget.epsilon and state[1] <= budget.delta


class OrderedSumFold(SumFold):
    symmetric = False


def plain_sum(budget, sequence):
    return SumFold()(budget, sequence)


# ------------------------------------------------------------------------------ cases
#: CPU seconds of the last timed loop (``_since`` records it beside the wall time it returns).
LAST_CPU = [0.0]


def _now() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


def _since(start: tuple[float, float]) -> float:
    """Wall seconds since ``start``; the CPU seconds go to :data:`LAST_CPU`."""
    LAST_CPU[0] = time.process_time() - start[1]
    return time.perf_counter() - start[0]


def filter_case(make):
    def run(n):
        flt, cost = make()
        start = _now()
        for _ in range(n):
            if not flt.continue_with(cost):
                raise AssertionError("refused")
        return _since(start)
    return run


def odometer_case(make):
    def run(n):
        odo, cost = make()
        start = _now()
        for _ in range(n):
            odo.record(cost)
            odo.privacy_loss()
        return _since(start)
    return run


def accountant_case(admission=None, hold_open=False):
    """``admission``: a factory, called per run (each run starts from a fresh filter)."""
    def run(n):
        acc = odp.Accountant(epsilon=1, admission=admission() if admission else None)
        g = odp.DP(EPS)
        held = acc.reserve(odp.ODP(lambda r: r, {"hi": EPS, "lo": 0}), interactive=True) \
            if hold_open else None
        start = _now()
        for _ in range(n):
            acc.charge(g)
        elapsed = _since(start)
        if held is not None:
            held.settle_class("lo")
        return elapsed
    return run


def batch_case(order="forward"):
    """``reserve_many`` of n rounds, then ``settle_many`` of all of them (enforcement on: each
    settle re-checks its transition from Alg. 1's state just before its round), in reservation
    order or with every other round first and the rest backwards."""
    def run(n):
        acc = odp.Accountant(epsilon=1)
        g = odp.ODP(lambda r: r, {"hi": EPS, "lo": EPS / 2})
        start = _now()
        reservations = acc.reserve_many([g] * n)
        if order != "forward":
            reservations = reservations[::2] + reservations[1::2][::-1]
        acc.settle_many([(r, "lo") for r in reservations])
        return _since(start)
    return run


class _Echo(Queryable):
    def _answer(self, query):
        return query


class _Child(InteractiveMechanism):
    name = "echo"

    def __init__(self, cost):
        self._cost = cost

    @property
    def cost(self):
        return self._cost

    def start(self, data, rng):
        return _Echo()


def concurrent_case(budget_factory, cost):
    def run(n):
        comp = ConcurrentComposition(0, budget_factory())
        kept = [comp.launch(_Child(cost)) for _ in range(10)]
        start = _now()
        for _ in range(n):
            child = comp.launch(_Child(cost))
            child.query(1)
            child.close()
        elapsed = _since(start)
        for c in kept:
            c.close()
        return elapsed
    return run


def cases():
    zc = ZCDP(EPS * EPS / 2)
    return [
        ("filter basic (pure DP)", filter_case(lambda: (BasicFilter(1), EPS)), True),
        ("filter basic (ε, δ)", filter_case(
            lambda: (BasicFilter(1, "1e-3"), (EPS, Fraction(1, 10**9)))), True),
        ("filter Whitehouse", filter_case(lambda: (WhitehouseFilter(1, "1e-6", "1e-6"), EPS)), True),
        ("filter zCDP", filter_case(lambda: (ZCDPFilter(1), zc)), True),
        ("filter RDP (α=4)", filter_case(lambda: (RDPFilter(4, 1), EPS)), True),
        ("odometer basic", odometer_case(lambda: (BasicOdometer(), EPS)), True),
        ("odometer Whitehouse", odometer_case(lambda: (WhitehouseOdometer("1e-6"), EPS)), True),
        ("odometer zCDP", odometer_case(lambda: (ZCDPOdometer(), zc)), True),
        ("odometer RDP (α=4)", odometer_case(lambda: (RDPOdometer(4), EPS)), True),
        ("Accountant.charge (sum rule, enforced)", accountant_case(), True),
        ("reserve_many(n) + settle_many (enforced)", batch_case(), True),
        ("reserve_many(n) + settle_many out of order (enforced)", batch_case("mixed"), True),
        ("ODPFilter(IncrementalFilter, ordered)",
         accountant_case(lambda: ODPFilter(OrderedSumFold(), proof="Theorem 7")), True),
        ("ODPFilter(IncrementalFilter, ordered, 1 round open)",
         accountant_case(lambda: ODPFilter(OrderedSumFold(), proof="Theorem 7"), hold_open=True),
         True),
        ("ODPFilter(IncrementalFilter, symmetric, 1 round open)",
         accountant_case(lambda: ODPFilter(SumFold(), proof="Theorem 7"), hold_open=True), True),
        ("ODPFilter(plain function) [contrast]",
         accountant_case(lambda: ODPFilter(plain_sum, proof="Theorem 7")), False),
        ("ConcurrentComposition(BasicFilter), 10 open",
         concurrent_case(lambda: BasicFilter(1), EPS), True),
        ("ConcurrentComposition(Accountant), 10 open",
         concurrent_case(lambda: odp.Accountant(epsilon=1), odp.DP(EPS)), True),
    ]


def measure(run, n, repeats):
    """``(fastest wall, median wall)`` of ``repeats`` runs of ``run(n)``."""
    return measure_cpu(run, n, repeats)[:2]


def measure_cpu(run, n, repeats):
    """``(fastest wall, median wall, CPU of the fastest run)``."""
    runs = []
    for _ in range(repeats):
        wall = run(n)
        runs.append((wall, LAST_CPU[0]))
    best = min(runs)
    return best[0], statistics.median(w for w, _ in runs), best[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json")
    args = parser.parse_args()
    results, failed = {}, []
    for name, run, linear in cases():
        n = args.n if linear else max(args.n // 10, 10)
        small, small_median = measure(run, n, args.repeats)
        large, large_median = measure(run, 10 * n, args.repeats)
        ratio = large / small
        ok = ratio < LIMIT
        results[name] = {"n": n, "seconds_n": small, "seconds_10n": large, "ratio": ratio,
                         "median_seconds_n": small_median, "median_seconds_10n": large_median,
                         "median_ratio": large_median / small_median,
                         "us_per_round_10n": 1e6 * large / (10 * n), "linear_expected": linear,
                         "ok": ok}
        mark = "ok" if ok else ("FAIL" if linear else "quadratic, as expected")
        print(f"{name:55s} n={n:6d} {small:8.3f} s  10n {large:8.3f} s  ratio {ratio:6.1f}  "
              f"{1e6 * large / (10 * n):7.1f} µs/round  {mark}", flush=True)
        if linear and not ok:
            failed.append(name)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    if failed:
        print("not linear:", ", ".join(failed))
        return 1
    print(f"all linear cases: 10x rounds cost < {LIMIT:g}x time")
    return 0


if __name__ == "__main__":
    sys.exit(main())

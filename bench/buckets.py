#!/usr/bin/env python3
"""Benchmark: privacy buckets (odp) against Google's dp-accounting PLD and Microsoft's PRV.

Workloads (sensitivity 1, δ = 1e-5):
  Gaussian σ = 1, k ∈ {1, 10, 100, 1000}  (exact value: k Gaussians = one with σ/√k)
  Laplace  b = 10, k ∈ {10, 100, 1000}

For every (method, case) it reports the ε interval (lower, upper), its width, whether it
contains the exact value (Gaussian), and the median wall time of a full call (build +
compose + query) over several runs.  Peers are optional and skipped when not installed:

    python3 -m venv /tmp/peers
    /tmp/peers/bin/pip install dp-accounting prv-accountant mpmath
    PYTHONPATH=python /tmp/peers/bin/python bench/buckets.py [--repeats 5] [--quick] [--json out.json]

The machine is shared and noisy: compare ratios measured in the same run, not absolute times.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import statistics
import sys
import time
import warnings
from importlib import metadata

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))

from odp.buckets import Gaussian, Laplace, PrivacyBucketsAccountant  # noqa: E402

DELTA = 1e-5
GAUSS_KS = [1, 10, 100, 1000]
LAPLACE_KS = [10, 100, 1000]
warnings.simplefilter("ignore")


def version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def exact_gaussian_epsilon(k: int, delta: float = DELTA) -> float:
    """Analytic Gaussian: δ(ε) = Φ(-ε/μ + μ/2) - e^ε Φ(-ε/μ - μ/2), μ = √k/σ (σ = 1)."""
    try:
        import mpmath as mp

        mp.mp.dps = 40
        mu = mp.sqrt(k)
        f = lambda e: mp.ncdf(-e / mu + mu / 2) - mp.exp(e) * mp.ncdf(-e / mu - mu / 2) - delta
        lo, hi = mp.mpf(0), mp.mpf(1)
        while f(hi) > 0:
            hi *= 2
        for _ in range(200):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if f(mid) > 0 else (lo, mid)
        return float(hi)
    except ImportError:  # scipy fallback in log space
        from scipy.optimize import brentq
        from scipy.special import log_ndtr

        mu = math.sqrt(k)
        g = lambda e: math.exp(log_ndtr(-e / mu + mu / 2)) - math.exp(e + log_ndtr(-e / mu - mu / 2)) - delta
        hi = 1.0
        while g(hi) > 0:
            hi *= 2
        return brentq(g, 0.0, hi, xtol=1e-12)


# ------------------------------------------------------------------------------ methods
# each: (label, note, fn(kind, k) -> (lower, upper)); kind in {"gaussian", "laplace"}


def odp_method(buckets: int | None, precision: str = "auto"):
    def fn(kind, k):
        opts = {"precision": precision}
        if buckets is not None:
            opts["buckets"] = buckets
        mech = Gaussian(1) if kind == "gaussian" else Laplace(10)
        iv = PrivacyBucketsAccountant(**opts).compose(mech, k).get_epsilon_interval("1e-5")
        return float(iv.lower), float(iv.upper)

    label = f"odp buckets ({'default 32768' if buckets is None else buckets} buckets"
    label += "" if precision == "auto" else f", {precision}"
    return (label + ")", "rigorous interval", fn)


def dp_accounting_methods():
    if version("dp-accounting") is None:
        return []
    import dp_accounting as dpa
    from dp_accounting.pld import pld_privacy_accountant as pa
    from dp_accounting.pld import privacy_loss_distribution as pld

    def accountant(kind, k):
        acc = pa.PLDAccountant()  # value_discretization_interval = 1e-4 (default)
        ev = dpa.GaussianDpEvent(1.0) if kind == "gaussian" else dpa.LaplaceDpEvent(10.0)
        acc.compose(ev, k)
        eps = acc.get_epsilon(DELTA)
        return float("nan"), float(eps)

    def bracket(kind, k):
        def one(pessimistic):
            if kind == "gaussian":
                d = pld.from_gaussian_mechanism(1.0, value_discretization_interval=1e-4,
                                                pessimistic_estimate=pessimistic)
            else:
                d = pld.from_laplace_mechanism(10.0, value_discretization_interval=1e-4,
                                               pessimistic_estimate=pessimistic)
            return d.self_compose(k).get_epsilon_for_delta(DELTA)

        return float(one(False)), float(one(True))

    return [
        ("dp_accounting PLDAccountant (vdi 1e-4)", "pessimistic estimate only", accountant),
        ("dp_accounting PLD optimistic..pessimistic", "two PLDs, vdi 1e-4", bracket),
    ]


def prv_methods():
    if version("prv-accountant") is None:
        return []
    from prv_accountant import GaussianMechanism, LaplaceMechanism, PRVAccountant

    def make(eps_error):
        def fn(kind, k):
            prv = GaussianMechanism(noise_multiplier=1.0) if kind == "gaussian" else LaplaceMechanism(mu=0.1)
            acc = PRVAccountant(prvs=[prv], max_self_compositions=[k], eps_error=eps_error,
                                delta_error=DELTA / 1000)
            lo, _, up = acc.compute_epsilon(delta=DELTA, num_self_compositions=[k])
            return float(lo), float(up)

        return fn

    return [
        ("prv_accountant (eps_error 0.1)", "lower/upper from its error bounds", make(0.1)),
        ("prv_accountant (eps_error 0.01)", "lower/upper from its error bounds", make(0.01)),
    ]


def timed(fn, kind, k, repeats):
    times, result = [], None
    while len(times) < repeats:
        t0 = time.perf_counter()
        result = fn(kind, k)
        times.append(time.perf_counter() - t0)
        if times[0] > 15:  # very slow peers: at most 3 runs
            repeats = min(repeats, 3)
    return result, statistics.median(times), len(times)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="skip the slowest peer configurations")
    ap.add_argument("--json", help="write raw results here")
    args = ap.parse_args(argv)

    methods = [odp_method(None), odp_method(8192), odp_method(None, "extended")]
    methods += dp_accounting_methods() + prv_methods()
    rows = []
    cases = [("gaussian", k) for k in GAUSS_KS] + [("laplace", k) for k in LAPLACE_KS]
    for kind, k in cases:
        exact = exact_gaussian_epsilon(k) if kind == "gaussian" else None
        odp_time = None
        for label, note, fn in methods:
            slow = ("dp_accounting" in label and k >= 1000 and kind == "gaussian") or (
                "0.01" in label and k >= 1000
            )
            if args.quick and slow:
                continue
            try:
                (lo, up), t, n = timed(fn, kind, k, args.repeats)
            except Exception as exc:  # a peer failing is a result too
                rows.append(dict(case=f"{kind} k={k}", method=label, error=repr(exc)[:120]))
                print(f"{kind:8s} k={k:<5d} {label:45s} ERROR {exc!r}"[:160], file=sys.stderr)
                continue
            if label.startswith("odp buckets (default"):
                odp_time = t
            contains = None
            if exact is not None:
                contains = (math.isnan(lo) or lo <= exact) and exact <= up
            row = dict(case=f"{kind} k={k}", method=label, note=note, lower=lo, upper=up,
                       width=(up - lo) if not math.isnan(lo) else None, exact=exact,
                       contains_exact=contains, median_seconds=t, runs=n,
                       time_ratio_vs_odp=(t / odp_time) if odp_time else None)
            rows.append(row)
            print(f"{kind:8s} k={k:<5d} {label:45s} [{lo:.9f}, {up:.9f}] {t:.3f}s", file=sys.stderr)
    env = dict(python=platform.python_version(), machine=platform.machine(), cpus=os.cpu_count(),
               dp_accounting=version("dp-accounting"), prv_accountant=version("prv-accountant"),
               numpy=version("numpy"), scipy=version("scipy"))
    print(f"\n# Privacy buckets vs peers, δ = 1e-5 ({env})\n")
    print("| case | method | ε lower | ε upper | width | contains exact | median time | × odp time |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        if "error" in r:
            print(f"| {r['case']} | {r['method']} | error: {r['error']} | | | | | |")
            continue
        lo = "—" if math.isnan(r["lower"]) else f"{r['lower']:.7f}"
        width = "—" if r["width"] is None else f"{r['width']:.2e} ({100 * r['width'] / r['upper']:.4f} %)"
        exact = "" if r["contains_exact"] is None else ("yes" if r["contains_exact"] else "**no**")
        ratio = "" if r["time_ratio_vs_odp"] is None else f"{r['time_ratio_vs_odp']:.1f}"
        print(f"| {r['case']} | {r['method']} | {lo} | {r['upper']:.7f} | {width} | {exact} | "
              f"{r['median_seconds']:.3f} s ({r['runs']}) | {ratio} |")
    print("\nExact Gaussian ε: " + ", ".join(f"k={k}: {exact_gaussian_epsilon(k):.9f}" for k in GAUSS_KS))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"env": env, "rows": rows}, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Benchmark of odp.optdel: OptDel of Thm. 15, Lemma 11 (Eq. 4), Table 1.

Goals:
  * homogeneous k_n = 1000 with 10 stopping points: OptDel in <= 1 s;
  * heterogeneous k_n = 200: a sound upper bound within 1 % of the exact value in <= 2 s;
  * homogeneous at scale: k_n = 10,000 (10 stops) and k_n = 100,000 (3 stops,
    epsilon 0.01, simple and Lemma-11 costs) give tight, non-trivial brackets in seconds, also
    end to end on the CLI; the cost-model constants of odp.optdel.cost (seconds per
    multiply-add of the segment pass, per lattice cell) are measured here.

Every timing is the median of several runs in this process (the machine is shared: compare
ratios, not absolute numbers).  Peers (optional): dp-accounting, run in a separate virtualenv
given by ``ODP_PEER_PYTHON`` (e.g. ``/tmp/peervenv/bin/python``) for the cases both can compute
(a single stopping point = optimal composition; Table 1 via KOV).  No peer computes OptDel with
early stopping.

    python bench/optdel.py [--runs 5] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import statistics
import subprocess
import sys
import time
from fractions import Fraction

from odp.kov import table1
from odp.optdel import exact as X
from odp.optdel import homogeneous as H
from odp.optdel import lattice, lemma11_costs, lemma11_delta, optdel, optdel_upper
from odp.rational import exp_bracket


def median_time(fn, runs):
    times, out = [], None
    for _ in range(runs):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def homogeneous(runs):
    k_n, stops = 1000, list(range(100, 1001, 100))
    steps = [("0.1", "1e-10")] * k_n
    costs = lemma11_costs(stops, steps, "1e-6")
    t_both, b = median_time(lambda: optdel(stops, steps, costs), runs)
    t_up, _ = median_time(lambda: optdel_upper(stops, steps, costs), runs)
    t_eq4, b4 = median_time(lambda: lemma11_delta(stops, steps, costs), runs)
    # exact rational parametrisation: w = upper bracket of e^0.1 (7 digits), W_i rational
    w = Fraction(1105171, 10**6)
    Ws = [Fraction(math.ceil(float(exp_bracket(c)[0]) * 10**6), 10**6) for c in costs]
    t_exact, v = median_time(
        lambda: X.thm15_lattice_exact(w, units=[1] * k_n, deltas=[Fraction(1, 10**10)] * k_n, stops=stops, Ws=Ws),
        max(1, runs // 2),
    )
    return {
        "case": "homogeneous eps=0.1 delta=1e-10 k_n=1000, stops 100..1000, Lemma-11 costs @1e-6",
        "optdel_bracket": [float(b.lower), float(b.upper)],
        "optdel_relative_width": b.relative_width,
        "lemma11_bracket": [float(b4.lower), float(b4.upper)],
        "seconds_both_bounds": t_both,
        "seconds_upper_only": t_up,
        "seconds_lemma11": t_eq4,
        "exact_rational_value": float(v),
        "exact_rational_digits": len(str(v.denominator)) if v.denominator < 10**4000 else ">4000",
        "seconds_exact_rational_integer_lattice": t_exact,
    }


def _fresh_caches():
    """Forget the per-process kernel caches, so a timing includes building the kernels (as
    a new process would; the factorial checkpoints stay, they cost ~50 ms once at 1e5)."""
    for fn in (H.segment_kernel, H.kernel_support, H._survive, H._w):
        fn.cache_clear()


def _cold(fn):
    def run():
        _fresh_caches()
        return fn()
    return run


def homogeneous_at_scale(runs):
    out = []
    cases = [
        (10_000, "0.1", "1e-12", [1000 * i for i in range(1, 11)], "lemma11:1e-6"),
        (100_000, "0.01", "0", [10_000, 50_000, 100_000], "simple"),
        (100_000, "0.01", "1e-13", [10_000, 50_000, 100_000], "lemma11:1e-6"),
    ]
    for k_n, eps, delta, stops, spec in cases:
        steps = [(eps, delta)] * k_n
        if spec == "simple":
            t_costs, costs = 0.0, [Fraction(eps) * k for k in stops]
        else:
            t_costs, costs = median_time(_cold(lambda: lemma11_costs(stops, steps, "1e-6")), runs)
        t15, b = median_time(_cold(lambda: optdel(stops, steps, costs)), runs)
        t11, b4 = median_time(_cold(lambda: lemma11_delta(stops, steps, costs)), runs)
        cmd = [sys.executable, "-c", "import sys; from odp.cli import main; sys.exit(main())",
               "optdel", "--epsilon", eps, "--delta", delta,
               "--k", str(k_n), "--stops", ",".join(map(str, stops)), "--costs", spec]
        t_cli, res = median_time(lambda: subprocess.run(cmd, capture_output=True, text=True,
                                                        check=False), max(1, runs // 2))
        out.append({
            "case": f"homogeneous eps={eps} delta={delta} k_n={k_n}, stops {stops[0]}..{stops[-1]} "
                    f"({len(stops)}), costs {spec}",
            "optdel_bracket": [float(b.lower), float(b.upper)],
            "optdel_relative_width": b.relative_width,
            "optdel_method": b.method,
            "multiply_adds_per_pass": b.details.get("multiply_adds_per_pass"),
            "lemma11_bracket": [float(b4.lower), float(b4.upper)],
            "seconds_costs": t_costs,
            "seconds_optdel_both_bounds": t15,
            "seconds_lemma11": t11,
            "cli": "odp " + " ".join(cmd[3:]),
            "cli_seconds_end_to_end": t_cli,
            "cli_exit": res.returncode,
            "cli_uninformative_note": "uninformative" in res.stdout,
        })
    return out


def cost_model(runs):
    """Seconds per multiply-add of the homogeneous segment pass and per lattice cell, on the
    same instance (the constants of odp.optdel.cost and bounds._MACS_PER_CELL)."""
    eps, k_n = Fraction(1, 100), 20_000
    stops, costs = (5000, 10_000, 20_000), (Fraction(60), Fraction(100), Fraction(200))
    window = lattice.default_window(eps, [eps] * k_n, costs)
    inst = lattice.LatticeInstance(eps, (1,) * k_n, (Fraction(0),) * k_n, stops, costs, window)
    H.thm15_pass(inst, eps, Fraction(0), True)  # kernels cached: time the correlations
    t_seg, _ = median_time(lambda: H.thm15_pass(inst, eps, Fraction(0), True), runs)
    t_lat, _ = median_time(lambda: lattice.thm15_pass(inst, True), max(1, runs // 2))
    macs, cells = H.segment_macs(inst, eps), lattice.cells(inst)
    return {
        "case": "eps=0.01 k_n=20,000, 3 stops, upper pass",
        "seconds_per_multiply_add": t_seg / macs,
        "seconds_per_lattice_cell": t_lat / cells,
        "multiply_adds_per_cell_at_equal_time": (t_lat / cells) / (t_seg / macs),
    }


def heterogeneous(runs):
    rng = random.Random(2024)
    k_n, stops = 200, list(range(20, 201, 20))
    eps = [Fraction(rng.randint(500, 1500), 10**4) for _ in range(k_n)]  # 4-digit decimals
    steps = [(e, Fraction(1, 10**10)) for e in eps]
    costs = lemma11_costs(stops, steps, "1e-6")
    t_exact, ex = median_time(lambda: optdel(stops, steps, costs), max(1, runs // 2))
    out = {
        "case": "heterogeneous eps_k ~ U{0.05..0.15} (4 digits), delta=1e-10, k_n=200, 10 stops",
        "exact_states_bracket": [float(ex.lower), float(ex.upper)],
        "exact_states_grid": str(ex.grid),
        "exact_states": ex.exact_states,
        "seconds_exact_states_both_bounds": t_exact,
        "grids": [],
    }
    for grid in ["0.002", "0.0009", "0.0003"]:
        t_up, up = median_time(
            lambda grid=grid: optdel_upper(stops, steps, costs, grid=grid, digits=None), runs
        )
        # first-order alternative on the same grid: every epsilon rounded UP (lattice.py)
        h = Fraction(grid)
        inst = lattice.LatticeInstance(
            h,
            tuple(-((-e) // h) for e in eps),
            tuple(d for _, d in steps),
            tuple(stops),
            tuple(costs),
        )
        t_r, up_r = median_time(lambda inst=inst: lattice.thm15_pass(inst, True), max(1, runs // 2))
        out["grids"].append(
            {
                "grid": grid,
                "seconds_upper_only": t_up,
                "upper": float(up),
                "upper_over_exact_minus_1": float(up / ex.upper - 1),
                "eps_rounded_up_over_exact_minus_1": float(Fraction(up_r) / ex.upper - 1),
                "eps_rounded_up_seconds": t_r,
            }
        )
    # float inputs (their exact binary values: no usable common unit), eps_k ~ U(0.05, 0.15);
    # the exact value is not computable: the certified bracket width bounds the error
    steps_f = [(rng.uniform(0.05, 0.15), 1e-10) for _ in eps]
    t_auto, b = median_time(lambda: optdel(stops, steps_f, costs), max(1, runs // 2))
    t_auto_up, _ = median_time(lambda: optdel_upper(stops, steps_f, costs), max(1, runs // 2))
    out["float_inputs_auto_grid"] = {
        "case": "same stops and costs, eps_k = random floats in [0.05, 0.15]",
        "grid": float(b.grid),
        "bracket": [float(b.lower), float(b.upper)],
        "certified_relative_width": b.relative_width,
        "seconds_both_bounds": t_auto,
        "seconds_upper_only": t_auto_up,
    }
    return out


PEER_SCRIPT = r"""
import json, sys, time, statistics
from dp_accounting.pld import privacy_loss_distribution as pld, accountant, common
out = {}
# single stop, k = 1000 homogeneous (0.1, 1e-10): optimal composition delta at eps = E
E = float(sys.argv[1])
times = []
for _ in range(3):
    t = time.perf_counter()
    p = pld.from_privacy_parameters(common.DifferentialPrivacyParameters(0.1, 1e-10),
                                    value_discretization_interval=1e-4)
    q = p.self_compose(1000)
    d = q.get_delta_for_epsilon(E)
    times.append(time.perf_counter() - t)
out["pld_1000_delta"] = d
out["pld_1000_seconds"] = statistics.median(times)
row = []
for e in range(5, 13):
    for k in range(1, 100):
        r = accountant.advanced_composition(common.DifferentialPrivacyParameters(0.1, 0), k,
                                            10.0 ** -e)
        if r is not None and r < 0.1 * k - 1e-12:
            row.append(k)
            break
out["kov_table1_row"] = row
print(json.dumps(out))
"""


def peers(E):
    py = os.environ.get("ODP_PEER_PYTHON")
    if not py or not os.path.exists(py):
        return {"skipped": "set ODP_PEER_PYTHON to a python with dp-accounting installed"}
    res = subprocess.run(
        [py, "-c", PEER_SCRIPT, str(float(E))],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if res.returncode != 0:
        return {"error": res.stderr[-2000:]}
    return json.loads(res.stdout)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--json", help="write the results to this file")
    args = ap.parse_args(argv)
    results = {"python": sys.version.split()[0], "cpus": os.cpu_count()}
    print("homogeneous k_n = 1000 ...", file=sys.stderr)
    results["homogeneous"] = homogeneous(args.runs)
    print("homogeneous at scale (k_n = 10,000 and 100,000) ...", file=sys.stderr)
    results["homogeneous_at_scale"] = homogeneous_at_scale(args.runs)
    results["cost_model"] = cost_model(args.runs)
    print("heterogeneous k_n = 200 ...", file=sys.stderr)
    results["heterogeneous"] = heterogeneous(args.runs)
    # same single-stop problem on both sides: optimal composition of 1000 x (0.1, 1e-10)
    E = Fraction(19, 1)
    t_ours, b1 = median_time(lambda: optdel([1000], [("0.1", "1e-10")] * 1000, [E]), args.runs)
    print("peers ...", file=sys.stderr)
    peer = peers(E)
    results["single_stop_vs_peer"] = {
        "case": "optimal composition of 1000 x (0.1, 1e-10)-DP at eps = 19",
        "odp_bracket": [float(b1.lower), float(b1.upper)],
        "odp_seconds": t_ours,
        "peer": peer,
        "peer_over_odp_time": (
            peer["pld_1000_seconds"] / t_ours if "pld_1000_seconds" in peer else None
        ),
    }
    t_t1, rows = median_time(lambda: table1(), args.runs)
    results["table1"] = {
        "odp_row": [r.I for r in rows],
        "paper_row": [r.I_paper for r in rows],
        "paper_convention_row": [r.I_paper_convention for r in rows],
        "peer_row": peer.get("kov_table1_row"),
        "seconds_with_pld_cross_check": t_t1,
    }
    text = json.dumps(results, indent=2)
    print(text)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            fh.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

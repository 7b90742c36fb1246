#!/usr/bin/env python3
"""One comparison table anyone can rerun: odp against the peer libraries that are installed.

    python bench/compare.py [--repeats 3] [--timeout 180] [--quick] [--out docs/benchmarks.md]

Installs nothing.  Peers (each optional, skipped with a note when missing): OpenDP
(``opendp``), Google's ``dp-accounting``, Microsoft's ``prv-accountant``, IBM's ``diffprivlib``.
For example, in a fresh virtualenv::

    pip install -e ".[bench]" "opendp==0.16.*" dp-accounting prv-accountant diffprivlib \\
        "scikit-learn<1.9"

Every workload runs odp and every installed peer in this one process run (peer cells in a
forked child with a time limit, so that one runaway cell cannot stall the table), and the
results go to ``docs/benchmarks.md``: wall and CPU times of every cell (median of ``--repeats``;
cells slower than 2 s run once; ``bench/common.py``), ratios of CPU time (peer / odp), interval
widths, settings, machine, load average and versions.  Workloads:

* **Accounting**: 2,000 and 6,000 pure-DP charges of ε = 1e-4 (budget 1), each decided before
  the next (a filter): odp ``Accountant.charge`` in memory with the generated-rule
  re-check on, odp with a durable SQLite ledger, OpenDP ``make_privacy_filter``, diffprivlib
  ``BudgetAccountant.spend``.
* **Custom-filter admission**: the same charges through
  ``Accountant(admission=ODPFilter(custom, proof=…))`` — the custom rule written as an
  ``IncrementalFilter`` and, for contrast, as a plain function of the whole sequence.
* **Buckets** (ε at δ = 1e-5, sensitivity 1): Gaussian σ = 1 composed k = 1,000 and 10,000
  times, and 500 Gaussians σ = 1 + 500 Laplace b = 10.  dp-accounting's PLD bracket
  (optimistic … pessimistic) at value discretisation 1e-4 and 1e-3, prv-accountant with
  eps_error 0.1 (and 0.01 at k = 1,000); odp's rigorous interval.
* **DP-SGD** (``bench/dpsgd.py``): the Poisson-subsampled Gaussian with q = 0.01,
  σ = 1.1, T = 10,000 and 100,000 steps, ε at δ = 1e-5: odp's rigorous interval against
  dp-accounting's PLD (connect-the-dots) and RDP, prv-accountant and Opacus's RDP analysis (its
  ``analysis/rdp.py`` alone, loaded by path from the Opacus wheel: torch is never imported),
  each peer's number marked by whether it lies inside odp's interval; odp's
  ``--target-width 1e-3`` run; the two speed goals (odp's default interval against
  PLD at 1e-4, the target-width run against PLD at 1e-3, in CPU time); noise calibration for
  ε = 3 (odp, Opacus, dp-accounting), each σ judged by odp's rigorous interval.
* **OptDel**: homogeneous ε = 0.1 with 10 stops (k = 1,000: δ_k = 1e-10; k = 10,000:
  δ_k = 1e-12; Lemma-11 costs for a total δ of 1e-6), Thm. 15 bracket, Lemma 11 bound and the
  CLI end to end; a single stop (= optimal composition of 1,000 × (0.1, 1e-10)) against
  dp-accounting's PLD; heterogeneous ε_k (4-digit decimals in [0.05, 0.15]) at k = 200 and
  k = 1,000 on the exact lattice (both ends of the Thm. 15 bracket).  No peer computes OptDel with stopping points.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
import warnings
from fractions import Fraction
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import (  # noqa: E402  (bench/common.py: timing, formatting, peers, machine)
    PEERS,
    ROOT,
    fmt_s,
    fmt_t,
    fmt_x,
    machine,
    preload_peers,
    ratio,
    run_cell,
    version,
)

sys.path.insert(0, str(ROOT / "python"))

import odp  # noqa: E402
from odp.filters import IncrementalFilter, ODPFilter  # noqa: E402

warnings.simplefilter("ignore")
DELTA = 1e-5
EPS_CHARGE = "0.0001"


# ----------------------------------------------------------------------------- accounting
class SumFold(IncrementalFilter):
    """Alg. 1's sum filter as a fold (valid: paper 002, Theorem 7)."""

    symmetric = True

    def start(self, budget):
        return Fraction(0), Fraction(0)

    def fold(self, state, epsilon, delta):
        return state[0] + epsilon, state[1] + delta

    def admits(self, budget, state):
        return state[0] <= budget.epsilon and state[1] <= budget.delta


def plain_sum(budget, sequence):
    return SumFold()(budget, sequence)


#: A RAM-backed file system (tmpfs), where a flush costs nothing: the same durable SQLite charge
#: there measures its CPU time alone.
TMPFS = "/dev/shm"


def has_tmpfs() -> bool:
    return os.path.isdir(TMPFS) and os.access(TMPFS, os.W_OK)


def odp_charges(n, ledger=None, admission=None, directory=None):
    def fn():
        with tempfile.TemporaryDirectory(dir=directory) as tmp:
            where = None if ledger is None else os.path.join(tmp, "bench.db")
            acc = odp.Accountant(epsilon=1, ledger=where,
                                 admission=None if admission is None else admission())
            g = odp.DP(EPS_CHARGE)
            for _ in range(n):
                acc.charge(g)
            assert acc.spent.epsilon == n * Fraction(EPS_CHARGE)
            acc.close()
        return n
    return fn


def opendp_filter(n):
    def fn():
        import opendp.prelude as dp
        dp.enable_features("contrib")
        space = dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float)
        query = space >> dp.m.then_laplace(1 / float(EPS_CHARGE))
        qbl = dp.c.make_privacy_filter(
            dp.c.make_fully_adaptive_composition(*space, dp.max_divergence()), 1.0, 1.0)(0.0)
        accepted = 0
        for _ in range(n):
            qbl(query)
            accepted += 1
        return accepted
    return fn


def diffprivlib_spend(n):
    def fn():
        from diffprivlib.accountant import BudgetAccountant
        acc = BudgetAccountant(epsilon=1, delta=0)
        for _ in range(n):
            acc.spend(float(EPS_CHARGE), 0)
        return n
    return fn


# -------------------------------------------------------------------------------- buckets
def exact_gaussian_epsilon(mu: float, delta: float = DELTA) -> float:
    """ε of one Gaussian with μ = Δ/σ (k Gaussians of σ = σ0/√k) at δ, to 1e-12."""
    from scipy.optimize import brentq
    from scipy.special import log_ndtr

    g = lambda e: (math.exp(log_ndtr(-e / mu + mu / 2))  # noqa: E731
                   - math.exp(e + log_ndtr(-e / mu - mu / 2)) - delta)
    hi = 1.0
    while g(hi) > 0:
        hi *= 2
    return brentq(g, 0.0, hi, xtol=1e-12, rtol=1e-15)


def bucket_workloads():
    return [
        ("Gaussian σ=1, k=1,000", [("gaussian", 1000)], exact_gaussian_epsilon(math.sqrt(1000))),
        ("Gaussian σ=1, k=10,000", [("gaussian", 10000)],
         exact_gaussian_epsilon(math.sqrt(10000))),
        ("500 Gaussian σ=1 + 500 Laplace b=10", [("gaussian", 500), ("laplace", 500)], None),
    ]


def odp_buckets(parts):
    def fn():
        from odp.buckets import Gaussian, Laplace, PrivacyBucketsAccountant
        acc = PrivacyBucketsAccountant()
        for kind, k in parts:
            acc.compose(Gaussian(1) if kind == "gaussian" else Laplace(10), k)
        iv = acc.get_epsilon_interval("1e-5")
        return float(iv.lower), float(iv.upper)
    return fn


def pld_bracket(parts, vdi):
    def fn():
        from dp_accounting.pld import privacy_loss_distribution as pld

        def one(pessimistic):
            total = None
            for kind, k in parts:
                if kind == "gaussian":
                    d = pld.from_gaussian_mechanism(1.0, value_discretization_interval=vdi,
                                                    pessimistic_estimate=pessimistic)
                else:
                    d = pld.from_laplace_mechanism(10.0, value_discretization_interval=vdi,
                                                   pessimistic_estimate=pessimistic)
                d = d.self_compose(k)
                total = d if total is None else total.compose(d)
            return total.get_epsilon_for_delta(DELTA)
        return float(one(False)), float(one(True))
    return fn


def prv(parts, eps_error):
    def fn():
        from prv_accountant import GaussianMechanism, LaplaceMechanism, PRVAccountant
        prvs = [GaussianMechanism(noise_multiplier=1.0) if kind == "gaussian"
                else LaplaceMechanism(mu=0.1) for kind, _ in parts]
        ks = [k for _, k in parts]
        acc = PRVAccountant(prvs=prvs, max_self_compositions=ks, eps_error=eps_error,
                            delta_error=DELTA / 1000)
        lo, _, up = acc.compute_epsilon(delta=DELTA, num_self_compositions=ks)
        return float(lo), float(up)
    return fn


# --------------------------------------------------------------------------------- optdel
def optdel_homogeneous(k, delta_k):
    stops = list(range(k // 10, k + 1, k // 10))
    steps = [("0.1", delta_k)] * k

    def fn():
        from odp.optdel import lemma11_costs, lemma11_delta, optdel
        t0 = time.perf_counter()
        costs = lemma11_costs(stops, steps, "1e-6")
        t1 = time.perf_counter()
        b15 = optdel(stops, steps, costs)
        t2 = time.perf_counter()
        b11 = lemma11_delta(stops, steps, costs)
        t3 = time.perf_counter()
        return {"costs_s": t1 - t0, "thm15_s": t2 - t1, "lemma11_s": t3 - t2,
                "thm15": (float(b15.lower), float(b15.upper)),
                "lemma11": (float(b11.lower), float(b11.upper)), "method": b15.method}
    return fn, stops


def optdel_cli(k, delta_k):
    """The CLI end to end in a new process; returns the child's CPU time (``cpu``)."""
    def fn():
        cmd = [sys.executable, "-c", "import sys; from odp.cli import main; sys.exit(main())",
               "optdel", "--epsilon", "0.1", "--delta", delta_k,
               "--k", str(k), "--stops", f"{k // 10},{2 * k // 10},...,{k}",
               "--costs", "lemma11:1e-6"]
        env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if out.returncode != 0:
            raise RuntimeError(out.stderr.strip()[-300:])
        return {"cpu": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)}
    return fn


def single_stop_costs():
    from odp.optdel import lemma11_costs
    return lemma11_costs([1000], [("0.1", "1e-10")] * 1000, "1e-6")[0]


def odp_single_stop(E):
    def fn():
        from odp.optdel import optdel
        b = optdel([1000], [("0.1", "1e-10")] * 1000, [E])
        return float(b.lower), float(b.upper)
    return fn


def pld_single_stop(E, vdi):
    def fn():
        from dp_accounting.pld import common, privacy_loss_distribution as pld
        out = []
        for pessimistic in (False, True):
            p = pld.from_privacy_parameters(common.DifferentialPrivacyParameters(0.1, 1e-10),
                                            value_discretization_interval=vdi)
            if not pessimistic:  # from_privacy_parameters has no optimistic variant
                continue
            out.append(p.self_compose(1000).get_delta_for_epsilon(float(E)))
        return float("nan"), float(out[-1])
    return fn


def optdel_heterogeneous(k, max_cells):
    rng = random.Random(2024)
    eps = [Fraction(rng.randint(500, 1500), 10**4) for _ in range(k)]
    steps = [(e, Fraction(1, 10**10)) for e in eps]
    stops = list(range(k // 10, k + 1, k // 10))

    def fn():
        from odp.optdel import lemma11_costs, optdel
        # costs: Lemma 11's for the homogeneous steps of the mean epsilon 0.1 (a fixed,
        # realistic choice that does not add the heterogeneous cost search to the timing)
        costs = lemma11_costs(stops, [("0.1", "1e-10")] * k, "1e-6")
        t = time.perf_counter()
        b = optdel(stops, steps, costs, max_cells=max_cells)
        return {"thm15": (float(b.lower), float(b.upper)), "exact_states": b.exact_states,
                "grid": str(b.grid), "method": b.method, "thm15_s": time.perf_counter() - t}
    return fn


def peak_mib(fn) -> float:
    """Peak memory allocated while ``fn`` runs (tracemalloc sees Python objects and numpy
    arrays), in MiB.  A separate, untimed run."""
    import tracemalloc

    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


# ---------------------------------------------------------------------------------- DP-SGD
DPSGD_HEADING = "## DP-SGD: Poisson-subsampled Gaussian, ε at δ = 1e-5 (`bench/dpsgd.py`)"


def dpsgd_section(args, R, T, log):
    """The DP-SGD section: ``(markdown lines, README lines, notes, Opacus version)``."""
    import dpsgd  # bench/dpsgd.py (it imports bench/common.py, not this module)

    opacus, opacus_version = dpsgd.opacus_rdp(args.opacus_wheel)
    load = os.getloadavg()
    md = [DPSGD_HEADING, "",
          "Sampling rate q = 0.01, noise multiplier σ = 1.1, add/remove neighbours.  odp: the "
          "rigorous interval (both directions bounded, the worse reported).  Peers: their bracket "
          "where they give one (dp-accounting's optimistic…pessimistic PLD, prv-accountant's "
          "error bounds), else the one number they report (an upper estimate); *inside* says "
          "where that number lies relative to odp's interval.  Times: wall (CPU); the ratio is "
          "of CPU time, against odp's default cell.  "
          f"Opacus: analysis/rdp.py of {opacus_version}.  Load average at the start of this "
          f"section: {load[0]:.2f}.", "", *dpsgd.TABLE_HEAD]
    readme: list[str] = []
    notes: list[str] = []
    goals: list[str] = []
    for steps in ((10_000,) if args.quick else (10_000, 100_000)):
        rows, recs = dpsgd.table_rows(steps, PEERS, opacus, R, T, args.quick, log=log)
        md += rows
        by = {(r[0], r[1]): r for r in recs}
        odp_rec = by.get(("odp", dpsgd.ODP_DEFAULT))
        fast = by.get(("odp", "buckets, 8192 buckets (rigorous)"))
        if odp_rec and odp_rec[2].out:
            o = odp_rec[2].out
            line = (f"- DP-SGD q=0.01 σ=1.1 T={steps:,}: odp [{o['lower']:.6f}, {o['upper']:.6f}] "
                    f"(relative width {(o['upper'] - o['lower']) / o['upper']:.3g}) in "
                    f"{fmt_t(odp_rec[2])}")
            if fast and fast[2].out:
                f_ = fast[2].out
                line += (f"; 8192 buckets: relative width "
                         f"{(f_['upper'] - f_['lower']) / f_['upper']:.1e} in {fmt_t(fast[2])}")
            for key, name in ((("dp-accounting", dpsgd.PLD_FINE), "dp-accounting PLD 1e-4"),
                              (("dp-accounting", dpsgd.PLD_COARSE), "PLD 1e-3"),
                              (("prv-accountant", "eps_error 0.1, delta_error δ/1000"), "prv 0.1"),
                              (("Opacus", "analysis/rdp.py, default orders (RDP)"), "Opacus RDP")):
                rec = by.get(key)
                if rec and rec[2].out:
                    v = rec[2].out["value"] if rec[2].out["value"] is not None \
                        else rec[2].out["upper"]
                    line += f"; {name} {v:.6f} ({fmt_t(rec[2])}, inside: {rec[3]})"
                elif rec:
                    line += f"; {name} failed ({rec[2].note[:60]})"
            readme.append(line + ".")
        for line in dpsgd.speed_goals(recs):
            goals.append(f"- T={steps:,}: {line}.")
        for lib, setting, t, where in recs:
            if t.out is None and t.note and "stopped" not in t.note:
                notes.append(f"- **DP-SGD T={steps:,}, {lib} ({setting})** failed: "
                             f"{t.note.rstrip('.')}.")
            if "below odp's lower bound" in where:
                notes.append(f"- **DP-SGD T={steps:,}, {lib} ({setting})**: its ε is below odp's "
                             "rigorous lower bound, so it is not an upper bound here.")
            if "disjoint from odp's" in where:
                notes.append(f"- **DP-SGD T={steps:,}, {lib} ({setting})**: its bracket "
                             f"[{t.out['lower']:.9g}, {t.out['upper']:.9g}] does not meet odp's "
                             "rigorous interval.")
    md += ["", "**Speed goals, CPU time in this run:**", "", *goals, ""]
    readme += [f"- DP-SGD speed, {g[2:]}" for g in goals]
    if not args.quick:
        rows, cal_readme = dpsgd.calibration_rows(PEERS, R, T, log=log)
        md += ["### Noise calibration: σ for ε = 3 at δ = 1e-5, q = 0.01, T = 10,000", "",
               "Each library's σ, and odp's rigorous interval of ε at that σ (privacy buckets, "
               "default window): a σ whose interval lies above 3 does not reach the target, one "
               "whose interval straddles 3 is undecided at this precision.", "", *rows, ""]
        readme += [f"- {r}" for r in cal_readme]
    md.append("")
    return md, readme, notes, opacus_version


def splice_dpsgd(text: str, md: list[str], readme: list[str], notes: list[str],
                 settings: str) -> str:
    """Replace (or insert) the DP-SGD section, its README lines, notes and settings line in an
    existing docs/benchmarks.md (``--section dpsgd``: the other sections keep their run)."""
    lines = text.rstrip("\n").split("\n")

    def drop(pred):
        return [ln for ln in lines if not pred(ln)]

    # the section: from its heading to the next "## "
    if DPSGD_HEADING in lines:
        i = lines.index(DPSGD_HEADING)
        j = next((k for k in range(i + 1, len(lines)) if lines[k].startswith("## ")), len(lines))
        lines[i:j] = md
    else:
        j = next(k for k, ln in enumerate(lines) if ln.startswith("## OptDel"))
        lines[j:j] = md
    lines = drop(lambda ln: ln.startswith(("DP-SGD q=", "DP-SGD speed", "Calibration (",
                                           "- **DP-SGD", "- DP-SGD section:")))
    k = next(k for k, ln in enumerate(lines) if ln.startswith("OptDel, homogeneous"))
    lines[k:k] = [r.lstrip("- ") for r in readme]
    k = next(k for k, ln in enumerate(lines) if ln.startswith("- Versions:"))
    lines[k + 1:k + 1] = [settings]
    lines += notes
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=180.0,
                    help="seconds allowed to one peer cell (all its repeats)")
    ap.add_argument("--quick", action="store_true",
                    help="skip the 10,000-Gaussian peers and the heterogeneous k = 1,000 case")
    ap.add_argument("--out", default=str(ROOT / "docs" / "benchmarks.md"))
    ap.add_argument("--opacus-wheel", default=None,
                    help="the Opacus wheel to take analysis/rdp.py from (default: "
                         "$ODP_OPACUS_WHEEL, else pip download into ~/.cache/odp-bench)")
    ap.add_argument("--section", choices=("all", "dpsgd"), default="all",
                    help="dpsgd: run only the DP-SGD section and splice it into the existing "
                         "--out file (the other sections keep their last run)")
    args = ap.parse_args()
    preload_peers()  # forked peer cells must not time their library's import
    R, T = args.repeats, args.timeout
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    if args.section == "dpsgd":
        before = os.getloadavg()
        dp_md, dp_readme, dp_notes, opacus_version = dpsgd_section(
            args, R, T, lambda msg: print(msg, file=sys.stderr, flush=True))
        after = os.getloadavg()
        m = machine()
        settings = (f"- DP-SGD section: rerun alone on {started} (`--section dpsgd`), median of "
                    f"{R} runs as above; load average before {before[0]:.2f}, after "
                    f"{after[0]:.2f}; {m['cpu']}, {m['cores']} cores; peers: "
                    + ", ".join(f"{k} {v}" for k, v in PEERS.items() if v)
                    + f"; Opacus analysis/rdp.py: {opacus_version}.")
        out = Path(args.out)
        out.write_text(splice_dpsgd(out.read_text(encoding="utf-8"), dp_md, dp_readme, dp_notes,
                                    settings), encoding="utf-8")
        print(f"wrote {out}", file=sys.stderr)
        return 0
    load_before = os.getloadavg()
    md: list[str] = []
    readme: list[str] = []
    notes: list[str] = []

    def log(msg):
        print(msg, file=sys.stderr, flush=True)

    # ------------------------------------------------------------------ accounting
    acc_rows = []
    for n in (2000, 6000):
        cells = [("odp", "Accountant.charge, in memory, generated-rule re-check on",
                  odp_charges(n), None)]
        if n == 2000:
            cells.append(("odp", "Accountant.charge, SQLite ledger (one durable commit per charge)",
                          odp_charges(n, ledger="sqlite"), None))
            if has_tmpfs():
                cells.append(("odp", "Accountant.charge, the same SQLite ledger on tmpfs "
                              f"({TMPFS}: flushes cost nothing, so this is its CPU time)",
                              odp_charges(n, ledger="sqlite", directory=TMPFS), None))
        cells.append(("odp", "ODPFilter(IncrementalFilter) admission (custom rule, folded once)",
                      odp_charges(n, admission=lambda: ODPFilter(SumFold(), proof="Thm. 7")),
                      None))
        if n == 2000:  # quadratic: 6,000 would take minutes (see the scaling table)
            cells.append(("odp (before)", "ODPFilter(plain function) admission (whole sequence)",
                          odp_charges(n, admission=lambda: ODPFilter(plain_sum, proof="Thm. 7")),
                          T))
        if PEERS["OpenDP"]:
            cells.append(("OpenDP", "make_privacy_filter(make_fully_adaptive_composition), "
                          "Laplace queries (samples noise)", opendp_filter(n), T))
        if PEERS["diffprivlib"]:
            cells.append(("diffprivlib", "BudgetAccountant(epsilon=1).spend(1e-4, 0)",
                          diffprivlib_spend(n), T))
        for lib, method, fn, timeout in cells:
            t = run_cell(fn, R, timeout)
            acc_rows.append((n, lib, method, t.wall, t.runs, t.note, t))
            log(f"accounting n={n} {lib:12s} {fmt_t(t):>24s} {t.note}")
    md += ["## Accounting: pure-DP charges of ε = 1e-4 against ε_t = 1, one at a time", "",
           "| charges | library | what runs | time (CPU) | charges/s (wall) | peer CPU / odp "
           "in-memory CPU |", "|---|---|---|---|---|---|"]
    for n in (2000, 6000):
        base = next(r[6] for r in acc_rows if r[0] == n and r[2].startswith("Accountant.charge, in"))
        for rn, lib, method, s, runs, note, t in acc_rows:
            if rn != n:
                continue
            rate = "–" if s is None else f"{n / s:,.0f}"
            md.append(f"| {n:,} | {lib} | {method} | {fmt_t(t)}{' (' + note + ')' if note else ''}"
                      f" | {rate} | {ratio(t, base)} |")
    md.append("")
    # The physical limit of one durable commit per charge, measured now on the same file system.
    sys.path.insert(0, str(ROOT / "bench"))
    from ledger_backends import fsync_rate, sqlite_commit_rate

    with tempfile.TemporaryDirectory() as tmp:
        flush = fsync_rate(tmp)["rewrite_512B"]
        commit = sqlite_commit_rate(tmp)
    sq = next(r[3] for r in acc_rows if r[0] == 2000 and "SQLite ledger (" in r[2])
    cpu = next((r[3] for r in acc_rows if r[0] == 2000 and "on tmpfs" in r[2]), None)
    mem_t = {n: next(r[6] for r in acc_rows if r[0] == n
                     and r[2].startswith("Accountant.charge, in")) for n in (2000, 6000)}
    if sq is not None:
        sq_rate = 2000 / sq
        md += ["The disk's limit, measured in the same run on the same file system "
               "(`bench/ledger_backends.py`): "
               f"`pwrite` + `fdatasync` of 512 bytes {flush:,.0f}/s; a plain SQLite commit "
               f"(WAL, `synchronous=FULL`, no odp code) {commit:,.0f}/s.  A durable odp charge is "
               "one SQLite commit without SQLite's own flush plus one `fdatasync` of the "
               "ledger's head file, whose journal holds the new rows (docs/ledger.md): "
               f"{sq_rate:,.0f}/s, {flush / sq_rate:.1f}× below the flush rate (goal: within "
               f"2×) and {commit / sq_rate:.1f}× below the plain commit rate.  Group commit "
               "(`Accountant.charge_many`, one commit for many charges) goes past the "
               "one-flush-per-charge limit; `python bench/ledger_backends.py` measures it and "
               "the multi-process and PostgreSQL cases.", ""]
        if cpu is not None:
            per, per_cpu, per_flush = sq / 2000 * 1e6, cpu / 2000 * 1e6, 1e6 / flush
            md += [f"Where a durable charge's {per:.0f} µs go: {per_cpu:.0f} µs of CPU time (the "
                   f"same charges with the ledger on tmpfs, where a flush costs nothing) and "
                   f"{per - per_cpu:.0f} µs waiting for the disk, against {per_flush:.0f} µs for "
                   "one bare `pwrite` + `fdatasync`.  Within 2× of the flush rate, a charge "
                   f"would have to take at most {2 * per_flush:.0f} µs in all: "
                   f"{'less than' if 2 * per_flush < per_cpu else 'not much more than'} its CPU "
                   "time alone (the exact accounting, the generated-rule check, two SHA-256 "
                   "row hashes, the SQLite statements and the head file's journal).", ""]
            cpu_line = (f"- The same durable charges with the ledger on tmpfs (CPU time only): "
                        f"{2000 / cpu:,.0f}/s.")
        readme.append(f"- Durable SQLite ledger, one process: {sq_rate:,.0f} charges/s; "
                      f"`fdatasync` on the same disk: {flush:,.0f}/s "
                      f"({flush / sq_rate:.1f}× the charge rate).")
        if cpu is not None:
            readme.append(cpu_line)
    mem = {n: next(r[3] for r in acc_rows if r[0] == n and r[2].startswith("Accountant.charge, in"))
           for n in (2000, 6000)}
    inc = {n: next(r[3] for r in acc_rows if r[0] == n and r[1] == "odp" and "Incremental" in r[2])
           for n in (2000, 6000)}
    readme.append(f"- Exact accounting in memory, generated-rule re-check on: "
                  f"{2000 / mem[2000]:,.0f} charges/s (2,000 charges), "
                  f"{6000 / mem[6000]:,.0f}/s (6,000).")
    readme.append(f"- Custom ODP filter (`IncrementalFilter`): {fmt_s(inc[2000])} for 2,000 "
                  f"charges, {fmt_s(inc[6000])} for 6,000 (linear).")
    for peer in ("OpenDP", "diffprivlib"):
        rows = {r[0]: r[6] for r in acc_rows if r[1] == peer}
        if rows and all(v.cpu is not None for v in rows.values()):
            readme.append(f"- {peer} on the same charges: {fmt_t(rows[2000])} / "
                          f"{fmt_t(rows[6000])} ({ratio(rows[2000], mem_t[2000])} / "
                          f"{ratio(rows[6000], mem_t[6000])} odp's CPU time).")

    # ------------------------------------------------------------------ buckets
    md += ["## Privacy buckets: ε at δ = 1e-5 (sensitivity 1)", "",
           "Intervals are (lower, upper) bounds of ε; dp-accounting's is its optimistic and "
           "pessimistic PLD, prv-accountant's its own error bounds.  Exact values: the analytic "
           "Gaussian (k Gaussians of σ = one of σ/√k).", "",
           "| workload | library | settings | ε lower | ε upper | width | contains exact | time "
           "(CPU) | peer CPU / odp CPU |", "|---|---|---|---|---|---|---|---|---|"]
    for label, parts, exact in bucket_workloads():
        big = any(k >= 10000 for _, k in parts)
        cells = [("odp", "buckets, defaults (rigorous)", odp_buckets(parts), None)]
        if PEERS["dp-accounting"] and not (big and args.quick):
            for vdi in (1e-4, 1e-3):
                cells.append(("dp-accounting", f"PLD optimistic…pessimistic, vdi {vdi:g}",
                              pld_bracket(parts, vdi), T))
        if PEERS["prv-accountant"] and not (big and args.quick):
            for ee in ((0.1, 0.01) if parts == [("gaussian", 1000)] else (0.1,)):
                cells.append(("prv-accountant", f"eps_error {ee:g}, delta_error δ/1000",
                              prv(parts, ee), T))
        base = odp_width = None
        seen: dict = {}
        for lib, setting, fn, timeout in cells:
            t = run_cell(fn, R, timeout)
            out, note = t.out, t.note
            if lib == "odp":
                base = t
            lo, up = out if out else (None, None)
            width = None if lo is None or lo != lo else up - lo
            contains = "–" if exact is None or lo is None else (
                "yes" if (lo != lo or lo <= exact + 1e-9) and exact <= up + 1e-9 else "**no**")
            r = "–" if base is None or lib == "odp" else ratio(t, base)
            md.append(f"| {label} | {lib} | {setting} | {fmt_x(lo, 11)} | {fmt_x(up, 11)} | "
                      f"{fmt_x(width)} | {contains} | {fmt_t(t)}"
                      f"{' (' + note + ')' if note else ''} | {r} |")
            seen[(lib, setting)] = (t, width)
            if lib == "odp":
                odp_width = width
            elif (t.cpu is not None and base is not None and base.cpu is not None
                  and t.cpu < base.cpu and width and odp_width):
                fine = seen.get((lib, "PLD optimistic…pessimistic, vdi 0.0001"))
                tail = ("" if fine is None or fine[0].cpu is None else
                        f"; at vdi 1e-4 (width {fine[1]:.3g}) it takes CPU "
                        f"{fmt_s(fine[0].cpu)}, {ratio(fine[0], base)} odp's CPU time")
                notes.append(f"- **{label}, {lib} ({setting})** is faster than odp (CPU "
                             f"{fmt_s(t.cpu)} vs {fmt_s(base.cpu)}), but its interval is "
                             f"{width / odp_width:,.0f}× wider ({width:.3g} vs {odp_width:.3g})"
                             f"{tail}.")
            if contains == "**no**":
                notes.append(f"- **{label}, {lib} ({setting})**: the interval [{lo:.10g}, "
                             f"{up:.10g}] does not contain the exact ε = {exact:.10g} (analytic "
                             "Gaussian); its optimistic end is above the true value.")
            if note and "stopped" not in note:
                notes.append(f"- **{label}, {lib} ({setting})** failed: {note.rstrip('.')} "
                             "(a known prv-accountant limitation, microsoft/prv_accountant#36).")
            log(f"buckets {label} {lib} {setting} {fmt_t(t)} {lo} {up} {note}")
        odp_t, odp_w = seen[("odp", "buckets, defaults (rigorous)")]
        pld = "PLD optimistic…pessimistic, vdi "
        line = f"- Buckets, {label}: odp {fmt_t(odp_t)}, width {odp_w:.2g}"
        for key, name in ((("dp-accounting", pld + "0.0001"), "dp-accounting PLD vdi 1e-4"),
                          (("dp-accounting", pld + "0.001"), "vdi 1e-3"),
                          (("prv-accountant", "eps_error 0.1, delta_error δ/1000"),
                           "prv eps_error 0.1")):
            if key in seen and seen[key][0].wall is not None and seen[key][1]:
                pt, pw = seen[key]
                line += f"; {name} {fmt_t(pt)}, width {pw:.2g}"
        readme.append(line + ".")
    md.append("")

    # ------------------------------------------------------------------ DP-SGD
    dp_md, dp_readme, dp_notes, opacus_version = dpsgd_section(args, R, T, log)
    md += dp_md
    readme += dp_readme
    notes += dp_notes

    # ------------------------------------------------------------------ optdel
    md += ["## OptDel (early stopping, Hartmann et al. 2022 Thm. 15) and the Lemma 11 bound", "",
           "Times: wall (CPU); the steps inside one cell are timed by wall clock only.", "",
           "| workload | library | what | result | time |", "|---|---|---|---|---|"]
    for k, dk in ((1000, "1e-10"), (10000, "1e-12")):
        fn, stops = optdel_homogeneous(k, dk)
        t = run_cell(fn, R)
        out = t.out
        cli = run_cell(optdel_cli(k, dk), R)
        cli_cpu = cli.out["cpu"] if cli.out else None
        cli_text = ("–" if cli.wall is None
                    else f"{fmt_s(cli.wall)} (CPU of the new process {fmt_s(cli_cpu)})")
        wl = f"homogeneous ε=0.1, δ_k={dk}, k={k:,}, 10 stops, Lemma-11 costs @ δ=1e-6"
        md.append(f"| {wl} | odp | Lemma-11 costs (certified) | 10 costs | {fmt_s(out['costs_s'])} |")
        md.append(f"| {wl} | odp | Thm. 15 bracket ({out['method']}) | "
                  f"[{out['thm15'][0]:.12g}, {out['thm15'][1]:.12g}] | {fmt_s(out['thm15_s'])} |")
        md.append(f"| {wl} | odp | Lemma 11 bound (closed form) | "
                  f"[{out['lemma11'][0]:.12g}, {out['lemma11'][1]:.12g}] | "
                  f"{fmt_s(out['lemma11_s'])} |")
        md.append(f"| {wl} | odp | all three, in process (peak memory {peak_mib(fn):.1f} MiB) "
                  f"| | {fmt_t(t)} |")
        md.append(f"| {wl} | odp | `odp optdel … --costs lemma11:1e-6` end to end (new process) "
                  f"| | {cli_text}{cli.note} |")
        readme.append(f"- OptDel, homogeneous k={k:,} with 10 stops: Thm. 15 "
                      f"{fmt_s(out['thm15_s'])}, Lemma 11 bound {fmt_s(out['lemma11_s'])}, "
                      f"all three {fmt_t(t)}, CLI end to end {cli_text}.")
        log(f"optdel k={k} {out} cli {cli_text}")
    E = single_stop_costs()
    t = run_cell(odp_single_stop(E), R)
    out = t.out
    wl = f"one stop: 1,000 × (0.1, 1e-10) at ε = {float(E):g} (optimal composition δ)"
    md.append(f"| {wl} | odp | Thm. 15 bracket | [{out[0]:.12g}, {out[1]:.12g}] | {fmt_t(t)} |")
    base = t
    if PEERS["dp-accounting"]:
        for vdi in (1e-4, 1e-3):
            pt = run_cell(pld_single_stop(E, vdi), R, T)
            pout = pt.out
            val = "–" if pout is None else f"{pout[1]:.12g} (pessimistic PLD)"
            md.append(f"| {wl} | dp-accounting | PLD from_privacy_parameters, vdi {vdi:g} | {val} "
                      f"| {fmt_t(pt)} ({ratio(pt, base)} odp's CPU){' ' + pt.note if pt.note else ''} |")
            if pt.cpu is not None and base.cpu is not None and pt.cpu < base.cpu:
                notes.append(f"- **{wl}, dp-accounting (vdi {vdi:g})** is faster than odp (CPU "
                             f"{fmt_s(pt.cpu)} vs {fmt_s(base.cpu)}); it returns one pessimistic "
                             f"number ({pout[1]:.12g}) without a lower bound, odp a rigorous "
                             f"bracket of relative width {(out[1] - out[0]) / out[1]:.1e}.")
            if pout is not None and pout[1] < out[0]:
                notes.append(f"- **{wl}, dp-accounting (vdi {vdi:g})**: its pessimistic δ "
                             f"{pout[1]:.12g} is *below* odp's rigorous lower bound "
                             f"{out[0]:.12g}: not an upper bound at this precision.")
    for k in ((200,) if args.quick else (200, 1000)):
        mc = 40_000_000 if k == 200 else 1_500_000_000
        out = run_cell(optdel_heterogeneous(k, mc), 1, None).out
        mib = peak_mib(optdel_heterogeneous(k, mc))
        wl = (f"heterogeneous ε_k ∈ [0.05, 0.15] (4-digit decimals), δ_k=1e-10, k={k:,}, "
              f"10 stops, costs of the ε=0.1 Lemma-11 row, max_cells={mc:.2g}")
        md.append(f"| {wl} | odp | Thm. 15 bracket ({out['method']}, grid {out['grid']}, exact "
                  f"states: {out['exact_states']}; peak memory {mib:.0f} MiB) | "
                  f"[{out['thm15'][0]:.12g}, {out['thm15'][1]:.12g}] | {fmt_s(out['thm15_s'])} |")
        log(f"heterogeneous k={k} {out}")
        if k == 1000:
            readme.append(f"- OptDel, heterogeneous k=1,000 on the exact unit lattice "
                          f"({out['grid']}): Thm. 15 bracket in {fmt_s(out['thm15_s'])}, relative "
                          f"width {(out['thm15'][1] - out['thm15'][0]) / out['thm15'][1]:.1e}.")
    md.append("")
    md.append("No peer computes OptDel with stopping points; the single-stop row is the case a "
              "peer can compute (optimal composition).")
    md.append("")

    # ------------------------------------------------------------------ scaling
    import scaling

    md += ["## No quadratic path: n and 10·n rounds (`bench/scaling.py`)", "",
           "Fastest of the repeats per size (the least disturbed run), wall (CPU); linear ⇔ "
           "ratio ≈ 10, the check is ratio < 20 (of wall time).", "",
           "| case | n | time (n) | time (10·n) | ratio (CPU ratio) | µs/round at 10·n |",
           "|---|---|---|---|---|---|"]
    worst = 0.0
    for name, fn, linear in scaling.cases():
        n = 2000 if linear else 200
        small, _, small_cpu = scaling.measure_cpu(fn, n, R)
        large, _, large_cpu = scaling.measure_cpu(fn, 10 * n, R)
        grow = large / small
        if linear:
            worst = max(worst, grow)
        md.append(f"| {name} | {n:,} | {fmt_s(small)} (CPU {fmt_s(small_cpu)}) | "
                  f"{fmt_s(large)} (CPU {fmt_s(large_cpu)}) | {grow:.1f} "
                  f"({large_cpu / small_cpu if small_cpu > 0 else math.nan:.1f})"
                  f"{'' if linear else ' (quadratic, shown for contrast)'} | "
                  f"{1e6 * large / (10 * n):.1f} |")
        log(f"scaling {name} {grow:.1f}")
    md.append("")
    readme.append(f"- Every filter, odometer, custom ODP-filter admission and concurrent "
                  f"composition is linear: 10× the rounds cost at most {worst:.1f}× the time.")

    # ------------------------------------------------------------------ header
    m = machine()
    load_after = os.getloadavg()
    head = ["# Benchmarks: odp and its peers, side by side", "",
            "Generated by `python bench/compare.py` — do not edit by hand; rerun it.", "",
            "## README numbers", "", "```"] + [r.lstrip("- ") for r in readme] + ["```", "",
            "## Settings", "",
            f"- Run: {started}; one warm-up run, then the median of {R} runs (11 for cells under "
            f"0.2 s; cells slower than 2 s: that one run); peer "
            f"cells limited to {T:.0f} s each" + ("; --quick" if args.quick else "") + ".",
            "- Times: wall clock (`time.perf_counter`) and, beside it, CPU time "
            "(`time.process_time`, user + system, of the process that ran the cell: a forked "
            "child for peer cells, the new process for CLI runs).  Ratios between libraries are "
            "of CPU time: on this shared machine wall time also counts waiting for other "
            "processes.",
            f"- Machine: {m['cpu']}, {m['cores']} cores (shared), {m['platform']}, "
            f"Python {m['python']}.",
            f"- Load average (1, 5, 15 min): before {load_before[0]:.2f}, {load_before[1]:.2f}, "
            f"{load_before[2]:.2f}; after {load_after[0]:.2f}, {load_after[1]:.2f}, "
            f"{load_after[2]:.2f}.  The machine is shared: compare ratios within one run.",
            "- Versions: odp " + (version("odp-accounting") or odp.__version__) + ", numpy "
            + (version("numpy") or "?") + ", scipy " + (version("scipy") or "?") + "; peers: "
            + ", ".join(f"{k} {v}" if v else f"{k} not installed" for k, v in PEERS.items())
            + f"; Opacus analysis/rdp.py: {opacus_version}.", ""]
    notes = ["## Exceptions and notes", "",
             "- Accounting: OpenDP's filter also samples its Laplace noise for each query; odp's "
             "rows only account (odp's exact samplers are measured in `bench/filters.py`).  Both "
             "peers recompute the whole history at every query, so their time grows "
             "quadratically (opendp/opendp#2909).",
             "- OptDel: no peer computes OptDel with stopping points; the single-stop row is "
             "optimal composition, which dp-accounting's PLD also computes (one pessimistic "
             "number, no lower bound).",
             "- The machine is shared (see the load average above): wall times vary with the "
             "load, CPU times much less; compare CPU-time ratios within this run."] + notes + [""]
    text = "\n".join(head + md + notes) + "\n"
    Path(args.out).write_text(text, encoding="utf-8")
    log(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

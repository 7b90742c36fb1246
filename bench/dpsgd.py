#!/usr/bin/env python3
"""DP-SGD accounting (Poisson-subsampled Gaussian, add/remove neighbours): odp against peers,
and noise calibration.

    python bench/dpsgd.py [--steps 10000 100000] [--repeats 3] [--timeout 300] [--no-calibration]

Workload: sampling rate q = 0.01, noise multiplier σ = 1.1, T steps, ε at δ = 1e-5.
Every cell reports wall and CPU time (``bench/common.py``); ratios are of CPU time.

* odp privacy buckets: the rigorous interval with the default window (32768 buckets) and 8192
  buckets, and ``--target-width 1e-3`` (``odp.buckets.tighten.tighten(buckets="auto")``: the
  grid step predicted from one run's buckets for 80 % of 1e-3, the window sized for it, a
  finer step only if the interval is wider than 1e-3);
* dp-accounting: ``PLDAccountant`` (connect-the-dots PLD, pessimistic, value discretisation
  1e-4 and 1e-3), the optimistic..pessimistic PLD pair at 1e-4, ``RdpAccountant``;
* prv-accountant: ``PRVAccountant`` with eps_error 0.1 and 0.01 (its certified bracket);
* Opacus: the RDP analysis of ``opacus/accountants/analysis/rdp.py`` with Opacus's default
  orders, *that file alone* loaded by path (numpy + scipy only; torch is never imported).  It
  is taken from the Opacus wheel: ``--opacus-wheel FILE`` or ``$ODP_OPACUS_WHEEL``, else
  ``pip download opacus --no-deps`` into ``~/.cache/odp-bench`` (nothing is installed).

**Calibration** (``--no-calibration`` skips it): the noise multiplier for ε = 3 at δ = 1e-5,
q = 0.01, T = 10⁴ from ``odp.dpsgd.noise_multiplier`` (resolution 1e-3), Opacus's
``get_noise_multiplier`` (accountants "rdp" and "prv", epsilon_tolerance 0.01: run by the
Python of a virtualenv with Opacus and torch, ``$ODP_OPACUS_PYTHON`` or ``/work/venv-opacus``;
skipped with a note without one) and dp-accounting's ``calibrate_dp_mechanism`` (PLD at
value discretisation 1e-4, and RDP); each σ is judged by odp's rigorous interval of ε at it.

Each peer value is reported with whether it lies inside odp's interval (a peer's upper estimate
above odp's upper end is looser, below odp's lower end would be wrong).  ``bench/compare.py``
runs the same cells for docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import warnings
import zipfile
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import (  # noqa: E402
    PEERS, ROOT, Timing, fmt_s, fmt_t, fmt_x, preload_peers, ratio, run_cell)

sys.path.insert(0, str(ROOT / "python"))

Q, SIGMA, DELTA = 0.01, 1.1, 1e-5
OPACUS_FILE = "opacus/accountants/analysis/rdp.py"
#: Opacus's ``RDPAccountant.DEFAULT_ALPHAS`` (opacus/accountants/rdp.py).
OPACUS_ORDERS = [1 + x / 10.0 for x in range(1, 100)] + list(range(12, 64))
CACHE = Path(os.environ.get("ODP_BENCH_CACHE", Path.home() / ".cache" / "odp-bench"))

#: The calibration workload: ε = 3 at δ = 1e-5, q = 0.01, T = 10⁴.
CAL_EPS, CAL_DELTA, CAL_Q, CAL_T = 3.0, 1e-5, 0.01, 10_000

ODP_DEFAULT = "buckets, defaults (32768 buckets; rigorous)"
ODP_TARGET = "buckets, --target-width 1e-3 (grid step predicted; rigorous)"
PLD_FINE = "PLDAccountant, connect-the-dots, vdi 1e-4"
PLD_COARSE = "PLDAccountant, connect-the-dots, vdi 1e-3"


# ------------------------------------------------------------------------------ cells
# each cell returns {"lower": float|None, "value": float|None, "upper": float|None}:
# a bracket (lower, upper) and/or one reported value (a peer's upper estimate)


def odp_cell(steps: int, buckets: int | None = None, q: float = Q,
             sigma: float = SIGMA) -> Callable[[], dict]:
    def fn():
        from odp.buckets import PrivacyBucketsAccountant, poisson_gaussian

        opts = {} if buckets is None else {"buckets": buckets}
        acc = PrivacyBucketsAccountant(**opts).compose(poisson_gaussian(str(sigma), str(q)), steps)
        iv = acc.get_epsilon_interval(str(DELTA))
        return {"lower": float(iv.lower), "value": None, "upper": float(iv.upper)}
    return fn


def odp_target_cell(steps: int, width: float = 1e-3) -> Callable[[], dict]:
    def fn():
        from odp.buckets import poisson_gaussian
        from odp.buckets.tighten import tighten

        res = tighten([(poisson_gaussian(str(SIGMA), str(Q)), steps)], target_width=width,
                      delta=str(DELTA), buckets="auto")
        return {"lower": float(res.interval.lower), "value": None,
                "upper": float(res.interval.upper), "reached": res.reached,
                "attempts": [a.buckets for a in res.attempts]}
    return fn


def _event(steps: int, q: float = Q, sigma: float = SIGMA):
    import dp_accounting as dpa

    return dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(sigma)), steps)


def pld_accountant_cell(steps: int, vdi: float) -> Callable[[], dict]:
    def fn():
        from dp_accounting.pld import pld_privacy_accountant

        acc = pld_privacy_accountant.PLDAccountant(value_discretization_interval=vdi)
        acc.compose(_event(steps))
        return {"lower": None, "value": float(acc.get_epsilon(DELTA)), "upper": None}
    return fn


def pld_bracket_cell(steps: int, vdi: float) -> Callable[[], dict]:
    def fn():
        from dp_accounting.pld import privacy_loss_distribution as pld

        out = []
        for pessimistic in (False, True):  # optimistic: only the privacy-buckets algorithm
            d = pld.from_gaussian_mechanism(SIGMA, sampling_prob=Q, pessimistic_estimate=pessimistic,
                                            value_discretization_interval=vdi,
                                            use_connect_dots=pessimistic)
            out.append(float(d.self_compose(steps).get_epsilon_for_delta(DELTA)))
        return {"lower": out[0], "value": None, "upper": out[1]}
    return fn


def rdp_cell(steps: int) -> Callable[[], dict]:
    def fn():
        from dp_accounting.rdp import rdp_privacy_accountant

        acc = rdp_privacy_accountant.RdpAccountant()
        acc.compose(_event(steps))
        return {"lower": None, "value": float(acc.get_epsilon(DELTA)), "upper": None}
    return fn


def prv_cell(steps: int, eps_error: float) -> Callable[[], dict]:
    def fn():
        from prv_accountant import PoissonSubsampledGaussianMechanism, PRVAccountant

        acc = PRVAccountant(prvs=[PoissonSubsampledGaussianMechanism(
            noise_multiplier=SIGMA, sampling_probability=Q)], max_self_compositions=[steps],
            eps_error=eps_error, delta_error=DELTA / 1000)
        lo, est, up = acc.compute_epsilon(delta=DELTA, num_self_compositions=[steps])
        return {"lower": float(lo), "value": float(est), "upper": float(up)}
    return fn


def opacus_cell(steps: int, module: ModuleType) -> Callable[[], dict]:
    def fn():
        rdp = module.compute_rdp(q=Q, noise_multiplier=SIGMA, steps=steps, orders=OPACUS_ORDERS)
        eps, _ = module.get_privacy_spent(orders=OPACUS_ORDERS, rdp=rdp, delta=DELTA)
        return {"lower": None, "value": float(eps), "upper": None}
    return fn


# ------------------------------------------------------------------------------ Opacus file


def opacus_rdp(wheel: str | None = None) -> tuple[ModuleType, str] | tuple[None, str]:
    """``(module, version)`` of Opacus's ``analysis/rdp.py``, or ``(None, why not)``."""
    wheel = wheel or os.environ.get("ODP_OPACUS_WHEEL")
    try:
        if wheel is None:
            found = sorted(CACHE.glob("opacus-*.whl"))
            if not found:
                CACHE.mkdir(parents=True, exist_ok=True)
                subprocess.run([sys.executable, "-m", "pip", "download", "opacus", "--no-deps",
                                "--quiet", "-d", str(CACHE)], check=True, timeout=300,
                               capture_output=True)
                found = sorted(CACHE.glob("opacus-*.whl"))
            if not found:
                return None, "no opacus wheel"
            wheel = str(found[-1])
        version = Path(wheel).name.split("-")[1]
        with zipfile.ZipFile(wheel) as zf:
            source = zf.read(OPACUS_FILE)
        target = Path(tempfile.mkdtemp(prefix="opacus_rdp_")) / "rdp.py"
        target.write_bytes(source)
        spec = importlib.util.spec_from_file_location("opacus_analysis_rdp", target)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)  # imports numpy and scipy only
        return module, version
    except (OSError, subprocess.SubprocessError, KeyError, zipfile.BadZipFile) as exc:
        return None, f"Opacus rdp.py unavailable ({type(exc).__name__}: {str(exc)[:120]})"


# ------------------------------------------------------------------------------ table


def cells(steps: int, peers: dict[str, Any], opacus: ModuleType | None, quick: bool = False):
    """``[(library, setting, fn, is_peer)]`` for one T."""
    out: list[tuple[str, str, Callable[[], dict], bool]] = [
        ("odp", ODP_DEFAULT, odp_cell(steps), False),
        ("odp", ODP_TARGET, odp_target_cell(steps), False),
        ("odp", "buckets, 8192 buckets (rigorous)", odp_cell(steps, 8192), False),
    ]
    if peers.get("dp-accounting"):
        out.append(("dp-accounting", PLD_FINE, pld_accountant_cell(steps, 1e-4), True))
        out.append(("dp-accounting", PLD_COARSE, pld_accountant_cell(steps, 1e-3), True))
        if not quick:
            out.append(("dp-accounting", "PLD optimistic (privacy buckets)…pessimistic "
                        "(connect-the-dots), vdi 1e-4",
                        pld_bracket_cell(steps, 1e-4), True))
        out.append(("dp-accounting", "RdpAccountant (default orders)", rdp_cell(steps), True))
    if peers.get("prv-accountant"):
        out.append(("prv-accountant", "eps_error 0.1, delta_error δ/1000", prv_cell(steps, 0.1),
                    True))
        if not quick:
            out.append(("prv-accountant", "eps_error 0.01, delta_error δ/1000",
                        prv_cell(steps, 0.01), True))
    if opacus is not None:
        out.append(("Opacus", "analysis/rdp.py, default orders (RDP)", opacus_cell(steps, opacus),
                    True))
    return out


def inside(result: dict, lo: float, up: float) -> str:
    """Where a peer's numbers lie relative to odp's interval ``[lo, up]``: its reported value
    (or its upper end) -- inside, above (looser) or below odp's rigorous lower bound (then it
    is not an upper bound) -- and, for a peer bracket, whether it contains odp's interval."""
    v = result["value"] if result["value"] is not None else result["upper"]
    parts = []
    if v is not None:
        if lo <= v <= up:
            parts.append("yes")
        elif v > up:
            parts.append(f"no: above by {v - up:.2g}")
        else:
            parts.append(f"**no: {lo - v:.2g} below odp's lower bound**")
    if result["lower"] is not None and result["upper"] is not None:
        if result["lower"] <= lo and up <= result["upper"]:
            parts.append("its bracket contains odp's")
        elif result["lower"] <= up and lo <= result["upper"]:
            parts.append("the brackets overlap")
        else:
            parts.append("**its bracket is disjoint from odp's**")
    return "; ".join(parts) or "–"


TABLE_HEAD = ["| workload | library | settings | ε lower | reported ε | ε upper | rel. width | "
              "inside odp's interval | time (CPU) | peer CPU / odp CPU |",
              "|---|---|---|---|---|---|---|---|---|---|"]


def table_rows(steps, peers, opacus, repeats, timeout, quick, log=None):
    """``(markdown rows, records)`` for one T; a record is ``(library, setting, Timing,
    where)``.  Ratios are against the CPU time of odp's first (default) cell."""
    rows, recs = [], []
    odp_lo = odp_up = None
    base: Timing | None = None
    label = f"q={Q}, σ={SIGMA}, T={steps:,}"
    for lib, setting, fn, is_peer in cells(steps, peers, opacus, quick):
        t = run_cell(fn, repeats, timeout if is_peer else None)
        out = t.out
        if out is None:
            rows.append(f"| {label} | {lib} | {setting} | – | – | – | – | – | "
                        f"– ({t.note}) | – |")
            recs.append((lib, setting, t, "–"))
            if log:
                log(f"dpsgd T={steps} {lib} {setting} failed: {t.note}")
            continue
        if lib == "odp" and odp_lo is None:
            odp_lo, odp_up, base = out["lower"], out["upper"], t
        width = (None if out["lower"] is None or out["upper"] is None
                 else out["upper"] - out["lower"])
        rel = "–" if width is None else f"{width / out['upper']:.3g}"
        where = "–" if not is_peer or odp_lo is None else inside(out, odp_lo, odp_up)
        r = "–" if base is None or t is base else ratio(t, base)
        extra = ""
        if "attempts" in out:
            extra = (f" [windows tried: {', '.join(map(str, out['attempts']))}; target "
                     f"{'reached' if out['reached'] else 'NOT reached'}]")
        rows.append(f"| {label} | {lib} | {setting}{extra} | {fmt_x(out['lower'], 10)} | "
                    f"{fmt_x(out['value'], 10)} | {fmt_x(out['upper'], 10)} | {rel} | {where} | "
                    f"{fmt_t(t)} | {r} |")
        recs.append((lib, setting, t, where))
        if log:
            log(f"dpsgd T={steps} {lib} {setting} {fmt_t(t)} {out}")
    return rows, recs


def speed_goals(recs) -> list[str]:
    """The two speed statements for one T, from its records: odp's default interval
    against PLD at 1e-4, and the ``--target-width 1e-3`` run against PLD at 1e-3 (CPU time)."""
    by = {(r[0], r[1]): r for r in recs}
    out = []
    for mine, peer, what in ((ODP_DEFAULT, PLD_FINE, "discretisation 1e-4"),
                             (ODP_TARGET, PLD_COARSE, "discretisation 1e-3")):
        a, b = by.get(("odp", mine)), by.get(("dp-accounting", peer))
        if not a or not b or a[2].out is None or b[2].out is None:
            continue
        o = a[2].out
        rel = (o["upper"] - o["lower"]) / o["upper"]
        faster = a[2].cpu < b[2].cpu
        out.append(f"odp [{o['lower']:.6f}, {o['upper']:.6f}] (width {o['upper'] - o['lower']:.2g}, "
                   f"relative {rel:.3g}) in CPU {fmt_s(a[2].cpu)} vs dp-accounting PLD at {what} "
                   f"{b[2].out['value']:.6f} in CPU {fmt_s(b[2].cpu)}: odp "
                   f"{'faster' if faster else 'SLOWER'} ({b[2].cpu / a[2].cpu:.2f}× odp's speed)")
    return out


# ------------------------------------------------------------------------------ calibration


def odp_sigma_interval(sigma: float, q: float = CAL_Q, steps: int = CAL_T,
                       delta: float = CAL_DELTA):
    """odp's rigorous interval of ε at a given noise multiplier (default window)."""
    from fractions import Fraction

    from odp.buckets import PrivacyBucketsAccountant, poisson_gaussian

    # the floats' exact values: the σ a peer returned is the σ a user would run with
    acc = PrivacyBucketsAccountant().compose(poisson_gaussian(Fraction(sigma), Fraction(q)),
                                             steps)
    return acc.get_epsilon_interval(Fraction(delta))


def opacus_python() -> str | None:
    cand = os.environ.get("ODP_OPACUS_PYTHON") or "/work/venv-opacus/bin/python"
    return cand if Path(cand).exists() else None


def opacus_calibration(accountant: str) -> tuple[float, float, float] | str:
    """``(σ, wall, cpu)`` from Opacus's own ``get_noise_multiplier`` in a Python with Opacus,
    timed inside that process, or why not."""
    py = opacus_python()
    if py is None:
        return "no Python with Opacus (set $ODP_OPACUS_PYTHON)"
    code = ("import json, time, warnings; warnings.simplefilter('ignore')\n"
            "from opacus.accountants.utils import get_noise_multiplier\n"
            "kw = dict(target_epsilon=%r, target_delta=%r, sample_rate=%r, steps=%r, "
            "accountant=%r)\n"
            "get_noise_multiplier(**kw)\n"  # warm-up (imports)
            "c, w = time.process_time(), time.perf_counter()\n"
            "s = get_noise_multiplier(**kw)\n"
            "print(json.dumps([s, time.perf_counter() - w, time.process_time() - c]))\n"
            % (CAL_EPS, CAL_DELTA, CAL_Q, CAL_T, accountant))
    try:
        done = subprocess.run([py, "-c", code], capture_output=True, text=True, timeout=900)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"{type(exc).__name__}"
    if done.returncode != 0:
        return done.stderr.strip().splitlines()[-1][:160] if done.stderr.strip() else "failed"
    s, w, c = json.loads(done.stdout.strip().splitlines()[-1])
    return float(s), float(w), float(c)


def dpa_calibration(kind: str) -> Callable[[], dict]:
    def fn():
        from dp_accounting import mechanism_calibration as mc
        from dp_accounting.pld import pld_privacy_accountant
        from dp_accounting.rdp import rdp_privacy_accountant

        make = ((lambda: pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-4))
                if kind == "pld" else rdp_privacy_accountant.RdpAccountant)
        sigma = mc.calibrate_dp_mechanism(
            make, lambda s: _event(CAL_T, CAL_Q, s), CAL_EPS, CAL_DELTA,
            mc.LowerEndpointAndGuess(0.1, 1.0), tol=1e-3)
        return {"sigma": float(sigma)}
    return fn


def odp_calibration() -> dict:
    from odp.dpsgd import noise_multiplier

    c = noise_multiplier(str(CAL_EPS), str(CAL_DELTA), str(CAL_Q), CAL_T)
    return {"sigma": float(c.noise_multiplier), "lower": float(c.epsilon.lower),
            "upper": float(c.epsilon.upper), "within": None if c.optimal_within is None
            else float(c.optimal_within), "below": None if c.below is None
            else float(c.below.lower), "evaluations": c.evaluations}


def calibration_rows(peers, repeats, timeout, log=None) -> tuple[list[str], list[str]]:
    """Markdown rows and README lines of the calibration comparison."""
    rows = ["| library | method | σ | odp's rigorous ε at σ (δ = 1e-5) | ε ≤ 3 certified | "
            "time (CPU) |", "|---|---|---|---|---|---|"]
    readme: list[str] = []
    t = run_cell(odp_calibration, 1, None)
    o = t.out
    close = (f"optimal within {o['within']:g} (at σ − {o['within']:g} ε ≥ {o['below']:.6f})"
             if o["within"] is not None else "closeness undecided")
    rows.append(f"| odp | `odp.dpsgd.noise_multiplier`, resolution 1e-3, privacy buckets ({close}; "
                f"{o['evaluations']} σ bracketed) | {o['sigma']:.4f} | [{o['lower']:.6f}, "
                f"{o['upper']:.6f}] | yes | {fmt_t(t)} |")
    results = [("odp", o["sigma"])]
    peer_cells: list[tuple[str, str, Any]] = []
    for acct in ("rdp", "prv"):
        peer_cells.append(("Opacus", f"`get_noise_multiplier(accountant={acct!r})`, "
                           "epsilon_tolerance 0.01", ("opacus", acct)))
    if peers.get("dp-accounting"):
        peer_cells.append(("dp-accounting", "`calibrate_dp_mechanism`, PLDAccountant vdi 1e-4, "
                           "tol 1e-3", dpa_calibration("pld")))
        peer_cells.append(("dp-accounting", "`calibrate_dp_mechanism`, RdpAccountant, tol 1e-3",
                           dpa_calibration("rdp")))
    for lib, method, job in peer_cells:
        if isinstance(job, tuple):
            got = opacus_calibration(job[1])
            if isinstance(got, str):
                rows.append(f"| {lib} | {method} | – | – | – | – ({got}) |")
                continue
            sigma, timing = got[0], Timing(got[1], got[2], None, 1, "")
        else:
            timing = run_cell(job, 1, timeout)
            if timing.out is None:
                rows.append(f"| {lib} | {method} | – | – | – | – ({timing.note}) |")
                continue
            sigma = timing.out["sigma"]
        iv = odp_sigma_interval(sigma)
        ok = "yes" if iv.upper <= CAL_EPS else ("**no**" if iv.lower > CAL_EPS else "undecided")
        rows.append(f"| {lib} | {method} | {sigma:.4f} | [{float(iv.lower):.6f}, "
                    f"{float(iv.upper):.6f}] | {ok} | {fmt_t(timing)} |")
        results.append((f"{lib} {method.split(',')[0]}", sigma))
        if log:
            log(f"calibration {lib} {method} sigma={sigma} {iv} {fmt_t(timing)}")
    readme.append("Calibration (ε=3, δ=1e-5, q=0.01, T=10,000): " + "; ".join(
        f"{name} σ={s:.4f}" for name, s in results) + f"; odp's σ is {close}.")
    return rows, readme


def main(argv=None) -> int:
    warnings.simplefilter("ignore")
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=300.0)
    ap.add_argument("--opacus-wheel", default=None)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--no-calibration", action="store_true")
    args = ap.parse_args(argv)
    preload_peers()
    opacus, opacus_version = opacus_rdp(args.opacus_wheel)
    print(f"Opacus rdp.py: {opacus_version}", file=sys.stderr)
    print("\n".join(TABLE_HEAD))
    for steps in args.steps:
        rows, recs = table_rows(steps, PEERS, opacus, args.repeats, args.timeout, args.quick)
        print("\n".join(rows))
        for line in speed_goals(recs):
            print(f"T={steps:,}: {line}")
    if not args.no_calibration:
        rows, readme = calibration_rows(PEERS, args.repeats, args.timeout)
        print("\n".join(rows + readme))
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""DP-SGD accounting (Poisson-subsampled Gaussian, add/remove neighbours): odp against peers.

    python bench/dpsgd.py [--steps 10000 100000] [--repeats 3] [--timeout 300]

Workload (issue 26): sampling rate q = 0.01, noise multiplier σ = 1.1, T steps, ε at δ = 1e-5.

* odp privacy buckets: the rigorous interval, default window (32768 buckets) and 8192 buckets;
* dp-accounting: ``PLDAccountant`` (connect-the-dots PLD, pessimistic, value discretisation
  1e-4 and 1e-3), the optimistic..pessimistic PLD pair at 1e-4, ``RdpAccountant``;
* prv-accountant: ``PRVAccountant`` with eps_error 0.1 and 0.01 (its certified bracket);
* Opacus: the RDP analysis of ``opacus/accountants/analysis/rdp.py`` with Opacus's default
  orders, *that file alone* loaded by path (numpy + scipy only; torch is never imported).  It
  is taken from the Opacus wheel: ``--opacus-wheel FILE`` or ``$ODP_OPACUS_WHEEL``, else
  ``pip download opacus --no-deps`` into ``~/.cache/odp-bench`` (nothing is installed).

Each peer value is reported with whether it lies inside odp's interval (a peer's upper estimate
above odp's upper end is looser, below odp's lower end would be wrong).  ``bench/compare.py``
runs the same cells for docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import tempfile
import time
import warnings
import zipfile
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))

Q, SIGMA, DELTA = 0.01, 1.1, 1e-5
OPACUS_FILE = "opacus/accountants/analysis/rdp.py"
#: Opacus's ``RDPAccountant.DEFAULT_ALPHAS`` (opacus/accountants/rdp.py).
OPACUS_ORDERS = [1 + x / 10.0 for x in range(1, 100)] + list(range(12, 64))
CACHE = Path(os.environ.get("ODP_BENCH_CACHE", Path.home() / ".cache" / "odp-bench"))


# ------------------------------------------------------------------------------ cells
# each cell returns {"lower": float|None, "value": float|None, "upper": float|None}:
# a bracket (lower, upper) and/or one reported value (a peer's upper estimate)


def odp_cell(steps: int, buckets: int | None = None, q: float = Q,
             sigma: float = SIGMA) -> Callable[[], dict]:
    def fn():
        from odp.buckets import PrivacyBucketsAccountant, poisson_gaussian

        cpu = time.process_time()
        opts = {} if buckets is None else {"buckets": buckets}
        acc = PrivacyBucketsAccountant(**opts).compose(poisson_gaussian(str(sigma), str(q)), steps)
        iv = acc.get_epsilon_interval(str(DELTA))
        return {"lower": float(iv.lower), "value": None, "upper": float(iv.upper),
                "cpu": time.process_time() - cpu}
    return fn


def _event(steps: int):
    import dp_accounting as dpa

    return dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(Q, dpa.GaussianDpEvent(SIGMA)), steps)


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
        ("odp", "buckets, defaults (32768 buckets; rigorous)", odp_cell(steps), False),
        ("odp", "buckets, 8192 buckets (rigorous)", odp_cell(steps, 8192), False),
    ]
    if peers.get("dp-accounting"):
        out.append(("dp-accounting", "PLDAccountant, connect-the-dots, vdi 1e-4",
                    pld_accountant_cell(steps, 1e-4), True))
        out.append(("dp-accounting", "PLDAccountant, connect-the-dots, vdi 1e-3",
                    pld_accountant_cell(steps, 1e-3), True))
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


def main(argv=None) -> int:
    warnings.simplefilter("ignore")
    from compare import PEERS, fmt_s, fmt_x, run_cell  # noqa: E402  (bench/compare.py)

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=300.0)
    ap.add_argument("--opacus-wheel", default=None)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    opacus, opacus_version = opacus_rdp(args.opacus_wheel)
    print(f"Opacus rdp.py: {opacus_version}", file=sys.stderr)
    for steps in args.steps:
        rows, _ = table_rows(steps, PEERS, opacus, args.repeats, args.timeout, args.quick,
                             run_cell=run_cell, fmt_s=fmt_s, fmt_x=fmt_x)
        print("\n".join(rows))
    return 0


def table_rows(steps, peers, opacus, repeats, timeout, quick, *, run_cell, fmt_s, fmt_x,
               log=None):
    """``(markdown rows, records)`` for one T; a record is ``(library, setting, seconds,
    result or None, note, where)``."""
    rows, recs = [], []
    odp_lo = odp_up = base = None
    label = f"q={Q}, σ={SIGMA}, T={steps:,}"
    for lib, setting, fn, is_peer in cells(steps, peers, opacus, quick):
        s, out, runs, note = run_cell(fn, repeats, timeout if is_peer else None)
        if out is None:
            rows.append(f"| {label} | {lib} | {setting} | – | – | – | – | – | "
                        f"{fmt_s(s)} ({note}) | – |")
            recs.append((lib, setting, s, None, note, "–"))
            if log:
                log(f"dpsgd T={steps} {lib} {setting} failed: {note}")
            continue
        if lib == "odp" and odp_lo is None:
            odp_lo, odp_up, base = out["lower"], out["upper"], s
        width = (None if out["lower"] is None or out["upper"] is None
                 else out["upper"] - out["lower"])
        rel = "–" if width is None else f"{width / out['upper']:.1e}"
        where = "–" if not is_peer or odp_lo is None else inside(out, odp_lo, odp_up)
        ratio = "–" if s is None or base is None or lib == "odp" else f"{s / base:.1f}×"
        cpu = f" (CPU {fmt_s(out['cpu'])})" if "cpu" in out else ""
        rows.append(f"| {label} | {lib} | {setting} | {fmt_x(out['lower'], 10)} | "
                    f"{fmt_x(out['value'], 10)} | {fmt_x(out['upper'], 10)} | {rel} | {where} | "
                    f"{fmt_s(s)}{cpu} | {ratio} |")
        recs.append((lib, setting, s, out, note, where))
        if log:
            log(f"dpsgd T={steps} {lib} {setting} {fmt_s(s)} {out}")
    return rows, recs


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "bench"))
    sys.exit(main())

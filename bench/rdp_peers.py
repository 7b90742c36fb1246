#!/usr/bin/env python3
"""DP-SGD accounting: odp's rigorous RDP route next to the peers, on the same settings.

For each setting (Poisson sampling rate q, noise multiplier σ, steps T, δ) prints

* odp: :func:`odp.rdp.subsampled_gaussian_epsilon` — a rigorous upper bound (MTZ 2019 RDP with
  directed rounding and a remainder bound, CKS/Balle conversion, dp-accounting's orders), its
  order and CPU time;
* odp with Mironov's Prop. 3 conversion (the old route: 6.28 on the first setting);
* dp-accounting's ``RdpAccountant`` and ``PLDAccountant`` (if importable);
* Opacus's ``accountants/analysis/rdp.py``, loaded directly from the opacus wheel with
  importlib (never installed; torch is not needed).  Give the wheel with ``--opacus-wheel``,
  or the script runs ``pip download opacus --no-deps`` into ``--cache`` once.

    python bench/rdp_peers.py [--json out.json]

The peers are cross-checks: tests/test_rdp.py asserts against odp's own mpmath references.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
import time
import zipfile
from pathlib import Path
from types import ModuleType

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

from odp import conversions as cv  # noqa: E402
from odp import rdp  # noqa: E402

SETTINGS = [  # (q, σ, T, δ): the issue-26 example first
    ("0.01", "1.1", 10_000, "1e-5"),
    ("0.004", "0.8", 25_000, "1e-5"),
    ("0.1", "5", 1_000, "1e-5"),
    ("0.001", "30", 1_000, "1e-5"),
]
OPACUS_ORDERS = [1 + x / 10.0 for x in range(1, 100)] + list(range(12, 64))


def opacus_rdp(wheel: Path | None, cache: Path) -> ModuleType | None:
    if wheel is None:
        found = sorted(cache.glob("opacus-*.whl"))
        if not found:
            cache.mkdir(parents=True, exist_ok=True)
            subprocess.run([sys.executable, "-m", "pip", "download", "opacus", "--no-deps",
                            "-d", str(cache), "-q"], check=False)
            found = sorted(cache.glob("opacus-*.whl"))
        if not found:
            return None
        wheel = found[-1]
    target = cache / "opacus_rdp.py"
    with zipfile.ZipFile(wheel) as z:
        target.write_bytes(z.read("opacus/accountants/analysis/rdp.py"))
    spec = importlib.util.spec_from_file_location("opacus_analysis_rdp", target)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--opacus-wheel", type=Path)
    ap.add_argument("--cache", type=Path, default=Path("/tmp/odp-bench-opacus"))
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    try:
        import dp_accounting as dpa
    except ImportError:
        dpa = None
    opacus = opacus_rdp(args.opacus_wheel, args.cache)
    rows = []
    for q, sigma, steps, delta in SETTINGS:
        t0 = time.process_time()
        curve = rdp.subsampled_gaussian_curve(q, sigma, steps)
        eps, order = cv.best_rdp_to_dp(curve, delta)
        seconds = time.process_time() - t0
        mironov = min(cv.rdp_to_dp_epsilon_mironov(r.alpha, r.epsilon, delta) for r in curve)
        row = {"q": q, "sigma": sigma, "steps": steps, "delta": delta,
               "odp_epsilon": str(eps), "odp_epsilon_float": float(eps), "odp_order": str(order),
               "odp_cpu_seconds": round(seconds, 3), "odp_mironov": float(mironov)}
        if dpa is not None:
            acc = dpa.rdp.RdpAccountant()
            event = dpa.SelfComposedDpEvent(
                dpa.PoissonSampledDpEvent(float(q), dpa.GaussianDpEvent(float(sigma))), steps)
            acc.compose(event)
            row["dp_accounting_rdp"], row["dp_accounting_rdp_order"] = (
                float(x) for x in acc.get_epsilon_and_optimal_order(float(delta)))
            pld = dpa.pld.PLDAccountant()
            pld.compose(event)
            row["dp_accounting_pld"] = float(pld.get_epsilon(float(delta)))
        if opacus is not None:
            r = opacus.compute_rdp(q=float(q), noise_multiplier=float(sigma), steps=steps,
                                   orders=OPACUS_ORDERS)
            e, a = opacus.get_privacy_spent(orders=OPACUS_ORDERS, rdp=r, delta=float(delta))
            row["opacus_rdp"], row["opacus_rdp_order"] = float(e), float(a)
        rows.append(row)
        print(json.dumps(row))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()

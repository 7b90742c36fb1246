"""bench/compare.py's odp cells still call the current API (a benchmark that crashes halfway
regenerates nothing).  Small sizes only: speed is measured by the benchmark itself."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _compare():
    spec = importlib.util.spec_from_file_location("bench_compare", ROOT / "bench" / "compare.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_compare"] = module
    spec.loader.exec_module(module)
    return module


def test_the_odp_cells_run_on_small_sizes(tmp_path):
    compare = _compare()
    assert compare.odp_charges(20)() == 20
    assert compare.odp_charges(20, ledger="sqlite")() == 20
    lo, hi = compare.odp_buckets([("gaussian", 10), ("laplace", 10)])()
    assert 0 < lo <= hi < 50
    sys.path.insert(0, str(ROOT / "bench"))
    from ledger_backends import fsync_rate, sqlite_commit_rate

    assert fsync_rate(str(tmp_path), n=5)["rewrite_512B"] > 0
    assert sqlite_commit_rate(str(tmp_path), n=5) > 0

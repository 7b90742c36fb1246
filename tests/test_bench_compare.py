"""bench/compare.py's odp cells still call the current API (a benchmark that crashes halfway
regenerates nothing).  Small sizes only: speed is measured by the benchmark itself."""

from __future__ import annotations

import sys

from script_support import ROOT, load_script


def test_the_odp_cells_run_on_small_sizes(tmp_path):
    compare = load_script("bench/compare.py", "bench_compare")
    assert compare.odp_charges(20)() == 20
    assert compare.odp_charges(20, ledger="sqlite")() == 20
    assert compare.odp_charges(20, ledger="sqlite", directory=str(tmp_path))() == 20
    assert not list(tmp_path.iterdir())  # its ledger lived in a temporary directory there
    lo, hi = compare.odp_buckets([("gaussian", 10), ("laplace", 10)])()
    assert 0 < lo <= hi < 50
    sys.path.insert(0, str(ROOT / "bench"))
    from ledger_backends import fsync_rate, sqlite_commit_rate

    assert fsync_rate(str(tmp_path), n=5)["rewrite_512B"] > 0
    assert sqlite_commit_rate(str(tmp_path), n=5) > 0


def test_the_durable_floor_cases_run_on_small_sizes(tmp_path):
    floor = load_script("bench/durable_floor.py", "bench_durable_floor")
    for seconds in (floor.flush_rate(str(tmp_path), 5), floor.sqlite_charges(str(tmp_path), 5),
                    floor.memory_charges(5), floor.log_floor(str(tmp_path), 5)):
        assert 0 < seconds < 5
    assert not list(tmp_path.iterdir())  # every case cleaned up after itself


def test_the_dpsgd_cells_run_on_small_sizes(tmp_path):
    """bench/dpsgd.py (the DP-SGD section of bench/compare.py): odp's cells on a small T, the
    classification of a peer's number against odp's interval, a missing Opacus wheel, and the
    timing helper of bench/common.py (wall and CPU time)."""
    sys.path.insert(0, str(ROOT / "bench"))
    dpsgd = load_script("bench/dpsgd.py", "bench_dpsgd")
    out = dpsgd.odp_cell(10, buckets=1024)()
    assert 0.2 < out["lower"] <= out["upper"] < 0.3  # ε(1e-5) of 10 steps is 0.2717...
    target = dpsgd.odp_target_cell(10, width=0.01)()
    assert target["reached"] and target["upper"] - target["lower"] <= 0.01
    lo, up = out["lower"], out["upper"]
    assert dpsgd.inside({"lower": None, "value": (lo + up) / 2, "upper": None}, lo, up) == "yes"
    assert dpsgd.inside({"lower": None, "value": up + 1, "upper": None}, lo, up).startswith(
        "no: above")
    assert "below odp's lower bound" in dpsgd.inside(
        {"lower": None, "value": lo - 1e-3, "upper": None}, lo, up)
    assert dpsgd.inside({"lower": lo - 1, "value": None, "upper": up + 1}, lo, up) == (
        "no: above by 1; its bracket contains odp's")
    assert dpsgd.inside({"lower": lo + 1e-9, "value": None, "upper": up}, lo, up) == (
        "yes; the brackets overlap")
    assert "disjoint" in dpsgd.inside({"lower": up + 1, "value": None, "upper": up + 2}, lo, up)
    module, why = dpsgd.opacus_rdp(str(tmp_path / "opacus-0-py3-none-any.whl"))
    assert module is None and "unavailable" in why
    common = load_script("bench/common.py", "bench_common")
    t = common.run_cell(lambda: sum(range(10**5)), 1)
    assert t.wall > 0 and t.cpu > 0 and t.out == sum(range(10**5)) and t.note == ""
    forked = common.run_cell(lambda: 1 / 0, 1, timeout=30)
    assert forked.out is None and "ZeroDivisionError" in forked.note


def test_compare_and_dpsgd_do_not_import_each_other():
    """Shared helpers live in bench/common.py; bench/dpsgd.py does not import bench/compare.py
    (compare imports dpsgd for its DP-SGD section, one way)."""
    import ast

    for name in ("dpsgd", "common"):
        tree = ast.parse((ROOT / "bench" / f"{name}.py").read_text(encoding="utf-8"))
        imported = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import)
                    for a in n.names}
        imported |= {n.module.split(".")[0] for n in ast.walk(tree)
                     if isinstance(n, ast.ImportFrom) and n.module}
        assert "compare" not in imported, name


def test_the_dpsgd_section_is_spliced_into_an_existing_report():
    """``bench/compare.py --section dpsgd`` reruns that section alone: it replaces the section,
    its README lines, notes and settings line, and leaves everything else as it was."""
    compare = load_script("bench/compare.py", "bench_compare")
    doc = "\n".join(["# Benchmarks", "## README numbers", "```", "Buckets, x.", "OptDel, homogeneous a.",
                     "```", "## Settings", "- Versions: v.", "", "## Privacy buckets", "old",
                     "## OptDel (early stopping)", "kept", "## Exceptions and notes", "- n1."])
    md = [compare.DPSGD_HEADING, "", "| row 1 |", ""]
    once = compare.splice_dpsgd(doc, md, ["- DP-SGD q=0.01 first."], ["- **DP-SGD note**."],
                                "- DP-SGD section: run 1.")
    twice = compare.splice_dpsgd(once, [compare.DPSGD_HEADING, "", "| row 2 |", ""],
                                 ["- DP-SGD q=0.01 second."], [], "- DP-SGD section: run 2.")
    assert twice.count(compare.DPSGD_HEADING) == 1 and "| row 2 |" in twice
    assert "row 1" not in twice and "first" not in twice and "DP-SGD note" not in twice
    assert twice.index("DP-SGD q=0.01 second.") < twice.index("OptDel, homogeneous a.")
    assert twice.index(compare.DPSGD_HEADING) < twice.index("## OptDel")
    assert "- DP-SGD section: run 2." in twice and "run 1" not in twice
    for kept in ("Buckets, x.", "old", "kept", "- n1."):
        assert kept in twice

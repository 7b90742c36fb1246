"""CLI edges reported by a new user, each now one line on stderr with exit code 2
and nothing written (or a documented behaviour).  Real files, the real CLI entry point."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

import odp
from odp.cli import main


def _one_line_error(err: str, command: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"odp {command}") and "Traceback" not in err
    return lines[0]


def _files(d: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
            for p in d.iterdir() if p.is_file()}


@pytest.fixture
def ledger(tmp_path: Path) -> Path:
    path = tmp_path / "good.db"
    acc = odp.Accountant("1", "1e-6", ledger=path)
    acc.charge(odp.DP("0.1"))
    acc.close()
    return path


def test_figure_with_a_non_png_output_is_refused_before_any_work(tmp_path, capsys):
    for name in ("text.txt", "noext"):
        assert main(["figure", "1", "-o", str(tmp_path / name), "--quick"]) == 2
        line = _one_line_error(capsys.readouterr().err, "figure")
        assert "PNG" in line and name in line
    assert list(tmp_path.iterdir()) == []


def test_certify_refuses_to_replace_an_existing_file(ledger, capsys):
    d = ledger.parent
    unrelated = d / "existing.txt"
    unrelated.write_text("my notes\n")
    before = _files(d)
    assert main(["certify", str(ledger), "-o", str(unrelated)]) == 2
    line = _one_line_error(capsys.readouterr().err, "certify")
    assert "exists" in line and "--force" in line
    assert _files(d) == before
    # the sidecar alone existing is refused too
    (d / "c.txt.json").write_text("{}")
    assert main(["certify", str(ledger), "-o", str(d / "c.txt")]) == 2
    assert "c.txt.json exists" in _one_line_error(capsys.readouterr().err, "certify")
    # --force replaces them (documented)
    assert main(["certify", str(ledger), "-o", str(unrelated), "--force"]) == 0
    assert unrelated.read_text().startswith("# odp certificate")


def test_certify_with_a_missing_key_leaves_nothing_beside_the_ledger(ledger, capsys):
    d = ledger.parent
    before = set(_files(d))
    assert main(["certify", str(ledger), "-o", str(d / "c.txt"), "--sign-key",
                 str(d / "missing.key")]) == 2
    line = _one_line_error(capsys.readouterr().err, "certify")
    assert "missing.key" in line and "no such file" in line
    assert set(_files(d)) == before  # no -wal / -shm, no certificate


def test_reading_a_closed_ledger_leaves_no_sqlite_companions(ledger, capsys):
    d = ledger.parent
    before = set(_files(d))
    assert main(["ledger", "show", str(ledger)]) == 0
    assert main(["ledger", "verify", str(ledger)]) == 0
    assert main(["certify", str(ledger), "-o", str(d / "run.cert")]) == 0
    capsys.readouterr()
    assert set(_files(d)) == before | {"run.cert", "run.cert.json"}


def test_ledger_show_of_a_directory_says_so(tmp_path, capsys):
    assert main(["ledger", "show", str(tmp_path)]) == 2
    line = _one_line_error(capsys.readouterr().err, "ledger")
    assert "is a directory" in line and "disk I/O" not in line


def test_empty_paths_are_named_as_empty(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["ledger", "init", "", "--epsilon", "1"]) == 2
    assert "empty" in _one_line_error(capsys.readouterr().err, "ledger")
    assert list(tmp_path.iterdir()) == []


def test_verify_of_an_empty_path_says_empty(tmp_path, capsys, monkeypatch):
    """``odp verify ''`` is one line naming the empty path (not "Is a directory: '.'"),
    exit 2, nothing written; with --json the same message in the JSON error."""
    monkeypatch.chdir(tmp_path)
    assert main(["verify", ""]) == 2
    line = _one_line_error(capsys.readouterr().err, "verify")
    assert line == "odp verify: empty path: give the certificate file"
    assert main(["verify", "", "--json"]) == 2
    assert json.loads(capsys.readouterr().out)["error"] == "empty path: give the certificate file"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("value, why", [
    ("1e400", "outside the range"),
    ("1e-400", "outside the range"),
    ("\u0661", "ASCII digits"),  # ١, Arabic-Indic digit one
    ("1\u0660", "ASCII digits"),  # 1٠
])
def test_absurd_or_non_ascii_budgets_create_no_ledger(tmp_path, capsys, value, why):
    path = tmp_path / "l.db"
    assert main(["ledger", "init", str(path), "--epsilon", value]) == 2
    assert why in _one_line_error(capsys.readouterr().err, "ledger")
    assert list(tmp_path.iterdir()) == []


def test_budget_range_in_the_api():
    with pytest.raises(odp.InvalidBudget):
        odp.Budget("1e301")
    with pytest.raises(odp.InvalidBudget):
        odp.Budget("1", "1e-301")
    assert odp.Budget("1e300", "1e-300").epsilon == 10**300  # the ends are accepted
    assert odp.Budget(0, 0).epsilon == 0


def test_optdel_names_the_missing_steps_file(tmp_path, capsys):
    missing = tmp_path / "missing.json"
    assert main(["optdel", "--steps-file", str(missing)]) == 2
    line = _one_line_error(capsys.readouterr().err, "optdel")
    assert "--steps-file" in line and "missing.json" in line and "--stops" not in line
    steps = tmp_path / "steps.txt"
    steps.write_text("0.1,1e-6\n" * 3)
    assert main(["optdel", "--steps-file", str(steps)]) == 2
    assert "--stops and --costs are required" in _one_line_error(capsys.readouterr().err,
                                                                 "optdel")


def test_buckets_factor_too_coarse_is_refused_not_answered_trivially(capsys):
    for factor in ("1e300", "1e10"):
        assert main(["buckets", "--mechanism", "gaussian", "--sigma", "1", "--compositions",
                     "10", "--delta", "1e-5", "--factor", factor]) == 2
        line = _one_line_error(capsys.readouterr().err, "buckets")
        assert "too coarse" in line and "[0, inf]" in line
    # a factor within the range still answers, with a finite upper bound
    assert main(["buckets", "--mechanism", "gaussian", "--sigma", "1", "--compositions", "10",
                 "--delta", "1e-5", "--factor", "1.5", "--json"]) == 0
    assert '"upper_float": Infinity' not in capsys.readouterr().out

"""The two examples run as documented (as subprocesses, from the
source tree), and ``odp ledger show`` prints numbers people can read — exact short decimals,
or values rounded on the safe side and marked — with the exact values in ``--json``."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import warnings
from fractions import Fraction
from pathlib import Path

import pytest

import odp
from odp.cli import main

ROOT = Path(__file__).resolve().parents[1]


def _run_example(name: str, *args: str, cwd: Path) -> str:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    done = subprocess.run([sys.executable, str(ROOT / "examples" / name), *args], cwd=cwd,
                          env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    return done.stdout


def test_own_mechanism_example_runs_and_prints_releases_and_charges(tmp_path):
    out = _run_example("own_mechanism.py", cwd=tmp_path).splitlines()
    assert re.fullmatch(r"release: -?\d+ \| #1 noisy_count: sup ε=0\.25 δ=0 charged ε=0\.25 "
                        r"\(released\)", out[0])
    charges = []
    for i, line in enumerate(out[1:4], start=2):
        m = re.fullmatch(rf"release: (⊥|-?\d+) \| #{i} maybe_count: sup ε=0\.25 δ=0 charged "
                         r"ε=(0|0\.25) \(released\)", line)
        assert m, line
        assert (m.group(1) == "⊥") == (m.group(2) == "0")  # ⊥ costs 0, a count 0.25
        charges.append(Fraction(m.group(2)))
    assert re.fullmatch(r"release: -?\d+ \| #5 by_hand: sup ε=0\.1 δ=0 charged ε=0\.1 "
                        r"\(released\)", out[4])
    assert out[5] == "charged: #6 elsewhere: sup ε=0.05 δ=0 charged ε=0.05 (released)"
    assert out[6].startswith("refused: noisy_count needs ε=5")
    assert out[7].startswith("refused: run() needs a mechanism with a declared .guarantee")
    remaining = Fraction("1.25") - Fraction("0.25") - sum(charges) - Fraction("0.1") - Fraction("0.05")
    assert out[8] == f"remaining: Budget(epsilon={odp.budget.format_fraction(remaining)}, delta=0)"
    assert len(out) == 9


def test_opendp_example_runs_shows_decimals_and_verifies(tmp_path):
    pytest.importorskip("opendp", reason="OpenDP is not installed: pip install -e '.[opendp]'")
    ledger = tmp_path / "example.db"
    out = _run_example("opendp_laplace.py", str(ledger), cwd=tmp_path)
    assert "Laplace count: DP(epsilon=0.5, delta=0)" in out
    assert "Gaussian count: DP(epsilon=0.429941468838, delta=0.000001)" in out
    assert "remaining: Budget(epsilon=0.070058531162, delta=0)" in out
    assert "remaining  ε=0.070058531162  δ=0" in out  # odp ledger show
    assert "OK: 2 rounds replay under the rules generated from Odp/LedgerCore.lean" in out
    shown = out[out.index("ledger "):out.index("wrote ")].replace(str(ledger), "")
    assert "/" not in shown and "≤" not in shown and "≥" not in shown  # exact short decimals
    assert ledger.exists() and Path(str(ledger) + ".cert").exists()


def _show(path: str, capsys, *extra: str) -> str:
    capsys.readouterr()
    assert main(["ledger", "show", path, *extra]) == 0
    return capsys.readouterr().out


def test_ledger_show_marks_rounded_numbers_and_json_stays_exact(tmp_path, capsys):
    path = str(tmp_path / "thirds.db")
    old_float = Fraction(0.1)  # a charge recorded by an older odp: the float's binary value
    with odp.Accountant("1", "1e-6", ledger=path) as acc:
        acc.charge(odp.DP("1/3"))
        acc.charge(odp.DP(old_float))
        acc.charge(odp.ODP(lambda r: r, {"a": "1/7", "b": "1/5"}), "a")
    remaining = 1 - Fraction(1, 3) - old_float - Fraction(1, 7)
    out = _show(path, capsys)
    assert "budget     ε=1  δ=0.000001" in out
    assert "remaining  ε≥0.423809  δ=0.000001" in out  # 0.42380952…, rounded down
    assert "ε refunded by ODP: ≥0.0571428 (2/35)" in out  # 1/5 − 1/7, rounded down
    assert "numbers    exact up to 12 digits; ≤x / ≥x: rounded to 6 digits" in out
    rows = [line.split() for line in out.splitlines() if re.match(r"\d+ ", line)]
    assert rows[0][:3] == ["1", "external", "≤0.333334"]        # a cost: rounded up
    assert rows[1][:3] == ["2", "external", "≤0.100001"]        # 0.1000000000000000055…
    assert rows[2][2] == "0.2" and "≤0.142858" in rows[2]       # sup 1/5 exact; charged 1/7
    exact = json.loads(_show(path, capsys, "--json"))
    assert Fraction(exact["remaining"]["epsilon"]) == remaining
    assert [Fraction(r["charged"]) for r in exact["rounds"]] == [Fraction(1, 3), old_float,
                                                                 Fraction(1, 7)]


def test_ledger_show_of_float_budgets_reads_like_the_numbers_typed(tmp_path, capsys):
    """A float budget and float costs are recorded as short decimals; the ones a
    float means above its decimal (0.1 → 0.10000000000000001) print short and marked."""
    path = str(tmp_path / "floats.db")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the once-per-process FloatBudgetWarning
        with odp.Accountant(1.5, 1e-6, ledger=path) as acc:
            acc.charge(odp.DP(0.3))
            acc.charge(odp.DP(0.1, 1e-7))
    out = _show(path, capsys)
    assert "budget     ε=1.5  δ=0.000001" in out
    assert "remaining  ε≥1.09999  δ=9e-7" in out  # 1.5 − 0.3 − 0.10000000000000001
    assert "≤0.100001" in out and "1e-7" in out  # 0.10000000000000001, rounded up
    assert "/" not in out.replace(path, "").replace("≤x / ≥x", "")  # no p/q
    assert "numbers    exact up to 12 digits" in out  # the note says what ≤ and ≥ mean


def _section_code(title: str) -> list[str]:
    text = (ROOT / "docs" / "mechanisms.md").read_text(encoding="utf-8")
    start = text.index(f"## {title}")
    end = text.find("\n## ", start + 1)
    section = text[start:end if end != -1 else len(text)]
    return re.findall(r"```python\n(.*?)```", section, flags=re.S)


def test_own_mechanism_section_code_runs(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    blocks = _section_code("Write your own mechanism")
    assert len(blocks) == 2
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, "docs/mechanisms.md", "exec"), namespace)
    acc = namespace["acc"]
    assert [r.mechanism for r in acc.history] == ["maybe_count", "by_hand"]
    assert acc.history[0].charged in (0, Fraction(1, 4)) and acc.history[1].charged == Fraction(1, 10)


def test_opendp_section_code_runs(tmp_path, monkeypatch, capsys):
    pytest.importorskip("opendp", reason="OpenDP is not installed: pip install -e '.[opendp]'")
    monkeypatch.chdir(tmp_path)
    (block,) = _section_code("OpenDP measurements")
    namespace: dict = {}
    exec(compile(block, "docs/mechanisms.md", "exec"), namespace)
    out = capsys.readouterr().out
    assert out.startswith("DP(epsilon=0.5, delta=0) ")
    assert "DP(epsilon=0.429941468838, delta=0.000001)" in out
    namespace["acc"].close()
    assert (tmp_path / "budget.db").exists()

"""Lanes as people read them: `odp ledger init --lane`, `odp ledger show` (and --json's `lanes`
list), the demo's lane lines, and examples/gaussian_session.py (ends with `fit: 21` and a
verified certificate)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import odp
from odp.cli import main

ROOT = Path(__file__).resolve().parents[1]


def test_init_with_lanes_then_show(tmp_path, capsys):
    path = str(tmp_path / "l.db")
    assert main(["ledger", "init", path, "--epsilon", "2", "--delta", "1e-5",
                 "--lane", "odp:0.5:2e-6", "--lane", "zcdp:1.5:8e-6"]) == 0
    out = capsys.readouterr().out
    assert "lane odp [odp]" in out and "lane zcdp [zcdp]" in out
    acc = odp.Accountant(ledger=path)
    acc.run(odp.GaussianMechanism(len, epsilon=1, sigma=10), [1, 2, 3])
    acc.run(odp.LaplaceMechanism(len, epsilon="0.1"), [1, 2, 3])
    acc.close()
    assert main(["ledger", "show", path]) == 0
    out = capsys.readouterr().out
    assert "ρ 0.005 of 0.062755541589" in out and "spent      ε=" in out
    assert main(["ledger", "show", path, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    lanes = data["lanes"]
    assert [x["notion"] for x in lanes] == ["odp", "zcdp"]
    assert lanes[0]["spent"] == {"epsilon": "1/10", "delta": "0"}
    assert lanes[1]["spent"] == {"rho": "1/200"}
    z_eps = Fraction(lanes[1]["current"]["epsilon"])
    assert z_eps == odp.conversions.zcdp_to_dp_epsilon(Fraction(1, 200), Fraction(8, 10**6))
    assert Fraction(data["spent"]["epsilon"]) == Fraction(1, 10) + z_eps
    assert data["remaining"]["delta"] == "1/500000"  # δ of the ODP lane, not yet used


def test_init_refuses_bad_lanes_with_exit_2(tmp_path, capsys):
    path = tmp_path / "bad.db"
    for lanes in (["zcdp:3:1e-5"], ["zcdp:2"], ["renyi:2:1e-5"], ["gdp:1:1e-5"],
                  ["zcdp:1:5e-6", "odp:1:5e-6"]):
        args = ["ledger", "init", str(path), "--epsilon", "2", "--delta", "1e-5"]
        for lane in lanes:
            args += ["--lane", lane]
        assert main(args) == 2, lanes
        assert not path.exists()
    capsys.readouterr()


def test_a_ledger_without_lanes_shows_one_odp_lane(tmp_path, capsys):
    path = str(tmp_path / "plain.db")
    acc = odp.Accountant("1", "1e-6", ledger=path)
    acc.charge(odp.DP("0.25"))
    acc.close()
    assert main(["ledger", "show", path, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["lanes"] == [{"name": "odp", "notion": "odp", "rounds": 1,
                              "budget": {"epsilon": "1", "delta": "1/1000000"},
                              "spent": {"epsilon": "1/4", "delta": "0"},
                              "current": {"epsilon": "1/4", "delta": "0"}}]
    assert data["remaining"] == {"epsilon": "3/4", "delta": "1/1000000"}


def test_the_gaussian_session_example_fits_21_and_verifies(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    out = subprocess.run([sys.executable, str(ROOT / "examples" / "gaussian_session.py"),
                          str(tmp_path / "g.db")], capture_output=True, text=True, env=env,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.strip().splitlines()
    assert lines[-1] == "fit: 21"
    assert any(line.startswith("certificate ") and ": OK:" in line for line in lines)
    assert (tmp_path / "g.db.cert").exists()


def test_the_mixed_session_of_docs_filters_md_runs(tmp_path, monkeypatch):
    """docs/filters.md, "A mixed session": Gaussian releases in a zCDP lane and an SVT selection
    in the ODP lane, in one certified ledger."""
    from odp.certs.verify import verify_file

    text = (ROOT / "docs" / "filters.md").read_text(encoding="utf-8")
    section = text.split("### A mixed session")[1]
    block = section.split("```python\n")[1].split("```")[0]
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    exec(compile(block, "docs/filters.md", "exec"), namespace)  # noqa: S102 - our own docs
    acc = namespace["acc"]
    assert [r.lane for r in acc.history] == [None] + ["zcdp"] * 8
    assert acc.history[0].mechanism == "svt"
    assert acc.lanes[1].spent == (Fraction(8, 200),)
    acc.close()
    result = verify_file(tmp_path / "mixed.cert")
    assert result.ok, result.message

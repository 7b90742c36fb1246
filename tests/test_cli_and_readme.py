"""The README's two set-up commands, the `odp` CLI (demo, ledger show, --help), and an
end-to-end check that `odp demo` runs in a fresh virtualenv using only the README's command."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import venv
from fractions import Fraction
from pathlib import Path

import pytest

from odp.cli import main
from odp.ledger import SQLiteLedger

ROOT = Path(__file__).resolve().parents[1]


def _setup_commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    block = re.search(r"## Set-up\s+```bash\n(.*?)```", text, re.S)
    assert block, "README.md needs a '## Set-up' section with one bash block"
    return [line for line in block.group(1).splitlines() if line.strip()]


def test_readme_has_exactly_two_setup_commands():
    demo, tests = _setup_commands()
    assert "[demo]" in demo and demo.rstrip().endswith("odp demo")
    assert "[test]" in tests and "pytest" in tests
    ci = (ROOT / ".ci" / "run").read_text()
    assert 'grep -E \'^pip install -e "\\.\\[test\\]"\' README.md' in ci


def test_help_lists_commands(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    for command in ("demo", "ledger"):
        assert command in out


def test_demo_report_savings_equal_ledger_refunds(tmp_path, capsys):
    path = tmp_path / "demo.db"
    assert main(["demo", "--ledger", str(path), "--seed", "4", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    ledger = SQLiteLedger(path, readonly=True)
    rounds = ledger.rounds()
    ledger.close()
    released = [r for r in report["releases"] if "refused" not in r]
    assert len(released) == len(rounds) >= 6
    for row, rec in zip(released, rounds):
        assert Fraction(row["epsilon_saved"]) == rec.refund
        assert Fraction(row["epsilon_charged"]) == rec.charged
    total_saved = sum(rec.refund for rec in rounds)
    assert Fraction(report["summary"]["epsilon_saved"]) == total_saved
    # the ledger show command reads the same file, read-only
    assert main(["ledger", "show", str(path), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert len(shown["rounds"]) == len(rounds)
    assert shown["remaining"] == report["summary"]["remaining"]


def test_demo_refuses_to_overwrite(tmp_path, capsys):
    path = tmp_path / "x.db"
    path.write_text("")
    assert main(["demo", "--ledger", str(path)]) == 1
    assert "already exists" in capsys.readouterr().err


def test_ledger_show_on_missing_file_is_a_clean_error(tmp_path, capsys):
    assert main(["ledger", "show", str(tmp_path / "nope.db")]) == 1
    assert "no ledger" in capsys.readouterr().err


@pytest.mark.slow
def test_demo_runs_from_a_fresh_virtualenv_with_the_readme_command(tmp_path):
    """Exactly what a newcomer does: a new virtualenv, then the README's demo line."""
    demo_command = _setup_commands()[0]
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    bin_dir = env_dir / ("Scripts" if os.name == "nt" else "bin")
    env = dict(os.environ, VIRTUAL_ENV=str(env_dir), PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    env.pop("PYTHONPATH", None)
    proc = subprocess.run(["bash", "-c", demo_command], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    assert "ODP accounting charged" in proc.stdout
    assert str(bin_dir) in subprocess.run(["bash", "-c", "command -v odp"], env=env,
                                          capture_output=True, text=True).stdout

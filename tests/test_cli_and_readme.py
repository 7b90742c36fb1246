"""The README's two set-up commands, the `odp` CLI (demo, ledger show, --help), and an
end-to-end check that `odp demo` runs in a fresh virtualenv using only the README's command."""

from __future__ import annotations

import json
import os
import re
import subprocess
import venv
from pathlib import Path

import pytest

from odp.cli import main

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
    assert "ledger written to" in proc.stdout
    assert str(bin_dir) in subprocess.run(["bash", "-c", "command -v odp"], env=env,
                                          capture_output=True, text=True).stdout


def test_readme_usage_example_runs(tmp_path, monkeypatch):
    """The README's Python example is executed as written (in a temporary directory)."""
    text = (ROOT / "README.md").read_text()
    block = re.search(r"## Usage\s+```python\n(.*?)```", text, re.S).group(1)
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    exec(compile(block, "README.md", "exec"), namespace)  # noqa: S102 - our own README
    acc = namespace["acc"]
    assert len(acc.history) == 3 and (tmp_path / "run.cert").exists()
    assert (tmp_path / "budget.db").exists()


def test_every_command_in_the_readme_cli_table_runs(tmp_path, monkeypatch, capsys):
    """Each `odp …` command shown in the README's command table exits 0 (demo/ledger/certify/
    verify are exercised together; figures in --quick mode)."""
    text = (ROOT / "README.md").read_text()
    table = text[text.index("## Command line"):text.index("## Repository")]
    commands = re.findall(r"^\| `(odp [^`]+)`", table, re.M)
    assert len(commands) >= 6
    monkeypatch.chdir(tmp_path)
    assert main(["demo", "--ledger", "run.db", "--seed", "1"]) == 0
    assert main(["ledger", "show", "run.db"]) == 0
    assert main(["certify", "run.db", "-o", "run.cert"]) == 0
    assert main(["verify", "run.cert"]) == 0
    for command in commands:
        args = command.split()[1:]
        if args[0] in ("demo", "ledger", "certify"):
            continue  # run above with concrete paths
        if args[0] == "figure":
            args = ["figure", "1", "-o", "f.png", "--quick"]
        assert main(args) == 0, command
    capsys.readouterr()


def test_json_mode_reports_failures_as_json(tmp_path, capsys):
    assert main(["buckets", "--mechanism", "gaussian", "--sigma", "-1", "--compositions", "3",
                 "--delta", "1e-5", "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["ok"] is False and "sigma" in out["error"]
    assert main(["verify", str(tmp_path / "missing.cert"), "--json"]) == 2
    assert json.loads(capsys.readouterr().out)["ok"] is False

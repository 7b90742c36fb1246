"""The README's two set-up commands, the `odp` CLI (demo, ledger show, --help), and an
end-to-end check that `odp demo` runs in a fresh virtualenv using only the README's command."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from odp.cli import main

ROOT = Path(__file__).resolve().parents[1]


def _setup_commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    block = re.search(r"## Set-up.*?```bash\n(.*?)```", text, re.S)
    assert block, "README.md needs a '## Set-up' section with one bash block"
    return [line for line in block.group(1).splitlines() if line.strip()]


def test_readme_has_exactly_two_setup_commands_that_make_a_venv():
    demo, tests = _setup_commands()  # exactly two lines
    for line in (demo, tests):
        # a fresh Debian machine's pip refuses installs outside a virtualenv (PEP 668)
        assert line.startswith("python3 -m venv .venv && . .venv/bin/activate && pip install -e ")
    assert '".[demo]"' in demo and demo.rstrip().endswith("odp demo")
    assert '".[test]"' in tests and tests.rstrip().endswith("python -m pytest")
    setup = (ROOT / "README.md").read_text().split("## Set-up", 1)[1].split("## ", 1)[0]
    assert "3.10" in setup and "python3-venv" in setup and "odp-accounting" in setup
    for extra in ("demo", "plots", "lean", "test"):
        assert f"`{extra}`" in setup  # every extra is explained


def test_ci_extracts_the_readme_test_line():
    """.ci/run runs the README's [test] line: its own grep, run on the README, yields it."""
    ci = (ROOT / ".ci" / "run").read_text()
    grep = re.search(r"^cmd=\$\((grep .*?) \|\| true\)$", ci, re.M)
    assert grep, ".ci/run must take its test command from the README with grep"
    out = subprocess.run(["bash", "-c", grep.group(1)], cwd=ROOT, capture_output=True, text=True)
    assert out.stdout.strip() == _setup_commands()[1]


def test_distribution_name_is_not_the_unrelated_pypi_odp():
    meta = (ROOT / "pyproject.toml").read_text()
    assert re.search(r'^name = "odp-accounting"$', meta, re.M)
    assert 'odp = "odp.cli:main"' in meta  # the command and the import name stay odp
    hints = []
    for path in (ROOT / "python" / "odp").rglob("*.py"):
        text = path.read_text()
        hints += [f"{path.name}: {m}" for m in re.findall(r"""pip install ["']?odp\b[^"'\s]*""", text)]
    assert hints == []  # no hint sends a user to PyPI's unrelated `odp`


def test_missing_extra_is_one_line_naming_the_editable_install(monkeypatch, tmp_path, capsys):
    from odp.extras import MissingDependency

    assert 'pip install -e ".[plots]"' in str(MissingDependency("matplotlib"))
    # as if the [demo] extra were not installed (Python's documented import block)
    monkeypatch.setitem(sys.modules, "sklearn", None)
    monkeypatch.setitem(sys.modules, "sklearn.datasets", None)
    assert main(["demo", "--ledger", str(tmp_path / "d.db")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and 'pip install -e ".[demo]"' in err, err
    assert not (tmp_path / "d.db").exists()


def test_help_lists_commands(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    for command in ("demo", "ledger"):
        assert command in out


@pytest.mark.slow
def test_demo_runs_from_a_fresh_virtualenv_with_the_readme_command(tmp_path):
    """Exactly what a newcomer does on a fresh checkout: the README's demo line, which makes its
    own virtualenv (run in a copy of the repository so the working tree is left alone)."""
    demo_command = _setup_commands()[0]
    repo = tmp_path / "odp"
    shutil.copytree(ROOT, repo, ignore=shutil.ignore_patterns(
        ".git", ".venv", ".ci-venv", "__pycache__", "*.egg-info", ".hypothesis", ".lake",
        "*.db", "*.db-*", "*.png", "build", "dist"))
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    proc = subprocess.run(["bash", "-c", demo_command], cwd=repo, env=env, capture_output=True,
                          text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    assert "ledger written to" in proc.stdout
    # it ends with what each mechanism was charged of its worst case
    assert "ε charged by ODP of its worst case" in proc.stdout
    assert " of " in proc.stdout.strip().splitlines()[-1]
    assert (repo / ".venv" / "bin" / "odp").exists()


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
        if args[0] in ("demo", "ledger", "certify", "verify"):
            continue  # run above with concrete paths
        if args[0] == "figure":
            args = ["figure", "1", "-o", "f.png", "--quick"]
        assert main(args) == 0, command
    capsys.readouterr()


def test_json_mode_reports_failures_as_json(tmp_path, capsys):
    assert main(["buckets", "--mechanism", "gaussian", "--sigma", "-1", "--compositions", "3",
                 "--delta", "1e-5", "--json"]) == 2
    out = json.loads(capsys.readouterr().out)
    assert out["ok"] is False and "sigma" in out["error"]
    assert main(["verify", str(tmp_path / "missing.cert"), "--json"]) == 2
    assert json.loads(capsys.readouterr().out)["ok"] is False


def test_python_dash_m_odp_is_the_command_line(tmp_path: Path) -> None:
    """``python -m odp`` runs the same command line as the ``odp`` script (for an environment
    whose scripts directory is not on PATH): a ledger it creates is the one ``odp`` reads, and
    bad input is the same one-line error with exit code 2."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "python")}
    ledger = tmp_path / "l.db"
    made = subprocess.run([sys.executable, "-m", "odp", "ledger", "init", str(ledger),
                           "--epsilon", "1", "--delta", "1e-6"], env=env, capture_output=True,
                          text=True)
    assert made.returncode == 0, made.stderr
    assert "created ledger" in made.stdout and ledger.exists()
    assert main(["ledger", "show", str(ledger)]) == 0
    bad = subprocess.run([sys.executable, "-m", "odp", "ledger", "init", str(tmp_path / "m.db"),
                          "--epsilon", "-1"], env=env, capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "Traceback" not in bad.stderr
    assert not (tmp_path / "m.db").exists()

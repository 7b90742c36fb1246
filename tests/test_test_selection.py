"""The README's test command (``python -m pytest``) leaves out the slow and heavy tests, and
nothing is lost: ``python -m pytest -m slow`` runs them, and .ci/run runs both.

* pyproject.toml's addopts deselect ``slow`` by default; the ``slow`` and ``lean`` markers are
  registered;
* .ci/run runs ``python -m pytest -m slow`` in the README's virtualenv after the README's
  command, with ODP_REQUIRE_LEAN=1 and ODP_REQUIRE_POSTGRES=1 still set (so a missing Lean
  toolchain or PostgreSQL fails the slow run too);
* every test that uses the Lean toolchain is collected as ``lean`` and ``slow`` (tests/conftest.py
  marks them by their fixture; checked on a real collection of the files that use it);
* the tests known to be heavy (a fresh virtualenv, many processes, minutes of CPU) carry
  ``@pytest.mark.slow`` in their source;
* ``selection.examples`` gives a property test a quick default variant and a full-count slow
  one.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from selection import examples

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"

# (file, test function, why it is heavy).  Each must carry @pytest.mark.slow.
HEAVY = [
    ("test_cli_and_readme.py", "test_demo_runs_from_a_fresh_virtualenv_with_the_readme_command",
     "creates a virtualenv and pip-installs odp into it"),
    ("test_ledger_first_open.py", "test_concurrent_first_open_8_processes_50_trials",
     "400 processes (8 per trial, 50 trials)"),
    ("test_ledger_contract.py", "test_four_processes_share_one_budget_without_overspending",
     "four interpreters charging 300 times each, per backend"),
    ("test_ledger_postgres.py", "test_without_a_server_the_tests_skip_loudly_or_fail_when_required",
     "two nested pytest sessions"),
    ("test_limits_progress.py", "test_progress_bar_on_a_terminal_only",
     "three 262144-bucket, 1000-fold compositions in subprocesses"),
    ("test_import_cycles.py", "test_every_module_imports_alone",
     "imports every odp module afresh"),
    ("test_demo.py", "test_every_mechanism_releases_in_most_runs_and_pays_at_most_its_worst_case",
     "20 full demo sessions"),
    ("test_cert_kernel_forgeries.py", "test_the_kernel_rejects_the_forgery_at_its_round",
     "compiles a Lean file with the WebAssembly Lean"),
]


def _marker_args(option: str, args: list[str]) -> list[str]:
    """The values given to ``option`` (``-m``) in an argument list, in order."""
    out = []
    for i, arg in enumerate(args):
        if arg == option and i + 1 < len(args):
            out.append(args[i + 1])
        elif arg.startswith(option) and len(arg) > len(option):
            out.append(arg[len(option):])
    return out


def test_the_default_run_deselects_slow_and_the_markers_are_registered(pytestconfig):
    addopts = pytestconfig.getini("addopts")
    assert _marker_args("-m", addopts) == ["not slow"], addopts
    markers = {line.split(":", 1)[0] for line in pytestconfig.getini("markers")}
    assert {"slow", "lean"} <= markers


def test_ci_runs_the_slow_tests_after_the_readme_command_with_nothing_allowed_to_skip():
    lines = (ROOT / ".ci" / "run").read_text().splitlines()

    def index(pattern: str) -> int:
        found = [i for i, line in enumerate(lines) if re.fullmatch(pattern, line.strip())]
        assert len(found) == 1, (pattern, found)
        return found[0]

    readme = index(r'bash -c "\$cmd"')
    slow = index(r"\.venv/bin/python -m pytest -m slow")
    assert readme < slow  # the README's own venv exists once its command ran
    assert index(r"export ODP_REQUIRE_LEAN=1") < readme
    assert index(r"export ODP_REQUIRE_POSTGRES=1") < readme
    assert not any(re.search(r"unset\s+ODP_REQUIRE|ODP_REQUIRE_\w+=0", line) for line in lines)


def _test_functions(path: Path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test"):
            yield node


def _uses_lean_toolchain(fn: ast.FunctionDef) -> bool:
    params = {a.arg for a in fn.args.args + fn.args.kwonlyargs}
    usefixtures = [c for d in fn.decorator_list for c in ast.walk(d)
                   if isinstance(c, ast.Constant) and c.value == "toolchain"]
    return "toolchain" in params or bool(usefixtures)


def test_every_lean_toolchain_test_is_collected_as_lean_and_slow():
    lean: dict[str, list[str]] = {}
    for path in sorted(TESTS.glob("test_*.py")):
        names = [fn.name for fn in _test_functions(path) if _uses_lean_toolchain(fn)]
        if names:
            lean[path.name] = names
    assert "test_lean_kernel.py" in lean and "test_cert_kernel_forgeries.py" in lean, lean
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-o", "addopts=", "--collect-only", "-q",
         "-m", "lean and slow", *(f"tests/{name}" for name in lean)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    collected = {line.split("[", 1)[0] for line in run.stdout.splitlines() if "::" in line}
    missing = [f"tests/{name}::{fn}" for name, fns in lean.items() for fn in fns
               if f"tests/{name}::{fn}" not in collected]
    assert missing == [], f"Lean toolchain tests not marked lean and slow: {missing}"


def _is_slow_mark(decorator: ast.expr) -> bool:
    return isinstance(decorator, ast.Attribute) and decorator.attr == "slow" and \
        isinstance(decorator.value, ast.Attribute) and decorator.value.attr == "mark"


def _module_marks_slow(path: Path) -> bool:
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets):
            return any(_is_slow_mark(c) for c in ast.walk(node.value))
    return False


@pytest.mark.parametrize("filename,function,why", HEAVY, ids=[h[1] for h in HEAVY])
def test_the_heavy_tests_are_marked_slow(filename, function, why):
    path = TESTS / filename
    fns = {fn.name: fn for fn in _test_functions(path)}
    assert function in fns, f"{filename} has no {function} (renamed? update HEAVY)"
    assert _module_marks_slow(path) or any(_is_slow_mark(d) for d in fns[function].decorator_list), \
        f"{filename}::{function} ({why}) must be marked @pytest.mark.slow"


def test_examples_gives_a_quick_default_variant_and_a_full_slow_one():
    argname, (quick, full) = examples(quick=40, full=250).mark.args
    assert argname == "max_examples"
    assert (quick.values, quick.id, list(quick.marks)) == ((40,), "quick", [])
    assert (full.values, full.id) == ((250,), "full")
    assert [m.name for m in full.marks] == ["slow"]
    with pytest.raises(ValueError):
        examples(quick=250, full=40)

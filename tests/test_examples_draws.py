"""Every example in examples/ runs to completion whatever its random draws: each is run with many
seeds (or draws of the secure CSPRNG) and must exit 0 -- no ``BudgetExceeded`` or other
exception because the coins fell one way.  A new example must be added to :data:`EXAMPLES`.

The default suite runs ``own_mechanism.py`` 50 times in-process with seeds 50..99 (which include
the draws where all three maybe-counts say "count", its old 1-in-8 crash) and each example once
as a subprocess; the ``slow`` runs repeat every example as a subprocess with fresh draws."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import odp
from script_support import load_module

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES_DIR = ROOT / "examples"

#: example → (extra arguments per run, subprocess runs in the slow suite, optional module the
#: example needs).  ``{seed}`` in an argument is the run's number.
EXAMPLES: dict[str, tuple[list[str], int, str | None]] = {
    "own_mechanism.py": ([], 50, None),  # the secure CSPRNG: fresh draws every run
    "opendp_laplace.py": (["{tmp}/run{seed}.db"], 10, "opendp"),  # OpenDP draws its noise
    "dpsgd_breast_cancer.py": (["--seed", "{seed}"], 20, "sklearn"),
    # the CSPRNG: fresh Gaussian draws every run; the number that fits is exact (21)
    "gaussian_session.py": (["{tmp}/gaussian{seed}.db"], 5, None),
    "dpsgd_training_loop.py": (["--seed", "{seed}"], 5, None),
}


def test_every_example_is_in_the_table():
    assert {p.name for p in EXAMPLES_DIR.glob("*.py")} == set(EXAMPLES)


def _run(name: str, args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    return subprocess.run([sys.executable, str(EXAMPLES_DIR / name), *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)


def _check(done: subprocess.CompletedProcess[str], what: str) -> None:
    assert done.returncode == 0, f"{what}: exit {done.returncode}\n{done.stderr[-2000:]}"
    assert "Traceback" not in done.stderr, done.stderr


def _args(name: str, seed: int, tmp: Path) -> list[str]:
    return [a.format(seed=seed, tmp=tmp) for a in EXAMPLES[name][0]]


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_example_exits_0(name, tmp_path):
    needs = EXAMPLES[name][2]
    if needs is not None:
        pytest.importorskip(needs, reason=f"{name} needs {needs}")
    _check(_run(name, _args(name, 1, tmp_path), tmp_path), name)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_example_exits_0_for_many_draws(name, tmp_path):
    args, runs, needs = EXAMPLES[name]
    if needs is not None:
        pytest.importorskip(needs, reason=f"{name} needs {needs}")
    for seed in range(runs):
        _check(_run(name, _args(name, seed, tmp_path), tmp_path), f"{name} run {seed}")


def test_own_mechanism_completes_for_50_seeds_including_the_worst_case(capsys):
    """50 seeded runs in-process; among them, runs whose three coins all say "count" (the
    worst case, which overspent the old budget of ε = 1)."""
    example = load_module(EXAMPLES_DIR / "own_mechanism.py", "example_own_mechanism")
    counts = []
    for seed in range(50, 100):  # six of these seeds draw "count" three times
        example.main(rng=odp.SeededRandom(seed))  # raises if a round is refused
        out = capsys.readouterr().out.splitlines()
        assert out[-1].startswith("remaining: ") and len(out) == 9, out
        counts.append(sum(1 for line in out[1:4]
                          if re.match(r"release: -?\d+ \| #\d maybe_count", line)))
    assert 3 in counts  # the draws that used to raise BudgetExceeded were run
    assert set(counts) == {0, 1, 2, 3}

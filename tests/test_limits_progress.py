"""Long work is estimated first, refused above a named limit (flag or parameter),
and shows a progress bar on a terminal only (never under --json or into a pipe)."""

from __future__ import annotations

import math
import os
import pty
import select
import subprocess
import sys
from fractions import Fraction

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from odp.cli import main
from odp.errors import InvalidParameter
from odp.kov import delta1_bracket, kov_delta, table1
from odp.limits import Estimate, Limits, ResourceLimitExceeded, parse_memory, parse_seconds


# ------------------------------------------------------------------ the limits themselves
def test_parse_memory_and_seconds():
    assert parse_memory("8G") == parse_memory("8GiB") == parse_memory(8) * 2**30 == 8 * 2**30
    assert parse_memory("512M") == 512 * 2**20 and parse_memory("1.5") == 1.5 * 2**30
    assert parse_memory(1000) == 1000 and parse_memory("inf") == math.inf
    assert parse_seconds("90") == 90 and parse_seconds("inf") == math.inf
    for bad in ("0", "-1", "abc", "nan", "1e999", True, "8X"):
        with pytest.raises(InvalidParameter):
            parse_memory(bad)
    for bad in ("0", "-3", "x", "nan", None):
        with pytest.raises(InvalidParameter):
            parse_seconds(bad)


def test_refusal_names_the_limit_and_the_option():
    est = Estimate("a big job", seconds=5, memory=3 * 2**30, knobs="n = 10")
    assert Limits().check(est) is est
    with pytest.raises(ResourceLimitExceeded, match=r"3 GiB.*n = 10.*2 GiB.*--max-memory"):
        Limits(max_memory="2G", memory_option="--max-memory").check(est)
    with pytest.raises(ResourceLimitExceeded, match=r"5 s.*limit of 1 s.*max_seconds"):
        Limits(max_seconds=1).check(est)


# ------------------------------------------------------------------ every long CLI command
@pytest.mark.parametrize("argv, flag", [
    (["buckets", "--mechanism", "gaussian", "--sigma", "1", "--buckets", "1000000000",
      "--delta", "1e-5"], "--max-memory"),
    (["buckets", "--mechanism", "gaussian", "--sigma", "1", "--compositions", "1000000",
      "--buckets", "4194304", "--delta", "1e-5", "--max-seconds", "30"], "--max-seconds"),
    (["optdel", "--epsilon", "0.1", "--k", "100000000", "--stops", "100000000",
      "--costs", "simple"], "--max-memory"),
    (["optdel", "--epsilon", "0.1", "--stops", "1,2,...,100000000000", "--costs", "simple"],
     "--max-memory"),
    (["optdel", "--epsilon", "0.01", "--k", "1000000", "--stops", "500000,1000000",
      "--costs", "simple", "--max-seconds", "5"], "--max-seconds"),
    (["table1", "--epsilon", "20", "--k-max", "100000000000", "--deltas", "1e-5"],
     "--max-memory"),
    (["table1", "--epsilon", "12", "--k-max", "100000000000", "--deltas", "1e-5"],
     "--max-seconds"),
    (["figure", "optdel", "-o", "{tmp}/f.png", "--max-seconds", "5"], "--max-seconds"),
    (["optdel", "--gap-study", "--max-seconds", "5"], "--max-seconds"),
    (["demo", "--records", "1000000", "--max-memory", "100M", "--ledger", "{tmp}/d.db"],
     "--max-memory"),
])
def test_absurd_sizes_are_refused_up_front(argv, flag, tmp_path, capsys):
    assert main([a.format(tmp=tmp_path) for a in argv]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and flag in err and "nothing was computed" in err
    assert list(tmp_path.iterdir()) == []


def test_raising_the_limit_lets_the_same_work_through(capsys):
    argv = ["buckets", "--mechanism", "gaussian", "--sigma", "1", "--buckets", "65536",
            "--delta", "1e-5"]
    assert main(argv + ["--max-memory", "1M"]) == 2
    assert main(argv + ["--max-memory", "1G"]) == 0
    capsys.readouterr()


# ------------------------------------------------------------------ API entry points
def test_api_entry_points_take_limits_and_progress():
    from odp.demo import run_demo
    from odp.optdel import lemma11_costs, lemma11_delta, optdel, optdel_upper

    stops, steps, costs = [5, 10], [("0.1", "1e-8")] * 10, ["0.5", "1"]
    tiny = Limits(max_seconds=1e-6)
    for fn in (optdel, lemma11_delta, optdel_upper):
        with pytest.raises(ResourceLimitExceeded, match="max_seconds"):
            fn(stops, steps, costs, limits=tiny)
    with pytest.raises(ResourceLimitExceeded):
        lemma11_costs(stops, steps, "1e-6", limits=tiny)
    with pytest.raises(ResourceLimitExceeded, match="max_memory"):
        table1("20", ["1e-5"], k_max=10**11, limits=Limits(max_memory="1K"))
    with pytest.raises(ResourceLimitExceeded):
        run_demo(records=1_000_000, limits=Limits(max_memory="1M"))
    calls = []
    b = optdel(stops, steps, costs, progress=lambda done, total: calls.append((done, total)))
    assert calls == [(0, 1), (1, 1)] and b.upper >= b.lower
    rows = []
    table1("0.1", ["1e-5", "1e-6"], cross_check=False, progress=lambda d, t: rows.append((d, t)))
    assert rows == [(1, 2), (2, 2)]


# ------------------------------------------------------------------ Table 1 without a scan
@settings(max_examples=40, deadline=None)
@given(st.integers(2, 400), st.sampled_from(["0.01", "0.1", "1", "5"]))
def test_closed_form_delta1_bracket_agrees_with_kov(k, eps0):
    lo, hi = delta1_bracket(k, eps0)
    klo, khi = kov_delta(k, eps0, 0, 1)
    mpmath.mp.dps = 60
    e = mpmath.mpf(Fraction(eps0).numerator) / Fraction(eps0).denominator
    exact = (1 - mpmath.e ** -e) / (1 + mpmath.e ** -e) ** (k - 1)
    for a, b in ((lo, hi), (klo, khi)):
        assert mpmath.mpf(a.numerator) / a.denominator <= exact <= mpmath.mpf(b.numerator) / b.denominator
    assert lo <= khi and klo <= hi  # the two brackets overlap


def test_table1_for_a_large_epsilon_satisfies_the_definition():
    """`odp table1 --epsilon 5` ran > 400 s by scanning k; the row is now found directly."""
    (row,) = table1("5", ["1e-6"], cross_check=False)
    target = Fraction(1, 10**6)
    assert delta1_bracket(row.I, "5")[1] <= target < delta1_bracket(row.I - 1, "5")[0]
    assert kov_delta(row.I, "5", 0, 1)[1] <= target < kov_delta(row.I - 1, "5", 0, 1)[0]
    assert row.I_paper_convention == row.I + 1


# ------------------------------------------------------------------ progress on a terminal
def _run_with_stderr(argv: list[str], tty: bool) -> tuple[int, str, str]:
    code = "import sys; from odp.cli import main; sys.exit(main(sys.argv[1:]))"
    cmd = [sys.executable, "-c", code, *argv]
    if not tty:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        return p.returncode, p.stdout, p.stderr
    master, slave = pty.openpty()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=slave, text=True)
    os.close(slave)
    chunks = []
    while True:
        ready, _, _ = select.select([master], [], [], 1.0)
        if ready:
            try:
                data = os.read(master, 4096)
            except OSError:
                break
            if not data:
                break
            chunks.append(data)
        elif p.poll() is not None:
            break
    out = p.stdout.read()
    p.wait(timeout=300)
    os.close(master)
    return p.returncode, out, b"".join(chunks).decode(errors="replace")


LONG_BUCKETS = ["buckets", "--mechanism", "gaussian", "--sigma", "1", "--compositions", "1000",
                "--buckets", "262144", "--delta", "1e-5"]


@pytest.mark.slow
def test_progress_bar_on_a_terminal_only():
    code, out, err = _run_with_stderr(LONG_BUCKETS, tty=True)
    assert code == 0 and "epsilon upper bound" in out
    assert "privacy buckets" in err and "conv" in err  # tqdm's bar, drawn on the terminal
    code, out, err = _run_with_stderr(LONG_BUCKETS + ["--json"], tty=True)
    assert code == 0 and err == ""  # --json: quiet even on a terminal
    code, out, err = _run_with_stderr(LONG_BUCKETS, tty=False)
    assert code == 0 and err == ""  # a pipe: quiet

"""Inputs that crashed `odp buckets` / `odp optdel` / `odp table1` with exit 70 or gave a false
reason (review finding 7): each is now one line on stderr with exit 2 and a true reason, or
(a factor within 1e-16 of 1) simply works."""

from __future__ import annotations

import json
import re
from fractions import Fraction

import mpmath as mp
import pytest

from odp.cli import main
from test_buckets_refs import gaussian_epsilon, mpf


def _one_line_error(err: str, command: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"odp {command}: error: ") and "Traceback" not in err
    assert "internal error" not in err
    return lines[0]


GAUSS = ["buckets", "--mechanism", "gaussian", "--sigma", "1", "--compositions", "10",
         "--delta", "1e-5"]


def test_factor_within_1e_16_of_one_is_a_valid_grid(capsys):
    assert main([*GAUSS, "--factor", "1.0000000000000001", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    lo, up = Fraction(out["epsilon"]["lower"]), Fraction(out["epsilon"]["upper"])
    exact = gaussian_epsilon(mp.sqrt(10), "1e-5")
    assert mpf(lo) <= exact <= mpf(up) and up - lo < 1e-4


@pytest.mark.parametrize("factor, reason", [
    ("1e308", r"factor must be at most e\^700 .*finite floats"),
    ("1." + "0" * 320 + "1", r"factor must be at least 1 \+ 1e-300.*underflow"),
    ("1", r"factor must be > 1"),
])
def test_factor_out_of_range_is_refused_with_the_limit(capsys, factor, reason):
    assert main([*GAUSS, "--factor", factor]) == 2
    line = _one_line_error(capsys.readouterr().err, "buckets")
    assert re.search(reason, line), line
    assert "essentially no privacy" not in line  # the factor is not the mechanism's fault


@pytest.mark.parametrize("spec, reason", [
    ({"mechanism": "gaussian", "sigma": "1e-400"}, r"of order up to about 1e800, beyond double|outside the range odp accepts"),
    ('[{"mechanism": "gaussian", "sigma": 1e-400}]', r"about 1e800, beyond double|outside the range odp accepts"),  # number
    ({"mechanism": "gaussian", "sigma": "1e-150"}, r"reaches 5e\+299, above the largest"),
    ({"mechanism": "laplace", "scale": "1e-400"}, r"about 1e400, beyond double|outside the range odp accepts"),
    ({"mechanism": "discrete_gaussian", "sigma": "1e-400"}, r"beyond double|outside the range odp accepts"),
    ({"mechanism": "randomized_response", "epsilon": "1e400"}, r"beyond double|outside the range odp accepts"),
    ({"mechanism": "gaussian", "sigma": "1e400"}, r"at most about 1e-398, below the smallest|outside the range odp accepts"),
    ({"mechanism": "laplace", "scale": "1e400"}, r"below the smallest loss scale|outside the range odp accepts"),
    ({"mechanism": "randomized_response", "epsilon": "1e-400"}, r"below the smallest|outside the range odp accepts"),
    ({"mechanism": "discrete_laplace", "scale": "1e400"}, r"below the smallest|outside the range odp accepts"),
])
def test_parameters_beyond_double_precision_are_refused_with_their_magnitude(
        tmp_path, capsys, spec, reason):
    path = tmp_path / "s.json"
    path.write_text(spec if isinstance(spec, str) else json.dumps([spec]))
    assert main(["buckets", "--spec", str(path), "--delta", "1e-5"]) == 2
    line = _one_line_error(capsys.readouterr().err, "buckets")
    assert re.search(reason, line), line
    assert "nan" not in line and len(line) < 400  # no "[nan, inf]", no 400-digit fraction


def test_optdel_grid_too_fine_is_refused_up_front(capsys):
    assert main(["optdel", "--epsilon", "1e-9", "--delta", "1e-6", "--k", "3", "--stops",
                 "1,2,3", "--costs", "1,1,1", "--grid", "1e-20"]) == 2
    line = _one_line_error(capsys.readouterr().err, "optdel")
    assert "6e+11 cells per pass, more than max_cells = 40000000 (--max-cells)" in line


def test_table1_cross_check_that_cannot_decide_is_refused(capsys):
    assert main(["table1", "--epsilon", "1e-30", "--deltas", "1e-300"]) == 2
    line = _one_line_error(capsys.readouterr().err, "table1")
    assert "cannot decide delta = 1e-300" in line and "--no-check" in line
    # without the cross-check the KOV row itself is computed
    assert main(["table1", "--epsilon", "1e-30", "--deltas", "1e-300", "--no-check",
                 "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["computed_row"] == [898]


def test_lattice_window_far_beyond_int64_is_clamped_not_overflowed():
    from odp.optdel.lattice import LatticeInstance, cells

    inst = LatticeInstance(Fraction(1, 10**20), (3, 2), (Fraction(0),) * 2, (1, 2),
                           (Fraction(1), Fraction(1)), window=(-10**30, 10**30))
    assert inst.ranges() == [(0, 0), (0, 3), (0, 5)]  # every reachable state, as unwindowed
    assert cells(inst) == 1 + 4 + 6

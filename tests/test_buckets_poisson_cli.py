"""``odp buckets --mechanism poisson-gaussian|poisson-laplace``: the documented command line,
mixing with other mechanisms and ``--spec``, and bad input (one line on stderr, exit 2, nothing
computed)."""

from __future__ import annotations

import json
from fractions import Fraction

import mpmath as mp
import pytest

from odp.cli import main
from poisson_refs import Gaussian as RefGaussian, delta, delta_with_gaussian, mpf
from test_buckets_poisson import DP_ACCOUNTING_PLD, PRV_BRACKET

MPMATH_DPS = 30

ISSUE = ["buckets", "--mechanism", "poisson-gaussian", "--sampling-rate", "0.01", "--sigma",
         "1.1", "--compositions", "10000", "--delta", "1e-5"]


def run_json(capsys, argv):
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_the_issue_command_prints_a_sound_narrow_interval(capsys):
    out = run_json(capsys, ISSUE)
    eps = out["epsilon"]
    lo, up = Fraction(eps["lower"]), Fraction(eps["upper"])
    assert eps["lower_float"] == float(lo) and eps["upper_float"] == float(up)
    assert PRV_BRACKET[0] <= lo <= up <= PRV_BRACKET[1]
    assert float(lo) <= DP_ACCOUNTING_PLD
    assert (up - lo) / up <= Fraction(1, 1000)
    assert out["compositions"] == 10000 and out["seconds"] > 0
    assert out["mechanism"] == {"mechanism": "poisson_gaussian", "sampling_rate": "1/100",
                                "sigma": "11/10", "sensitivity": "1", "count": 10000}
    assert len(out["numerics"]) == 2  # both directions (remove and add) were composed


def test_text_output_names_the_mechanism(capsys):
    assert main(["buckets", "--mechanism", "poisson-laplace", "--sampling-rate", "0.1",
                 "--scale", "2", "--compositions", "10", "--delta", "1e-5"]) == 0
    text = capsys.readouterr().out
    assert "10 x poisson_laplace(sampling_rate=1/10, scale=2, sensitivity=1)" in text
    assert "epsilon lower bound" in text and "epsilon upper bound" in text


def test_mixed_with_a_gaussian_on_the_command_line_and_in_a_spec(tmp_path, capsys):
    """One DP-SGD step (q = 0.05, σ = 1.1) and one Gaussian (σ = 2): δ(ε) against the
    quadrature reference; the same composition from --spec gives the same interval."""
    argv = ["buckets", "--mechanism", "poisson-gaussian", "--sampling-rate", "0.05", "--sigma",
            "1.1", "--mechanism", "gaussian", "--sigma", "2", "--epsilon", "0.1"]
    out = run_json(capsys, argv)
    exact = delta_with_gaussian(RefGaussian(mpf("0.05"), 1 / mpf("1.1")), mpf("0.5"), mpf("0.1"))
    assert mpf(Fraction(out["delta"]["lower"])) <= exact <= mpf(Fraction(out["delta"]["upper"]))
    spec = tmp_path / "dpsgd.json"
    spec.write_text(json.dumps({"mechanisms": [
        {"mechanism": "poisson_gaussian", "sampling_rate": "0.05", "sigma": "1.1"},
        {"mechanism": "gaussian", "sigma": "2"}]}))
    again = run_json(capsys, ["buckets", "--spec", str(spec), "--epsilon", "0.1"])
    assert again["delta"] == out["delta"]


def test_sensitivity_is_the_clipping_norm(capsys):
    """Δ = 2 with σ = 2.2 is the same pair as Δ = 1 with σ = 1.1 (only Δ/σ matters)."""
    a = run_json(capsys, ["buckets", "--mechanism", "poisson-gaussian", "--sampling-rate", "0.2",
                          "--sigma", "2.2", "--sensitivity", "2", "--epsilon", "0.5"])
    b = run_json(capsys, ["buckets", "--mechanism", "poisson-gaussian", "--sampling-rate", "0.2",
                          "--sigma", "1.1", "--epsilon", "0.5"])
    assert a["delta"] == b["delta"]
    exact = delta(RefGaussian(mpf("0.2"), 1 / mpf("1.1")), mpf("0.5"))
    assert mpf(Fraction(a["delta"]["lower"])) <= exact <= mpf(Fraction(a["delta"]["upper"]))


def _refused(capsys, argv, pattern):
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""  # nothing printed: nothing was computed
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("odp buckets: error: "), captured.err
    assert "Traceback" not in captured.err
    assert pytest.importorskip("re").search(pattern, lines[0]), lines[0]


def _with(option, value):
    """The issue's command with ``option=value`` instead (``=``: values may start with '-')."""
    argv = list(ISSUE)
    i = argv.index(option)
    argv[i:i + 2] = [f"{option}={value}"]
    return argv


@pytest.mark.parametrize("option, value, pattern", [
    ("--sampling-rate", "0", r"sampling_rate must be in \(0, 1\], got '0'"),
    ("--sampling-rate", "1.5", r"sampling_rate must be in \(0, 1\], got '1.5'"),
    ("--sampling-rate", "-0.01", r"sampling_rate must be in \(0, 1\]"),
    ("--sampling-rate", "abc", r"sampling_rate must be a finite number"),
    ("--sigma", "0", r"sigma must be > 0"),
    ("--sigma", "-1.1", r"sigma must be > 0"),
    ("--compositions", "100000000000", r"1e\+11 runs is more than the 4.29e\+09 it supports"),
    ("--compositions", "0", r"--compositions must be >= 1"),
    ("--compositions", "1e21", r"--compositions must be an integer"),
    ("--delta", "0", r"delta must be > 0"),
    ("--delta", "1", r"delta must be < 1"),
    ("--delta", "-1e-5", r"delta must be >= 0"),
])
def test_bad_input_is_one_line_exit_2(capsys, option, value, pattern):
    _refused(capsys, _with(option, value), pattern)


def test_missing_or_foreign_options_are_refused(capsys):
    argv = list(ISSUE)
    i = argv.index("--sampling-rate")
    del argv[i:i + 2]
    _refused(capsys, argv, r"--mechanism poisson-gaussian needs --sampling-rate")
    _refused(capsys, ["buckets", "--mechanism", "gaussian", "--sigma", "1", "--sampling-rate",
                      "0.1", "--delta", "1e-5"], r"--mechanism gaussian does not take "
             r"--sampling-rate")
    _refused(capsys, ["buckets", "--mechanism", "poisson-laplace", "--sampling-rate", "0.1",
                      "--sigma", "1", "--delta", "1e-5"], r"does not take --sigma")


def test_work_above_the_limits_is_refused_before_it_runs(capsys):
    _refused(capsys, [*ISSUE, "--max-seconds", "0.001"], r"max-seconds")
    _refused(capsys, [*ISSUE, "--buckets", "1000000000"], r"would need about .* GiB")


def test_tiny_rates_and_huge_losses_are_refused_up_front(capsys):
    _refused(capsys, _with("--sampling-rate", "1e-400"), r"below the smallest loss scale")
    _refused(capsys, _with("--sigma", "1e-200"), r"beyond double precision|above the largest")


def test_exact_reference_check_is_not_vacuous():
    """The reference used above really depends on the parameters (guards the comparisons)."""
    a = delta(RefGaussian(mpf("0.05"), 1 / mpf("1.1")), mpf("0.1"))
    b = delta(RefGaussian(mpf("0.06"), 1 / mpf("1.1")), mpf("0.1"))
    assert b > a * (1 + mp.mpf("1e-3"))

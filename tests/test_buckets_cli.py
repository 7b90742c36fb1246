"""``odp buckets``: the issue's command prints a correct interval."""

from __future__ import annotations

import json
from fractions import Fraction

import mpmath as mp

from odp.cli import main
from test_buckets_refs import gaussian_delta, gaussian_epsilon, kov_delta, mpf


def run_json(capsys, *argv):
    assert main(["buckets", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_issue_command_gaussian_epsilon(capsys):
    out = run_json(capsys, "--mechanism", "gaussian", "--sigma", "1", "--compositions", "1000", "--delta", "1e-5")
    lo, up = Fraction(out["epsilon"]["lower"]), Fraction(out["epsilon"]["upper"])
    exact = gaussian_epsilon(mp.sqrt(1000), "1e-5")  # 633.9299...
    assert mpf(lo) <= exact <= mpf(up)
    assert (up - lo) / up <= Fraction(1, 1000)
    assert out["query"] == "epsilon" and out["compositions"] == 1000
    assert out["numerics"][0]["coarsenings"] >= 1


def test_delta_query_and_other_mechanisms(capsys):
    out = run_json(capsys, "--mechanism", "randomized-response", "--mechanism-epsilon", "0.1",
                   "--compositions", "200", "--epsilon", "1")
    lo, up = Fraction(out["delta"]["lower"]), Fraction(out["delta"]["upper"])
    assert mpf(lo) <= kov_delta("0.1", 0, 200, 1) <= mpf(up)
    out = run_json(capsys, "--mechanism", "gaussian", "--sigma", "2", "--compositions", "7", "--epsilon", "0.5", "--buckets", "4096")
    mu = mp.sqrt(7) / 2
    assert mpf(Fraction(out["delta"]["lower"])) <= gaussian_delta(mu, "0.5") <= mpf(Fraction(out["delta"]["upper"]))


def test_text_output_and_errors(capsys):
    assert main(["buckets", "--mechanism", "laplace", "--scale", "10", "--compositions", "10", "--delta", "1e-5"]) == 0
    text = capsys.readouterr().out
    assert "epsilon lower bound" in text and "epsilon upper bound" in text
    assert main(["buckets", "--mechanism", "laplace", "--delta", "1e-5"]) == 2
    assert "needs --scale" in capsys.readouterr().err
    assert main(["buckets", "--mechanism", "gaussian", "--sigma", "-1", "--delta", "1e-5"]) == 2
    assert "sigma must be > 0" in capsys.readouterr().err

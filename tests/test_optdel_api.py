"""Public API of odp.optdel: parsing, typed errors, cost helpers, gap study, CLI and figure."""

from __future__ import annotations

import json
from fractions import Fraction as F

import pytest
from odp.cli import main
from odp.errors import InvalidBudget, InvalidParameter, OdpError
from odp.optdel import exact as X
from odp.optdel import (
    lemma11_costs,
    lemma11_delta,
    optdel,
    optdel_saving,
    optdel_upper,
)
from odp.optdel.bounds import round_up_significant
from odp.optdel.gap import even_stops, gap_row
from odp.optdel.problem import ExpProblem

STOPS = [10, 20, 30, 40]
STEPS = [("0.1", "1e-9")] * 40


@pytest.mark.parametrize(
    "stops,steps,costs,err",
    [
        ([], STEPS, [], InvalidParameter),
        ([10, 10, 40], STEPS, [1, 1, 1], InvalidParameter),
        ([0, 40], STEPS, [1, 1], InvalidParameter),
        ([10, 39], STEPS, [1, 1], InvalidParameter),  # last stop != number of steps
        (STOPS, STEPS, [1, 1, 1], InvalidParameter),  # one cost per stop
        (STOPS, STEPS[:-1] + [("-0.1", "0")], [1] * 4, InvalidBudget),
        (STOPS, STEPS[:-1] + [("0.1", "1")], [1] * 4, InvalidBudget),
        (STOPS, STEPS, [1, 1, "nan", 1], InvalidBudget),
        (STOPS, STEPS, [1, 1, -1, 1], InvalidBudget),
        ("10,40", STEPS, [1, 1], InvalidParameter),
        ([10.0, 40], STEPS, [1, 1], InvalidParameter),
        (STOPS, [("0.1",)] * 40, [1] * 4, InvalidParameter),
    ],
)
def test_bad_input_raises_typed_errors(stops, steps, costs, err):
    with pytest.raises(err):
        optdel(stops, steps, costs)
    with pytest.raises(err):
        optdel_upper(stops, steps, costs)


def test_exponential_parametrisation_rejects_w_below_one():
    with pytest.raises(InvalidParameter):
        ExpProblem.parse([1], [(F(1, 2), 0)], [2])
    with pytest.raises(InvalidParameter):
        ExpProblem.parse([1], [(F(2), 0)], [F(1, 2)])


def test_inputs_are_parsed_exactly_and_floats_mean_their_binary_value():
    a = optdel(STOPS, STEPS, ["1.5", "2", "2.5", "3"])
    b = optdel(STOPS, [(F(1, 10), F(1, 10**9))] * 40, [F(3, 2), 2, F(5, 2), 3])
    assert (a.lower, a.upper) == (b.lower, b.upper)
    c = optdel(STOPS, STEPS, [1.5, 2, 2.5, 3])  # 1.5 is exact in binary
    assert (c.lower, c.upper) == (a.lower, a.upper)


def test_optdel_upper_rounds_up_and_is_exact_for_rationals():
    b = optdel(STOPS, STEPS, [2, 2, 3, 3])
    u = optdel_upper(STOPS, STEPS, [2, 2, 3, 3])
    assert u >= b.upper and u <= b.upper * (1 + F(1, 10**10))
    assert round_up_significant(u, 12) == u  # a decimal of 12 significant digits
    p = [(F(11, 10), F(1, 100))] * 6
    exact_value = X.thm15_exact(ExpProblem.parse([3, 6], p, [2, 3]))
    assert optdel_upper([3, 6], p, [2, 3], exponential=True) == exact_value
    be = optdel([3, 6], p, [2, 3], exponential=True)
    assert be.exact and be.lower == be.upper == exact_value
    assert "exact" in be.method


def test_bound_json_is_exact_text_and_survives_huge_fractions():
    b = optdel([1000], [(F(11, 10), F(1, 10**6))] * 1000, [F(30)], exponential=True)
    j = b.to_json()
    assert j["exact"] and j["upper"] is None and float(j["upper_decimal"]) > 0
    s = optdel(STOPS, STEPS, [2, 2, 3, 3]).to_json()
    assert F(s["lower"]) <= F(s["upper"])
    assert "OptDelBound(thm15" in repr(optdel(STOPS, STEPS, [2, 2, 3, 3]))


def test_lemma11_costs_meet_the_split_and_are_minimal_on_their_grid():
    costs = lemma11_costs(STOPS, STEPS, "1e-6", resolution="0.01")
    assert all(c % F(1, 100) == 0 for c in costs)
    assert lemma11_delta(STOPS, STEPS, costs).upper <= F(1, 10**6)
    for i, k in enumerate(STOPS):
        one = lemma11_delta([k], STEPS[:k], [costs[i]]).upper
        assert one <= F(1, 4 * 10**6)
        if costs[i] > 0:
            below = lemma11_delta([k], STEPS[:k], [costs[i] - F(1, 100)]).upper
            assert below > F(1, 4 * 10**6)
    with pytest.raises(InvalidParameter):
        lemma11_costs(STOPS, [("0.1", "1e-4")] * 40, "1e-6")


def test_optdel_saving_keeps_the_total_delta():
    costs = lemma11_costs(STOPS, STEPS, "1e-6", resolution="0.01")
    t = optdel_saving(STOPS, STEPS, costs, "1e-6", resolution="0.01")
    assert t > 0
    lowered = list(costs[:-1]) + [costs[-1] - t]
    assert optdel(STOPS, STEPS, lowered).upper <= F(1, 10**6)
    more = list(costs[:-1]) + [costs[-1] - t - F(1, 100)]
    assert optdel(STOPS, STEPS, more).upper > F(1, 10**6)
    u = optdel_saving(STOPS, STEPS, costs, "1e-6", mode="uniform", resolution="0.01")
    assert optdel(STOPS, STEPS, [c - u for c in costs]).upper <= F(1, 10**6)
    with pytest.raises(InvalidParameter):
        optdel_saving(STOPS, STEPS, costs, "1e-6", mode="sideways")


def test_gap_row_and_even_stops():
    assert even_stops(100, 4) == [25, 50, 75, 100]
    with pytest.raises(InvalidParameter):
        even_stops(5, 6)
    row = gap_row([("0.1", "0")] * 40, even_stops(40, 4), "1e-6", resolution="0.01")
    assert row.ratio is not None and row.ratio > 1
    assert row.thm15.upper < row.eq4.lower
    j = row.to_json()
    assert j["n"] == 4 and j["saving_last"] >= 0
    infeasible = gap_row([("0.1", "1e-5")] * 40, even_stops(40, 4), "1e-6")
    assert infeasible.ratio is None and "infeasible" in infeasible.note


def test_cli_optdel_json_homogeneous(capsys):
    args = [
        "optdel",
        "--epsilon",
        "0.1",
        "--delta",
        "1e-9",
        "--k",
        "40",
        "--stops",
        "10,20,...,40",
        "--costs",
        "1.5,2,...,3",
        "--json",
    ]
    assert main(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["stops"] == [10, 20, 30, 40] and out["costs"] == ["1.5", "2", "2.5", "3"]
    direct = optdel(STOPS, STEPS, ["1.5", "2", "2.5", "3"])
    assert F(out["optdel_thm15"]["upper"]) == direct.upper
    assert F(out["lemma11_eq4"]["lower"]) >= F(out["optdel_thm15"]["upper"])
    assert out["lemma11_over_optdel_at_least"] > 1


def test_cli_optdel_costs_specs_and_steps_file(tmp_path, capsys):
    f = tmp_path / "steps.txt"
    f.write_text(
        "# eps, delta\n" + "\n".join(f"{0.05 + 0.01 * (k % 7):.2f},1e-9" for k in range(30)) + "\n"
    )
    assert (
        main(
            [
                "optdel",
                "--steps-file",
                str(f),
                "--stops",
                "10,20,30",
                "--costs",
                "lemma11:1e-5",
                "--json",
            ]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert F(out["lemma11_eq4"]["upper"]) <= F(1, 10**5)
    assert main(["optdel", "--epsilon", "0.1", "--stops", "10,20", "--costs", "simple"]) == 0
    text = capsys.readouterr().out
    assert "OptDel (Thm. 15)" in text and "costs E(P_i) = 1, 2" in text


@pytest.mark.parametrize(
    "args",
    [
        ["--epsilon", "0.1", "--stops", "10,20", "--costs", "1"],
        ["--epsilon", "0.1", "--stops", "10,20,...,35", "--costs", "1,2,3"],
        ["--epsilon", "0.1", "--stops", "10,...,40", "--costs", "1,2"],
        ["--epsilon", "0.1", "--k", "50", "--stops", "10,20", "--costs", "1,2"],
        ["--stops", "10,20", "--costs", "1,2"],
        ["--epsilon", "x", "--stops", "10,20", "--costs", "1,2"],
        ["--epsilon", "0.1", "--stops", "10,a", "--costs", "1,2"],
        ["--epsilon", "0.1", "--steps-file", "/nonexistent", "--stops", "1", "--costs", "1"],
    ],
)
def test_cli_optdel_errors_exit_2(args, capsys):
    assert main(["optdel", *args]) == 2
    assert "error" in capsys.readouterr().err


def test_figure_optdel_quick(tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "gap.png"
    assert main(["figure", "optdel", "-o", str(out), "--quick"]) == 0
    assert out.stat().st_size > 10_000


def test_errors_are_odp_errors():
    assert issubclass(InvalidParameter, OdpError)

"""KOV optimal homogeneous composition (odp.kov) and Table 1 of Hartmann et al. 2022.

References: the exact optimal composition computed independently by backward induction over
the privacy-loss distribution of k-fold randomized response (odp.optdel with one stopping
point), and mpmath at 60 digits for the defining inequalities of Table 1.
"""

from __future__ import annotations

import json
from fractions import Fraction as F

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from odp.cli import main
from odp.errors import InvalidBudget, InvalidParameter
from odp.kov import (
    PAPER_TABLE1,
    kov_delta,
    kov_delta_exp,
    kov_epsilon,
    table1,
)
from odp.optdel import exact as X
from odp.optdel import optdel
from odp.optdel.problem import ExpProblem


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 9), st.data())
def test_kov_exact_equals_optimal_composition_by_backward_induction(k, data):
    i = data.draw(st.integers(0, k // 2))
    w = data.draw(st.fractions(1, 3, max_denominator=7))
    d0 = data.draw(st.sampled_from([F(0), F(1, 100), F(1, 7)]))
    W = w ** (k - 2 * i)
    p = ExpProblem.parse((k,), [(w, d0)] * k, [W])
    assert kov_delta_exp(k, w, d0, i) == X.thm15_exact(p)


@pytest.mark.parametrize("eps0,delta0", [("0.1", "0"), ("0.5", "1e-6"), ("1/3", "0")])
def test_kov_bracket_meets_the_pld_bracket(eps0, delta0):
    for k in (2, 7, 20, 40):
        for i in range(min(k // 2, 4) + 1):
            lo, hi = kov_delta(k, eps0, delta0, i)
            assert lo <= hi and hi - lo <= F(1, 10**30)
            b = optdel((k,), [(eps0, delta0)] * k, [(k - 2 * i) * F(eps0)])
            assert b.lower <= hi and lo <= b.upper


def delta_1_mp(k, eps0="0.1"):
    mpmath.mp.dps = 60
    eps0 = mpmath.mpf(eps0)
    return (mpmath.e ** (k * eps0) - mpmath.e ** ((k - 2) * eps0)) / (1 + mpmath.e**eps0) ** k


def satisfies_definition(I, delta):
    """I = min{k >= 2 : delta_1(k) <= delta} (delta_1 is decreasing in k)."""
    d = mpmath.mpf(delta.numerator) / delta.denominator
    return delta_1_mp(I) <= d and (I == 2 or delta_1_mp(I - 1) > d)


def test_table1_rows_satisfy_the_definition_and_explain_the_paper():
    rows = table1()
    assert [r.delta for r in rows] == list(PAPER_TABLE1)
    for r in rows:
        assert satisfies_definition(r.I, r.delta)
        assert all(v for key, v in r.pld_check.items() if key.endswith("_ok"))
        # the documented convention reproduces every printed entry of the paper
        assert r.I_paper_convention == r.I_paper == r.I + 1
        # and the paper's own row fails the definition: the test can tell them apart
        assert not satisfies_definition(r.I_paper, r.delta)


def test_table1_other_epsilon_has_no_paper_row():
    rows = table1("0.5", ["1e-6"], cross_check=False)
    assert rows[0].I_paper is None
    hi = kov_delta(rows[0].I, "0.5", 0, 1)[1]
    assert hi <= F(1, 10**6) < kov_delta(rows[0].I - 1, "0.5", 0, 1)[0]


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 60), st.sampled_from(["1e-3", "1e-6", "1e-9"]))
def test_kov_epsilon_is_the_smallest_grid_point(k, delta):
    try:
        i, eps = kov_epsilon(k, "0.1", "1e-12", delta)
    except InvalidParameter:
        assert kov_delta(k, "0.1", "1e-12", 0)[0] > F(delta)
        return
    assert eps == (k - 2 * i) * F(1, 10)
    assert kov_delta(k, "0.1", "1e-12", i)[1] <= F(delta)
    if i + 1 <= k // 2:
        assert kov_delta(k, "0.1", "1e-12", i + 1)[1] > F(delta)


def test_kov_rejects_bad_input():
    with pytest.raises(InvalidParameter):
        kov_delta(5, "0.1", 0, 3)
    with pytest.raises(InvalidBudget):
        kov_delta(5, "-0.1", 0, 1)
    with pytest.raises(InvalidBudget):
        kov_delta(5, "0.1", 1, 1)
    with pytest.raises(InvalidParameter):
        kov_delta_exp(5, F(1, 2), 0, 1)
    with pytest.raises(InvalidParameter):
        table1("0")
    for bad_k in (0, True, 2.0, "3"):
        with pytest.raises(InvalidParameter, match="k"):
            kov_delta(bad_k, "0.1", 0, 0)
    with pytest.raises(InvalidParameter, match="i must be"):
        kov_delta(5, "0.1", 0, True)


def test_kov_accepts_numpy_integers():
    import numpy as np

    assert kov_delta(np.int64(5), "0.1", 0, np.int32(1)) == kov_delta(5, "0.1", 0, 1)
    assert kov_delta_exp(np.int64(5), F(11, 10), 0, np.int64(2)) == kov_delta_exp(5, F(11, 10), 0, 2)


def test_cli_table1_json(capsys):
    assert main(["table1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["paper_row"] == list(PAPER_TABLE1.values())
    assert out["paper_convention_row"] == out["paper_row"]
    assert out["computed_row"] == [v - 1 for v in out["paper_row"]]
    assert out["pld_cross_check_ok"] is True
    assert "k = I - 1" in out["note"]


def test_cli_table1_text(capsys):
    assert main(["table1", "--deltas", "1e-6,1e-9", "--no-check"]) == 0
    text = capsys.readouterr().out
    assert "I (paper)" in text and "1e-06" in text


def test_a_huge_epsilon0_is_refused_at_once_not_computed(capsys):
    """epsilon0 = 1e9 used to bracket e^-1e9 exactly (a 434-million-digit Fraction) and ignore
    --max-seconds; now e^-epsilon0 below e^-100000 is bracketed by (0, e^-100000's upper end)
    (odp.rational.exp_bracket) and the refusal comes at once, in one line."""
    from odp.cli import main

    argv = ["table1", "--no-check", "--json", "--epsilon", "1e9", "--max-seconds", "2",
            "--max-memory", "512M"]
    assert main(argv) == 2
    out = json.loads(capsys.readouterr().out)  # under --json the refusal is JSON on stdout
    assert out["type"] == "InvalidParameter" and "no I <= 10000 reaches delta" in out["error"]
    assert "astronomically many compositions" in out["error"]
    # where e^-epsilon0 is still bracketed exactly, the same refusal
    assert main(["table1", "--no-check", "--epsilon", "699", "--deltas", "1e-5"]) == 2
    assert "no I <= 10000" in capsys.readouterr().err
    # too large for a float: still one line, exit 2 (was an internal error, exit 70); now
    # refused by the parameter range of odp.budget (magnitudes 1e-300..1e300) before any work
    assert main(["table1", "--epsilon", "1e400"]) == 2
    assert "outside the range odp accepts" in capsys.readouterr().err

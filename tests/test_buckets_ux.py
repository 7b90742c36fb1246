"""Privacy buckets for users: dp-accounting's float convention, several mechanisms per CLI call
(groups or a JSON/TOML spec), the automatic target width, and up-front limits (issues 14, 17)."""

from __future__ import annotations

import json
import math
import warnings
from fractions import Fraction

import pytest

from odp.buckets import (
    ApproximateDP,
    Interval,
    Gaussian,
    Laplace,
    PLDRandomizedResponse,
    PrivacyBucketsAccountant,
)
from odp.buckets.spec import load_spec, parse_spec
from odp.buckets.tighten import tighten
from odp.cli import main
from odp.errors import InvalidParameter
from odp.floats import float_up
from odp.limits import Limits, ResourceLimitExceeded
from test_buckets_refs import composed_gaussian_mu, gaussian_mixture_delta, mpf


def _acc(**kw):
    return PrivacyBucketsAccountant(**kw).compose(Gaussian(1), 1000)


# ------------------------------------------------------------------ float convention (14.5)
def test_get_epsilon_is_a_float_upper_bound_rounded_up():
    acc = _acc()
    iv = acc.get_epsilon_interval("1e-5")
    eps = acc.get_epsilon("1e-5")
    assert isinstance(eps, float) and eps < 700  # usable in plain float code
    assert Fraction(eps) >= iv.upper and eps == float_up(iv.upper)  # rounded up, never down
    assert iv.lower <= 633.9299 <= iv.upper
    d = acc.get_delta(600)
    div = acc.get_delta_interval(600)
    assert isinstance(d, float) and Fraction(d) >= div.upper and d == float_up(div.upper)


def test_float_delta_is_accepted_without_warning_and_converted_exactly():
    acc = _acc()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a FloatBudgetWarning would fail the test
        from_float = acc.get_epsilon_interval(1e-5)
        eps = acc.get_epsilon(1e-5)
    assert from_float == acc.get_epsilon_interval(Fraction(1e-5))  # the float's exact value
    assert eps == acc.get_epsilon(Fraction(1e-5))


def test_no_finite_epsilon_is_inf():
    # real infinite-loss mass: (0.5, 0.01)-DP composed 10 times has distinguishing mass
    # 1 - 0.99^10 = 0.0956..., so no finite ε has δ(ε) <= 0.05 (and the float form is inf too)
    acc_inf = PrivacyBucketsAccountant().compose(ApproximateDP("0.5", "0.01"), 10)
    assert acc_inf.get_epsilon_interval("0.05").upper == math.inf
    assert acc_inf.get_epsilon(0.05) == math.inf
    # no infinite-loss mass: finite at every δ > 0, even far below the round-off level.
    # Laplace(b = 0.1), one run: ε(δ) = 10 + 2 ln(1 - δ), so ε(1e-300) is 10 to float precision
    acc = PrivacyBucketsAccountant().compose(Laplace("0.1"), 1)
    iv = acc.get_epsilon_interval("1e-300")
    assert iv.lower <= 10 <= iv.upper < 10 + 1e-9
    assert acc.get_epsilon(1e-300) < math.inf
    rr = PrivacyBucketsAccountant().compose(PLDRandomizedResponse("0.5"), 3)
    assert rr.get_epsilon(0.05) < math.inf and rr.get_epsilon(1e-200) <= 1.5 + 1e-9  # 3 ε0


# ------------------------------------------------------------------ limits and progress (14.3)
def test_absurd_window_is_refused_before_allocating():
    acc = PrivacyBucketsAccountant(buckets=10**9).compose(Gaussian(1), 1000)
    with pytest.raises(ResourceLimitExceeded, match=r"max_memory") as info:
        acc.get_epsilon(1e-5)
    assert info.value.estimate.memory > 100 * 2**30 and acc.ledger  # nothing lost
    # the same window is allowed once the limit is raised (only estimated here)
    big = PrivacyBucketsAccountant(buckets=10**9, max_memory="1000G").compose(Gaussian(1), 1000)
    assert big.estimate().memory < big.limits.memory


def test_time_limit_and_discrete_support_limit():
    acc = PrivacyBucketsAccountant(buckets=2**20, max_seconds=1).compose(Gaussian(1), 10**6)
    with pytest.raises(ResourceLimitExceeded, match=r"max_seconds"):
        acc.get_epsilon(1e-5)
    from odp.buckets import DiscreteGaussian, DiscreteLaplace

    with pytest.raises(ResourceLimitExceeded, match="support points"):
        PrivacyBucketsAccountant().compose(DiscreteGaussian(10**9), 1)
    with pytest.raises(ResourceLimitExceeded, match="support points"):
        PrivacyBucketsAccountant().compose(DiscreteLaplace(1, 10**10), 1)


@pytest.mark.parametrize("mech", [Gaussian("1e-10"), Laplace("1e-10"),
                                  PLDRandomizedResponse("1e10")])
def test_unrepresentable_loss_is_a_clear_error_not_an_overflow(mech):
    acc = PrivacyBucketsAccountant()
    with pytest.raises(InvalidParameter, match="essentially no privacy"):
        acc.compose(mech, 1)
    assert acc.ledger == []  # nothing recorded


def test_progress_callback_counts_every_convolution():
    calls = []
    acc = PrivacyBucketsAccountant(buckets=4096, progress=lambda d, t: calls.append((d, t)))
    acc.compose(Gaussian(1), 1000).compose(Laplace(10), 5)
    acc.get_epsilon(1e-5)
    total = calls[-1][1]
    assert [d for d, _ in calls] == list(range(1, total + 1))  # one call per step, to the end
    assert total == (9 + 5) + (2 + 1) + 1  # 1000: 9 squarings + 5 products; 5: 2 + 1; join


# ------------------------------------------------------------------ several mechanisms (17.4)
def _cli(capsys, *argv):
    code = main(["buckets", *argv, "--json"])
    out = capsys.readouterr().out
    return code, (json.loads(out) if out.strip() else None)


def _contains_epsilon(iv, delta, delta_of) -> bool:
    """Whether the exact ε(δ) lies in ``iv``: δ(ε) is continuous and decreasing, so it does iff
    δ(lower) >= δ >= δ(upper) (two evaluations of the exact δ instead of a bisection)."""
    return delta_of(iv.lower) >= mpf(delta) >= delta_of(iv.upper)


def test_cli_composes_several_mechanisms_like_the_api(capsys):
    code, out = _cli(capsys, "--mechanism", "gaussian", "--sigma", "2", "--compositions", "50",
                     "--mechanism", "laplace", "--scale", "10", "--compositions", "1",
                     "--mechanism", "randomized-response", "--mechanism-epsilon", "0.1",
                     "--delta", "1e-5", "--buckets", "8192")
    assert code == 0
    api = PrivacyBucketsAccountant(buckets=8192).compose(Gaussian(2), 50) \
        .compose(Laplace(10), 1).compose(PLDRandomizedResponse("0.1"), 1)
    iv = api.get_epsilon_interval("1e-5")
    assert Fraction(out["epsilon"]["lower"]) == iv.lower
    assert Fraction(out["epsilon"]["upper"]) == iv.upper
    assert [m["count"] for m in out["mechanisms"]] == [50, 1, 1]
    assert out["compositions"] == 52 and out["seconds"] > 0
    # the truth (Gaussian μ = sqrt(50)/2 with one Laplace ε0 = 0.1 and one RR(0.1)) is inside,
    # and the lattice mechanism did not coarsen the Gaussian's grid (width was ~1e-2 when the
    # grid was pinned to RR's lattice h = 0.1)
    mu = composed_gaussian_mu([("2", 50)])
    assert _contains_epsilon(iv, "1e-5", lambda e: gaussian_mixture_delta(
        mu, e, laplace_eps0="0.1", rr_eps="0.1"))
    assert iv.width < 1e-3
    # a different grouping is a different composition
    code, other = _cli(capsys, "--mechanism", "gaussian", "--sigma", "2", "--compositions", "70",
                       "--delta", "1e-5", "--buckets", "8192")
    assert Fraction(other["epsilon"]["upper"]) != iv.upper


def test_options_belong_to_their_mechanism(capsys):
    assert main(["buckets", "--mechanism", "gaussian", "--mechanism", "laplace", "--sigma", "1",
                 "--delta", "1e-5"]) == 2  # --sigma went to laplace, not to gaussian
    assert "--mechanism gaussian needs --sigma" in capsys.readouterr().err
    assert main(["buckets", "--mechanism", "laplace", "--scale", "1", "--sigma", "1",
                 "--delta", "1e-5"]) == 2
    assert "does not take --sigma" in capsys.readouterr().err
    with pytest.raises(SystemExit) as info:
        main(["buckets", "--mechanism", "gaussian", "--sigma", "1", "--sigma", "2",
              "--delta", "1e-5"])
    assert info.value.code == 2 and "given twice" in capsys.readouterr().err
    # options written before the first --mechanism belong to it (the old single-mechanism form)
    code, out = _cli(capsys, "--sigma", "1", "--compositions", "10", "--mechanism", "gaussian",
                     "--delta", "1e-5")
    assert code == 0 and out["compositions"] == 10


def test_spec_files_json_and_toml(tmp_path, capsys):
    spec = {"mechanisms": [{"mechanism": "gaussian", "sigma": 2, "count": 50},
                           {"mechanism": "laplace", "scale": "10", "count": 1}]}
    (tmp_path / "c.json").write_text(json.dumps(spec))
    (tmp_path / "c.toml").write_text('[[mechanism]]\nmechanism = "gaussian"\nsigma = 2\n'
                                     'count = 50\n\n[[mechanism]]\nmechanism = "laplace"\n'
                                     'scale = "10"\ncount = 1\n')
    assert [(m.describe(), n) for m, n in load_spec(tmp_path / "c.json")] == \
        [(m.describe(), n) for m, n in load_spec(tmp_path / "c.toml")]
    code, a = _cli(capsys, "--spec", str(tmp_path / "c.json"), "--delta", "1e-5")
    code2, b = _cli(capsys, "--mechanism", "gaussian", "--sigma", "2", "--compositions", "50",
                    "--mechanism", "laplace", "--scale", "10", "--compositions", "1",
                    "--delta", "1e-5")
    assert code == code2 == 0 and a["epsilon"] == b["epsilon"]
    # the truth (Gaussian μ = sqrt(50)/2 with one Laplace ε0 = 0.1) is inside, tightly
    iv = Interval(Fraction(a["epsilon"]["lower"]), Fraction(a["epsilon"]["upper"]))
    mu = composed_gaussian_mu([("2", 50)])
    assert _contains_epsilon(iv, "1e-5", lambda e: gaussian_mixture_delta(mu, e, laplace_eps0="0.1"))
    assert iv.width < 1e-4


@pytest.mark.parametrize("bad, message", [
    ([], "non-empty"),
    ({"mechanisms": [{"mechanism": "nope"}]}, "unknown mechanism"),
    ([{"mechanism": "gaussian", "sigma": 1, "count": 0}], "count"),
    ([{"mechanism": "gaussian", "sigma": 1, "scale": 2}], "unknown field"),
    ([{"mechanism": "gaussian"}], "sigma"),
    ({"other": 1}, "keys"),
    ([{"mechanism": "finite_pair", "p": "x", "q": [1]}], "lists"),
])
def test_bad_specs_are_clear_errors(bad, message):
    with pytest.raises(InvalidParameter, match=message):
        parse_spec(bad)


def test_target_width_tightens_automatically(capsys):
    code, out = _cli(capsys, "--mechanism", "gaussian", "--sigma", "1", "--compositions", "1000",
                     "--delta", "1e-5", "--target-width", "1e-4", "--buckets", "8192")
    assert code == 0 and out["target"]["reached"]
    attempts = out["target"]["attempts"]
    assert attempts[0]["width"] > 1e-4 >= attempts[-1]["width"]  # it had to grow the window
    assert [a["buckets"] for a in attempts][:2] == [8192, 32768]
    width = float(Fraction(out["epsilon"]["upper"]) - Fraction(out["epsilon"]["lower"]))
    assert width <= 1e-4 and out["buckets"] == attempts[-1]["buckets"]


def test_target_width_stops_at_the_limit_and_says_why():
    res = tighten([(Gaussian(1), 1000)], target_width=1e-9, delta="1e-5", buckets=4096,
                  limits=Limits(max_seconds=2))
    assert not res.reached and "max_seconds" in res.reason
    assert res.interval.width == min(a.width for a in res.attempts)
    with pytest.raises(InvalidParameter):
        tighten([Gaussian(1)], target_width=0, delta="1e-5")

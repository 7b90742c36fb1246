"""odp.from_opendp with the real OpenDP library: Laplace (max-divergence) and
Gaussian (zCDP) measurements through SQLite ledgers, certified and verified; the tight zCDP → DP
conversion (Canonne–Kamath–Steinke 2020, Cor. 13) against mpmath and against OpenDP's own; bad
inputs refused with typed errors and nothing reserved.

Tests that need OpenDP skip with the reason when it is not installed (the ``opendp`` extra)."""

from __future__ import annotations

import math

import json
import sys
from fractions import Fraction

import pytest

import odp
from odp.adapters.opendp import OpenDPMissing
from odp.budget import shortest_decimal_at_least
from odp.cli import main
from odp.conversions import zcdp_to_dp_epsilon
from odp.errors import InvalidBudget, InvalidGuarantee, InvalidParameter, OdpError

try:
    import opendp.prelude as dp
except ImportError:  # pragma: no cover - CI installs the opendp extra
    dp = None
else:
    dp.enable_features("contrib", "honest-but-curious")  # the user measurements below need it

needs_opendp = pytest.mark.skipif(
    dp is None, reason="OpenDP is not installed: pip install -e '.[opendp]' (the opendp extra)")

AGES = [23, 41, 37, 52, 29, 61, 44]


# ----------------------------------------------------------------------------- CKS conversion

def _cks_reference(rho: Fraction, delta: Fraction):
    """inf over α > 1 of Cor. 13's ε(α), with mpmath at 50 digits: a scan of t = ln(α − 1),
    then golden-section refinement (an independent evaluation of the same statement)."""
    import mpmath

    mpmath.mp.dps = 50
    r = mpmath.mpf(rho.numerator) / rho.denominator
    log_inv = -mpmath.log(mpmath.mpf(delta.numerator) / delta.denominator)

    def eps(t):
        a = 1 + mpmath.exp(t)
        return a * r + (log_inv + (a - 1) * mpmath.log(1 - 1 / a) - mpmath.log(a)) / (a - 1)

    ts = [mpmath.mpf(i) / 8 for i in range(-320, 480)]
    best = min(range(len(ts)), key=lambda i: eps(ts[i]))
    lo, hi = ts[max(best - 1, 0)], ts[min(best + 1, len(ts) - 1)]
    g = (mpmath.sqrt(5) - 1) / 2
    for _ in range(200):
        t1, t2 = hi - g * (hi - lo), lo + g * (hi - lo)
        if eps(t1) <= eps(t2):
            hi = t2
        else:
            lo = t1
    return eps((lo + hi) / 2)


@pytest.mark.parametrize("rho, delta", [
    ("0.005", "1e-6"), ("0.5", "1e-5"), ("1e-6", "1e-9"), ("2", "1e-3"), ("10", "1e-10"),
    ("1e-4", "0.1"), ("0.0050000000000000001", "1e-6"), ("1/3", "1e-12"),
])
def test_cks_conversion_is_a_tight_upper_bound(rho, delta):
    import mpmath

    r, d = Fraction(rho), Fraction(delta)
    ours = zcdp_to_dp_epsilon(r, d)
    reference = max(_cks_reference(r, d), 0)  # ε ≥ 0: a negative infimum means ε = 0 holds
    ours_mp = mpmath.mpf(ours.numerator) / ours.denominator
    assert ours_mp >= reference                           # sound: never below the infimum
    assert ours_mp - reference <= mpmath.mpf("2e-12") + reference * mpmath.mpf("1e-9")  # tight
    bun_steinke = float(r) + 2 * math.sqrt(float(r) * math.log(1 / float(d)))
    assert float(ours) <= bun_steinke + 1e-9                # never worse than Bun–Steinke 1.3
    assert (ours * 10**12).denominator == 1               # rounded up to the 1e-12 grid


def test_cks_conversion_edges():
    assert zcdp_to_dp_epsilon(0, "1e-6") == 0
    with pytest.raises(InvalidParameter, match="delta must be > 0"):
        zcdp_to_dp_epsilon("0.1", 0)
    with pytest.raises(InvalidBudget):
        zcdp_to_dp_epsilon("0.1", 1)
    with pytest.raises(InvalidBudget):
        zcdp_to_dp_epsilon("-0.1", "1e-6")


@needs_opendp
@pytest.mark.parametrize("scale, delta", [(10.0, 1e-6), (1.0, 1e-5), (3.0, 1e-9), (0.5, 1e-3)])
def test_cks_conversion_agrees_with_opendps_own(scale, delta):
    """OpenDP's make_zCDP_to_approxDP is an independent implementation of the same Cor. 13."""
    gauss = dp.m.make_gaussian(dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float),
                               scale=scale)
    theirs = dp.c.make_zCDP_to_approxDP(gauss).map(1.0).epsilon(delta)
    ours = zcdp_to_dp_epsilon(shortest_decimal_at_least(gauss.map(1.0)),
                                  shortest_decimal_at_least(delta))
    assert abs(float(ours) - theirs) <= 1e-9 * max(1.0, theirs)


# ----------------------------------------------------------------------------- guarantees

def _float_laplace(scale=10.0):
    return dp.m.make_laplace(dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float),
                             scale=scale)


def _count():
    return dp.t.make_count(dp.vector_domain(dp.atom_domain(T=int)), dp.symmetric_distance())


def _float_gaussian(scale=10.0):
    return dp.m.make_gaussian(dp.atom_domain(T=float, nan=False),
                              dp.absolute_distance(T=float), scale=scale)


@needs_opendp
def test_max_divergence_is_pure_dp_rounded_up_to_a_short_decimal():
    mech = odp.from_opendp(_float_laplace(10.0), 1.0)
    # OpenDP's map gives the float 0.1 = 0.1000000000000000055…: the shortest decimal not
    # below it is 0.10000000000000001 (the decimal 0.1 would understate OpenDP's bound)
    assert mech.guarantee == odp.DP("0.10000000000000001")
    assert Fraction(mech.guarantee.epsilon) >= Fraction(0.1)
    count = odp.from_opendp(_count() >> dp.m.then_laplace(scale=2.0), 1)
    assert count.guarantee == odp.DP("0.5")
    params = count.params()
    assert params["output_measure"] == "MaxDivergence" and params["d_in"] == "1"
    assert params["input_metric"] == "SymmetricDistance()" and params["map"] == "0.5"
    assert params["opendp_version"].count(".") >= 1
    json.dumps(params)


@needs_opendp
def test_zcdp_is_converted_with_cks_at_the_chosen_delta():
    gauss = _float_gaussian(10.0)
    mech = odp.from_opendp(gauss, 1.0, delta="1e-6")
    rho = shortest_decimal_at_least(gauss.map(1.0))  # 0.005 as OpenDP's float, rounded up
    assert mech.guarantee == odp.DP(zcdp_to_dp_epsilon(rho, "1e-6"), "1e-6")
    # OpenDP's own conversion gives 0.42994146883694934; ours is a rigorous upper bound
    # rounded up to the 1e-12 grid
    assert Fraction(0.42994146883694934) <= mech.guarantee.epsilon <= Fraction("0.429941468839")
    assert mech.params()["delta"] == "0.000001" and "Cor. 13" in mech.params()["conversion"]


@needs_opendp
def test_approximate_and_smoothed_max_divergence():
    smoothed = dp.c.make_zCDP_to_approxDP(_float_gaussian(10.0))
    profile_eps = smoothed.map(1.0).epsilon(1e-6)
    mech = odp.from_opendp(smoothed, 1.0, delta="1e-6")
    assert mech.guarantee == odp.DP(shortest_decimal_at_least(profile_eps), "1e-6")
    fixed = dp.c.make_fix_delta(smoothed, 1e-6)
    eps, delta = fixed.map(1.0)
    approx = odp.from_opendp(fixed, 1.0)
    assert approx.guarantee == odp.DP(shortest_decimal_at_least(eps),
                                      shortest_decimal_at_least(delta))
    assert approx.guarantee.delta == Fraction(1, 10**6)


# ----------------------------------------------------------------------------- through a ledger

@needs_opendp
def test_laplace_and_gaussian_through_a_sqlite_ledger_certified(tmp_path, capsys):
    path = str(tmp_path / "opendp.db")
    with odp.Accountant("2", "1e-6", ledger=path) as acc:
        acc.run(odp.from_opendp(_float_laplace(10.0), 1.0), 3.0)
        acc.run(odp.from_opendp(_count() >> dp.m.then_laplace(scale=4.0), 2), AGES)
        acc.run(odp.from_opendp(_count() >> dp.m.then_gaussian(scale=20.0), 2, delta="1e-6"),
                AGES)
        expected = (2 - Fraction("0.10000000000000001") - Fraction("0.5")
                    - zcdp_to_dp_epsilon(Fraction(4, 2 * 400), "1e-6"))
        assert acc.remaining == odp.Budget(expected, 0)
        assert [r.mechanism for r in acc.history] == ["opendp"] * 3
    capsys.readouterr()
    assert main(["ledger", "show", path]) == 0
    out = capsys.readouterr().out
    assert "/" not in out.replace(path, "").replace("≤x / ≥x", "")  # no p/q: short decimals
    assert f"remaining  {odp.budget.display_named('ε', expected, 'down')}  δ=0" in out
    # 0.10000000000000001 (the float 1/10 rounded up) has 17 digits: shown short, rounded up
    for number in ("≤0.100001", "0.5", "0.429941468838", "0.000001"):
        assert number in out
    assert main(["ledger", "show", path, "--json"]) == 0
    exact = json.loads(capsys.readouterr().out)
    assert exact["remaining"]["epsilon"] == str(expected)
    assert exact["rounds"][0]["params"]["output_measure"] == "MaxDivergence"
    cert = str(tmp_path / "run.cert")
    assert main(["certify", path, "-o", cert]) == 0
    assert main(["verify", cert]) == 0
    assert "OK: 3 rounds replay" in capsys.readouterr().out


@needs_opendp
def test_opendp_draws_its_own_noise_not_the_accountants_rng():
    class Counting:
        secure = True
        calls = 0

        def randbelow(self, n):
            Counting.calls += 1
            return 0

    acc = odp.Accountant("1", rng=Counting())
    release = acc.run(odp.from_opendp(_count() >> dp.m.then_laplace(scale=4.0), 2), AGES)
    assert isinstance(release, int) and Counting.calls == 0
    assert acc.last_round.charged == Fraction(1, 2)


# ----------------------------------------------------------------------------- refusals

@needs_opendp
@pytest.mark.parametrize("make, error, message", [
    (lambda: odp.from_opendp(object(), 1), InvalidParameter, "needs an OpenDP Measurement"),
    (lambda: odp.from_opendp(_count(), 1), InvalidParameter, "Transformation releases nothing"),
    (lambda: odp.from_opendp(lambda x: x, 1), InvalidParameter, "got function"),
    (lambda: odp.from_opendp(dp.c.make_approximate(_float_gaussian()), 1.0), InvalidGuarantee,
     "Approximate(ZeroConcentratedDivergence)"),
    (lambda: odp.from_opendp(dp.m.make_user_measurement(
        dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float),
        dp.user_divergence("MyDivergence"), function=lambda x: x, privacy_map=lambda d: 1.0),
        1.0), InvalidGuarantee, "output measure MyDivergence"),
    (lambda: odp.from_opendp(dp.m.make_user_measurement(
        dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float),
        dp.renyi_divergence(), function=lambda x: x, privacy_map=lambda d: 1.0),
        1.0), InvalidGuarantee, "RenyiDivergence"),
    (lambda: odp.from_opendp(dp.m.make_user_measurement(
        dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float),
        dp.max_divergence(), function=lambda x: x, privacy_map=lambda d: float("inf")),
        1.0), InvalidGuarantee, "no finite guarantee"),
    (lambda: odp.from_opendp(dp.m.make_user_measurement(
        dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float),
        dp.max_divergence(), function=lambda x: x, privacy_map=lambda d: -1.0),
        1.0), InvalidGuarantee, "negative"),
    (lambda: odp.from_opendp(_count() >> dp.m.then_laplace(scale=2.0), 1.0), InvalidParameter,
     "is not a distance of this measurement's input metric SymmetricDistance()"),
    (lambda: odp.from_opendp(_count() >> dp.m.then_laplace(scale=2.0), "1"), InvalidParameter,
     "d_in='1'"),
    (lambda: odp.from_opendp(_count() >> dp.m.then_laplace(scale=2.0), True), InvalidParameter,
     "d_in must be a distance"),
    (lambda: odp.from_opendp(_count() >> dp.m.then_laplace(scale=2.0), -1), InvalidParameter,
     "d_in=-1"),
    (lambda: odp.from_opendp(_float_gaussian(), 1.0), InvalidParameter, "choose the δ"),
    (lambda: odp.from_opendp(_float_gaussian(), 1.0, delta=0), InvalidParameter, "> 0"),
    (lambda: odp.from_opendp(_float_gaussian(), 1.0, delta="abc"), InvalidParameter,
     "delta must be a finite number"),
    (lambda: odp.from_opendp(_float_laplace(), 1.0, delta="1e-6"), InvalidParameter,
     "fixes its own δ"),
])
def test_bad_inputs_raise_typed_errors_before_anything_is_reserved(tmp_path, make, error,
                                                                   message):
    path = str(tmp_path / "refused.db")
    with odp.Accountant("1", "1e-6", ledger=path) as acc:
        with pytest.raises(error, match=message.replace("(", r"\(").replace(")", r"\)")):
            acc.run(make(), AGES)
        assert acc.history == [] and acc.remaining == odp.Budget("1", "1e-6")


@needs_opendp
def test_wrong_data_container_is_refused_free_element_errors_are_charged(tmp_path):
    path = str(tmp_path / "data.db")
    mech = odp.from_opendp(_count() >> dp.m.then_laplace(scale=4.0), 2)
    with odp.Accountant("1", ledger=path) as acc:
        for bad in ("abc", 3, None, {"a": 1}):
            with pytest.raises(InvalidParameter, match="takes a Vec<i32>"):
                acc.run(mech, bad)
        with pytest.raises(InvalidParameter, match="takes one f64 number"):
            acc.run(odp.from_opendp(_float_laplace(), 1.0), [1.0])
        assert acc.history == []
        with pytest.raises(OdpError):
            acc.run(odp.DP("0.1"), AGES)  # a guarantee is not a mechanism
        with pytest.raises(InvalidParameter, match="declared .guarantee"):
            acc.run(_count() >> dp.m.then_laplace(scale=4.0), AGES)  # unwrapped measurement
        assert acc.history == []
        # an element OpenDP cannot take is found only when it runs: the data decides (an
        # out-of-range int would too), so the round is charged its worst case, as documented
        with pytest.raises(TypeError) as info:
            acc.run(mech, ["a", "b"])
        assert "charged its worst case" in info.value.__notes__[0]
        assert acc.history[0].charged == Fraction(1, 2) and acc.history[0].reason == "failed"


def test_missing_opendp_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "opendp", None)
    monkeypatch.setitem(sys.modules, "opendp.mod", None)
    with pytest.raises(OpenDPMissing, match=r'pip install -e "\.\[opendp\]"') as info:
        odp.from_opendp(object(), 1)
    assert isinstance(info.value, OdpError) and info.value.extra == "opendp"
    assert "\n" not in str(info.value)

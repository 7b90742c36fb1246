"""Mechanisms charge their natural notion in a laned ledger: DP-SGD pays each stretch of steps in
a Rényi lane as it runs (an early stop pays for the steps it ran, no Lemma 11 δ split), an OpenDP
zCDP measurement its ρ, a pure-DP mechanism ε²/2 in a zCDP-only ledger — against references
computed here with mpmath."""

from __future__ import annotations

from fractions import Fraction

import mpmath as mp
import numpy as np
import pytest

import odp
from odp.errors import BudgetExceeded, InvalidParameter
from odp.ledger.lanes import Lane
from odp.mechanisms import DPSGD, LogisticRegressionModel

# docs/dpsgd.md's example: q = 1/10, σ = 2, up to 20 epochs checked every 2, δ = 4e-6
SETTINGS = dict(n=200, sampling_rate="1/10", noise_multiplier=2, clip=1, epochs=20,
                check_every=2, delta="4e-6", learning_rate=1.0)


#: DP-SGD's relation: the accountants of its runs hold add/remove rounds (odp.neighbours)
AR = odp.Neighbours.ADD_REMOVE


def _data(n: int = 200, dim: int = 4, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, size=(n, dim))
    return x, np.where(x[:, 0] + 0.5 * x[:, 1] > 0, 1.0, -1.0)


def sampled_gaussian_epsilon_mp(q: Fraction, sigma: int, steps: int, alpha: int,
                                delta: Fraction) -> mp.mpf:
    """ε at δ of ``steps`` Poisson-subsampled Gaussian steps at the integer order α: the
    Mironov–Talwar–Zhang 2019 sum A_α = Σ_k C(α,k)(1−q)^{α−k} q^k e^{(k²−k)/(2σ²)}, ε(α) =
    steps·ln(A_α)/(α−1), converted by Canonne–Kamath–Steinke 2020, Prop. 12 — 50 digits."""
    mp.mp.dps = 50
    qq = mp.mpf(q.numerator) / q.denominator
    a = sum(mp.binomial(alpha, k) * (1 - qq) ** (alpha - k) * qq ** k
            * mp.e ** (mp.mpf(k * k - k) / (2 * sigma * sigma)) for k in range(alpha + 1))
    rdp = steps * mp.log(a) / (alpha - 1)
    d = mp.mpf(delta.numerator) / delta.denominator
    return rdp + mp.log(mp.mpf(alpha - 1) / alpha) - (mp.log(d) + mp.log(alpha)) / (alpha - 1)


def test_dpsgd_stopped_early_in_a_renyi_lane_pays_for_the_steps_it_ran(tmp_path):
    x, y = _data()
    mech = DPSGD(LogisticRegressionModel(4), **SETTINGS, stop_threshold=1e9)  # stops at once
    acc = odp.Accountant("10", "4e-6", ledger=tmp_path / "l.db",
                         lanes=[Lane.renyi("10", "4e-6", orders=[13])],
                         rng=odp.SeededRandom(1), neighbours=AR)
    fit = acc.run(mech, (x, y))
    assert len(fit) == 20 and not fit.budget_stop  # 2 of 20 epochs
    (lane,) = acc.lanes
    assert lane.rounds == 1 and acc.history[0].params["steps"] == 20
    charged = lane.current[0]
    reference = sampled_gaussian_epsilon_mp(Fraction(1, 10), 2, 20, 13, Fraction(4, 10**6))
    assert reference <= charged <= reference + mp.mpf("1e-9")  # a rigorous upper bound
    assert charged <= Fraction("1.31")
    # the ODP-lane route (Lemma 11 with its δ split over the ten stops) stays available and
    # charges the same early stop 1.5008
    odp_acc = odp.Accountant("10", "4e-6", rng=odp.SeededRandom(1), neighbours=AR)
    odp_acc.run(mech, (x, y))
    assert odp_acc.last_round.label == 20
    assert round(float(odp_acc.last_round.charged), 4) == 1.5008 > float(charged)


def test_dpsgd_in_a_renyi_lane_stops_where_the_lane_stops_paying(tmp_path):
    x, y = _data()
    mech = DPSGD(LogisticRegressionModel(4), **SETTINGS)  # threshold 0: never stops by itself
    per_stretch = 20 * mech.step_rdp(13)
    lane = Lane.renyi("2", "4e-6", orders=[13])
    stretches = int(lane.budget[0] / per_stretch)
    assert 1 <= stretches < 10
    acc = odp.Accountant("2", "4e-6", lanes=[lane], rng=odp.SeededRandom(3), neighbours=AR)
    fit = acc.run(mech, (x, y))
    assert fit.budget_stop and len(fit) == 20 * stretches
    assert acc.lanes[0].spent == (stretches * per_stretch,)
    # a lane that cannot pay the first stretch: refused before any step, nothing recorded
    small = odp.Accountant("1.2", "4e-6", lanes=[Lane.renyi("1.2", "4e-6", orders=[13])],
                           neighbours=AR)
    assert small.ledger.lanes[0].budget[0] < per_stretch
    with pytest.raises(BudgetExceeded):
        small.run(mech, (x, y))
    assert small.history == []


def test_dpsgd_takes_the_odp_lane_when_the_ledger_has_no_renyi_lane():
    x, y = _data()
    mech = DPSGD(LogisticRegressionModel(4), **SETTINGS, stop_threshold=1e9)
    acc = odp.Accountant("11", "5e-6", lanes=[Lane.odp("10", "4e-6"), Lane.zcdp(1, "1e-6")],
                         rng=odp.SeededRandom(1), neighbours=AR)
    acc.run(mech, (x, y))
    assert acc.history[0].lane is None and acc.history[0].label == 20


def test_a_pure_dp_mechanism_in_a_zcdp_only_ledger_pays_eps_squared_over_two():
    acc = odp.Accountant(1, "1e-6", composition="zcdp")
    acc.run(odp.LaplaceMechanism(len, epsilon="0.1"), [1, 2, 3])
    assert acc.history[0].guarantee.cost == (Fraction(1, 200),)


def test_an_opendp_zcdp_measurement_pays_its_rho_in_a_zcdp_lane():
    dp = pytest.importorskip("opendp.prelude")
    dp.enable_features("contrib")
    gauss = dp.m.make_gaussian(dp.atom_domain(T=float, nan=False),
                               dp.absolute_distance(T=float), scale=10.0)
    mech = odp.from_opendp(gauss, 1.0)  # no δ: the ρ is charged as it is
    rho = odp.budget.shortest_decimal_at_least(gauss.map(1.0))  # OpenDP's float, rounded up
    assert mech.zcdp == odp.ZCDP(rho) and 0 <= rho - Fraction(1, 200) < Fraction(1, 10**18)
    acc = odp.Accountant(2, "1e-5", composition="zcdp")
    fit = 0
    while True:
        try:
            acc.run(mech, 3.0)
        except BudgetExceeded:
            break
        fit += 1
    assert fit == 21 and acc.lanes[0].spent == (21 * rho,)
    # without a lane for ρ, and without a δ to convert it at: refused, nothing reserved
    plain = odp.Accountant(1, "1e-6")
    with pytest.raises(odp.errors.InvalidParameter, match="choose the δ"):
        plain.run(mech, 3.0)
    assert plain.history == []


def test_dpsgd_modified_while_it_runs_in_a_renyi_lane_is_withheld(tmp_path):
    """A progress callback that changes DP-SGD's clipping norm while it trains in a Rényi lane:
    the stretches it ran stay paid (their noise is out), the trained model is withheld, as for
    any round of odp's own mechanism modified while it ran."""
    x, y = _data()
    mech: DPSGD | None = None

    def tamper(done: int, total: int) -> None:
        assert mech is not None
        mech.clip = Fraction(1000)

    mech = DPSGD(LogisticRegressionModel(4), **SETTINGS, stop_threshold=1e9, progress=tamper)
    acc = odp.Accountant("10", "4e-6", ledger=tmp_path / "l.db",
                         lanes=[Lane.renyi("10", "4e-6", orders=[13])],
                         rng=odp.SeededRandom(1), neighbours=AR)
    with pytest.raises(InvalidParameter, match="modified while it ran"):
        acc.run(mech, (x, y))
    (lane,) = acc.lanes
    assert lane.rounds == 1 and acc.history[0].params["steps"] == 20  # paid before its noise

"""odp.dpsgd.Accounting settled in a Rényi lane: each stretch of steps is paid to the lane before
it runs, so a run that stops early has paid for exactly its steps, at the lane's δ, with no
Lemma 11 δ split — against mpmath references computed here; a refused stretch records nothing;
the ledger and certificate verify (``odp verify``; the Lean kernel in the slow test)."""

from __future__ import annotations

from fractions import Fraction

import mpmath as mp
import pytest

import odp
from odp.cli import main as cli_main
from odp.certs import verify
from odp.dpsgd import Accounting, OdpLaneSettlement, RenyiLaneSettlement, Schedule
from odp.errors import BudgetExceeded, InvalidParameter, NeighboursMismatch
from odp.ledger.lanes import Lane

from lean_support import toolchain  # noqa: F401  (fixture)

# docs/dpsgd.md's example: q = 1/10, σ = 2, δ = 4e-6, stops every 2 epochs (20 steps) of 20
EXAMPLE = dict(sampling_rate="1/10", noise_multiplier=2, max_steps=200, stops=20)
#: DP-SGD's relation: these runs' accountants hold add/remove rounds (odp.neighbours)
AR = odp.Neighbours.ADD_REMOVE


def sampled_gaussian_rdp_mp(q: Fraction, sigma: Fraction, alpha: int) -> mp.mpf:
    """One step's RDP at the integer order α: ln(A_α)/(α−1) with the Mironov–Talwar–Zhang 2019
    sum A_α = Σ_k C(α,k)(1−q)^{α−k} q^k e^{(k²−k)/(2σ²)} — 50 digits, no odp code."""
    mp.mp.dps = 50
    qq = mp.mpf(q.numerator) / q.denominator
    s2 = (mp.mpf(sigma.numerator) / sigma.denominator) ** 2
    a = sum(mp.binomial(alpha, k) * (1 - qq) ** (alpha - k) * qq ** k
            * mp.e ** (mp.mpf(k * k - k) / (2 * s2)) for k in range(alpha + 1))
    return mp.log(a) / (alpha - 1)


def cks_epsilon_mp(rdp: mp.mpf, alpha: int, delta: Fraction) -> mp.mpf:
    """Canonne–Kamath–Steinke 2020, Prop. 12: ε = ε_α + ln((α−1)/α) − (ln δ + ln α)/(α−1)."""
    d = mp.mpf(delta.numerator) / delta.denominator
    return rdp + mp.log(mp.mpf(alpha - 1) / alpha) - (mp.log(d) + mp.log(alpha)) / (alpha - 1)


def _example_ledger(tmp_path, epsilon="10") -> odp.Accountant:
    return odp.Accountant(epsilon, "4e-6", ledger=tmp_path / "run.ledger",
                          lanes=[Lane.renyi(epsilon, "4e-6", orders=[13])], neighbours=AR)


def test_the_docs_example_stopped_after_two_of_twenty_epochs(tmp_path):
    acc = _example_ledger(tmp_path)
    run = Accounting(acc, **EXAMPLE, name="docs example")
    assert isinstance(run.settlement, RenyiLaneSettlement)  # a Rényi lane: chosen by default
    assert run.delta == Fraction(4, 10**6)  # the lane's δ (one order: no split)
    run.steps(20)
    rec = run.stop()
    (lane,) = acc.lanes
    assert lane.rounds == 1 and rec.params["steps"] == [1, 20] and rec.lane == "renyi"
    charged = lane.current[0]
    step = sampled_gaussian_rdp_mp(Fraction(1, 10), Fraction(2), 13)
    reference = cks_epsilon_mp(20 * step, 13, Fraction(4, 10**6))
    assert mp.mpf("1.3089") < reference < mp.mpf("1.309")
    assert reference <= charged <= reference + mp.mpf("1e-9")  # a rigorous upper bound
    assert charged <= Fraction("1.31")
    assert run.charge_if_stopped() == (20, charged) and run.epsilon().upper == charged
    assert run.epsilon().lower <= charged
    # a deliberately wrong claim fails the same check: the RDP of 19 steps
    wrong = run.settlement.epsilon_of(tuple(19 * c for c in run.settlement.step_cost(
        Fraction(1, 10), Fraction(2))), Fraction(4, 10**6))
    assert wrong < reference
    # the Lemma 11 route (its δ split over the ten stops) charges the same stop 1.5008
    odp_acc = odp.Accountant("10", "4e-6", neighbours=AR)
    lemma11 = Accounting(odp_acc, **EXAMPLE, delta="4e-6")
    assert isinstance(lemma11.settlement, OdpLaneSettlement)
    lemma11.steps(20)
    assert round(float(lemma11.stop().charged), 4) == 1.5008 > float(charged)


def test_a_refused_stretch_records_nothing_and_the_run_keeps_what_it_paid(tmp_path):
    # a lane that holds two stretches of 20 steps at α = 13, not three
    lane = Lane.renyi("2", "4e-6", orders=[13])
    acc = odp.Accountant("2", "4e-6", ledger=tmp_path / "run.ledger", lanes=[lane],
                         neighbours=AR)
    run = Accounting(acc, **EXAMPLE)
    per = 20 * run.settlement.step_cost(Fraction(1, 10), Fraction(2))[0]
    assert 2 * per <= lane.budget[0] < 3 * per
    run.steps(39)
    assert len(acc.history) == 2 and run.settlement.paid == 40
    run.step()
    before = (list(acc.history), acc.lanes[0].spent)
    with pytest.raises(BudgetExceeded, match="do not run step 41"):
        run.step()
    assert (list(acc.history), acc.lanes[0].spent) == before  # nothing recorded
    assert run.steps_run == 40 and run.settlement.paid == 40
    with pytest.raises(BudgetExceeded):
        run.prepare_step()
    assert list(acc.history) == before[0]
    rec = run.stop()
    assert rec.params["steps"] == [21, 40]
    assert acc.lanes[0].spent == (2 * per,)
    cert = acc.certificate()
    result = verify(cert.text, cert.sidecar)
    assert result.ok, result.message
    path, _ = cert.write(tmp_path / "run.cert")
    acc.close()
    assert cli_main(["verify", str(path), "--ledger", str(tmp_path / "run.ledger")]) == 0
    assert cli_main(["ledger", "verify", str(tmp_path / "run.ledger")]) == 0


def test_a_first_stretch_that_does_not_fit_is_refused_before_the_run(tmp_path):
    acc = odp.Accountant("1", "4e-6", lanes=[Lane.renyi("1", "4e-6", orders=[13])],
                         neighbours=AR)
    with pytest.raises(BudgetExceeded, match="refuses steps 1-20"):
        Accounting(acc, **EXAMPLE)
    assert acc.history == [] and acc.lanes[0].spent == (0,)


def test_steps_pay_one_round_up_to_the_next_stop_and_prepare_step_pays_ahead():
    acc = odp.Accountant("20", "4e-6", lanes=[Lane.renyi("20", "4e-6", orders=[8, 16])],
                         neighbours=AR)
    run = Accounting(acc, **EXAMPLE)
    assert run.delta == Fraction(2, 10**6)  # δ_j/m for a lane of two orders
    assert len(acc.history) == 1  # steps 1-20, paid when the accounting was made
    run.steps(45)  # steps 21-60 in one round
    assert len(acc.history) == 2 and acc.history[1].params["steps"] == [21, 60]
    run.steps(15)
    assert len(acc.history) == 2 and run.steps_run == 60
    run.prepare_step()  # the next step's stretch, paid ahead, not counted
    assert len(acc.history) == 3 and run.steps_run == 60 and run.settlement.paid == 80
    run.step()
    assert len(acc.history) == 3
    # what the lane holds is the sum of the rounds, and the run's ε its conversion
    cost = run.settlement.spent
    assert cost == tuple(80 * c for c in run.settlement.step_cost(Fraction(1, 10), Fraction(2)))
    assert acc.lanes[0].spent == cost
    assert run.charge_if_stopped()[1] == acc.lanes[0].current[0]


def test_a_schedule_is_charged_phase_by_phase_against_mpmath():
    sched = Schedule([(10, "1/10", 2), (10, "1/5", 3)])
    acc = odp.Accountant("10", "1e-6", lanes=[Lane.renyi("10", "1e-6", orders=[10])],
                         neighbours=AR)
    run = Accounting(acc, schedule=sched, stops=[15, 20])
    run.steps(20)
    run.stop()
    assert [r.params["steps"] for r in acc.history] == [[1, 15], [16, 20]]
    assert acc.history[1].params["phases"] == [
        {"steps": 5, "sampling_rate": "1/5", "noise_multiplier": "3"}]
    exact = (10 * sampled_gaussian_rdp_mp(Fraction(1, 10), Fraction(2), 10)
             + 10 * sampled_gaussian_rdp_mp(Fraction(1, 5), Fraction(3), 10))
    spent = acc.lanes[0].spent[0]
    assert exact <= spent <= exact + mp.mpf("1e-15")


def test_which_settlement_and_what_is_refused(tmp_path):
    lanes = [Lane.odp("5", "1e-6"), Lane.renyi("10", "4e-6", orders=[13])]
    laned = odp.Accountant("15", "5e-6", lanes=lanes, neighbours=AR)
    # composition= is Lemma 11's COMP: the ODP lane
    run = Accounting(laned, **EXAMPLE, delta="1e-6", composition="rdp")
    assert isinstance(run.settlement, OdpLaneSettlement) and laned.history[0].lane is None
    run.abort()
    # replace-one neighbours: the Rényi curve is add/remove, so Lemma 11 (group privacy)
    replace_one = odp.Accountant("15", "5e-6", lanes=lanes)
    with pytest.raises(InvalidParameter, match="an add/remove bound"):
        Accounting(replace_one, **EXAMPLE, settlement="renyi", neighbours="replace-one")
    assert replace_one.history == []
    # and a replace-one run in this add/remove accountant: refused before anything is recorded
    with pytest.raises(NeighboursMismatch, match="holds for replace-one neighbours, but"):
        Accounting(laned, **EXAMPLE, neighbours="replace-one")
    for kw, match in [(dict(settlement="renyi", delta="1e-6"), "lane's δ"),
                      (dict(settlement="renyi", composition="buckets"), "no composition"),
                      (dict(settlement="pld"), "settlement must be"),
                      (dict(settlement=RenyiLaneSettlement("odp")), "not a Rényi lane"),
                      (dict(settlement=RenyiLaneSettlement("nope")), "no lane 'nope'")]:
        with pytest.raises(InvalidParameter, match=match):
            Accounting(laned, **EXAMPLE, **kw)
    assert len(laned.history) == 1
    plain = odp.Accountant("10", "1e-5", neighbours=AR)
    with pytest.raises(InvalidParameter, match="no Rényi lane"):
        Accounting(plain, **EXAMPLE, settlement="renyi")
    with pytest.raises(InvalidParameter, match="delta"):
        Accounting(plain, **EXAMPLE)  # Lemma 11 needs the run's δ
    assert plain.history == []


def test_the_training_loop_example_in_a_renyi_lane_stops_early_and_verifies(tmp_path):
    import re
    import subprocess
    import sys

    from script_support import ROOT

    env = {"PYTHONPATH": str(ROOT / "python"), "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, str(ROOT / "examples" / "dpsgd_training_loop.py"),
                           "--seed", "1", "--dir", str(tmp_path), "--settlement", "renyi"],
                          capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    paid, stretches = map(int, re.search(r"paid in the Renyi lane for (\d+) steps in (\d+) "
                                         r"stretches", out).groups())
    steps = int(re.search(r"stopped after (\d+) steps", out).group(1))
    assert steps == paid < 1500 and stretches == paid // 250  # paid for exactly what it ran
    assert "odp ledger verify: OK" in out and "odp verify --ledger: OK" in out
    assert cli_main(["verify", str(tmp_path / "training.cert"), "--ledger",
                     str(tmp_path / "training.ledger")]) == 0


@pytest.mark.slow
def test_the_kernel_decides_the_certificate_of_a_run_in_a_renyi_lane(toolchain, tmp_path):  # noqa: F811
    acc = odp.Accountant("11", "5e-6", ledger=tmp_path / "run.ledger",
                         lanes=[Lane.odp("1", "1e-6"), Lane.renyi("10", "4e-6", orders=[13])],
                         neighbours=AR)
    acc.charge(odp.DP("0.5"))  # an ODP-lane round beside the training run
    run = Accounting(acc, **EXAMPLE)
    run.steps(45)
    run.stop()
    path, _ = acc.certificate().write(tmp_path / "run.cert")
    acc.close()
    assert cli_main(["verify", str(path), "--ledger", str(tmp_path / "run.ledger"),
                     "--kernel"]) == 0

"""odp.dpsgd: schedules, the training-loop accountant (Alg. 3 + Lemma 11 of Hartmann et al.
2022) and its ledger/certificate.  Privacy numbers are checked against independent mpmath
references (the analytic Gaussian, Balle & Wang 2018; the Poisson-subsampled pairs of
tests/poisson_refs.py), never against odp's own code."""

from __future__ import annotations

from fractions import Fraction

import mpmath as mp
import pytest
from poisson_refs import Gaussian, delta as poisson_delta
from test_buckets_refs import composed_gaussian_mu, gaussian_delta, gaussian_epsilon

import odp
from odp.certs import verify
from odp.composition import RDPComposition, StepSpec
from odp.dpsgd import (
    Accounting,
    OdpLaneSettlement,
    Schedule,
    ScheduleBuckets,
    ScheduleRDP,
    StepLimitReached,
)
from odp.errors import BudgetExceeded, InvalidParameter
from odp.rdp import subsampled_gaussian_rdp

mp.mp.dps = 40

#: DP-SGD's relation: the accountants of these runs hold add/remove rounds (odp.neighbours)
AR = odp.Neighbours.ADD_REMOVE


# ----------------------------------------------------------------------------- schedules


def test_schedule_is_run_length_encoded_and_slices_into_prefixes():
    s = Schedule.per_step([("1/10", 2)] * 5 + [("1/10", 3)] * 7)
    assert len(s) == 12 and len(s.phases) == 2
    assert s.prefix(5) == Schedule([(5, "1/10", 2)])
    assert s[:8] == Schedule([(5, "1/10", 2), (3, "1/10", 3)])
    assert s[3:9] == Schedule([(2, "1/10", 2), (4, "1/10", 3)])
    assert s[4].mechanism["sigma"] == "2" and s[5].mechanism["sigma"] == "3"
    assert s[-1] == s[11] and list(s)[6] == s[6]
    e = Schedule.per_epoch([("1/4", 1), ("1/5", 2)])
    assert [p.steps for p in e.phases] == [4, 5]
    assert Schedule.per_epoch([("1/4", 1)] * 3, steps_per_epoch=2) == Schedule([(6, "1/4", 1)])


@pytest.mark.parametrize("bad", [[], [(0, "0.1", 1)], [(3, "1.5", 1)], [(3, "0.1", 0)],
                                 [(3, "0.1")], [(True, "0.1", 1)], [(10**10, "0.1", 1)]])
def test_bad_schedules_are_refused(bad):
    with pytest.raises(InvalidParameter):
        Schedule(bad)


def test_each_step_spec_is_a_valid_one_step_guarantee():
    """The (ε, δ) a step spec carries is an upper bound on one step's tight ε at its δ."""
    spec = Schedule.constant("0.05", "0.9", 3)[0]
    ref = poisson_delta(Gaussian("0.05", 1 / mp.mpf("0.9")), spec.epsilon)
    assert ref <= spec.delta


def test_schedule_rdp_is_the_sum_of_the_phase_curves():
    s = Schedule([(30, "0.01", "1.1"), (20, "0.02", "1.5")])
    comp = ScheduleRDP(orders=[2, 3, "5/2"])
    for a, total in comp.curve(s).items():
        assert total == (subsampled_gaussian_rdp("0.01", "1.1", a, 30)
                         + subsampled_gaussian_rdp("0.02", "1.5", a, 20))
    # the same steps as plain StepSpecs through the generic RDP COMP
    specs = [StepSpec(1, 0, {"mechanism": "subsampled_gaussian", "q": "0.01", "sigma": "1.1"})] * 30
    specs += [StepSpec(1, 0, {"mechanism": "subsampled_gaussian", "q": "0.02", "sigma": "1.5"})] * 20
    generic = RDPComposition(orders=[2, 3, "5/2"]).curve(specs)
    for a, total in comp.curve(specs).items():  # each rounds its sums up at the 20th digit
        assert abs(total - generic[a]) <= total * Fraction(1, 10**17)


def test_heterogeneous_gaussian_schedule_contains_the_analytic_epsilon():
    """q = 1 phases are plain Gaussians: their composition is one Gaussian with
    μ = sqrt(Σ k/σ²) (Dong, Roth & Su 2022), whose ε is known to 40 digits."""
    s = Schedule([(40, 1, 6), (25, 1, 9), (10, 1, 4)])
    exact = gaussian_epsilon(composed_gaussian_mu([(6, 40), (9, 25), (4, 10)]), "1e-6")
    iv = ScheduleBuckets().interval(s, "1e-6")
    assert iv.lower <= exact <= iv.upper and iv.upper - iv.lower < 1e-4
    rdp = ScheduleRDP().epsilon_upper(s, Fraction(1, 10**6))
    assert rdp >= exact  # looser, still an upper bound
    # a wrong claim fails the same check: the schedule without its last phase
    short = ScheduleBuckets().interval(s.prefix(65), "1e-6")
    assert not short.lower <= exact <= short.upper


def test_poisson_schedule_of_two_steps_matches_the_mpmath_reference():
    """One subsampled step (q = 0.2, σ = 1) then one full Gaussian step (σ = 2): the tight δ at
    buckets' upper ε is at most the target and at its lower ε above it (quadrature reference,
    tests/poisson_refs.py), so the interval contains the tight ε."""
    from poisson_refs import delta_with_gaussian

    s = Schedule([(1, "0.2", 1), (1, 1, 2)])
    iv = ScheduleBuckets().interval(s, "1e-5")
    assert iv.upper - iv.lower < 1e-4
    with mp.workdps(20):
        base = Gaussian("0.2", 1)
        assert delta_with_gaussian(base, mp.mpf(1) / 2, iv.upper) <= mp.mpf("1e-5")
        assert delta_with_gaussian(base, mp.mpf(1) / 2, iv.lower) > mp.mpf("1e-5")
        # a wrong claim fails the same check: an ε 1 % below the lower end
        assert delta_with_gaussian(base, mp.mpf(1) / 2, iv.lower * Fraction(99, 100)) > \
            mp.mpf("1e-5")


# ----------------------------------------------------------------------------- Lemma 11


def _lemma11_holds(stops, costs, delta, mu_of_k) -> bool:
    """Lemma 11 with the *exact* COMP of a Gaussian run (μ = mu_of_k(k) after k steps):
    Σ_i δ_exact(k_i; ε^{k_i}) <= δ."""
    return sum(gaussian_delta(mu_of_k(k), c) for k, c in zip(stops, costs)) <= mp.mpf(delta)


@pytest.mark.parametrize("composition", ["rdp", "buckets"])
def test_the_costs_satisfy_lemma11_against_the_exact_gaussian(composition):
    acc = odp.Accountant(epsilon=100, delta="1e-3", neighbours=AR)
    run = Accounting(acc, sampling_rate=1, noise_multiplier=5, max_steps=60, stops=20,
                     delta="1e-5", composition=composition)
    s = run.settlement
    assert s.stops == [20, 40, 60]
    mu = lambda k: mp.sqrt(k) / 5  # noqa: E731
    assert _lemma11_holds(s.stops, s.costs, "1e-5", mu)
    for k, cost, d in zip(s.stops, s.costs, s.stop_deltas):  # each COMP value is an upper bound
        assert gaussian_delta(mu(k), cost) <= d
    assert sum(s.stop_deltas) <= Fraction(1, 10**5)
    # a deliberately wrong claim (costs 10 % lower) fails the same check
    assert not _lemma11_holds(s.stops, [c * Fraction(9, 10) for c in s.costs], "1e-5", mu)
    # buckets' costs are at most RDP's (tighter COMP), both above the exact ε at the share
    exact_share = gaussian_epsilon(mu(60), mp.mpf("1e-5") / 3)
    assert s.costs[-1] >= exact_share


def test_a_run_reserves_its_worst_case_and_settles_at_the_next_stop(tmp_path):
    ledger = tmp_path / "run.ledger"
    acc = odp.Accountant(epsilon=10, delta="1e-4", ledger=str(ledger), neighbours=AR)
    run = Accounting(acc, sampling_rate="1/50", noise_multiplier="1.2", max_steps=300,
                     stops=[100, 200], delta="1e-6", name="mnist", params={"model": "mlp"})
    eps_max, d = run.reserved
    assert run.stops == [100, 200, 300] and d == Fraction(1, 10**6)
    assert acc.remaining.epsilon == 10 - eps_max and acc.remaining.delta == Fraction(99, 10**6)
    assert run.steps(99) == 99 and not run.at_stop()
    assert run.step() == 100 and run.at_stop()
    run.step()
    assert run.charge_if_stopped() == (200, run.settlement.costs[1])
    iv = run.epsilon()
    assert 0 < iv.lower <= iv.upper <= run.settlement.costs[1]
    rec = run.stop()
    assert rec.label == 200 and rec.charged == run.settlement.costs[1]
    assert acc.remaining.epsilon == 10 - run.settlement.costs[1]
    with pytest.raises(InvalidParameter, match="settled"):
        run.step()
    # the ledger records the run; its certificate replays and has a lemma11 row
    cert = acc.certificate()
    result = verify(cert.text, cert.sidecar)
    assert result.ok, result.message
    assert "mech lemma11" in cert.text
    assert result.guarantees["rounds"][0]["mechanism"] == "lemma11"
    acc.close()
    again = odp.Accountant(ledger=str(ledger))
    (round_,) = again.history
    assert round_.mechanism == "dpsgd[mnist]" and round_.params["model"] == "mlp"
    again.close()


def test_steps_beyond_max_steps_are_refused_and_not_counted():
    acc = odp.Accountant(epsilon=10, delta="1e-4", neighbours=AR)
    run = Accounting(acc, sampling_rate="1/10", noise_multiplier=2, max_steps=30, delta="1e-6")
    assert run.stops == [10, 20, 30]
    run.steps(29)
    with pytest.raises(StepLimitReached):
        run.steps(2)
    assert run.steps_run == 29
    run.step()
    with pytest.raises(StepLimitReached):
        run.step()
    assert run.stop().label == 30


def test_a_run_that_does_not_fit_records_nothing():
    acc = odp.Accountant(epsilon="0.5", delta="1e-4", neighbours=AR)
    with pytest.raises(BudgetExceeded):
        Accounting(acc, sampling_rate="1/10", noise_multiplier=1, max_steps=100, delta="1e-6")
    assert acc.history == [] and acc.remaining == acc.budget


def test_a_failing_loop_is_charged_its_worst_case_and_a_clean_exit_settles():
    acc = odp.Accountant(epsilon=20, delta="1e-4", neighbours=AR)
    with pytest.raises(RuntimeError):
        with Accounting(acc, sampling_rate="1/10", noise_multiplier=2, max_steps=40,
                        delta="1e-6") as run:
            run.steps(5)
            raise RuntimeError("the loop failed")
    assert run.record is not None and run.record.charged == run.reserved[0]
    with Accounting(acc, sampling_rate="1/10", noise_multiplier=2, max_steps=40,
                    delta="1e-6") as run2:
        run2.steps(12)
    assert run2.record.label == 20


def test_replace_one_neighbours_cost_more():
    kw = dict(sampling_rate="1/10", noise_multiplier=2, max_steps=20, stops=10, delta="1e-6")
    add = Accounting(odp.Accountant(epsilon=100, delta="1e-3", neighbours=AR), **kw)
    # replace-one runs in a replace-one accountant (the default): one relation per accountant
    rep = Accounting(odp.Accountant(epsilon=100, delta="1e-3"), neighbours="replace-one", **kw)
    assert all(r > 2 * a * Fraction(99, 100) for a, r in zip(add.settlement.costs,
                                                               rep.settlement.costs))


def test_epsilon_is_an_interval_around_the_tight_value_and_grows():
    acc = odp.Accountant(epsilon=100, delta="1e-3", neighbours=AR)
    run = Accounting(acc, sampling_rate=1, noise_multiplier=8, max_steps=50, delta="1e-5")
    assert run.epsilon() == (0, 0)
    run.steps(20)
    a = run.epsilon()
    exact = gaussian_epsilon(mp.sqrt(20) / 8, "1e-5")
    assert a.lower <= exact <= a.upper
    run.steps(30)
    b = run.epsilon()
    assert b.lower > a.upper
    assert b.lower <= gaussian_epsilon(mp.sqrt(50) / 8, "1e-5") <= b.upper


@pytest.mark.parametrize("kw, match", [
    (dict(sampling_rate="1/10", noise_multiplier=2, delta="1e-6"), "max_steps"),
    (dict(sampling_rate="1/10", noise_multiplier=2, max_steps=10, delta=0), "delta"),
    (dict(sampling_rate="1/10", noise_multiplier=2, max_steps=10, delta="1e-6",
          stops=[5, 20]), "beyond"),
    (dict(sampling_rate="1/10", noise_multiplier=2, max_steps=10, delta="1e-6",
          neighbours="swap"), "neighbours"),
    (dict(sampling_rate="1/10", noise_multiplier=2, max_steps=10, delta="1e-6",
          composition="pld"), "composition"),
    (dict(schedule=Schedule.constant("0.1", 2, 10), max_steps=11, delta="1e-6"), "differs"),
    (dict(sampling_rate="1/10", noise_multiplier=2, max_steps=10, delta="1e-6",
          name="a]b"), "name"),
])
def test_bad_parameters_are_refused_before_anything_is_recorded(kw, match):
    acc = odp.Accountant(epsilon=10, delta="1e-4", neighbours=AR)
    with pytest.raises(InvalidParameter, match=match):
        Accounting(acc, **kw)
    assert acc.history == []


def test_a_schedule_run_and_its_settlement_seam():
    """A per-epoch schedule through the accountant; the settlement is a replaceable object."""
    acc = odp.Accountant(epsilon=50, delta="1e-4", neighbours=AR)
    sched = Schedule.per_epoch([("1/20", 3), ("1/20", 2), ("1/10", 2)])
    settlement = OdpLaneSettlement("buckets")
    run = Accounting(acc, schedule=sched, delta="1e-6", settlement=settlement)
    assert run.max_steps == 50 and run.stops == [20, 40, 50]
    assert run.current() == (1, Fraction(1, 20), Fraction(3))
    run.steps(25)
    assert run.current() == (26, Fraction(1, 20), Fraction(2))
    assert run.stop().label == 40
    assert settlement.details() == {"settlement": "lemma11"}


# ----------------------------------------------------------------------------- the example


def test_the_training_loop_example_stops_early_and_its_ledger_and_certificate_verify(tmp_path):
    import re
    import subprocess
    import sys

    from script_support import ROOT

    env = {"PYTHONPATH": str(ROOT / "python"), "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, str(ROOT / "examples" / "dpsgd_training_loop.py"),
                           "--seed", "1", "--dir", str(tmp_path)], capture_output=True,
                          text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    steps = int(re.search(r"stopped after (\d+) steps", out).group(1))
    assert steps < 1500  # stopped early
    charged, reserved = map(float, re.search(r"charged epsilon ([0-9.]+) .* reserved ([0-9.]+)",
                                             out).groups())
    assert charged < reserved
    assert "odp ledger verify: OK" in out and "odp verify --ledger: OK" in out
    assert "consistent with Poisson sampling" in out
    # the files it left verify again, independently of the script
    again = subprocess.run([sys.executable, "-c", "import sys; from odp.cli import main; "
                            "sys.exit(main())", "verify", str(tmp_path / "training.cert"),
                            "--ledger", str(tmp_path / "training.ledger")],
                           capture_output=True, text=True, env=env, timeout=120)
    assert again.returncode == 0, again.stdout + again.stderr

"""odp.dpsgd.noise_multiplier (calibration with a rigorous upper ε and a closeness statement) and
odp.dpsgd.check_poisson_batches (Poisson sampling at the accounted rate, stated false-alarm
rate).  References: the analytic Gaussian (Balle & Wang 2018) at 40 digits; batch sizes drawn
from real Binomial and fixed-size samplers."""

from __future__ import annotations

import math
import random
from fractions import Fraction

import mpmath as mp
import numpy as np
import pytest
from test_buckets_refs import gaussian_epsilon

from odp.dpsgd import Schedule, check_poisson_batches, noise_multiplier
from odp.errors import InvalidParameter

mp.mp.dps = 40


def _optimal_gaussian_sigma(target, delta, steps):
    """The σ at which ``steps`` Gaussian steps (q = 1) have tight ε exactly ``target``:
    μ = sqrt(T)/σ solves ε(μ) = target (bisection on the analytic ε)."""
    lo, hi = mp.mpf("0.01"), mp.mpf(100)
    for _ in range(80):
        mid = (lo + hi) / 2
        if gaussian_epsilon(mp.sqrt(steps) / mid, delta) > target:
            lo = mid
        else:
            hi = mid
    return hi


def test_calibration_is_within_its_resolution_of_the_analytic_optimum():
    c = noise_multiplier("2", "1e-6", 1, 30, resolution="1/100")
    opt = _optimal_gaussian_sigma(2, "1e-6", 30)
    assert c.optimal_within == Fraction(1, 100)
    assert c.noise_multiplier - c.resolution < opt <= c.noise_multiplier
    assert c.epsilon.upper <= 2 < c.below.lower
    # the rigorous claim holds against the reference; one grid step lower would not
    assert gaussian_epsilon(mp.sqrt(30) / mp.mpf(c.noise_multiplier.numerator)
                            * c.noise_multiplier.denominator, "1e-6") <= 2
    s = c.noise_multiplier - c.resolution
    assert gaussian_epsilon(mp.sqrt(30) * s.denominator / s.numerator, "1e-6") > 2
    assert "optimal within 0.01" in c.statement()


def test_calibration_of_a_schedule_scales_every_phase():
    """Factors 1 and 2: T1 steps at σ and T2 at 2σ compose to a Gaussian with
    μ² = (T1 + T2/4)/σ²."""
    sched = Schedule([(20, 1, 1), (40, 1, 2)])
    c = noise_multiplier("3", "1e-5", schedule=sched, resolution="1/100")
    opt = _optimal_gaussian_sigma(3, "1e-5", 20 + 40 / 4)
    assert c.noise_multiplier - c.resolution < opt <= c.noise_multiplier


def test_the_issue_example_is_within_1e_3_of_the_optimum():
    """q = 0.01, 10,000 steps, ε = 3 at δ = 1e-5: σ* has rigorous upper ε <= 3 and the σ one
    resolution step (1e-3) lower has rigorous lower ε > 3, so σ_opt ∈ (σ* − 1e-3, σ*]."""
    c = noise_multiplier("3", "1e-5", "0.01", 10_000)
    assert c.epsilon.upper <= 3 and c.optimal_within == Fraction(1, 1000)
    assert c.below.lower > 3
    assert 1.5 < c.noise_multiplier < 1.6


@pytest.mark.parametrize("kw, match", [
    (dict(target_epsilon=0, delta="1e-5", sampling_rate="0.1", steps=10), "> 0"),
    (dict(target_epsilon=1, delta="1e-5", sampling_rate="0.1"), "exactly one"),
    (dict(target_epsilon=1, delta="1e-5", sampling_rate="0.1", steps=10, epochs=1),
     "exactly one"),
    (dict(target_epsilon=1, delta="1e-5", sampling_rate="2", steps=10), "sampling rate"),
    (dict(target_epsilon=1, delta="1e-5", sampling_rate="0.1", steps=10, resolution=0),
     "resolution"),
    (dict(target_epsilon="1e-9", delta="1e-30", sampling_rate=1, steps=10**6), "no noise"),
])
def test_bad_calibration_requests_are_refused(kw, match):
    with pytest.raises(InvalidParameter, match=match):
        noise_multiplier(**kw)


# ----------------------------------------------------------------------------- sampling


def test_poisson_batches_pass_and_the_false_alarm_rate_is_respected():
    """Real Poisson batch sizes (Binomial(n, q)) are accepted; over many independent runs at
    α = 0.05 the rejection rate stays below α (the tests are conservative)."""
    rng = np.random.default_rng(7)
    n, q = 6000, 0.01
    sizes = rng.binomial(n, q, size=2000).tolist()
    assert check_poisson_batches(sizes, n, "0.01")
    rejected = sum(not check_poisson_batches(rng.binomial(n, q, size=200).tolist(), n, "0.01",
                                             false_alarm=0.05) for _ in range(300))
    assert rejected / 300 <= 0.05


def test_fixed_size_batches_are_caught():
    """Shuffle-and-cut: every batch has exactly nq records."""
    r = check_poisson_batches([60] * 30, 6000, "0.01")
    assert not r and "too concentrated" in r.statement()
    assert r.tests["spread"]["rejected"] and not r.tests["rate"]["rejected"]


def test_a_rate_mismatch_is_caught():
    """A sampler whose real rate (1/90) differs from the accounted one (1/100), as in a rate
    computed from a rounded number of batches."""
    rng = np.random.default_rng(3)
    sizes = rng.binomial(6000, 1 / 90, size=500).tolist()
    r = check_poisson_batches(sizes, 6000, "1/100")
    assert not r and r.tests["rate"]["rejected"] and "above" in r.reasons[0]
    lo, hi = r.rate_interval
    assert lo <= 1 / 90 <= hi and not lo <= 0.01 <= hi


def test_over_dispersed_batches_are_caught():
    """Half the steps at rate 0.005, half at 0.015: the mean is right, the spread is not."""
    rng = random.Random(5)
    sizes = [sum(rng.random() < (0.005 if i % 2 else 0.015) for _ in range(6000))
             for i in range(400)]
    r = check_poisson_batches(sizes, 6000, "0.01")
    assert not r and r.tests["spread"]["rejected"] and "too spread out" in r.statement()


def test_the_rate_interval_contains_the_observed_rate():
    r = check_poisson_batches([10, 12, 9, 11], 1000, "0.01")
    lo, hi = r.rate_interval
    assert lo < r.rate < hi and math.isclose(r.rate, 42 / 4000)


@pytest.mark.parametrize("args, match", [
    (([], 10, "0.1"), "at least one"),
    (([1, -1], 10, "0.1"), ">= 0"),
    (([1, 2.0], 10, "0.1"), "integers"),
    (([11], 10, "0.1"), "larger"),
    (([1], 0, "0.1"), "records"),
    (([1], 10, "0"), "sampling rate"),
])
def test_bad_sampling_checks_are_refused(args, match):
    with pytest.raises(InvalidParameter, match=match):
        check_poisson_batches(*args)

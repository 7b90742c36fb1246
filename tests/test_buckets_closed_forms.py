"""Privacy buckets against closed forms: every upper bound >= truth >= every lower bound.

References are computed independently at 40 digits (tests/test_buckets_refs.py).  Besides
soundness, each test asks for the tightness the method should deliver, so a bucketing that is
sound but useless would fail too.
"""

from __future__ import annotations

import itertools

from fractions import Fraction

import mpmath as mp
import pytest

from odp.buckets import (
    ApproximateDP,
    DiscreteGaussian,
    DiscreteLaplace,
    FinitePair,
    Gaussian,
    Laplace,
    PrivacyBucketsAccountant,
    PLDRandomizedResponse,
)
from test_buckets_refs import (
    composed_gaussian_mu,
    discrete_gaussian_masses,
    finite_delta_exact,
    gaussian_delta,
    gaussian_epsilon,
    kov_delta,
    laplace_delta,
    lattice_kfold_delta,
    mpf,
)


def check_delta(acc, eps, exact, rel_width):
    """lower <= exact <= upper, and upper - lower <= rel_width * exact (+ 1e-15)."""
    iv = acc.get_delta_interval(eps)
    lo, up = mpf(iv.lower), mpf(iv.upper)
    assert lo <= exact <= up, (eps, float(lo), float(exact), float(up))
    assert up - lo <= rel_width * exact + mp.mpf("1e-15"), (eps, float(lo), float(exact), float(up))
    return iv


@pytest.mark.parametrize(
    "sigma,k,eps_list,rel_width",
    [
        ("1", 1, ["0", "0.5", "2", "5"], 1e-9),
        ("2", 10, ["0", "0.5", "2", "5"], 1e-5),
        ("0.5", 3, ["0", "2", "5", "20"], 3e-5),
        ("10", 100, ["0", "0.5", "2", "5"], 1e-4),
    ],
)
def test_gaussian_delta_matches_closed_form(sigma, k, eps_list, rel_width):
    acc = PrivacyBucketsAccountant(buckets=2**14).compose(Gaussian(sigma), k)
    mu = composed_gaussian_mu([(sigma, k)])
    for eps in eps_list:
        check_delta(acc, eps, gaussian_delta(mu, eps), rel_width)


def test_gaussian_k1000_epsilon_interval():
    acc = PrivacyBucketsAccountant().compose(Gaussian(1), 1000)
    iv = acc.get_epsilon_interval("1e-5")
    exact = gaussian_epsilon(mp.sqrt(1000), "1e-5")
    assert mpf(iv.lower) <= exact <= mpf(iv.upper)
    assert (iv.upper - iv.lower) / iv.upper <= Fraction(1, 1000)  # the goal: <= 0.1 %
    assert (iv.upper - iv.lower) / iv.upper <= Fraction(1, 10**5)  # what we actually get


def test_heterogeneous_gaussians_compose_to_one_gaussian():
    # mu^2 adds: 3 x sigma=2 and 5 x sigma=3 and 1 x sigma=0.8
    parts = [("2", 3), ("3", 5), ("0.8", 1)]
    acc = PrivacyBucketsAccountant(buckets=2**14)
    for s, k in parts:
        acc.compose(Gaussian(s), k)
    mu = composed_gaussian_mu(parts)
    for eps in ["0", "1", "4"]:
        check_delta(acc, eps, gaussian_delta(mu, eps), 1e-5)
    iv = acc.get_epsilon_interval("1e-6")
    assert mpf(iv.lower) <= gaussian_epsilon(mu, "1e-6") <= mpf(iv.upper)


@pytest.mark.parametrize("eps0,delta0,k", [("0.1", "0", 200), ("0.5", "1e-6", 30), ("1", "0", 5)])
def test_kov_optimal_composition_is_reproduced(eps0, delta0, k):
    acc = PrivacyBucketsAccountant(buckets=2**12).compose(ApproximateDP(eps0, delta0), k)
    for eps in ["0", "0.37", "1", "3"]:
        check_delta(acc, eps, kov_delta(eps0, delta0, k, eps), 1e-9)


def test_randomized_response_equals_kov_and_discrete_laplace_sensitivity_one():
    # RR(eps0) is the delta0 = 0 worst case; discrete Laplace with Δ = 1 has the same pair
    k, eps0 = 40, "0.25"
    for mech in (PLDRandomizedResponse(eps0), DiscreteLaplace(Fraction(1) / Fraction(eps0))):
        acc = PrivacyBucketsAccountant(buckets=2**10).compose(mech, k)
        for eps in ["0", "0.5", "2"]:
            check_delta(acc, eps, kov_delta(eps0, 0, k, eps), 1e-9)


def test_kary_randomized_response_against_enumeration():
    eps0, m, k = mpf("0.7"), 4, 3
    den = mp.exp(eps0) + m - 1
    p = [mp.exp(eps0) / den, 1 / den, 1 / den, 1 / den]
    q = [1 / den, mp.exp(eps0) / den, 1 / den, 1 / den]
    acc = PrivacyBucketsAccountant(buckets=256).compose(PLDRandomizedResponse("0.7", m), k)
    for eps in ["0", "0.4", "1.5"]:
        check_delta(acc, eps, finite_delta_exact(p, q, k, eps), 1e-9)


@pytest.mark.parametrize("scale,k", [("1", 1), ("10", 1), ("0.3", 1), ("2", 2), ("4", 3)])
def test_laplace_against_exact_integration(scale, k):
    eps0 = 1 / Fraction(scale)
    acc = PrivacyBucketsAccountant(buckets=2**13).compose(Laplace(scale), k)
    for eps in ["0", str(eps0 / 3), str(eps0 * k * Fraction(9, 10))]:
        check_delta(acc, eps, laplace_delta(eps0, k, eps), 1e-5)


def test_discrete_laplace_larger_sensitivity_against_lattice():
    t, sens, k = mpf("0.5"), 3, 6
    # losses (Δ - 2x) t; A-masses from the pmf tanh(t/2) e^{-t|x|}
    c = mp.tanh(t / 2)
    masses = {sens: 1 / (1 + mp.exp(-t)), -sens: mp.exp(-t * sens) / (1 + mp.exp(-t))}
    for x in range(1, sens):
        masses[sens - 2 * x] = c * mp.exp(-t * x)
    acc = PrivacyBucketsAccountant(buckets=2**10).compose(DiscreteLaplace("2", sens), k)
    for eps in ["0", "1", "4"]:
        check_delta(acc, eps, lattice_kfold_delta(masses, t, k, eps), 1e-9)


def test_discrete_gaussian_against_lattice():
    sigma, k = "1.5", 4
    masses = discrete_gaussian_masses(sigma, 1, reach=40)
    lam = 1 / (2 * mpf(sigma) ** 2)
    acc = PrivacyBucketsAccountant(buckets=2**12).compose(DiscreteGaussian(sigma), k)
    for eps in ["0", "0.7", "3"]:
        check_delta(acc, eps, lattice_kfold_delta(masses, lam, k, eps), 1e-8)


def test_asymmetric_finite_pair_reports_the_worse_direction():
    # δ(B‖A) > δ(A‖B) here; the accountant must report the larger one
    p = ["1/2", "1/2", "0"]
    q = ["1/4", "1/4", "1/2"]
    pf, qf = [Fraction(v) for v in p], [Fraction(v) for v in q]

    def one_way(k, eps):  # δ(A‖B) alone: the (p, q) direction only
        e = mp.exp(mp.mpf(eps))
        return mp.fsum(max(mp.mpf(0), mp.fprod(mp.mpf(pf[i].numerator) / pf[i].denominator for i in idx)
                           - e * mp.fprod(mp.mpf(qf[i].numerator) / qf[i].denominator for i in idx))
                       for idx in itertools.product(range(3), repeat=k))

    for k in (1, 3):
        acc = PrivacyBucketsAccountant(buckets=512).compose(FinitePair(p, q), k)
        for eps in ["0", "0.3", "1"]:
            exact = finite_delta_exact(pf, qf, k, eps)
            check_delta(acc, eps, exact, 1e-9)
        # at ε = 1 the reverse direction dominates: a one-way accountant would report too little
        assert exact > one_way(k, "1") + mp.mpf("1e-6")
        lower = acc.get_delta_interval("1").lower
        assert mp.mpf(lower.numerator) / lower.denominator > one_way(k, "1")


def test_distinguishing_events_are_counted():
    # q = 0 where p > 0: infinite loss; k-fold δ(ε) >= 1 - (1 - 0.1)^k for every ε
    acc = PrivacyBucketsAccountant(buckets=256).compose(FinitePair(["0.1", "0.9"], ["0", "1"]), 4)
    exact = 1 - mp.mpf("0.9") ** 4
    check_delta(acc, "50", exact, 1e-9)
    iv = acc.get_epsilon_interval("0.3")  # below 1 - 0.9^4 = 0.3439: no finite ε
    assert iv.upper == float("inf")

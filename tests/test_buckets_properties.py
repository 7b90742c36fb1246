"""Property test: across factors and bucket counts, upper >= exact >= lower on closed forms."""

from __future__ import annotations

from fractions import Fraction

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from odp.buckets import ApproximateDP, Gaussian, Laplace, PrivacyBucketsAccountant
from test_buckets_refs import composed_gaussian_mu, gaussian_delta, kov_delta, laplace_delta, mpf

BUCKETS = st.sampled_from([64, 128, 512, 2048, 8192])
FACTORS = st.sampled_from([None, "1.0001", "1.001", "1.01", "1.1", "2"])
SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _sound(acc, eps, exact):
    iv = acc.get_delta_interval(eps)
    assert mpf(iv.lower) <= exact <= mpf(iv.upper), (eps, float(iv.lower), float(exact), float(iv.upper))


@SETTINGS
@given(
    sigma=st.fractions(Fraction(1, 3), 6).map(lambda f: f.limit_denominator(50)),
    k=st.integers(1, 64),
    buckets=BUCKETS,
    factor=FACTORS,
    eps=st.fractions(0, 12).map(lambda f: f.limit_denominator(100)),
)
def test_gaussian_bounds_bracket_the_closed_form(sigma, k, buckets, factor, eps):
    acc = PrivacyBucketsAccountant(buckets=buckets, factor=factor).compose(Gaussian(sigma), k)
    _sound(acc, eps, gaussian_delta(composed_gaussian_mu([(sigma, k)]), eps))


@SETTINGS
@given(
    eps0=st.fractions(Fraction(1, 100), 2).map(lambda f: f.limit_denominator(100)),
    delta0=st.sampled_from(["0", "1e-6", "1e-3"]),
    k=st.integers(1, 60),
    buckets=BUCKETS,
    factor=FACTORS,
    eps=st.fractions(0, 8).map(lambda f: f.limit_denominator(100)),
)
def test_kov_bounds_bracket_the_closed_form(eps0, delta0, k, buckets, factor, eps):
    acc = PrivacyBucketsAccountant(buckets=buckets, factor=factor).compose(ApproximateDP(eps0, delta0), k)
    _sound(acc, eps, kov_delta(eps0, delta0, k, eps))


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    scale=st.fractions(Fraction(1, 2), 10).map(lambda f: f.limit_denominator(20)),
    k=st.integers(1, 2),
    buckets=BUCKETS,
    factor=FACTORS,
    t=st.fractions(0, 1).map(lambda f: f.limit_denominator(20)),
)
def test_laplace_bounds_bracket_exact_integration(scale, k, buckets, factor, t):
    eps = t * k / scale  # within the support of the k-fold loss
    acc = PrivacyBucketsAccountant(buckets=buckets, factor=factor).compose(Laplace(scale), k)
    _sound(acc, eps, laplace_delta(1 / scale, k, eps))


@settings(max_examples=15, deadline=None)
@given(sigma=st.sampled_from(["0.5", "1", "3"]), k=st.integers(1, 40), buckets=BUCKETS)
def test_epsilon_interval_brackets_and_rounding_up_is_looser(sigma, k, buckets):
    mu = composed_gaussian_mu([(sigma, k)])
    split = PrivacyBucketsAccountant(buckets=buckets).compose(Gaussian(sigma), k)
    up = PrivacyBucketsAccountant(buckets=buckets, rounding="up").compose(Gaussian(sigma), k)
    for eps in ("0", "1", "3"):
        exact = gaussian_delta(mu, eps)
        a, b = split.get_delta_interval(eps), up.get_delta_interval(eps)
        assert mpf(a.lower) <= exact <= mpf(a.upper)
        assert mpf(b.lower) <= exact <= mpf(b.upper)
        # the paper's pure rounding-up is sound too, and never tighter than the split
        assert b.upper >= a.upper * (1 - Fraction(1, 10**9))


def test_exploded_round_off_bounds_fall_back_to_trivial_bounds():
    """Regression (found by the property test above): σ = 134/23 with the coarsest factor 2 has
    only 7 buckets; composing 64 copies compounds the per-bucket relative error bound past 1.
    The read-off must then report the trivial interval, never a negative or unsound bound."""
    acc = PrivacyBucketsAccountant(buckets=8192, factor="2").compose(Gaussian(Fraction(134, 23)), 64)
    exact = gaussian_delta(composed_gaussian_mu([(Fraction(134, 23), 64)]), Fraction(2, 69))
    iv = acc.get_delta_interval(Fraction(2, 69))
    assert 0 <= iv.lower <= 1 and 0 <= iv.upper <= 1
    assert mpf(iv.lower) <= exact <= mpf(iv.upper)
    eps_iv = acc.get_epsilon_interval("1e-5")
    assert eps_iv.lower >= 0 and eps_iv.upper >= eps_iv.lower

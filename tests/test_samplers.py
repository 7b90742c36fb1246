"""Exact samplers: empirical frequencies against the exact pmf (chi-square, fixed seed), and
the secure default really draws from ``secrets``."""

from __future__ import annotations

import math
import secrets
from fractions import Fraction

import mpmath
import pytest
from scipy import stats

from odp import samplers
from odp.errors import InvalidParameter
from odp.samplers import SecureRandom, SeededRandom

from gof_support import chi_square_pvalue

N = 12000


def _chi_square_pvalue(samples, pmf):
    """Chi-square goodness of fit of ``samples`` against ``pmf`` on the observed range (and one
    value beyond each end); the mass outside it is one more bin (:mod:`gof_support`)."""
    lo, hi = min(samples), max(samples)
    return chi_square_pvalue(samples, {x: pmf(x) for x in range(lo - 1, hi + 2)})


@pytest.mark.parametrize("gamma", [Fraction(0), Fraction(1, 3), Fraction(1), Fraction(5, 2)])
def test_bernoulli_exp_frequency(gamma):
    rng = SeededRandom(11)
    hits = sum(samplers.bernoulli_exp(gamma, rng) for _ in range(N))
    p = math.exp(-gamma)
    assert stats.binomtest(hits, N, p).pvalue > 1e-3


@pytest.mark.parametrize("scale", [Fraction(1, 2), Fraction(3, 2), Fraction(7)])
def test_discrete_laplace_matches_exact_pmf(scale):
    rng = SeededRandom(2024)
    samples = [samplers.discrete_laplace(scale, rng) for _ in range(N)]
    q = math.exp(-1 / float(scale))
    norm = (1 - q) / (1 + q)
    assert _chi_square_pvalue(samples, lambda x: norm * q ** abs(x)) > 1e-3
    assert abs(sum(samples) / N) < 5 * math.sqrt(2 * q / (1 - q) ** 2 / N) + 0.05


@pytest.mark.parametrize("sigma2", [Fraction(1, 2), Fraction(2), Fraction(49, 4)])
def test_discrete_gaussian_matches_exact_pmf(sigma2):
    rng = SeededRandom(7)
    samples = [samplers.discrete_gaussian(sigma2, rng) for _ in range(N)]
    mpmath.mp.dps = 30
    weight = lambda x: mpmath.exp(-mpmath.mpf(x) ** 2 / (2 * mpmath.mpf(sigma2.numerator) / sigma2.denominator))  # noqa: E731
    z = sum(weight(x) for x in range(-200, 201))
    assert _chi_square_pvalue(samples, lambda x: float(weight(x) / z)) > 1e-3


def test_a_wrong_pmf_is_rejected_by_the_same_test():
    """The chi-square check has power: the discrete Laplace samples do not fit a pmf with a
    15 % larger scale."""
    rng = SeededRandom(2024)
    samples = [samplers.discrete_laplace(Fraction(3, 2), rng) for _ in range(N)]
    q = math.exp(-1 / 1.725)
    assert _chi_square_pvalue(samples, lambda x: (1 - q) / (1 + q) * q ** abs(x)) < 1e-3


def test_secure_mode_draws_from_secrets(monkeypatch):
    calls = []
    real = secrets.randbelow

    def spy(n):
        calls.append(n)
        return real(n)

    monkeypatch.setattr(secrets, "randbelow", spy)
    samplers.discrete_gaussian(Fraction(4))
    samplers.discrete_laplace(Fraction(3))
    assert calls, "the default source must use secrets.randbelow"
    assert SecureRandom.secure and not SeededRandom.secure
    assert samplers.default_rng().secure


def test_seeded_mode_is_reproducible_and_marked_insecure():
    a = [samplers.discrete_laplace(Fraction(5), SeededRandom(1)) for _ in range(5)]
    b = [samplers.discrete_laplace(Fraction(5), SeededRandom(1)) for _ in range(5)]
    assert a == b
    assert "INSECURE" in repr(SeededRandom(1))


@pytest.mark.parametrize("call", [
    lambda: samplers.bernoulli(Fraction(3, 2)),
    lambda: samplers.bernoulli_exp(Fraction(-1)),
    lambda: samplers.discrete_laplace(Fraction(0)),
    lambda: samplers.discrete_gaussian(Fraction(-1)),
])
def test_bad_parameters(call):
    with pytest.raises(InvalidParameter):
        call()

"""FFT round-off: the convolution's error bound, and bounds that stay sound at δ = 1e-10."""

from __future__ import annotations

from fractions import Fraction

import mpmath as mp
import numpy as np
import pytest

from odp.buckets import Gaussian, PrivacyBucketsAccountant
from odp.buckets.compose import convolve
from test_buckets_refs import gaussian_delta, gaussian_epsilon, mpf


def exact_convolution(x: np.ndarray, y: np.ndarray) -> list[Fraction]:
    """Exact linear convolution of two float arrays (Python integers on a common scale)."""
    scale = 2**1100
    xi = [int(Fraction(v) * scale) for v in x]
    yi = [int(Fraction(v) * scale) for v in y]
    out = [0] * (len(xi) + len(yi) - 1)
    for i, a in enumerate(xi):
        if a:
            for j, b in enumerate(yi):
                out[i + j] += a * b
    return [Fraction(v, scale * scale) for v in out]


def _arrays():
    rng = np.random.default_rng(7)
    g = np.exp(-0.5 * np.linspace(-9, 9, 301) ** 2)
    yield g / g.sum(), g / g.sum()  # a bucketed Gaussian: tails far below the peak
    spiky = np.zeros(200)
    spiky[[0, 50, 199]] = [0.5, 0.5 - 1e-18, 1e-18]
    yield spiky, spiky[::-1].copy()
    r = rng.random(250) ** 8
    yield r / r.sum(), np.flip(r / r.sum())


@pytest.mark.parametrize("extended", [False, True])
def test_fft_error_bound_covers_the_actual_round_off(extended):
    for x, y in _arrays():
        got, bound = convolve(np.stack([x]), np.stack([y]), extended)
        exact = exact_convolution(x, y)
        err_l1 = sum(abs(Fraction(float(g)) - e) for g, e in zip(got[0], exact))
        # the bound on the l1 error (plus the final rounding to float64, relative 1 ulp)
        allowed = Fraction(float(bound[0])) + sum(e for e in exact) * Fraction(2**-52)
        assert err_l1 <= allowed


def test_fft_round_off_is_large_relative_to_tiny_entries():
    """Why the bound is needed: tail entries of an FFT convolution can be wrong by far more than
    100 % in double precision (so an unbounded FFT could under-count a tiny δ)."""
    x = np.exp(-0.5 * np.linspace(-12, 12, 401) ** 2)
    x /= x.sum()
    got, bound = convolve(np.stack([x]), None, False)
    exact = exact_convolution(x, x)
    worst = max(
        abs(Fraction(float(g)) - e) / e for g, e in zip(got[0], exact) if e > 0
    )
    assert worst > 1  # relative error above 100 % somewhere in the tail
    assert sum(abs(Fraction(float(g)) - e) for g, e in zip(got[0], exact)) <= Fraction(float(bound[0])) + Fraction(2**-50)


@pytest.mark.parametrize(
    "k,precision,width",
    [(16, "double", 0.02), (16, "auto", 0.01), (16, "extended", 2e-4), (1000, "auto", 0.005)],
)
def test_bounds_stay_sound_at_delta_1e_10(k, precision, width):
    mu = mp.sqrt(k)
    acc = PrivacyBucketsAccountant(precision=precision).compose(Gaussian(1), k)
    exact_eps = gaussian_epsilon(mu, "1e-10")
    iv = acc.get_epsilon_interval("1e-10")
    assert mpf(iv.lower) <= exact_eps <= mpf(iv.upper)
    assert (iv.upper - iv.lower) / iv.upper < width
    # δ at that ε, and at larger ε where δ ~ 1e-12
    for factor in ("1", "1.05"):
        eps = Fraction(mp.nstr(exact_eps * mp.mpf(factor), 30))
        iv_d = acc.get_delta_interval(eps)
        ex = gaussian_delta(mu, eps)
        assert mpf(iv_d.lower) <= ex <= mpf(iv_d.upper)
        if factor == "1" or precision == "extended":  # round-off margin does not swamp δ
            assert mpf(iv_d.upper) <= ex * mp.mpf("1.5")

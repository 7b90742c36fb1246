"""The floating-point assumptions behind the rigorous bounds, checked against mpmath."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from scipy import special

from odp.buckets._numerics import (
    LOG_NDTR_ULPS,
    U,
    gaussian_excess,
    normal_interval_log,
    split_error,
)
from odp.buckets.mechanisms import Gaussian, Laplace, exact_multiples, short_up

MPMATH_DPS = 40  # per-test precision, set by tests/conftest.py


def test_log_ndtr_accuracy_assumption_has_a_margin():
    zs = np.concatenate([np.linspace(-38, 8, 1500), -np.logspace(-5, 1.5, 200)])
    worst = 0.0
    for z in zs:
        exact = mp.log(mp.ncdf(mp.mpf(float(z))))
        err = abs(mp.mpf(float(special.log_ndtr(z))) - exact)
        worst = max(worst, float(err / (U * max(1.0, abs(float(exact))))))
    assert worst * 2 <= LOG_NDTR_ULPS  # at least a factor 2 of margin


def test_normal_interval_log_within_its_error_bound():
    rng = np.random.default_rng(3)
    lo = np.concatenate([rng.uniform(-30, 8, 300), [-np.inf, -1e-9, 0.0, 5.0]])
    width = np.concatenate([10.0 ** rng.uniform(-7, 1, 300), [3.0, 2e-9, 1e-6, np.inf]])
    hi = lo + width
    lm, err = normal_interval_log(lo, hi)
    for a, b, v, e in zip(lo, hi, lm, err):
        mass = mp.ncdf(mp.mpf(float(b))) - mp.ncdf(mp.mpf(float(a)))
        if mass == 0:  # empty interval (-inf, -inf]
            assert v == -np.inf
            continue
        assert abs(mp.mpf(float(v)) - mp.log(mass)) <= mp.mpf(float(e))


@pytest.mark.parametrize("mu,h", [(1.0, 2**-10), (0.05, 2**-14), (4.0, 0.25), (1.0, 0.3)])
def test_gaussian_excess_within_its_error_bound(mu, h):
    zs = np.array([-8.0, -2.5, 0.0, 0.7, 3.0, 8.0])
    d, err = gaussian_excess(zs, np.zeros_like(zs), width=h / mu, mu=mu, h=h)
    for z, v, e in zip(zs, d, err):
        exact = mp.quad(lambda t: mp.npdf(z - t) * mp.expm1(mu * t), [0, h / mu])
        assert abs(mp.mpf(float(v)) - exact) <= mp.mpf(float(e))
        assert e <= 1e-12 * v  # and it is a tight bound


def test_gaussian_buckets_carry_true_relative_errors():
    g = Gaussian(1)
    h = 2.0**-6
    c = g.cells(h, False, 1e-12)
    mu = mp.mpf(1)
    for j in range(0, c.a.size, max(1, c.a.size // 25)):
        i = c.first + j
        zl, zh = ((i - 1) * h - mu**2 / 2) / mu, (i * h - mu**2 / 2) / mu
        exact_a = mp.ncdf(zh) - mp.ncdf(zl)
        assert abs(mp.mpf(float(c.a[j])) - exact_a) <= exact_a * mp.mpf(float(c.rel_a[j]))
        exact_ex = mp.quad(lambda t: mp.npdf(zh - t) * mp.expm1(mu * t), [0, h])
        assert abs(mp.mpf(float(c.excess[j])) - exact_ex) <= mp.mpf(float(c.err_excess[j]))


def test_laplace_grid_is_exact_and_atoms_on_grid():
    lap = Laplace("10")
    e0 = lap.eps0("upper")
    assert e0 >= 0.1 and exact_multiples(e0, 1)
    assert lap.eps0("lower") <= 0.1
    c = lap.cells(e0 / 64, False, 1e-16, "upper")
    assert c.atom[-1] == 0.5 and c.atom[0] == pytest.approx(0.5 * math.exp(-e0))


def test_rounding_helpers():
    # float_up/float_down and the short directed rationals are tested in tests/test_floats.py
    assert short_up(0.1) >= 0.1 and exact_multiples(short_up(0.1), 2**26)
    assert not exact_multiples(0.1, 2**20)


def test_split_error_prefers_relative_and_sends_zeros_to_absolute():
    values = np.array([1.0, 0.5, 0.0, 1e-3])
    err = np.array([1e-12, 1e-12, 1e-20, 1e-14])
    rel, absolute = split_error(values, err)
    assert np.all(err <= rel * values + absolute + 1e-30)  # covers every element
    assert absolute <= 2e-20 and rel <= 2e-11

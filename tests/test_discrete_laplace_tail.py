"""odp.samplers.discrete_laplace_tail against direct summation of the probability mass."""

from __future__ import annotations

from fractions import Fraction as F

import mpmath
import pytest

from odp.samplers import discrete_laplace_tail

RS = [F(1, 2), F(9, 10), F(1, 7), F(19, 20)]


def _mass(x: int, r: F) -> F:
    return (1 - r) / (1 + r) * r ** abs(x)


def _direct_sum(k: int, last: int, r: F) -> F:
    """Σ_{x=k}^{last} P(X = x), term by term."""
    c = (1 - r) / (1 + r)
    total, x = F(0), k
    power = r ** abs(k)
    while x <= last:
        total += c * power
        power = power / r if x < 0 else power * r
        x += 1
    return total


@pytest.mark.parametrize("r", RS)
@pytest.mark.parametrize("k", [-40, -7, -1, 0, 1, 2, 5, 33])
def test_tail_equals_the_direct_sum_of_the_masses(r, k):
    # Σ_{x=k}^{N} P(x) ≤ P(X ≥ k) ≤ that + P(|X| > N), and P(|X| > N) ≤ 2 r^{N+1}
    n = 60
    while 2 * r ** (n + 1) >= F(1, 10**8):
        n *= 2
    partial = _direct_sum(k, n, r)
    tail = discrete_laplace_tail(k, r)
    assert isinstance(tail, F)
    assert partial <= tail <= partial + 2 * r ** (n + 1)


def test_masses_sum_to_one_and_tails_are_monotone():
    r = F(3, 5)
    assert _direct_sum(-200, 200, r) <= 1
    values = [discrete_laplace_tail(k, r) for k in range(-10, 11)]
    assert all(a > b for a, b in zip(values, values[1:]))
    # P(X ≥ k) − P(X ≥ k + 1) = P(X = k), exactly
    for k in range(-10, 10):
        assert discrete_laplace_tail(k, r) - discrete_laplace_tail(k + 1, r) == _mass(k, r)


def test_float_and_mpmath_values_agree_with_the_exact_one():
    mpmath.mp.dps = 40
    for r in RS:
        for k in (-3, 0, 1, 4):
            exact = discrete_laplace_tail(k, r)
            assert discrete_laplace_tail(k, float(r)) == pytest.approx(float(exact), rel=1e-14)
            r_mp = mpmath.mpf(r.numerator) / r.denominator
            direct = mpmath.nsum(lambda x: (1 - r_mp) / (1 + r_mp) * r_mp ** abs(x), [k, mpmath.inf])
            assert abs(discrete_laplace_tail(k, r_mp) - direct) < mpmath.mpf(10) ** -30

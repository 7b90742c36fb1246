"""odp.gaussian_dp: input validation (a non-integer discrete-Gaussian sensitivity is refused,
never truncated; malformed numbers raise InvalidParameter) and the calibrated σ² checked
against an independent high-precision δ of the discrete Gaussian."""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import pytest

from odp.errors import InvalidParameter
from odp.gaussian_dp import (
    analytic_gaussian_delta_upper,
    calibrate_discrete_gaussian,
    discrete_gaussian_delta_upper,
)


def M(x):
    x = Fraction(x)
    return mpmath.mpf(x.numerator) / x.denominator


def exact_discrete_delta(eps, sigma2, m):
    """CKS Thm. 7, δ(ε) = P[Y > εσ²/Δ − Δ/2] − e^ε P[Y > εσ²/Δ + Δ/2], by mpmath sums."""
    mpmath.mp.dps = 40
    s2 = M(sigma2)
    f = lambda y: mpmath.exp(-mpmath.mpf(y) ** 2 / (2 * s2))  # noqa: E731
    z = 1 + 2 * mpmath.nsum(f, [1, mpmath.inf])

    def greater(a):  # P[Y > a]
        if a >= 0:
            return mpmath.nsum(f, [math.floor(a) + 1, mpmath.inf]) / z
        return 1 - mpmath.nsum(f, [math.ceil(-a), mpmath.inf]) / z

    eps = Fraction(eps)
    return greater(eps * sigma2 / m - Fraction(m, 2)) - mpmath.exp(M(eps)) * greater(
        eps * sigma2 / m + Fraction(m, 2))


@pytest.mark.parametrize("sensitivity", [1.9, "1.9", Fraction(3, 2), "5/2", 0, -1, "0.5"])
def test_non_integer_or_small_sensitivity_is_refused(sensitivity):
    with pytest.raises(InvalidParameter, match="integer sensitivity"):
        calibrate_discrete_gaussian(1, "1e-6", sensitivity)
    with pytest.raises(InvalidParameter, match="integer sensitivity"):
        discrete_gaussian_delta_upper(1, 18, sensitivity)


@pytest.mark.parametrize("sensitivity", [2, "2", 2.0, Fraction(4, 2)])
def test_integer_valued_sensitivity_of_any_type_is_that_integer(sensitivity):
    assert calibrate_discrete_gaussian(1, "1e-6", sensitivity) == calibrate_discrete_gaussian(
        1, "1e-6", 2)
    assert discrete_gaussian_delta_upper(1, 18, sensitivity) == discrete_gaussian_delta_upper(
        1, 18, 2)


@pytest.mark.parametrize("m", [1, 2, 3])
def test_calibrated_sigma2_meets_delta_for_its_sensitivity(m):
    target = Fraction(1, 10**6)
    s2 = calibrate_discrete_gaussian(1, target, m)
    bound = discrete_gaussian_delta_upper(1, s2, m)
    assert bound <= target
    assert exact_discrete_delta(1, s2, m) <= M(bound)


BAD = ["abc", float("nan"), float("inf"), "-inf", None, True, [1], "1/0"]


@pytest.mark.parametrize("bad", BAD)
@pytest.mark.parametrize("position", [0, 1, 2])
def test_malformed_numbers_raise_invalid_parameter(bad, position):
    for fn, good in [(analytic_gaussian_delta_upper, [1, 2, 1]),
                     (discrete_gaussian_delta_upper, [1, 18, 1]),
                     (calibrate_discrete_gaussian, [1, "1e-6", 1])]:
        args = list(good)
        args[position] = bad
        with pytest.raises(InvalidParameter):
            fn(*args)


@pytest.mark.parametrize("fn, args", [
    (analytic_gaussian_delta_upper, (1, 10**400, 1)),
    (analytic_gaussian_delta_upper, (1, Fraction(1, 10**400), 1)),
    (analytic_gaussian_delta_upper, (10**5, 10**300, Fraction(1, 10**300))),
    (discrete_gaussian_delta_upper, (1, 10**400, 1)),
    (discrete_gaussian_delta_upper, (1, Fraction(1, 10**400), 1)),
    (discrete_gaussian_delta_upper, (10**6, 10**200, 1)),
    (calibrate_discrete_gaussian, (10**400, "1e-6", 1)),
    (calibrate_discrete_gaussian, (800, "1e-6", 1)),
])
def test_values_beyond_float_range_raise_invalid_parameter(fn, args):
    with pytest.raises(InvalidParameter):
        fn(*args)

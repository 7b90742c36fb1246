"""odp.budget: exact parsing, typed errors, and the float pitfalls of peer libraries."""

from __future__ import annotations

import decimal
import math
import warnings
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import odp
from odp.budget import format_fraction, to_fraction
from odp.errors import FloatBudgetWarning, InvalidBudget
from odp.rational import ceil_fraction, exp_bracket, floor_fraction, log_bracket, sqrt_bracket


@pytest.mark.parametrize(
    "text, expected",
    [("0.1", Fraction(1, 10)), ("1e-6", Fraction(1, 10**6)), ("1/3", Fraction(1, 3)),
     (" 2 ", Fraction(2)), ("0", Fraction(0)), ("1E-12", Fraction(1, 10**12))],
)
def test_strings_parse_exactly(text, expected):
    assert to_fraction(text) == expected


def test_int_fraction_decimal_numpy():
    assert to_fraction(3) == 3
    assert to_fraction(Fraction(2, 7)) == Fraction(2, 7)
    assert to_fraction(decimal.Decimal("0.25")) == Fraction(1, 4)
    assert to_fraction(np.int64(5)) == 5
    assert to_fraction(np.float32(0.5)) == Fraction(1, 2)


def test_float_is_its_exact_binary_value_and_warns():
    with pytest.warns(FloatBudgetWarning):
        assert to_fraction(0.1) == Fraction(0.1) != Fraction(1, 10)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert to_fraction(0.5) == Fraction(1, 2)  # exactly representable: no warning


@pytest.mark.parametrize(
    "bad", ["nan", "inf", "-inf", "abc", "", "1/0", None, True, [1], float("nan"), float("inf"),
            decimal.Decimal("NaN"), object()],
)
def test_bad_numbers_raise_invalid_budget(bad):
    with pytest.raises(InvalidBudget):
        odp.Budget(bad)


@pytest.mark.parametrize("eps, delta", [("-0.1", 0), (1, "-1e-9"), (1, 1), (1, "1.5")])
def test_out_of_range_raises(eps, delta):
    with pytest.raises(InvalidBudget):
        odp.Budget(eps, delta)


def test_invalid_budget_is_value_error_and_odp_error():
    with pytest.raises(ValueError):
        odp.Budget("x")
    with pytest.raises(odp.OdpError):
        odp.Budget("x")


def test_ten_tenths_make_one_and_three_tenths_fit_point_three():
    total = odp.Budget(0)
    for _ in range(10):
        total = total + odp.Budget("0.1")
    assert total == odp.Budget(1)
    rest = odp.Budget("0.3") - odp.Budget("0.1") - odp.Budget("0.1") - odp.Budget("0.1")
    assert rest == odp.Budget(0)


def test_repr_round_trips():
    b = odp.Budget("1/3", "1e-6")
    assert "1/3" in repr(b) and "0.000001" in repr(b)
    assert odp.Budget.from_json(b.to_json()) == b


@given(st.fractions(min_value=-10**6, max_value=10**6))
def test_format_fraction_round_trips(x):
    assert Fraction(format_fraction(x)) == x


@given(st.fractions(min_value=-50, max_value=50, max_denominator=10**6))
def test_exp_bracket_contains_exp(x):
    lo, hi = exp_bracket(x)
    # mpmath at 60 digits as an independent reference
    import mpmath

    mpmath.mp.dps = 60
    ref = mpmath.exp(mpmath.mpf(x.numerator) / x.denominator)
    assert mpmath.mpf(lo.numerator) / lo.denominator <= ref <= mpmath.mpf(hi.numerator) / hi.denominator
    assert hi - lo <= abs(hi) * Fraction(1, 10**35)


@given(st.fractions(min_value=Fraction(1, 10**6), max_value=10**6, max_denominator=10**6))
def test_log_and_sqrt_brackets(x):
    import mpmath

    mpmath.mp.dps = 60
    xm = mpmath.mpf(x.numerator) / x.denominator
    lo, hi = log_bracket(x)
    assert lo <= hi
    assert mpmath.mpf(lo.numerator) / lo.denominator <= mpmath.log(xm) <= mpmath.mpf(hi.numerator) / hi.denominator
    lo, hi = sqrt_bracket(x)
    assert lo * lo <= x <= hi * hi


@given(st.fractions(min_value=-100, max_value=100), st.integers(1, 10**6))
def test_ceil_floor_fraction(x, d):
    up, down = ceil_fraction(x, d), floor_fraction(x, d)
    assert down <= x <= up and up - down <= Fraction(1, d)
    assert (up * d).denominator == 1 and (down * d).denominator == 1
    assert math.floor(x * d) == down * d


def test_wide_floats_are_taken_exactly_never_rounded_down():
    """Review finding: numpy.longdouble used to be rounded to the nearest double, which can be
    *below* the value given, so a guarantee could declare less than the caller wrote."""
    x = np.longdouble(1) / np.longdouble(3)
    num, den = x.as_integer_ratio()
    assert to_fraction(x) == Fraction(num, den)
    assert odp.DP(x).epsilon == Fraction(num, den)
    with pytest.raises(InvalidBudget):
        to_fraction(np.longdouble("inf"))
    with pytest.raises(InvalidBudget):
        to_fraction(np.float32("nan"))


def test_exp_bracket_refuses_arguments_whose_bracket_is_astronomically_large():
    from odp.errors import InvalidParameter
    from odp.rational import MAX_EXP_ARGUMENT, exp_bracket

    lo, hi = exp_bracket(Fraction(-MAX_EXP_ARGUMENT))  # the limit itself is still bracketed
    assert 0 < lo <= hi < Fraction(1, 10**43429)
    for x in (Fraction(-MAX_EXP_ARGUMENT - 1), Fraction(-10**9), Fraction(-10**31)):
        # far below: (0, e**-MAX's upper end) -- sound (e**x > 0 and < e**-MAX), and fast;
        # before, e**-1e31 gave the unsound upper end 0 and e**-1e9 took minutes
        assert exp_bracket(x) == (0, hi)
    for x in (Fraction(MAX_EXP_ARGUMENT + 1), Fraction(10**400)):
        with pytest.raises(InvalidParameter, match="no exact bracket"):
            exp_bracket(x)

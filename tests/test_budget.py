"""odp.budget: exact parsing, typed errors, and the float pitfalls of peer libraries."""

from __future__ import annotations

import decimal
import math
import warnings
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import odp
import odp.budget as budget_module
from odp.budget import (
    display_fraction,
    display_named,
    format_fraction,
    shortest_decimal_at_least,
    to_fraction,
)
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


def test_to_fraction_keeps_a_floats_exact_binary_value_and_warns():
    """Data values and non-privacy parameters (to_fraction) keep the float's exact value."""
    with pytest.warns(FloatBudgetWarning):
        assert to_fraction(0.1) == Fraction(0.1) != Fraction(1, 10)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert to_fraction(0.5) == Fraction(1, 2)  # exactly representable: no warning
        assert to_fraction(0.1, warn=False) == Fraction(3602879701896397, 36028797018963968)


@pytest.fixture
def fresh_float_notice(monkeypatch):
    """The float-rounding warning is given once per process: start each test without it."""
    monkeypatch.setattr(budget_module, "_float_notice_given", False)


@pytest.mark.parametrize("value, expected", [
    (0.1, "0.10000000000000001"),   # the decimal 0.1 is below the float 0.1000000000000000055…
    (0.3, "0.3"),                   # float 0.3 = 0.29999999999999998889…: 0.3 is above it
    (1e-6, "0.000001"),             # float 1e-6 = 9.99999999999999954748e-7
    (0.5, "0.5"), (2.0, "2"), (0.25, "0.25"),
    (0.1 + 0.2, "0.30000000000000005"),  # 0.30000000000000004440892…
    (0.7, "0.7"), (0.2, "0.20000000000000002"),
    (1 / 3, "0.33333333333333332"),  # 0.33333333333333331482961…
    # 1.17531519194213717…e80: the 17-digit 1.1753151919421373e80 reads back as the next float
    (1.1753151919421372e+80, "1.17531519194213721e80"),
])
def test_privacy_floats_round_up_to_the_shortest_decimal(fresh_float_notice, value, expected):
    """A float ε or δ means the shortest decimal >= its binary value (reference
    values worked out by hand from the floats' exact binary expansions, in the comments)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert odp.Budget(value).epsilon == Fraction(expected)
        if value < 1:
            assert odp.DP(1, value).delta == Fraction(expected)
    assert shortest_decimal_at_least(value) == Fraction(expected)
    shown = display_fraction(Fraction(expected))
    if len(expected.replace(".", "").lstrip("0").split("e")[0]) <= 12:  # short: exact, unmarked
        assert shown[0] not in "≤≥" and Fraction(shown) == Fraction(expected)
    else:  # 17-18 digits: a short decimal rounded up, marked (the exact value: to_json)
        assert shown[0] == "≤" and Fraction(shown[1:].split(" ")[0]) >= Fraction(expected)


def _significant_digits(x: Fraction) -> int:
    n = x.numerator
    while x.denominator != 1:
        x *= 10
        n = x.numerator
    return len(str(abs(n)).rstrip("0"))


@settings(max_examples=400, deadline=None)
@given(st.floats(min_value=1e-300, max_value=1e300, allow_nan=False, allow_infinity=False))
def test_shortest_decimal_at_least_is_sound_round_trips_and_is_shortest(x):
    d = shortest_decimal_at_least(x)
    assert d >= Fraction(x)                           # never below the float: sound
    assert d < Fraction(math.nextafter(x, math.inf))  # within one float spacing
    digits = _significant_digits(d)
    assert digits <= 18  # 17 do not always suffice: 1.1753151919421372e+80 needs 18
    text = f"{d.numerator / d.denominator!r}"
    assert float(text) == x
    # shortest: the smallest decimal >= x with one digit fewer (decimal module, ROUND_CEILING)
    # does not read back as x
    if digits > 1:
        ctx = decimal.Context(prec=digits - 1, rounding=decimal.ROUND_CEILING)
        shorter = ctx.divide(decimal.Decimal(Fraction(x).numerator),
                             decimal.Decimal(Fraction(x).denominator))
        assert float(shorter) != x
    # and among decimals of that length, the smallest one >= x
    ctx = decimal.Context(prec=digits, rounding=decimal.ROUND_CEILING)
    same = ctx.divide(decimal.Decimal(Fraction(x).numerator),
                      decimal.Decimal(Fraction(x).denominator))
    assert Fraction(same) == d


def test_numpy_floats_round_up_for_their_own_width(fresh_float_notice):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # float32 0.1 = 0.100000001490116119384765625: 0.100000002 is the shortest above it
        # that np.float32 reads back as the same value
        assert odp.Budget(np.float32(0.1)).epsilon == Fraction("0.100000002")
        assert odp.Budget(np.float16(0.1)).epsilon == Fraction("0.1")  # float16: 0.0999755859375
        assert odp.Budget(np.float64(0.1)).epsilon == Fraction("0.10000000000000001")
        assert odp.Budget(np.float64(0.5)).epsilon == Fraction(1, 2)


def test_float_rounding_is_said_once_per_process_naming_the_value(fresh_float_notice):
    with pytest.warns(FloatBudgetWarning, match=r"epsilon=0\.1 is a float: .* takes it as "
                                                r"0\.10000000000000001"):
        odp.Budget(0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once per process: no second warning
        assert odp.DP(0.2).epsilon == Fraction("0.20000000000000002")
        assert odp.Budget(1, 1e-6).delta == Fraction(1, 10**6)


def test_float_that_prints_as_its_value_is_not_reported(fresh_float_notice):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert odp.Budget(0.3, 1e-6) == odp.Budget("0.3", "1e-6")  # what the user typed
    assert budget_module._float_notice_given is False


def test_float_budget_warning_points_at_the_callers_line(fresh_float_notice):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        odp.Accountant(0.1).charge(odp.DP("0.05"))
    assert [w.filename for w in caught] == [__file__]


def test_the_float_warning_says_why_ten_tenths_do_not_fit_and_what_to_pass(fresh_float_notice):
    with pytest.warns(FloatBudgetWarning) as caught:
        odp.DP(0.1)
    text = str(caught[0].message)
    assert "0.1000000000000000055511151… is above 0.1" in text  # why: the binary value
    assert "ten charges of 0.1 do not fit in a budget of 1" in text  # what it means
    assert 'Pass the string "0.1" to mean 0.1 exactly' in text  # what to pass instead


def test_ten_float_tenths_exceed_one_visibly(fresh_float_notice):
    """The old trap (ten float 0.1 spends exceed a budget of 1) is still there -- a float is
    not the decimal -- but the ledger now says so in readable numbers."""
    acc = odp.Accountant(1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(9):
            acc.charge(odp.DP(0.1))
        assert acc.remaining.epsilon == Fraction("0.09999999999999991")
        assert repr(acc.remaining) == "Budget(epsilon≥0.0999999, delta=0)"  # short, marked
        with pytest.raises(odp.BudgetExceeded, match=r'0\.10000000000000001 is how odp takes '
                           r'the float 0\.1 .* pass the string "0\.1"'):
            acc.charge(odp.DP(0.1))
    acc.charge(odp.DP("0.09999999999999991"))
    assert acc.remaining.epsilon == 0


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


def test_repr_is_readable_and_json_is_exact():
    b = odp.Budget("1/3", "1e-6")
    assert repr(b) == "Budget(epsilon≥0.333333 (1/3), delta=0.000001)"
    assert odp.Budget.from_json(b.to_json()) == b
    assert repr(odp.Budget("0.7", "1e-12")) == "Budget(epsilon=0.7, delta=1e-12)"


@pytest.mark.parametrize("x, up, down", [
    (Fraction(1, 10), "0.1", "0.1"),
    (Fraction("0.123456789012"), "0.123456789012", "0.123456789012"),  # 12 digits: exact
    (Fraction("0.1234567890123"), "≤0.123457", "≥0.123456"),          # 13: short, marked
    (Fraction("0.10000000000000001"), "≤0.100001", "≥0.1"),           # a float 0.1 rounded up
    (Fraction("0.49442425373199997"), "≤0.494425", "≥0.494424"),      # what float charges leave
    (Fraction(1, 3), "≤0.333334 (1/3)", "≥0.333333 (1/3)"),
    (Fraction(2, 7), "≤0.285715 (2/7)", "≥0.285714 (2/7)"),
    (Fraction(1) - Fraction(0.1), "≤0.9", "≥0.899999"),  # a remainder of an old float charge
    (Fraction(0.1), "≤0.100001", "≥0.1"),
    (Fraction(1, 10**6), "0.000001", "0.000001"),
    (Fraction(1, 10**7), "1e-7", "1e-7"),
    (Fraction(25, 10**40), "2.5e-39", "2.5e-39"),
    (Fraction(10**30), "1e+30", "1e+30"),
    (Fraction(123456789, 1000), "123456.789", "123456.789"),
    (Fraction(0), "0", "0"),
    (Fraction(1, 3 * 10**9), "≤3.33334e-10 (1/3000000000)", "≥3.33333e-10 (1/3000000000)"),
    (Fraction(1, 3 * 10**10), "≤3.33334e-11", "≥3.33333e-11"),  # p/q longer than 12: left off
])
def test_display_fraction_rule(x, up, down):
    assert display_fraction(x, "up") == up
    assert display_fraction(x, "down") == down


@settings(max_examples=300, deadline=None)
@given(st.fractions(min_value=0, max_value=10**6, max_denominator=10**60))
def test_display_fraction_is_exact_or_rounded_the_safe_way_and_marked(x):
    for rounding in ("up", "down"):
        text = display_fraction(x, rounding)
        if text[0] in "≤≥":
            assert text[0] == ("≤" if rounding == "up" else "≥")
            shown = Fraction(text[1:].split(" ")[0])
            assert (shown >= x) if rounding == "up" else (shown <= x)
            assert abs(shown - x) <= x * Fraction(1, 10**5)  # 6 significant digits
        else:
            assert Fraction(text) == x  # unmarked means exact
    assert display_named("ε", x, "down").startswith(("ε=", "ε≥"))


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


def test_wide_floats_are_never_rounded_down():
    """Review finding: numpy.longdouble used to be rounded to the nearest double, which can be
    *below* the value given, so a guarantee could declare less than the caller wrote.  Now a
    longdouble is rounded up to the shortest decimal that np.longdouble reads back as it."""
    x = np.longdouble(1) / np.longdouble(3)
    num, den = x.as_integer_ratio()
    assert to_fraction(x) == Fraction(num, den)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        eps = odp.DP(x).epsilon
    assert eps >= Fraction(num, den)
    assert np.longdouble(format_fraction(eps)) == x  # reads back as the same longdouble
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

"""odp.floats: directed float conversions and short directed rationals, checked exactly."""

from __future__ import annotations

import math
import sys
from fractions import Fraction as F

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from odp.floats import (
    float_down,
    float_up,
    round_down_significant,
    round_up_significant,
    significant_places,
)

MAX = sys.float_info.max
TINY = 5e-324  # the smallest positive subnormal


def _rationals():
    """Fractions across the whole float range and beyond it (both signs)."""
    moderate = st.fractions(min_value=F(-(10**6)), max_value=F(10**6), max_denominator=10**30)
    scaled = st.builds(lambda m, e: F(m) * F(2) ** e,
                       st.integers(-(2**80), 2**80), st.integers(-1200, 1100))
    return st.one_of(moderate, scaled)


@settings(max_examples=400, deadline=None)
@given(_rationals())
def test_directed_conversion_brackets_and_is_tight(x):
    lo, hi = float_down(x), float_up(x)
    assert lo <= hi
    if math.isfinite(lo):
        assert F(lo) <= x
    else:
        assert lo == -math.inf and x < -MAX
    if math.isfinite(hi):
        assert x <= F(hi)
    else:
        assert hi == math.inf and x > MAX
    # no float lies strictly between them: they are the neighbours of x (or x itself)
    assert math.nextafter(lo, math.inf) >= hi


def test_directed_conversion_beyond_the_float_range():
    huge = F(10) ** 400
    assert float_down(huge) == MAX and float_up(huge) == math.inf
    assert float_down(-huge) == -math.inf and float_up(-huge) == -MAX
    just_above = F(MAX) + 1  # rounds to MAX under round-to-nearest, but is above it
    assert float_down(just_above) == MAX and float_up(just_above) == math.inf


def test_directed_conversion_exact_and_subnormal_values():
    assert float_up(F(1, 2)) == 0.5 == float_down(F(1, 2))
    lo, hi = float_down(F(1, 10)), float_up(F(1, 10))  # 1/10 is not a float: two neighbours
    assert lo < hi == math.nextafter(lo, math.inf) and 0.1 in (lo, hi)
    tiny = F(TINY) / 3
    assert float_down(tiny) == 0.0 and float_up(tiny) == TINY
    assert float_down(-tiny) == -TINY and float_up(-tiny) == -0.0
    assert float_up(3) == 3.0 and float_down(0.1) == 0.1  # ints and floats are exact inputs
    with pytest.raises(ValueError):
        float_up(math.nan)


@settings(max_examples=200, deadline=None)
@given(st.fractions(min_value=F(1, 10**40), max_value=F(10**9), max_denominator=10**50),
       st.integers(1, 20), st.booleans())
def test_significant_rounding_brackets(x, digits, negative):
    if negative:
        x = -x
    up = round_up_significant(x, digits)
    down = round_down_significant(x, digits)
    assert down <= x <= up
    assert (up - down) <= abs(x) * F(2, 10 ** (digits - 1))
    # short: a multiple of 10**-places
    places = significant_places(x, digits)
    assert (up * 10**places).denominator == 1 and (down * 10**places).denominator == 1


def test_significant_rounding_of_floats_and_edge_cases():
    v = 0.123456789012345
    assert round_up_significant(v) >= F(v) >= round_down_significant(v)
    assert round_up_significant(1e-12).denominator <= 10**24
    assert round_up_significant(F(1, 3), 3) == F(334, 1000)
    assert round_down_significant(F(1, 3), 3) == F(333, 1000)
    assert round_up_significant(F(-1, 3), 3) == F(-333, 1000)
    assert round_down_significant(F(-1, 3), 3) == F(-334, 1000)
    assert round_up_significant(0) == 0 == round_down_significant(0)
    big = F(10) ** 500 + F(1, 7)  # far beyond the float range
    assert round_down_significant(big, 5) == F(10) ** 500 < big < round_up_significant(big, 5)

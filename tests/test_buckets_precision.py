"""Precision choice at small δ and --target-width with an infinite width (review finding 3).

``precision="auto"`` used extended-precision FFTs only for the early steps of compositions of at
least 8·2 copies, so at k = 10, δ = 1e-12 the double-precision round-off (~4e-12) left no
finite upper end; and ``tighten`` compared ``inf > inf / 2`` (False), so it never switched to
extended precision and quadrupled the window until the memory limit.
"""

from __future__ import annotations

import math

import mpmath as mp

from odp.buckets import ApproximateDP, Gaussian, PrivacyBucketsAccountant
from odp.buckets.tighten import tighten
from odp.limits import Limits
from test_buckets_refs import gaussian_epsilon, mpf


def test_auto_keeps_round_off_below_delta_where_double_precision_cannot():
    """Plain double precision leaves no finite upper end at k = 10, δ = 1e-12; "auto" (tilted
    double precision: round-off bounded relative to the tilted masses near ε) gives a narrow
    interval around the exact value without recomputing, also after more compositions."""
    exact = gaussian_epsilon(mp.sqrt(10), "1e-12")  # 26.7198...
    double = PrivacyBucketsAccountant(precision="double").compose(Gaussian(1), 10)
    assert double.get_epsilon_interval("1e-12").upper == math.inf  # round-off ~4e-12 > δ
    auto = PrivacyBucketsAccountant().compose(Gaussian(1), 10)
    iv = auto.get_epsilon_interval("1e-12")
    assert auto.effective_precision == "auto" and auto.report()["precision_used"] == "auto"
    assert mpf(iv.lower) <= exact <= mpf(iv.upper)
    assert iv.width < 0.01
    auto.compose(Gaussian(1), 6)
    iv16 = auto.get_epsilon_interval("1e-12")
    assert mpf(iv16.lower) <= gaussian_epsilon(4, "1e-12") <= mpf(iv16.upper)


def test_auto_recomputes_when_its_round_off_would_widen_the_interval():
    """A lattice composition (exact buckets: the width is round-off only) at a large δ: the tilt
    does not help there, so "auto" recomputes with the early convolutions in extended precision
    (the policy before tilting) and the interval is as narrow as it was."""
    from test_buckets_refs import kov_delta

    acc = PrivacyBucketsAccountant(buckets=2**12).compose(ApproximateDP("0.1", "0"), 200)
    iv = acc.get_delta_interval("3")
    exact = kov_delta("0.1", "0", 200, "3")
    assert mpf(iv.lower) <= exact <= mpf(iv.upper)
    assert mpf(iv.upper) - mpf(iv.lower) <= 1e-9 * exact
    assert acc._mode == "classic"


def test_auto_stays_in_its_cheap_policy_when_round_off_is_negligible():
    acc = PrivacyBucketsAccountant().compose(Gaussian(1), 10)
    iv = acc.get_epsilon_interval("1e-5")
    assert acc.effective_precision == "auto"
    assert mpf(iv.lower) <= gaussian_epsilon(mp.sqrt(10), "1e-5") <= mpf(iv.upper)
    # a δ(ε) query whose answer is ~1e-13: around the exact value, and narrower than with
    # every convolution in extended precision (whose round-off, ~5e-15, is not relative to δ)
    from test_buckets_refs import gaussian_delta

    d = acc.get_delta_interval(28)
    exact = gaussian_delta(mp.sqrt(10), 28)
    assert mpf(d.lower) <= exact <= mpf(d.upper)
    assert acc.effective_precision == "auto"
    ext = PrivacyBucketsAccountant(precision="extended").compose(Gaussian(1), 10)
    assert d.width < ext.get_delta_interval(28).width


def test_target_width_with_an_infinite_width_switches_to_extended_at_once():
    res = tighten([(Gaussian(1), 10)], target_width=0.1, delta="1e-12", precision="double",
                  limits=Limits(max_seconds=30))
    assert res.reached, res.reason
    assert res.attempts[0].width == math.inf and res.attempts[0].precision == "double"
    assert [a.buckets for a in res.attempts] == [32768, 32768]  # same window, extended
    assert res.attempts[-1].precision == "extended"
    assert mpf(res.interval.lower) <= gaussian_epsilon(mp.sqrt(10), "1e-12") <= mpf(res.interval.upper)


def test_target_width_with_a_truly_infinite_epsilon_stops_and_says_why():
    # distinguishing mass 1 - 0.99^10 ~ 0.0956 > δ: no finite ε exists, no window helps
    res = tighten([(ApproximateDP("0.5", "0.01"), 10)], target_width=0.1, delta="0.05",
                  buckets=1024)
    assert not res.reached and res.interval.upper == math.inf
    assert len(res.attempts) <= 2 and "distinguishing events" in res.reason

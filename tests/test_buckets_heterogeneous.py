"""Heterogeneous compositions keep the finest grid (review finding 2).

A lattice mechanism (randomized response, discrete Laplace) is composed on its own lattice
h = ε; joining it with a Gaussian used to coarsen the Gaussian onto that lattice (Gaussian(1)
x 100: width 6.9e-5 alone, 5.7e-3 with one RR(0.5)).  Now the coarse state is refined exactly
(:func:`odp.buckets.state.refine`: the same atoms on a grid of half the step) while it fits the
window.  References: losses add, so δ(ε) = Σ_l P[L_RR = l] δ_G(ε - l) with the Gaussian closed
form.
"""

from __future__ import annotations

import mpmath as mp
import numpy as np
import pytest

from odp.buckets import DiscreteLaplace, Gaussian, PLDRandomizedResponse, PrivacyBucketsAccountant
from odp.buckets.readoff import delta_lower, delta_upper
from odp.buckets.state import coarsen, refine
from odp.buckets.tighten import tighten
from test_buckets_refs import gaussian_delta, kov_delta, mpf


def rr_gaussian_delta(mu, rr_eps, rr_k: int, eps):
    r = mpf(rr_eps)
    p = mp.e**r / (1 + mp.e**r)
    return sum(mp.binomial(rr_k, j) * p ** (rr_k - j) * (1 - p) ** j
               * gaussian_delta(mu, mpf(eps) - (rr_k - 2 * j) * r) for j in range(rr_k + 1))


def contains(iv, delta, delta_of):
    """Exact ε(δ) in iv iff δ(lower) >= δ >= δ(upper) (δ(ε) continuous, decreasing)."""
    return delta_of(iv.lower) >= mpf(delta) >= delta_of(iv.upper)


@pytest.mark.parametrize("lattice_mech", [PLDRandomizedResponse("0.5"), DiscreteLaplace(2)])
def test_one_lattice_mechanism_does_not_coarsen_a_gaussian(lattice_mech):
    alone = PrivacyBucketsAccountant().compose(Gaussian(1), 100).get_epsilon_interval("1e-5")
    for order in (0, 1):
        acc = PrivacyBucketsAccountant()
        items = [(Gaussian(1), 100), (lattice_mech, 1)]
        for mech, n in items[::-1] if order else items:
            acc.compose(mech, n)
        iv = acc.get_epsilon_interval("1e-5")
        # DiscreteLaplace(scale 2, Δ = 1) is exactly binary RR(0.5)
        assert contains(iv, "1e-5", lambda e: rr_gaussian_delta(10, "0.5", 1, e))
        assert iv.width < 2 * alone.width  # was 80x wider (grid pinned to h = 0.5)
        assert min(s.h for s in acc._states()) < 0.01


def test_cli_case_of_the_review_is_tight_and_the_target_is_reached():
    # was [636.464, 637.856] and "NOT reached: ... FFT round-off floor"
    res = tighten([(Gaussian(1), 1000), (PLDRandomizedResponse(3), 1)], target_width=0.01,
                  delta="1e-5")
    assert res.reached and len(res.attempts) == 1
    assert contains(res.interval, "1e-5", lambda e: rr_gaussian_delta(mp.sqrt(1000), 3, 1, e))
    assert res.interval.width < 1e-3  # exact 636.73298


def test_long_lattice_composition_meets_a_gaussian_at_a_shared_finer_grid():
    # 300 x RR(3) spans 1800 nats: it is refined only as far as the window allows
    acc = PrivacyBucketsAccountant().compose(PLDRandomizedResponse(3), 300).compose(Gaussian(1), 1)
    iv = acc.get_epsilon_interval("1e-3")
    assert contains(iv, "1e-3", lambda e: rr_gaussian_delta(1, 3, 300, e))
    assert iv.width < 0.01  # was 1.49 with the Gaussian coarsened to h = 3
    # the lattice part alone is still exact-grid: its δ matches KOV
    rr = PrivacyBucketsAccountant().compose(PLDRandomizedResponse(3), 300)
    d = rr.get_delta_interval(600)
    assert mpf(d.lower) <= kov_delta(3, 0, 300, 600) <= mpf(d.upper)


def test_refine_is_exact_and_undone_by_coarsen():
    acc = PrivacyBucketsAccountant(buckets=256).compose(PLDRandomizedResponse("0.7"), 9)
    s = acc._states()[0]
    r = refine(s)
    assert r.h == s.h / 2 and r.size == 2 * s.size - 1
    # the same pair: equal up to the bounds' margins (which count entries, and the round-off
    # bound of the lower pair may sit at any of the finer grid points: ~5e-13 here)
    for eps in (0.0, 0.7, 2.1, 3.5):
        assert delta_upper(r, eps) == pytest.approx(delta_upper(s, eps), rel=1e-13, abs=1e-300)
        assert delta_lower(r, eps) == pytest.approx(delta_lower(s, eps), rel=1e-11, abs=1e-300)
    back = coarsen(r)
    assert back.h == s.h and back.bshift == s.bshift
    lo = s.start - back.start
    assert np.array_equal(back.pa[lo:lo + s.size], s.pa)
    assert np.array_equal(back.ma[lo:lo + s.size], s.ma)
    assert np.array_equal(back.bh[lo:lo + s.size], s.bh)


def test_tighten_says_when_more_buckets_did_not_refine_the_grid():
    # a lattice mechanism alone stays on its lattice whatever the window: not a round-off floor
    res = tighten([(PLDRandomizedResponse("0.5"), 50)], target_width=1e-14, delta="1e-5",
                  buckets=1024)
    assert not res.reached and [a.buckets for a in res.attempts] == [1024, 4096]
    assert "grid did not get finer" in res.reason and "round-off" not in res.reason

"""The speed paths of privacy buckets give the same rigorous answers as the plain ones: reused
FFT work buffers, products that skip a given-up lower pair, tail cuts summed only as far as
needed, the tilt found by bisection, ε lower bounds started from the upper bound, the scout's
guessed direction, and tighten's predicted grid step (issue 33's DP-SGD case: q = 0.01, σ = 1.1,
10⁴ steps, δ = 1e-5; the tight ε, 5.19259 ± 1e-4, is pinned by the default window and by
dp-accounting's and prv-accountant's estimates in docs/benchmarks.md)."""

from __future__ import annotations

import math
import threading
from dataclasses import replace
from fractions import Fraction

import numpy as np
import pytest

import odp.buckets.compose as C
from odp.buckets import Gaussian, PrivacyBucketsAccountant, poisson_gaussian
from odp.buckets.accountant import TILT_GRID, TILT_LEVEL, cell_losses, choose_tilt
from odp.buckets.predict import predict_step
from odp.buckets.readoff import delta_lower, delta_upper, epsilon_lower, epsilon_upper
from odp.buckets.state import _tail_count
from odp.buckets.tighten import tighten

STEP = poisson_gaussian("1.1", "0.01")


def _state(buckets: int = 2048, count: int = 64):
    acc = PrivacyBucketsAccountant(buckets=buckets, scout=False).compose(STEP, count)
    return acc._states()[0]


def test_reused_work_buffers_give_the_same_products_as_fresh_ones():
    s = _state()
    fresh = C.compose(s, None, buckets=2048, tail=1e-16)
    # products of other shapes in between reuse (and regrow) the same buffers
    C.compose(_state(512, 8), None, buckets=512, tail=1e-16)
    again = C.compose(s, None, buckets=2048, tail=1e-16)
    for a, b in ((fresh.pa, again.pa), (fresh.ma, again.ma), (fresh.bh, again.bh)):
        assert np.array_equal(a, b)
    assert (fresh.abs_up, fresh.wabs_up, fresh.wabs_ma) == (again.abs_up, again.wabs_up,
                                                            again.wabs_ma)


def test_threads_do_not_share_work_buffers():
    s, t = _state(2048, 64), _state(1024, 16)
    want = {id(s): C.compose(s, None, buckets=2048, tail=1e-16).pa,
            id(t): C.compose(t, None, buckets=1024, tail=1e-16).pa}
    bad: list[str] = []

    def work(st, buckets):
        for _ in range(5):
            if not np.array_equal(C.compose(st, None, buckets=buckets, tail=1e-16).pa,
                                  want[id(st)]):
                bad.append("differs")

    threads = [threading.Thread(target=work, args=a) for a in ((s, 2048), (t, 1024))]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert bad == []


def test_a_product_with_a_given_up_lower_pair_skips_it_and_keeps_the_upper_pair():
    s = _state()
    dead = replace(s, bh=np.zeros_like(s.bh), rel_bh=math.inf, abs_bh=math.inf,
                   wabs_bh=math.inf)
    full = C.compose(s, None, buckets=2048, tail=1e-16)
    skip = C.compose(dead, None, buckets=2048, tail=1e-16)
    # the same atoms (the window's top may be cut elsewhere: the cut also reads the lower
    # pair's masses), the same upper bounds up to the tail cut's mass
    common = min(full.size, skip.size)
    assert skip.start == full.start and np.array_equal(skip.pa[:common], full.pa[:common])
    assert (skip.rel_up, skip.abs_up, skip.wabs_up) == (full.rel_up, full.abs_up, full.wabs_up)
    for eps in (0.5, 1.0, 2.0):
        assert delta_upper(skip, eps) == pytest.approx(delta_upper(full, eps), rel=1e-9,
                                                       abs=1e-15)
    assert skip.rel_ma == math.inf and delta_lower(skip, 1.0) == 0.0  # the trivial bound


def test_tail_counts_equal_the_full_running_sum():
    rng = np.random.default_rng(3)
    for n in (10, 300, 5000):
        w = rng.random(n) ** 30 * 1e-12
        counted = rng.random(n) > 0.1
        full = np.cumsum(np.where(counted, w, 0.0))
        for tail in (0.0, 1e-16, 1e-13, 1e-12, float(full[-1]), 1.0):
            assert _tail_count(w, counted, tail) == int(np.searchsorted(full, tail, "right"))


def test_the_tilt_found_by_bisection_is_the_grid_minimum():
    for mech, count, h in ((STEP, 10_000, 0.0004), (STEP, 100_000, 0.0004), (Gaussian(1), 1000,
                                                                            0.01)):
        for reverse in (False, True):
            items = [(*cell_losses(mech.cells_both(h, reverse, 1e-16)[0]), count)]
            top = max(float(np.max(np.abs(x))) for x, _, _ in items)

            def eps(theta):
                x = theta * items[0][0]
                k = count * (x.max() + math.log(float((items[0][1] * np.exp(x - x.max())).sum())))
                return (k - math.log(TILT_LEVEL)) / theta

            grid = [t for t in TILT_GRID if t * top <= 600]
            assert choose_tilt(items) == min(grid, key=eps)


def test_lower_bounds_from_a_hint_are_the_same_rigorous_bounds():
    s = _state(4096, 10_000)
    up = epsilon_upper(s, 1e-5)
    plain = epsilon_lower(s, 1e-5)
    for hint in (up, up + 1, 0.0, 3.0, None):
        low = epsilon_lower(s, 1e-5, hint=hint)
        assert delta_lower(s, low) > 1e-5  # verified: a rigorous lower bound of ε
        assert abs(low - plain) <= 1e-12 * plain
    assert low <= up


def test_the_scout_answers_as_both_directions_in_full():
    scouted = PrivacyBucketsAccountant(buckets=8192).compose(STEP, 10_000)
    both = PrivacyBucketsAccountant(buckets=8192, scout=False).compose(STEP, 10_000)
    a, b = scouted.get_epsilon_interval("1e-5"), both.get_epsilon_interval("1e-5")
    assert a == b
    assert scouted._fwd is None and scouted.report()["directions"][1]["scout"] is True
    # a wrong hint of the dominant direction costs time, never the answer
    wrong = PrivacyBucketsAccountant(buckets=8192, dominant=True).compose(STEP, 10_000)
    assert wrong.get_epsilon_interval("1e-5") == b


def test_the_prediction_matches_the_measured_width():
    pred = predict_step([(STEP, 10_000)], 1e-5, 1e-16)
    assert pred is not None and pred.reverse is False  # the remove direction decides
    h = 2.0**-11
    acc = PrivacyBucketsAccountant(buckets=8192, factor=Fraction(math.exp(h)))
    width = acc.compose(STEP, 10_000).get_epsilon_interval("1e-5").width
    assert 0.8 * width <= pred.width(h) <= 1.1 * width


def test_tighten_reaches_1e3_in_one_predicted_attempt():
    res = tighten([(STEP, 10_000)], target_width=1e-3, delta="1e-5", buckets="auto")
    assert res.reached and len(res.attempts) == 1 and res.interval.width <= 1e-3
    assert res.interval.lower <= Fraction("5.1925") and Fraction("5.1927") <= res.interval.upper
    # a plain Gaussian, whose later coarsenings the prediction does not model: a second,
    # finer step reaches it (the window-doubling search did too, at 32768 buckets)
    res = tighten([(Gaussian(1), 1000)], target_width=1e-3, delta="1e-5", buckets="auto")
    assert res.reached and res.interval.lower <= Fraction("633.92985") <= res.interval.upper


@pytest.mark.parametrize("delta", ["1e-5", "1e-9"])
def test_predicted_windows_and_tails_meet_the_default_interval(delta):
    """Both intervals contain the tight ε, so they must meet.  (At δ = 1e-9 the tails are cut
    below the default 1e-16; the default window itself escalates to extended precision there
    and is 7.9e-3 wide, the predicted window's tilted attempt about 1e-3.)"""
    res = tighten([(STEP, 10_000)], target_width=1e-3, delta=delta, buckets="auto")
    ref = PrivacyBucketsAccountant().compose(STEP, 10_000).get_epsilon_interval(delta)
    assert max(res.interval.lower, ref.lower) <= min(res.interval.upper, ref.upper)
    if delta == "1e-5":
        assert res.reached and res.interval.width <= 1e-3
    else:
        assert res.interval.width <= min(ref.width, 1.1e-3)

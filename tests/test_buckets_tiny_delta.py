"""ε(δ) at δ below the round-off margin of the top grid loss (review finding 1).

At the top grid loss the upper bound on δ still holds a rounding margin (~1e-15 of the top
atom's mass), and just above the top it holds only the infinite-loss mass.  A pair with no
infinite-loss mass (Laplace, randomized response, (ε, 0)-DP) therefore has a finite ε for every
δ > 0; the bound must say so, next to the exact value.
"""

from __future__ import annotations

import math

import mpmath as mp
import pytest

from odp.buckets import (
    ApproximateDP,
    Laplace,
    PLDRandomizedResponse,
    PrivacyBucketsAccountant,
    composition_epsilon_upper,
)
from odp.errors import InvalidParameter
from test_buckets_refs import mpf

mp.mp.dps = 40


def laplace_epsilon(eps0, delta):
    """Laplace(ε0), one run: δ(ε) = 1 - e^{(ε - ε0)/2} on (-ε0, ε0), so ε(δ) = ε0 + 2 ln(1 - δ)."""
    return mpf(eps0) + 2 * mp.log(1 - mpf(delta))


def rr_epsilon(eps0, delta):
    """Binary RR(ε0) or (ε0, 0)-DP, one run: δ(ε) = e^{ε0}/(1+e^{ε0}) (1 - e^{ε - ε0})."""
    e0 = mpf(eps0)
    return e0 + mp.log(1 - mpf(delta) * (1 + mp.e**e0) / mp.e**e0)


CASES = [(Laplace(1), laplace_epsilon(1, "1e-16"), "1e-16"),
         (Laplace(1), laplace_epsilon(1, "1e-300"), "1e-300"),
         (Laplace("0.5"), laplace_epsilon("2", "1e-16"), "1e-16"),
         (PLDRandomizedResponse(1), rr_epsilon(1, "1e-16"), "1e-16"),
         (PLDRandomizedResponse(1), rr_epsilon(1, "1e-15"), "1e-15"),
         (ApproximateDP(1, 0), rr_epsilon(1, "1e-16"), "1e-16"),
         (ApproximateDP(1, 0), rr_epsilon(1, "1e-15"), "1e-15")]


@pytest.mark.parametrize("mech,exact,delta", CASES)
def test_epsilon_at_tiny_delta_is_finite_and_contains_the_truth(mech, exact, delta):
    iv = PrivacyBucketsAccountant().compose(mech, 1).get_epsilon_interval(delta)
    assert iv.upper != math.inf
    assert mpf(iv.lower) <= exact <= mpf(iv.upper)
    assert mpf(iv.upper) - exact < 1e-10  # the top loss plus a few ulps (and 12-digit rounding)
    assert composition_epsilon_upper([mech], delta) == iv.upper


def test_infinite_loss_mass_above_delta_is_still_refused_with_the_true_reason():
    mechs = [(ApproximateDP("0.5", "0.01"), 10)]  # distinguishing mass 1 - 0.99^10 ~ 0.0956
    with pytest.raises(InvalidParameter, match=r"distinguishing events .* at least 0\.09"):
        composition_epsilon_upper(mechs, "0.05")
    acc = PrivacyBucketsAccountant().compose(*mechs[0])
    assert acc.get_epsilon_interval("0.05").upper == math.inf
    # just above the distinguishing mass (0.0956179...) a finite ε exists again
    assert acc.get_epsilon_interval("0.0957").upper < math.inf


def test_a_bound_that_cannot_certify_says_so_instead_of_blaming_the_mechanism():
    from odp.buckets import Gaussian

    with pytest.raises(InvalidParameter, match="could be certified") as info:
        composition_epsilon_upper([(Gaussian(1), 10)], "1e-300", precision="double")
    assert "distinguishing events 0" in str(info.value)


@pytest.mark.parametrize("delta", ["1e-15", "1e-200"])
def test_composed_pure_dp_pair_is_finite_below_the_fft_round_off(delta):
    """Three runs of RR(0.5) compose by FFT (round-off bound ~1e-16), but above the top loss 1.5
    only the infinite-loss mass -- exactly 0 here -- is left, so ε(δ) stays finite for every δ.
    Below 1.5 only the top atom (mass p³, p = e^0.5/(1+e^0.5)) counts:
    δ(ε) = p³ (1 - e^{ε - 1.5}), so ε(δ) = 1.5 + ln(1 - δ/p³)."""
    p = mp.e ** mpf("0.5") / (1 + mp.e ** mpf("0.5"))
    exact = mpf("1.5") + mp.log(1 - mpf(delta) / p**3)
    acc = PrivacyBucketsAccountant().compose(PLDRandomizedResponse("0.5"), 3)
    iv = acc.get_epsilon_interval(delta)
    assert iv.upper != math.inf and mpf(iv.lower) <= exact <= mpf(iv.upper)
    assert mpf(iv.upper) - exact < 1e-10

"""What the docs say about odp's RDP → DP conversion (Canonne, Kamath, Steinke 2020, Prop. 12;
Balle et al. 2020, Thm. 21): it is sound and tighter than Mironov 2017, Prop. 3, but it is not
the optimal conversion.  The example the docs give, RDP(2, 0.5) at δ = 1e-5, is checked here
against an independent bound computed with mpmath.

Order 2 is the χ² divergence: D_2(P‖Q) = ln(1 + χ²(P‖Q)), so (2, 0.5)-RDP means
χ² ≤ e^0.5 − 1.  For every pair with likelihood ratio L = dP/dQ,
    (L − e^ε)^+ ≤ (L − 1)² / (4(e^ε − 1))       for all L ≥ 0
(the right side is a parabola ≥ 0 tangent to the line L − e^ε), and taking the Q-expectation,
    δ(ε) = E_Q[(L − e^ε)^+] ≤ χ² / (4(e^ε − 1)).
So the optimal conversion gives ε ≤ 9.694 wherever this bound is ≤ 1e-5 at ε = 9.694."""

from __future__ import annotations

import mpmath as mp
import pytest

from odp.conversions import rdp_to_dp_epsilon, rdp_to_dp_epsilon_mironov

mp.mp.dps = 50


def _chi2_delta_bound(chi2: mp.mpf, eps: mp.mpf) -> mp.mpf:
    return chi2 / (4 * (mp.e**eps - 1))


def test_the_tangent_parabola_dominates_the_hinge():
    for eps in (mp.mpf("0.5"), mp.mpf("9.694")):
        c = 1 / (4 * (mp.e**eps - 1))
        # c(L − 1)² − (L − e^ε) has discriminant (2c + 1)² − 4c(c + e^ε) = 1 − 4c(e^ε − 1) = 0
        assert abs((2 * c + 1) ** 2 - 4 * c * (c + mp.e**eps)) < mp.mpf("1e-40")
        for L in (0, 1, mp.e**eps, 2 * mp.e**eps - 1, 10**6):
            assert c * (L - 1) ** 2 >= max(0, L - mp.e**eps) - mp.mpf("1e-40")


def test_rdp_2_half_at_1e5_is_sound_tighter_than_mironov_and_not_optimal():
    odp_eps = rdp_to_dp_epsilon(2, "0.5", "1e-5")
    assert abs(float(odp_eps) - 10.6266) < 1e-4  # the number docs/ and composition.py quote
    assert odp_eps < rdp_to_dp_epsilon_mironov(2, "0.5", "1e-5")  # tighter than Mironov
    chi2 = mp.e ** mp.mpf("0.5") - 1
    assert _chi2_delta_bound(chi2, mp.mpf("9.694")) <= mp.mpf("1e-5")  # optimal ε ≤ 9.694
    assert mp.mpf(str(odp_eps)) - mp.mpf("9.694") > 0.9  # so odp's ε is not the optimal one


@pytest.mark.parametrize("eps_alpha", ["0.1", "0.5", "2"])
def test_odps_epsilon_is_sound_by_the_independent_chi2_bound(eps_alpha):
    """At odp's ε the worst-case δ over all (2, ε_α)-RDP pairs is at most the χ² bound, which
    is at most δ: soundness, checked without odp's own formula."""
    odp_eps = mp.mpf(str(rdp_to_dp_epsilon(2, eps_alpha, "1e-5")))
    assert _chi2_delta_bound(mp.e ** mp.mpf(eps_alpha) - 1, odp_eps) <= mp.mpf("1e-5")


def _binary_pair_delta(chi2: mp.mpf, ratio: mp.mpf, eps: mp.mpf) -> mp.mpf:
    """δ(ε) of Q = (q, 1 − q), P = (ratio·q, 1 − ratio·q) with χ²(P‖Q) = chi2 exactly."""
    q = chi2 / ((ratio - 1) ** 2 + chi2)
    return (ratio - mp.e**eps) * q


def test_a_conversion_claiming_less_fails_on_a_witness_pair():
    """A deliberately wrong claim -- ε = 9.5 at δ = 1e-5 for (2, 0.5)-RDP -- is refuted by an
    explicit pair of distributions with χ² = e^0.5 − 1 whose δ(9.5) exceeds 1e-5: the bracket
    [9.5, 9.694] on the optimal ε is not vacuous."""
    chi2, eps = mp.e ** mp.mpf("0.5") - 1, mp.mpf("9.5")
    ratio = 2 * mp.e**eps
    q = chi2 / ((ratio - 1) ** 2 + chi2)
    assert 0 < ratio * q < 1  # P = (ratio·q, 1 − ratio·q) is a distribution
    pair_chi2 = (ratio * q - q) ** 2 / q + (q - ratio * q) ** 2 / (1 - q)
    assert abs(pair_chi2 - chi2) < mp.mpf("1e-40")  # so the pair is (2, 0.5)-RDP exactly
    witness = _binary_pair_delta(chi2, ratio, eps)
    assert witness > mp.mpf("1e-5")
    assert _chi2_delta_bound(chi2, mp.mpf("9.694")) <= mp.mpf("1e-5")

"""Conversions between privacy measures that the filters need, as exact or rigorously
rounded rationals.

Every function returns a :class:`fractions.Fraction`.  Where the closed form is rational the
result is exact; where it involves ``ln``, ``exp`` or ``sqrt`` it is an **upper bound** (a cost
or a privacy parameter may only be rounded up), computed from the rigorous decimal brackets of
:mod:`odp.rational` and rounded up to the grid ``1/10**12``.

=============================  ==============================================================
function                       statement (source)
=============================  ==============================================================
:func:`pure_dp_to_zcdp`        ε-DP ⇒ (ε²/2)-zCDP — Bun & Steinke 2016, Prop. 1.4 (exact)
:func:`pure_dp_to_rdp`         ε-DP ⇒ (α, min(ε, αε²/2))-RDP — D_α ≤ D_∞ = ε and Prop. 1.4
:func:`zcdp_to_rdp`            ρ-zCDP ⇔ (α, αρ)-RDP for every α > 1 — Bun & Steinke Def. 1.1
:func:`zcdp_to_dp_epsilon`     ρ-zCDP ⇒ (ε, δ)-DP: the smaller of ρ + 2√(ρ ln(1/δ)) (Bun &
                               Steinke Prop. 1.3) and the RDP conversion below of (α, αρ)
:func:`rdp_to_dp_epsilon`      (α, ε_α)-RDP ⇒ (ε_α + ln((α−1)/α) − (ln δ + ln α)/(α−1), δ)-DP —
                               Canonne, Kamath, Steinke 2020 / Balle et al. 2020 Thm. 21
:func:`best_rdp_to_dp`         the best of those over an RDP curve given at several orders
:func:`rdp_to_dp_epsilon_mironov` (ε_α + ln(1/δ)/(α−1), δ) — Mironov 2017 Prop. 3 (looser)
:func:`gdp_delta`              μ-GDP: δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) — Dong, Roth,
                               Su 2022, Cor. 2.13 (exact; upper bound on δ)
:func:`gdp_to_dp_epsilon`      the smallest ε (grid 1e-12) with that δ(ε) ≤ δ
:func:`to_dp`                  any of zCDP / RDP / RDP curve / GDP → (ε, δ), with what a ledger
                               records about the original notion (used by Accountant.charge)
:func:`gaussian_zcdp`          N(0, σ²), L2-sensitivity Δ: ρ = Δ²/(2σ²) — Bun & Steinke Prop. 1.6
:func:`gaussian_rdp`           same: ε(α) = αΔ²/(2σ²) — Mironov 2017, Table II
:func:`discrete_gaussian_zcdp` N_ℤ(0, σ²), integer Δ: ρ = Δ²/(2σ²) — Canonne, Kamath, Steinke
                               2020, Thm. 4 (used for :class:`odp.GaussianMechanism`)
:func:`laplace_rdp`            Laplace(b), sensitivity Δ, λ = b/Δ: ε(α) = 1/(α−1) ·
                               ln(α/(2α−1)·e^{(α−1)/λ} + (α−1)/(2α−1)·e^{−α/λ}) — Mironov 2017,
                               Table II (continuous Laplace; upper bound)
:func:`mechanism_zcdp`         ρ of an odp mechanism (Laplace/RR: ε²/2; Gaussian: CKS Thm. 4)
=============================  ==============================================================

The conversions to (ε, δ)-DP live in :mod:`odp.dp_conversions` (which depends on no mechanism)
and are re-exported here.  The tests check each statement against an independent
high-precision computation of the divergence it bounds (``tests/test_conversions.py``), never
against the formula itself.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from .budget import parse_alpha, parse_epsilon, parse_positive
from .dp_conversions import (
    ROUNDING_DENOMINATOR,
    Conversion,
    best_rdp_to_dp,
    gdp_delta,
    gdp_to_dp_epsilon,
    rdp_to_dp_epsilon,
    rdp_to_dp_epsilon_mironov,
    rdp_to_dp_offset,
    to_dp,
    zcdp_to_dp_epsilon,
)
from .errors import InvalidParameter
from .rational import ceil_fraction, exp_bracket, log_bracket

__all__ = [
    "parse_alpha",
    "pure_dp_to_zcdp",
    "pure_dp_to_rdp",
    "zcdp_to_rdp",
    "zcdp_to_dp_epsilon",
    "rdp_to_dp_epsilon",
    "rdp_to_dp_epsilon_mironov",
    "best_rdp_to_dp",
    "rdp_to_dp_offset",
    "gdp_delta",
    "gdp_to_dp_epsilon",
    "to_dp",
    "Conversion",
    "gaussian_zcdp",
    "gaussian_rdp",
    "discrete_gaussian_zcdp",
    "laplace_rdp",
    "mechanism_zcdp",
    "ROUNDING_DENOMINATOR",
]

def pure_dp_to_zcdp(epsilon: Any) -> Fraction:
    """ρ = ε²/2: an ε-DP mechanism is (ε²/2)-zCDP (Bun & Steinke 2016, Prop. 1.4).  Exact."""
    eps = parse_epsilon(epsilon)
    return eps * eps / 2


def pure_dp_to_rdp(epsilon: Any, alpha: Any) -> Fraction:
    """ε(α) = min(ε, αε²/2): an ε-DP mechanism is (α, ε(α))-RDP.  Exact.

    ``D_α ≤ D_∞ ≤ ε`` (Rényi divergences increase with the order) and ε²/2-zCDP (Prop. 1.4)."""
    eps = parse_epsilon(epsilon)
    a = parse_alpha(alpha)
    return min(eps, a * eps * eps / 2)


def zcdp_to_rdp(rho: Any, alpha: Any) -> Fraction:
    """ε(α) = αρ: ρ-zCDP is (α, αρ)-RDP for every α > 1 (Bun & Steinke 2016, Def. 1.1)."""
    r = parse_epsilon(rho, name="rho")
    return parse_alpha(alpha) * r


def gaussian_zcdp(sigma: Any, sensitivity: Any = 1) -> Fraction:
    """ρ = Δ²/(2σ²) of the Gaussian mechanism N(0, σ²) with L2-sensitivity Δ (Bun & Steinke
    2016, Prop. 1.6).  Exact."""
    s = parse_positive(sigma, name="sigma")
    d = parse_positive(sensitivity, name="sensitivity")
    return d * d / (2 * s * s)


def gaussian_rdp(sigma: Any, sensitivity: Any, alpha: Any) -> Fraction:
    """ε(α) = αΔ²/(2σ²) of the Gaussian mechanism (Mironov 2017, Table II).  Exact."""
    return parse_alpha(alpha) * gaussian_zcdp(sigma, sensitivity)


def discrete_gaussian_zcdp(sigma2: Any, sensitivity: Any = 1) -> Fraction:
    """ρ = Δ²/(2σ²) of the discrete Gaussian N_ℤ(0, σ²) with integer sensitivity Δ, for
    ``sigma2 = σ²`` (Canonne, Kamath, Steinke 2020, Thm. 4).  Exact."""
    s2 = parse_positive(sigma2, name="sigma2")
    d = parse_positive(sensitivity, name="sensitivity")
    if d.denominator != 1:
        raise InvalidParameter("the discrete Gaussian needs an integer sensitivity")
    return d * d / (2 * s2)


def laplace_rdp(scale: Any, sensitivity: Any, alpha: Any) -> Fraction:
    """Upper bound on the order-α Rényi DP of the (continuous) Laplace mechanism with scale
    ``b`` and L1-sensitivity Δ (Mironov 2017, Table II), for α > 1, with λ = b/Δ:

        ε(α) = 1/(α−1) · ln( α/(2α−1) · e^{(α−1)/λ} + (α−1)/(2α−1) · e^{−α/λ} ).

    Evaluated with upper brackets of every exponential and the logarithm, then rounded up."""
    b = parse_positive(scale, name="scale")
    d = parse_positive(sensitivity, name="sensitivity")
    a = parse_alpha(alpha)
    inv_lambda = d / b
    hi1 = exp_bracket((a - 1) * inv_lambda)[1]
    hi2 = exp_bracket(-a * inv_lambda)[1]
    inner_hi = a / (2 * a - 1) * hi1 + (a - 1) / (2 * a - 1) * hi2
    value = log_bracket(inner_hi)[1] / (a - 1)
    # D_α ≤ D_∞ = Δ/b: never report more than the pure-DP ε
    return min(ceil_fraction(max(value, Fraction(0)), ROUNDING_DENOMINATOR), inv_lambda)


def mechanism_zcdp(mechanism: Any) -> Fraction:
    """ρ for an odp mechanism, from its declared parameters (never from data):

    * :class:`odp.GaussianMechanism` (discrete Gaussian of variance ``sigma2_units`` in grid
      units, integer sensitivity ``units``): ρ = units²/(2·sigma2_units) (CKS 2020, Thm. 4);
    * any mechanism declaring pure ``DP(ε, 0)`` (Laplace, randomized response): ρ = ε²/2.
    """
    from .mechanisms.noise import GaussianMechanism  # local: mechanisms import samplers etc.

    if isinstance(mechanism, GaussianMechanism):
        return discrete_gaussian_zcdp(mechanism.sigma2_units, mechanism.units)
    guarantee = getattr(mechanism, "guarantee", None)
    delta = getattr(guarantee, "delta", None)
    sup = getattr(guarantee, "sup_epsilon", None)
    if guarantee is None or delta is None or sup is None:
        raise InvalidParameter(f"{mechanism!r} declares no guarantee to convert")
    if delta != 0:
        raise InvalidParameter(
            f"{mechanism!r} declares δ={delta} > 0: an (ε, δ)-DP guarantee does not imply "
            "zCDP; give the mechanism's own zCDP bound instead"
        )
    return pure_dp_to_zcdp(sup)

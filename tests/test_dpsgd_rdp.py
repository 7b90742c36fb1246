"""Rényi DP of DP-SGD's Poisson-subsampled discrete Gaussian step (odp.subsampled_rdp) and the
RDP composition of Lemma 11 (odp.composition.RDPComposition, ReplaceOneComposition).

The reference values are computed independently: the Rényi divergences of the discrete pair
``P = (1−q)μ_0 + qμ_v``, ``Q = μ_0`` (``μ_0 = N_ℤ(0, σ_u²)^{⊗d}``) by direct mpmath summation over
the integer lattice (50 digits; the truncated tails are below 1e-60), never by the formulas the
code evaluates."""

from __future__ import annotations

import itertools
from fractions import Fraction

import mpmath
import pytest

from odp.composition import (
    PrefixDeltaSum,
    RDPComposition,
    ReplaceOneComposition,
    StepSpec,
    iterative_guarantee,
    step_rdp,
)
from odp.errors import InvalidParameter
from odp.rdp import subsampled_gaussian_epsilon
from odp.subsampled_rdp import (
    INTEGER_ORDERS,
    discrete_gaussian_rdp,
    subsampled_discrete_gaussian_epsilon,
    subsampled_discrete_gaussian_rdp,
    zhu_wang_rdp,
)

mpmath.mp.dps = 50


def _pmf(sigma2, radius):
    """``N_ℤ(0, σ²)`` on ``[−radius, radius]`` (normalised over a wider range: the rest of the
    mass is below 1e-60 for the σ used here)."""
    s2 = mpmath.mpf(sigma2.numerator) / sigma2.denominator
    weights = {z: mpmath.exp(-mpmath.mpf(z * z) / (2 * s2)) for z in range(-radius, radius + 1)}
    total = sum(weights.values())
    return {z: w / total for z, w in weights.items()}


def exact_divergences(q, sigma2, v, alpha, radius=40):
    """``(D_α(P‖Q), D_α(Q‖P))`` of the subsampled discrete Gaussian pair, by summation."""
    pmf = _pmf(sigma2, radius + max(abs(c) for c in v))
    q = mpmath.mpf(q.numerator) / q.denominator
    a = mpmath.mpf(alpha.numerator) / alpha.denominator if isinstance(alpha, Fraction) \
        else mpmath.mpf(alpha)
    forward = backward = mpmath.mpf(0)
    for z in itertools.product(range(-radius, radius + 1), repeat=len(v)):
        q0 = mpmath.fprod(pmf[c] for c in z)
        qv = mpmath.fprod(pmf[c - s] for c, s in zip(z, v))
        p = (1 - q) * q0 + q * qv
        forward += p**a * q0 ** (1 - a)
        backward += q0**a * p ** (1 - a)
    return mpmath.log(forward) / (a - 1), mpmath.log(backward) / (a - 1)


@pytest.mark.parametrize("v", [(1, 0), (1, 1), (2, -1)])
def test_discrete_gaussian_moments_equal_the_continuous_ones_for_integer_shifts(v):
    """``E_Q[(μ_v/μ_0)^k] = e^{(k²−k)‖v‖²/(2σ_u²)}`` exactly for an integer shift (the identity
    behind the exact integer-order value), here with σ_u² = 3/2."""
    s2 = Fraction(3, 2)
    pmf = _pmf(s2, 60)
    for k in (2, 3, 4):
        moment = mpmath.fsum(
            mpmath.fprod(pmf[c] ** (1 - k) * pmf[c - s] ** k for c, s in zip(z, v))
            for z in itertools.product(range(-45, 46), repeat=2))
        norm2 = sum(c * c for c in v)
        expected = mpmath.exp(mpmath.mpf((k * k - k) * norm2) / (2 * mpmath.mpf(3) / 2))
        assert abs(moment / expected - 1) < mpmath.mpf(10) ** -40


CASES = [  # (q, σ, K, v with ‖v‖² ≤ K, d = len(v))
    (Fraction(1, 10), Fraction(1), 1, (1,)),
    (Fraction(1, 2), Fraction(3, 2), 4, (2,)),
    (Fraction(1, 2), Fraction(1), 4, (1,)),        # ‖v‖² < K: strictly below the bound
    (Fraction(1, 5), Fraction(1), 2, (1, 1)),
    (Fraction(1, 3), Fraction(1), 5, (2, -1)),
]


@pytest.mark.parametrize("q,sigma,k2,v", CASES)
def test_step_rdp_bounds_both_exact_directions_and_is_tight(q, sigma, k2, v):
    sigma2 = sigma * sigma * k2  # σ_u² = σ²K, as DPSGD draws it
    radius = 16 * (int(sigma2) + 1) ** 0.5  # the tails beyond: e^{-128} relative
    radius = int(radius) + 1
    for alpha in (2, 3, 5, 8):
        bound = subsampled_discrete_gaussian_rdp(q, sigma, alpha)
        forward, backward = exact_divergences(q, sigma2, v, alpha, radius)
        assert backward <= forward + mpmath.mpf(10) ** -30  # the symmetric-pair lemma
        assert forward <= mpmath.mpf(bound.numerator) / bound.denominator
        if sum(c * c for c in v) == k2:  # the worst shift: the bound is the exact value
            assert abs(mpmath.mpf(bound.numerator) / bound.denominator - forward) \
                < mpmath.mpf(10) ** -15 * forward
        # the cited general bound (Zhu & Wang 2019) is valid too, and never smaller
        general = zhu_wang_rdp(q, discrete_gaussian_rdp(sigma), alpha)
        assert general >= bound


def test_symmetric_pair_lemma_function_is_nonnegative():
    """``h(ℓ) = f(ℓ) + ℓf(1/ℓ) − g(ℓ) − ℓg(1/ℓ) ≥ 0`` for ℓ > 1 (module docstring of
    odp.subsampled_rdp), on a grid of ℓ, q and real α > 1; ``h = 0`` at q = 1."""
    for alpha in ("1.01", "1.5", "2", "3.7", "8", "40"):
        a = mpmath.mpf(alpha)
        for qv in ("0.0001", "0.01", "0.3", "0.5", "0.9", "1"):
            q = mpmath.mpf(qv)
            for ell in [mpmath.mpf(1) + mpmath.mpf(10) ** e for e in range(-6, 7)]:
                f = lambda x: (1 - q + q * x) ** a  # noqa: E731
                g = lambda x: (1 - q + q * x) ** (1 - a)  # noqa: E731
                h = f(ell) + ell * f(1 / ell) - g(ell) - ell * g(1 / ell)
                scale = f(ell) + ell * f(1 / ell)
                if qv == "1":
                    assert abs(h) <= mpmath.mpf(10) ** -40 * scale
                else:
                    assert h >= -mpmath.mpf(10) ** -40 * scale


def test_unsubsampled_step_is_the_multivariate_discrete_gaussian_zcdp():
    """q = 1: α/(2σ²) exactly (CKS 2020, Thm. 14, one draw per coordinate)."""
    for alpha in (2, 7, 64):
        assert subsampled_discrete_gaussian_rdp(1, "1.1", alpha) == Fraction(alpha) / (
            2 * Fraction(11, 10) ** 2)
    # and it matches the exact divergence of the unsubsampled pair
    forward, backward = exact_divergences(Fraction(1), Fraction(4), (2,), 3)
    assert abs(forward - mpmath.mpf(3) / 2) < mpmath.mpf(10) ** -30
    assert abs(backward - mpmath.mpf(3) / 2) < mpmath.mpf(10) ** -30


def test_issue_example_against_the_continuous_gaussian():
    """q = 0.01, σ = 1.1, T = 10⁴, δ = 1e-5: the discrete step at integer orders gives
    ε ≈ 5.6543; the continuous sampled Gaussian (MTZ, fractional orders too) 5.6320
    (dp-accounting: 5.632): the gap, 0.022, is only the orders' grid.  Zhu & Wang's general
    bound gives ≈ 6.079."""
    eps, order = subsampled_discrete_gaussian_epsilon("0.01", "1.1", 10_000, "1e-5")
    continuous, _ = subsampled_gaussian_epsilon("0.01", "1.1", 10_000, "1e-5")
    assert 5.654 < float(eps) < 5.655 and order == 5
    assert 5.631 < float(continuous) < 5.633
    assert 0 < float(eps - continuous) < 0.023
    # the continuous at the same integer orders gives the same ε (equal values)
    same, _ = subsampled_gaussian_epsilon("0.01", "1.1", 10_000, "1e-5", orders=INTEGER_ORDERS)
    assert same == eps


def test_zhu_wang_general_bound_for_the_issue_example():
    from odp.conversions import best_rdp_to_dp
    from odp.guarantees import RDP

    base = discrete_gaussian_rdp("1.1")
    curve = [RDP(a, 10_000 * zhu_wang_rdp("0.01", base, a)) for a in INTEGER_ORDERS]
    eps = best_rdp_to_dp(curve, "1e-5")[0]
    assert 6.07 < float(eps) < 6.09


def test_integer_orders_only_and_bad_inputs():
    with pytest.raises(InvalidParameter, match="integer"):
        subsampled_discrete_gaussian_rdp("0.1", 1, "2.5")
    for q in (0, "-0.1", "1.5", "nan", None):
        with pytest.raises(InvalidParameter):
            subsampled_discrete_gaussian_rdp(q, 1, 2)
    for s in (0, -1, "inf"):
        with pytest.raises(InvalidParameter):
            subsampled_discrete_gaussian_rdp("0.1", s, 2)
    with pytest.raises(InvalidParameter):
        subsampled_discrete_gaussian_rdp("0.1", 1, 2, steps=10**13)
    with pytest.raises(InvalidParameter):
        zhu_wang_rdp("0.1", lambda a: -1, 3)


# ----------------------------------------------------------------- RDP composition as COMP

STEP = StepSpec("1", "1e-9", {"mechanism": "subsampled_discrete_gaussian", "q": "1/50",
                              "sigma": "2"})


def test_rdp_composition_delta_is_the_conversion_at_the_best_order():
    comp = RDPComposition()
    steps = [STEP] * 300
    eps = Fraction(1)
    got = comp.delta_upper(steps, eps)
    # independent: min over the orders of e^{(α−1)(ε_α − ε)}(α−1)^{α−1}/α^α, in mpmath
    best = min(
        mpmath.exp((a - 1) * (mpmath.mpf(300 * subsampled_discrete_gaussian_rdp("1/50", 2, a)
                                         .numerator) / subsampled_discrete_gaussian_rdp(
            "1/50", 2, a).denominator - 1)) * mpmath.mpf(a - 1) ** (a - 1) / mpmath.mpf(a) ** a
        for a in INTEGER_ORDERS)
    assert best <= mpmath.mpf(got.numerator) / got.denominator <= best * (1 + mpmath.mpf(10) ** -15)
    # epsilon_upper inverts it: δ(ε(δ)) ≤ δ, and a slightly smaller ε needs more δ
    target = Fraction(1, 10**6)
    e = comp.epsilon_upper(steps, target)
    assert comp.delta_upper(steps, e) <= target
    assert comp.delta_upper(steps, e - Fraction(1, 1000)) > target


def test_rdp_composition_mixes_step_kinds_and_refuses_unknown_ones():
    comp = RDPComposition(orders=[2, 3, 10])
    pure = StepSpec("1/10", 0)
    gauss = StepSpec("1", "1e-6", {"mechanism": "gaussian", "sigma": "3", "sensitivity": "2"})
    curve = comp.curve([pure, gauss, gauss, STEP])
    for a in (2, 3, 10):
        expected = (min(Fraction(1, 10), Fraction(a, 200)) + 2 * Fraction(a * 4, 18)
                    + subsampled_discrete_gaussian_rdp("1/50", 2, a))
        assert curve[Fraction(a)] == expected
    assert step_rdp(StepSpec("1", 0, {"mechanism": "subsampled_gaussian", "q": "1/50",
                                       "sigma": "2"}), 3) == subsampled_discrete_gaussian_rdp(
        "1/50", 2, 3)
    with pytest.raises(InvalidParameter, match="RDP composition needs"):
        comp.curve([StepSpec("1", "1e-6")])
    with pytest.raises(InvalidParameter, match="does not know"):
        comp.curve([StepSpec("1", 0, {"mechanism": "laplace", "scale": "1"})])
    with pytest.raises(InvalidParameter, match="integer"):
        RDPComposition(orders=["2.5"]).curve([STEP])


def test_replace_one_is_group_privacy_of_two_add_remove_steps():
    inner = RDPComposition()
    comp = ReplaceOneComposition(inner)
    steps = [STEP] * 100
    eps = Fraction(2)
    half_delta = inner.delta_upper(steps, Fraction(1))
    got = comp.delta_upper(steps, eps)
    e = mpmath.e
    assert abs(got - (1 + e) * mpmath.mpf(half_delta.numerator) / half_delta.denominator) \
        < mpmath.mpf(10) ** -30
    target = Fraction(1, 10**6)
    e_rep = comp.epsilon_upper(steps, target)
    assert comp.delta_upper(steps, e_rep) <= target
    assert e_rep > 2 * inner.epsilon_upper(steps, target)  # (1 + e^ε) δ costs some ε


def test_lemma11_with_rdp_per_stop_deltas_add_up():
    comp = RDPComposition()
    stops = [50, 100, 150]
    steps = [STEP] * 150
    costs = [comp.epsilon_upper(steps[:k], Fraction(1, 3 * 10**6)) for k in stops]
    g, details = iterative_guarantee(stops, steps, costs, PrefixDeltaSum(comp))
    per_stop = PrefixDeltaSum(comp).per_stop(stops, steps, costs)
    assert g.delta == sum(per_stop) <= Fraction(1, 10**6)
    assert list(g.costs.values()) == costs and costs == sorted(costs)
    assert details["rule"]["composition"]["name"] == "rdp"

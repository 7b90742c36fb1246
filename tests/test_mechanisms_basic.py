"""Declared guarantees of the basic mechanisms, checked against their exact output
distributions (log-space exact for pure DP; high-precision sums for the Gaussian), and a
deliberately wrong claim that the same check rejects."""

from __future__ import annotations

import math
from collections import Counter
from fractions import Fraction

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import odp
from odp.errors import InvalidParameter
from odp.mechanisms import BOTTOM, value_or_bottom


def _laplace_claim_holds(mech, a, b, epsilon_claim, window=60):
    """Pointwise exact check of p(y) ≤ e^ε q(y) for the discrete Laplace on the grid, where
    p, q are the release distributions for query values a and b.  The normalisers are equal,
    so it is an inequality between rational exponents."""
    na, nb = mech.grid_value(a), mech.grid_value(b)
    t = mech.scale_units
    for y in range(min(na, nb) - window, max(na, nb) + window):
        if -abs(y - na) / t > epsilon_claim - abs(y - nb) / t:
            return False
    return True


@settings(max_examples=200, deadline=None)
@given(
    a=st.fractions(min_value=-50, max_value=50, max_denominator=1000),
    shift=st.fractions(min_value=-1, max_value=1, max_denominator=997),
    g=st.sampled_from([Fraction(1, 1000), Fraction(1, 7), Fraction(1, 3), Fraction(1)]),
)
def test_laplace_on_grid_is_epsilon_dp(a, shift, g):
    mech = odp.LaplaceMechanism(lambda v: v, epsilon="0.5", sensitivity=1, granularity=g)
    b = a + shift  # neighbours: |f(x) − f(x')| ≤ Δ = 1
    assert abs(mech.grid_value(a) - mech.grid_value(b)) <= mech.units
    assert _laplace_claim_holds(mech, a, b, mech.epsilon)
    assert _laplace_claim_holds(mech, b, a, mech.epsilon)


def test_laplace_wrong_claim_is_detected():
    mech = odp.LaplaceMechanism(lambda v: v, epsilon="0.5", sensitivity=1)
    assert not _laplace_claim_holds(mech, Fraction(0), Fraction(1), mech.epsilon / 2)


@pytest.mark.parametrize("value", [Fraction(3, 7), Fraction(-5, 2)])
def test_laplace_release_draws_the_noise_the_exact_check_assumes(value):
    """``_laplace_claim_holds`` decides ε-DP for noise ``P(z) ∝ exp(−|z|/scale_units)`` with
    ``scale_units = units/ε``; this ties ``release()`` to that model: the noise it adds
    (release/g − n(x)) matches the model's pmf (chi-square, 3000 seeded draws).  A scale 4×
    too small fails it with p < 10⁻¹⁰⁰."""
    from gof_support import chi_square_pvalue, clamp, discrete_laplace_pmf

    mech = odp.LaplaceMechanism(lambda v: v, epsilon="1/2", sensitivity=1,
                                granularity=Fraction(1, 4))
    assert mech.units == 4 and mech.scale_units == Fraction(mech.units) / mech.epsilon == 8
    assert _laplace_claim_holds(mech, value, value + 1, mech.epsilon)
    center = mech.grid_value(value)
    rng = odp.SeededRandom(11)
    noise = []
    for _ in range(3000):
        out = mech.release(value, rng)
        assert (out / mech.granularity).denominator == 1  # on the grid g·ℤ
        noise.append(clamp(int(out / mech.granularity) - center, -40, 40))
    model = discrete_laplace_pmf(mech.scale_units, -40, 40)
    assert chi_square_pvalue(noise, model) > 1e-3


def test_toy_mechanism_odp_claim_exact_and_wrong_claim_fails():
    """M_toy: Pr[⊥] = 1/2 on every database, values follow the grid Laplace.  The output-wise
    ODP inequality (Def. 2) holds with ℰ(⊥) = 0, ℰ(values) = ε and δ = 0; charging ε/2 for
    values is violated."""
    toy = odp.ToyMechanism(lambda v: v, epsilon="0.4")
    assert toy.guarantee.costs == {"value": Fraction(2, 5), "bottom": 0}
    assert toy.guarantee.delta == 0 and value_or_bottom(BOTTOM) == "bottom"
    for a, b in [(Fraction(0), Fraction(1)), (Fraction(3, 7), Fraction(-4, 7))]:
        # ⊥ part: (1/2 − e^0 · 1/2)₊ = 0; values: the Laplace pointwise check (common factor 1/2)
        assert _laplace_claim_holds(toy.laplace, a, b, toy.guarantee.cost("value"))
    assert not _laplace_claim_holds(toy.laplace, Fraction(0), Fraction(1), Fraction(1, 5))


def test_toy_class_frequencies_match_exact_probabilities():
    toy = odp.ToyMechanism(lambda v: v, epsilon="1")
    rng = odp.SeededRandom(5)
    n = 4000
    bottoms = sum(toy.release(Fraction(3), rng) is BOTTOM for _ in range(n))
    assert stats.binomtest(bottoms, n, 0.5).pvalue > 1e-3


@pytest.mark.parametrize("k", [2, 3, 5])
def test_randomized_response_claim_exact_and_frequencies(k):
    """k-ary RR: P(o | truth a) = w^{[o ≠ a]} / (1 + (k − 1) w) with w = e^{−ε}.  The ε-DP claim
    is decided exactly with ``odp.exact`` on the family with a rational w (ε = ln(1/w)), the
    factor e^ε = 1/w folded into the second distribution; claiming ε/2 (factor 1/√w) fails.
    The sampler's frequencies match the same formula at the mechanism's own ε."""
    from odp.exact import FiniteDist, satisfies_odp_cost

    cats = tuple(range(k))
    w = Fraction(4, 9)  # √w = 2/3 is rational too, for the wrong claim
    z = 1 + (k - 1) * w
    law = {a: FiniteDist({o: (1 if o == a else w) / z for o in cats}) for a in cats}
    for a in cats:
        for b in cats:
            if a != b:
                scaled = {o: law[b][o] / w for o in cats}
                assert satisfies_odp_cost(law[a], scaled, lambda o: 0, 0)
                wrong = {o: law[b][o] * Fraction(3, 2) for o in cats}
                assert not satisfies_odp_cost(law[a], wrong, lambda o: 0, 0)
    eps = Fraction(7, 10)
    rr = odp.RandomizedResponse(lambda v: v, epsilon=eps, categories=cats)
    rng = odp.SeededRandom(9)
    n = 6000
    counts = Counter(rr.release(0, rng) for _ in range(n))
    zf = 1 + (k - 1) * math.exp(-float(eps))
    expected = [n / zf if o == 0 else n * math.exp(-float(eps)) / zf for o in cats]
    assert stats.chisquare([counts[o] for o in cats], expected).pvalue > 1e-3


def test_gaussian_noise_multiplier_is_sigma_over_sensitivity():
    a = odp.GaussianMechanism(lambda v: v, epsilon="1", noise_multiplier=3, sensitivity=2)
    b = odp.GaussianMechanism(lambda v: v, epsilon="1", sigma=6, sensitivity=2)
    assert a.sigma2_units == b.sigma2_units and a.guarantee == b.guarantee
    with pytest.raises(InvalidParameter):
        odp.GaussianMechanism(lambda v: v, epsilon="1", noise_multiplier=3, sigma=6)


def _exact_discrete_gaussian_delta(eps, sigma2, m):
    mpmath.mp.dps = 40
    s2 = mpmath.mpf(sigma2.numerator) / sigma2.denominator
    f = lambda y: mpmath.exp(-mpmath.mpf(y) ** 2 / (2 * s2))  # noqa: E731
    n = int(60 * mpmath.sqrt(s2)) + 10 * m + 50
    z = 1 + 2 * mpmath.fsum(f(y) for y in range(1, n))
    e = mpmath.mpf(eps.numerator) / eps.denominator
    a = e * s2 / m - mpmath.mpf(m) / 2
    b = e * s2 / m + mpmath.mpf(m) / 2
    tail = lambda c: mpmath.fsum(f(y) for y in range(int(mpmath.floor(c)) + 1, n))  # noqa: E731
    return (tail(a) - mpmath.exp(e) * tail(b)) / z


@pytest.mark.parametrize("eps, delta", [("1", "1e-5"), ("0.5", "1e-6"), ("2", "1e-3")])
def test_gaussian_declared_delta_bounds_the_exact_delta(eps, delta):
    g = odp.GaussianMechanism(lambda v: v, epsilon=eps, delta=delta, granularity=1)
    true_delta = _exact_discrete_gaussian_delta(Fraction(eps), g.sigma2_units, g.units)
    declared = g.guarantee.delta
    assert true_delta <= mpmath.mpf(declared.numerator) / declared.denominator
    # calibration is tight: the declared δ is used, and half of it would be a false claim
    assert true_delta > mpmath.mpf(declared.numerator) / declared.denominator / 2


def test_gaussian_with_given_sigma_declares_an_upper_bound():
    g = odp.GaussianMechanism(lambda v: v, epsilon="1", sigma=3, granularity=Fraction(1, 4))
    true_delta = _exact_discrete_gaussian_delta(Fraction(1), g.sigma2_units, g.units)
    d = g.guarantee.delta
    assert true_delta <= mpmath.mpf(d.numerator) / d.denominator <= true_delta * (1 + mpmath.mpf("1e-6"))
    with pytest.raises(InvalidParameter):
        odp.GaussianMechanism(lambda v: v, epsilon="1", sigma=3, delta="1e-9")


def test_analytic_gaussian_upper_bound_matches_balle_wang():
    from odp.gaussian_dp import analytic_gaussian_delta_upper

    mpmath.mp.dps = 40
    for eps, sigma in [(1, 4), (Fraction(1, 2), 2), (3, Fraction(3, 4))]:
        e, s = mpmath.mpf(Fraction(eps).numerator) / Fraction(eps).denominator, mpmath.mpf(Fraction(sigma).numerator) / Fraction(sigma).denominator
        exact = mpmath.ncdf(1 / (2 * s) - e * s) - mpmath.exp(e) * mpmath.ncdf(-1 / (2 * s) - e * s)
        up = analytic_gaussian_delta_upper(eps, sigma)
        assert exact <= mpmath.mpf(up.numerator) / up.denominator <= exact * (1 + mpmath.mpf("1e-6"))


@pytest.mark.parametrize("make", [
    lambda: odp.LaplaceMechanism(lambda v: v, epsilon=0),
    lambda: odp.LaplaceMechanism(lambda v: v, epsilon=1, sensitivity=-1),
    lambda: odp.LaplaceMechanism("not callable", epsilon=1),
    lambda: odp.GaussianMechanism(lambda v: v, epsilon=1),
    lambda: odp.GaussianMechanism(lambda v: v, epsilon=1, delta=0),
    lambda: odp.RandomizedResponse(lambda v: v, epsilon=1, categories=(1, 1)),
])
def test_bad_mechanism_parameters(make):
    with pytest.raises(odp.InvalidParameter):
        make()


def test_release_of_non_finite_query_value_fails_cleanly():
    acc = odp.Accountant(1)
    mech = odp.LaplaceMechanism(lambda v: float("nan"), epsilon="0.1")
    with pytest.raises(InvalidParameter):
        acc.run(mech, None)
    assert acc.last_round.reason == "failed"  # the reservation existed: charged at sup


def _toy_output_distribution(center: int, r: Fraction, lo: int, hi: int) -> dict:
    """Exact output law of M_toy with discrete-Laplace noise P[Z=z] ∝ r^{|z|} on the grid ℤ
    (r = e^{−1/t}; a rational r is the scale t = 1/ln(1/r) of the same mechanism family):
    ⊥ with probability 1/2, else center + Z.  The points left of ``lo`` and right of ``hi``
    are aggregated into two tail outcomes with exact geometric sums (valid for the ODP check
    below because the likelihood ratio is constant on each tail when ``lo ≤`` both centres
    ``≤ hi``)."""
    norm = (1 - r) / (1 + r)  # Σ_z r^{|z|} = (1 + r)/(1 − r)
    half = Fraction(1, 2)
    out: dict = {"⊥": half}
    for y in range(lo, hi + 1):
        out[y] = half * norm * r ** abs(y - center)
    out["left"] = half * norm * r ** (center - lo + 1) / (1 - r)
    out["right"] = half * norm * r ** (hi + 1 - center) / (1 - r)
    assert sum(out.values()) == 1
    return out


@pytest.mark.parametrize("r", [Fraction(1, 2), Fraction(2, 3), Fraction(9, 10)])
def test_toy_mechanism_odp_checked_exactly_with_odp_exact(r):
    """M_toy (Hartmann et al. 2022, Sec. 1) on neighbours with query values 0 and 1 (Δ = 1): the
    declared ODP guarantee {values: ε, ⊥: 0}, δ = 0, with e^ε = 1/r (ε = ln(1/r)), decided exactly
    by ``odp.exact`` with the factors e^{ℰ} folded into the second distribution.  Charging values
    as little as ⊥ is detected as violated by the same check."""
    from odp.exact import FiniteDist, satisfies_odp_cost

    p = FiniteDist(_toy_output_distribution(0, r, -6, 7))
    q = FiniteDist(_toy_output_distribution(1, r, -6, 7))

    def folded(dist, value_factor):
        return {o: w * (1 if o == "⊥" else value_factor) for o, w in dist.items()}

    for a, b in ((p, q), (q, p)):
        assert satisfies_odp_cost(a, folded(b, 1 / r), lambda o: 0, 0)  # declared claim
        assert not satisfies_odp_cost(a, folded(b, 1), lambda o: 0, 0)  # values charged 0
    # the ⊥ class alone costs nothing: subset DP on {⊥} with ε = 0, δ = 0
    assert p["⊥"] == q["⊥"]

"""Finite output spaces by construction and readable releases, for the grid mechanisms of
``odp.mechanisms.noise`` (Laplace, Gaussian, M_toy).

* The release is ``g·clamp(n(x) + Z, lo, hi)``: the clamp happens exactly at the window's
  edges, after the noise; a user window is snapped outward to the grid; bad windows are refused.
* The clamped release distribution is compared with its exact model
  (:func:`odp.mechanisms.window.clamped_laplace_law`, exact rationals for a rational noise
  parameter): the ε-DP / ODP claims hold on it (decided by ``odp.exact``) and a deliberately
  wrong claim fails; ``release()`` matches the model (chi-square), and a tiny window's edge is
  hit with the tail mass the model predicts (and not with the unclamped point mass).
* The default windows: for every query value ``|f(x)| ≤ 2¹²⁸·Δ`` clamping changes the release
  with probability below ``2⁻¹⁸³`` (rigorous bound, checked against mpmath's tail).
* Releases are :class:`odp.readable.ExactValue`: equal to the exact ``Fraction``, printed as
  its exact decimal (``4.717``) or as ``n/d`` when it has none.
"""

from __future__ import annotations

import copy
import decimal
import math
import pickle
from fractions import Fraction

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import odp
from odp.errors import InvalidParameter
from odp.exact import FiniteDist, satisfies_odp_cost
from odp.mechanisms import BOTTOM
from odp.mechanisms.window import (
    COVERED_SENSITIVITIES,
    Window,
    clamped_laplace_law,
    noise_margin,
    sigma_upper,
)
from odp.readable import MAX_DECIMAL_DIGITS, ExactValue, decimal_text, readable

TWO_POW_MINUS_183 = Fraction(1, 2**183)


def _identity(v):
    return v


# ------------------------------------------------------------------ readable releases


def test_a_laplace_count_prints_as_a_short_exact_decimal():
    acc = odp.Accountant("1", rng=odp.SeededRandom(3))
    count = odp.LaplaceMechanism(lambda rows: len(rows), epsilon="0.3", sensitivity=1)
    release = acc.run(count, [23, 41, 37, 52, 29, 61, 44])
    assert isinstance(release, ExactValue) and isinstance(release, Fraction)
    assert release.denominator in (1, 2, 4, 5, 8, 10, 20, 25, 40, 50, 100, 125, 200, 250, 500,
                                   1000)  # on the default grid Δ/1000
    text = str(release)
    assert text == repr(release) == f"{release}"
    assert "/" not in text and len(text.partition(".")[2]) <= 3
    assert Fraction(decimal.Decimal(text)) == release
    assert Fraction(text) == release


@pytest.mark.parametrize("value, text", [
    (Fraction(4717, 1000), "4.717"), (Fraction(-1, 2), "-0.5"), (Fraction(12), "12"),
    (Fraction(0), "0"), (Fraction(-3, 1024), "-0.0029296875"), (Fraction(1, 3), "1/3"),
    (Fraction(-7, 6), "-7/6"), (Fraction(1, 2**100), f"1/{2**100}"),
    (Fraction(10**40 + 1, 10), "1" + "0" * 38 + "0.1"),
])
def test_decimal_text_is_exact_and_short(value, text):
    assert decimal_text(value) == text
    assert Fraction(text) == value


@settings(max_examples=300, deadline=None)
@given(st.fractions(max_denominator=10**6) | st.builds(
    lambda n, a, b: Fraction(n, 2**a * 5**b), st.integers(-10**12, 10**12),
    st.integers(0, 40), st.integers(0, 40)))
def test_decimal_text_never_rounds(value):
    """Every printed form parses back to the same rational; a decimal is printed only when
    the expansion terminates within MAX_DECIMAL_DIGITS digits."""
    text = decimal_text(value)
    assert Fraction(text) == value
    if "/" not in text:
        assert len(text.partition(".")[2]) <= MAX_DECIMAL_DIGITS
        assert Fraction(decimal.Decimal(text)) == value  # exact: Decimal → Fraction


def test_exact_value_behaves_as_the_fraction_it_is():
    v = readable(Fraction(4717, 1000))
    f = Fraction(4717, 1000)
    assert v == f and hash(v) == hash(f) and v < 5 and sorted([5, v, 1]) == [1, v, 5]
    total = v + Fraction(3, 1000)
    assert total == Fraction(472, 100) and type(total) is Fraction  # arithmetic: a Fraction
    assert v * 2 == Fraction(4717, 500) and -v == -f and abs(-v) == f and float(v) == 4.717
    assert {f: "x"}[v] == "x"
    for clone in (pickle.loads(pickle.dumps(v)), copy.copy(v), copy.deepcopy(v)):
        assert clone == v and type(clone) is ExactValue and str(clone) == "4.717"
    assert readable(v) is v and str(readable(7)) == "7"


def test_every_fraction_release_is_readable():
    rng = odp.SeededRandom(2)
    assert isinstance(odp.GaussianMechanism(_identity, epsilon=1, delta="1e-6").release(
        Fraction(3), rng), ExactValue)
    toy = odp.ToyMechanism(_identity, epsilon=1)
    values = [toy.release(Fraction(3), rng) for _ in range(20)]
    assert any(v is BOTTOM for v in values)
    assert all(isinstance(v, ExactValue) for v in values if v is not BOTTOM)
    median = odp.mechanisms.ExponentialMedian(epsilon=1, lower=0, upper=1, candidates=3)
    assert str(median.release([Fraction(1, 2)] * 5, rng)) in ("0", "0.5", "1")
    third = odp.mechanisms.ExponentialMedian(epsilon=1, lower=0, upper=1, candidates=4)
    assert str(third.release([Fraction(1, 3)] * 5, rng)) in ("0", "1/3", "2/3", "1")


# ------------------------------------------------------------------ clamping at the edges


def test_clamping_happens_exactly_at_the_window_edges():
    """window=(0, 10) with g = 1: a query far above the window always releases exactly 10, far
    below exactly 0, and every release lies in {0, 1, …, 10}."""
    mech = odp.LaplaceMechanism(_identity, epsilon="1/2", granularity=1, window=(0, 10))
    assert mech.window == Window(0, 10) and mech.params()["window"] == ["0", "10"]
    rng = odp.SeededRandom(5)
    assert {mech.release(10**6, rng) for _ in range(50)} == {10}
    assert {mech.release(-(10**6), rng) for _ in range(50)} == {0}
    seen = {mech.release(5, rng) for _ in range(400)}
    assert seen <= set(range(11)) and {0, 10} <= seen
    for value in seen:
        assert isinstance(value, ExactValue) and value.denominator == 1


def test_a_user_window_is_snapped_outward_to_the_grid():
    mech = odp.LaplaceMechanism(_identity, epsilon=1, granularity="1/4", window=("-0.3", "2.6"))
    assert mech.window == Window(-2, 11)  # ⌊−0.3·4⌋ = −2, ⌈2.6·4⌉ = 11
    assert mech.params()["window"] == ["-0.5", "2.75"]
    gauss = odp.GaussianMechanism(_identity, epsilon=1, sigma=2, window=(0, 1))
    assert gauss.window == Window(0, 1000)  # default grid Δ/1000
    assert odp.ToyMechanism(_identity, epsilon=1, window=(0, 1)).laplace.window == Window(0, 1000)


@pytest.mark.parametrize("window", [
    (5, 5), (6, 5), (1,), (1, 2, 3), "ab", 7, ("a", 1), (float("nan"), 1), (0, float("inf")),
    (None, 1), (True, 3), ("1/0", 2),
])
def test_bad_windows_are_refused_with_a_typed_error(window):
    for make in (lambda: odp.LaplaceMechanism(_identity, epsilon=1, window=window),
                 lambda: odp.GaussianMechanism(_identity, epsilon=1, sigma=1, window=window),
                 lambda: odp.ToyMechanism(_identity, epsilon=1, window=window)):
        with pytest.raises(InvalidParameter):
            make()


def test_a_window_is_public_and_recorded_in_the_ledger(tmp_path):
    acc = odp.Accountant("1", ledger=tmp_path / "l.db", rng=odp.SeededRandom(1))
    acc.run(odp.LaplaceMechanism(len, epsilon="0.1", window=(0, 100)), [1, 2, 3])
    acc.run(odp.LaplaceMechanism(len, epsilon="0.1"), [1, 2, 3])
    user, default = (r.params["window"] for r in acc.ledger.rounds())
    assert user == ["0", "100"]
    n = COVERED_SENSITIVITIES * 1000 + noise_margin(Fraction(1000) / Fraction(1, 10))
    assert default == [decimal_text(Fraction(-n, 1000)), decimal_text(Fraction(n, 1000))]


# ------------------------------------------------------------------ the default windows


def test_default_window_covers_two_to_the_128_sensitivities():
    """Δ = 3, g = 1/2 (m = 6): N = 2¹²⁸·6 + ⌈128·t⌉; the query value 2¹²⁸·Δ sits exactly K =
    ⌈128·t⌉ grid units inside the edge, so clamping needs |Z| ≥ K + 1 > 128·t."""
    mech = odp.LaplaceMechanism(_identity, epsilon="1/3", sensitivity=3, granularity="1/2")
    assert mech.units == 6 and mech.scale_units == 18
    k = noise_margin(mech.scale_units)
    assert k == 128 * 18
    assert mech.window == Window(-(2**128 * 6 + k), 2**128 * 6 + k)
    top, bottom = COVERED_SENSITIVITIES * 3, -COVERED_SENSITIVITIES * 3
    assert mech.window.hi - mech.grid_value(top) == k
    assert mech.grid_value(bottom) - mech.window.lo == k
    release = mech.release(top, odp.SeededRandom(4))
    assert abs(release - top) < 50 * 18 / 2  # an ordinary noisy value, not clamped


@settings(max_examples=60, deadline=None)
@given(eps=st.fractions(min_value=Fraction(1, 10**6), max_value=100, max_denominator=10**6),
       sens=st.fractions(min_value=Fraction(1, 1000), max_value=10**6, max_denominator=1000),
       per=st.sampled_from([None, Fraction(1, 7), Fraction(3), Fraction(10**6)]))
def test_laplace_default_clamp_probability_is_below_two_to_minus_183(eps, sens, per):
    """The rigorous bound 2·e^{−(K+1)/t} of :meth:`LaplaceMechanism.clamp_bound` is below
    2⁻¹⁸³, and it bounds the true P(|Z| ≥ K + 1) = 2·r^{K+1}/(1 + r) (mpmath, 100 digits)."""
    g = None if per is None else sens / per
    mech = odp.LaplaceMechanism(_identity, epsilon=eps, sensitivity=sens, granularity=g)
    bound = mech.clamp_bound()
    assert bound < TWO_POW_MINUS_183
    with mpmath.workdps(100):  # the two differ by the factor 1/(1 + r), r as small as 1e-40
        t = mpmath.mpf(mech.scale_units.numerator) / mech.scale_units.denominator
        r = mpmath.exp(-1 / t)
        k = noise_margin(mech.scale_units) + 1
        assert 2 * r**k / (1 + r) <= mpmath.mpf(bound.numerator) / bound.denominator


@pytest.mark.parametrize("kwargs", [
    dict(epsilon=1, delta="1e-6"), dict(epsilon="0.01", delta="1e-9", granularity="1e-3"),
    dict(epsilon=1, sigma="1e90"), dict(epsilon=1, sigma="1e-5", sensitivity="1e-6", granularity="1e-8"),
    dict(epsilon=2, sigma=3, granularity="1/4"),
])
def test_gaussian_default_clamp_probability_is_below_two_to_minus_100(kwargs):
    mech = odp.GaussianMechanism(_identity, **kwargs)
    bound = mech.clamp_bound()
    assert bound < Fraction(1, 2**11000)
    margin = noise_margin(sigma_upper(mech.sigma2_units))
    assert mech.window.hi == COVERED_SENSITIVITIES * mech.units + margin
    assert sigma_upper(mech.sigma2_units) ** 2 >= mech.sigma2_units


def test_gaussian_clamp_bound_dominates_the_exact_tail():
    """σ² = 9/4 grid units: the true P(|Z| > K) (mpmath, summed) is below the closed-form bound
    2·e^{−k²/(2σ²)}·(1 + σ²/k) for several margins, including ones far smaller than the
    default (where both are visible numbers)."""
    from gof_support import discrete_gaussian_pmf
    from odp.mechanisms.window import gaussian_clamp_bound

    sigma2 = Fraction(9, 4)
    with mpmath.workdps(60):
        pmf = discrete_gaussian_pmf(sigma2)
        for margin in (0, 1, 3, 6, 20, noise_margin(sigma_upper(sigma2))):
            true = 2 * mpmath.fsum(pmf(z) for z in range(margin + 1, margin + 400))
            bound = gaussian_clamp_bound(sigma2, margin)
            assert true <= mpmath.mpf(bound.numerator) / bound.denominator
        assert gaussian_clamp_bound(sigma2, noise_margin(sigma_upper(sigma2))) < Fraction(
            1, 2**11000)


# ------------------------------------------------------------------ the exact clamped model


R = Fraction(1, 2)  # P(z) ∝ r^{|z|}: the discrete Laplace family with e^{1/scale} = 2


def test_clamped_model_is_a_distribution_with_the_tails_on_the_edges():
    w = Window(-2, 3)
    for center in range(-8, 9):
        law = clamped_laplace_law(center, R, w)
        assert set(law) == set(range(-2, 4)) and sum(law.values()) == 1
        assert all(isinstance(p, Fraction) and p > 0 for p in law.values())
    # the view lumps the outputs outside it
    full = clamped_laplace_law(1, R, Window(-40, 40))
    view = clamped_laplace_law(1, R, Window(-40, 40), view=(0, 2))
    assert view["<"] == sum(p for y, p in full.items() if y < 0)
    assert view[">"] == sum(p for y, p in full.items() if y > 2)
    assert sum(view.values()) == 1


@pytest.mark.parametrize("m", [1, 2, 3])
def test_clamped_laplace_is_epsilon_dp_exactly_and_a_wrong_claim_fails(m):
    """Query values ``a`` and ``b`` with ``|a − b| ≤ m`` grid units (neighbours), every centre
    inside, at and beyond the tiny window [−2, 3]: the clamped laws satisfy ε-DP with
    ``e^ε = r^{−m}`` (integer sensitivity m, scale m/ε), decided exactly by ``odp.exact`` with
    the factor folded in.  Claiming ε·(m−1)/m (factor r^{−(m−1)}) is violated."""
    w = Window(-2, 3)
    laws = {c: FiniteDist(clamped_laplace_law(c, R, w)) for c in range(-10, 12)}
    zero = lambda _o: Fraction(0)  # noqa: E731
    wrong_found = False
    for a in range(-6, 8):
        for b in range(a - m, a + m + 1):
            p, q = laws[a], laws[b]
            assert satisfies_odp_cost(p, {o: q[o] * R ** (-m) for o in q}, zero, 0)
            if not satisfies_odp_cost(p, {o: q[o] * R ** (-(m - 1)) for o in q}, zero, 0):
                wrong_found = True
    assert wrong_found


def test_clamped_toy_mechanism_odp_exact_and_wrong_claim_fails():
    """M_toy with a clamped Laplace on [−1, 2]: ⊥ with probability 1/2 on every database,
    values charged ε (factor r^{−1}, m = 1), ⊥ charged 0 — decided exactly; charging values 0
    is violated."""
    w = Window(-1, 2)
    half = Fraction(1, 2)

    def law(center):
        return FiniteDist({"⊥": half, **{y: half * p for y, p in
                                          clamped_laplace_law(center, R, w).items()}})

    def folded(dist, factor):
        return {o: p * (1 if o == "⊥" else factor) for o, p in dist.items()}

    zero = lambda _o: Fraction(0)  # noqa: E731
    for a in range(-4, 6):
        for b in (a - 1, a + 1):
            assert satisfies_odp_cost(law(a), folded(law(b), 1 / R), zero, 0)
    assert not satisfies_odp_cost(law(0), folded(law(1), 1), zero, 0)


def test_laplace_release_matches_the_clamped_model_and_hits_the_edges_with_the_tail_mass():
    """A tiny window [−1, 2] (query units, g = 1/2: grid units [−2, 4]) around the query value 0
    at the mechanism's own scale t = m/ε = 2 (r = e^{−1/2}): 4000 seeded releases follow the
    clamped law (chi-square), the lower edge is hit with P(Z ≤ −2) = r²/(1 + r) ≈ 0.230 and
    the upper with P(Z ≥ 4) = r⁴/(1 + r) ≈ 0.084 (exact binomial tests) — while the unclamped
    point masses (≈ 0.087 and ≈ 0.012) are rejected."""
    from gof_support import binomial_pvalue, chi_square_pvalue

    mech = odp.LaplaceMechanism(_identity, epsilon=1, sensitivity=1, granularity="1/2",
                                window=(-1, 2))
    assert mech.units == 2 and mech.scale_units == 2 and mech.window == Window(-2, 4)
    with mpmath.workdps(30):
        r = mpmath.exp(-mpmath.mpf(1) / 2)
        model = clamped_laplace_law(0, r, mech.window)
        c = (1 - r) / (1 + r)
        unclamped_lo, unclamped_hi = c * r**2, c * r**4
    rng = odp.SeededRandom(21)
    n = 4000
    units = [int(mech.release(0, rng) * 2) for _ in range(n)]
    assert set(units) <= set(range(-2, 5))
    assert chi_square_pvalue(units, model) > 1e-3
    for edge, wrong in ((-2, unclamped_lo), (4, unclamped_hi)):
        hits = units.count(edge)
        assert binomial_pvalue(hits, n, model[edge]) > 1e-3
        assert binomial_pvalue(hits, n, wrong) < 1e-10


def test_gaussian_release_matches_the_clamped_model_and_its_delta_still_holds():
    """Discrete Gaussian (g = 1, Δ = 1) calibrated to (1, 10⁻³), clamped to [−2, 3]: 4000 seeded
    releases follow the clamped law (chi-square; mpmath) and hit the upper edge with its tail
    mass.  On a window of ±12σ the clamped laws of neighbours (centres 0, 1) satisfy the
    declared δ(ε) — Σ_o (p(o) − e^ε q(o))₊ ≤ δ, both ways — and half the declared δ is
    violated (the calibration is tight, and clamping so far out does not change it)."""
    from gof_support import (binomial_pvalue, chi_square_pvalue, clamped_law,
                             discrete_gaussian_pmf)

    mech = odp.GaussianMechanism(_identity, epsilon=1, delta="1e-3", granularity=1,
                                 window=(-2, 3))
    with mpmath.workdps(40):
        pmf = discrete_gaussian_pmf(mech.sigma2_units)
        reach = 60 * sigma_upper(mech.sigma2_units) + 60
        model = clamped_law(pmf, 0, -2, 3, reach)
        assert abs(mpmath.fsum(model.values()) - 1) < mpmath.mpf(10) ** -30
        rng = odp.SeededRandom(8)
        n = 4000
        seen = [int(mech.release(0, rng)) for _ in range(n)]
        assert set(seen) <= set(range(-2, 4))
        assert chi_square_pvalue(seen, model) > 1e-3
        assert binomial_pvalue(seen.count(3), n, model[3]) > 1e-3
        assert binomial_pvalue(seen.count(3), n, pmf(3)) < 1e-10  # the unclamped point mass

        wide = math.ceil(12 * math.sqrt(mech.sigma2_units))
        declared = mech.guarantee.delta
        e_eps = mpmath.e ** 1
        laws = [clamped_law(pmf, c, -wide, wide, reach) for c in (0, 1)]
        for p, q in (laws, laws[::-1]):
            excess = mpmath.fsum(max(p[o] - e_eps * q[o], 0) for o in p)
            assert excess <= mpmath.mpf(declared.numerator) / declared.denominator
            assert excess > mpmath.mpf(declared.numerator) / declared.denominator / 2

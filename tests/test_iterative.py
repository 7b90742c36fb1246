"""Iterative mechanisms with early stopping (Hartmann et al. 2022, Alg. 3, Lemma 11) and the
composition rules of odp.composition.

Exact check: the steps are the generalised randomized response of Lemma 12 (outputs 0..3,
``Pr(0 | b=0) = δ_k``, ``Pr(1 | b=0) = (1−δ_k)W/(1+W)``, …) with rational W = 2, so every output
probability of Alg. 3 is rational.  Each step is (ln 2, δ_k)-DP, declared as (7/10, δ_k)
(7/10 > ln 2 ≈ 0.6931).  The exact distribution of the sequence of outputs up to the stop is
enumerated from Alg. 3's definition and the declared guarantee is decided by odp.exact."""

from __future__ import annotations

import math
from collections import Counter
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

import odp
from odp.composition import (
    BasicComposition,
    BucketsComposition,
    OptimalDelta,
    PrefixDeltaSum,
    StepSpec,
    basic_costs,
    iterative_guarantee,
    output_length,
)
from odp.errors import InvalidParameter
from odp.exact import FiniteDist, satisfies_odp
from odp.mechanisms.iterative import IterativeMechanism, NoisyGradientDescent, logistic_gradients

W = Fraction(2)
EPS = Fraction(7, 10)


def rr_pmf(bit, delta):
    """Lemma 12's M̃_{(ln W, δ)} on input bit b."""
    p = [delta, (1 - delta) * W / (1 + W), (1 - delta) / (1 + W), Fraction(0)]
    return p if bit == 0 else p[::-1]


def rr_sample(bit, delta, rng):
    u = rng.randbelow(2**62)  # exact: compare a uniform integer with the rational CDF
    acc = Fraction(0)
    for out, pr in enumerate(rr_pmf(bit, delta)):
        acc += pr
        if Fraction(u, 2**62) < acc:
            return out
    return 3


def stop_after_zero_or_three(history):
    """An adversarial stopping rule: stop as soon as a δ-output (0 or 3) was seen."""
    return any(o in (0, 3) for o in history)


def exact_alg3(bit, stops, deltas, rule):
    """The exact output distribution of Alg. 3 with Lemma-12 steps on database ``bit``."""
    out = {}

    def walk(history, prob):
        k = len(history)
        if k == stops[-1] or (k in stops[:-1] and rule(history)):
            out[history] = out.get(history, Fraction(0)) + prob
            return
        for o, pr in enumerate(rr_pmf(bit, deltas[k])):
            if pr:
                walk(history + (o,), prob * pr)

    walk((), Fraction(1))
    return FiniteDist(out)


CASES = [
    ((1, 2), [Fraction(1, 20)] * 2),
    ((1, 3), [Fraction(1, 10), Fraction(1, 50), Fraction(1, 10)]),
    ((2, 3, 4), [Fraction(1, 300)] * 4),
]


@pytest.mark.parametrize("stops,deltas", CASES)
def test_lemma11_basic_composition_exact(stops, deltas):
    steps = [StepSpec(EPS, d) for d in deltas]
    mech = IterativeMechanism(lambda h, x, r: 0, stops=stops, steps=steps,
                              stopping_rule=stop_after_zero_or_three)
    g = mech.guarantee
    assert g.costs == {k: k * EPS for k in stops}
    assert g.delta == sum(sum(deltas[:k]) for k in stops)  # Σ_i Σ_{k≤k_i} δ_k
    p0 = exact_alg3(0, stops, deltas, stop_after_zero_or_three)
    p1 = exact_alg3(1, stops, deltas, stop_after_zero_or_three)
    assert sum(p0.values()) == 1
    for p, q in ((p0, p1), (p1, p0)):
        assert satisfies_odp(p, q, partition=output_length, costs=g.costs, delta=g.delta)
        # wrong claims: (a) the δ of the first prefix only, (b) one step less per class
        assert not satisfies_odp(p, q, partition=output_length, costs=g.costs, delta=sum(deltas[:stops[0]]))
        assert not satisfies_odp(p, q, partition=output_length, costs={k: (k - 1) * EPS for k in stops}, delta=g.delta)


@pytest.mark.parametrize("stops,deltas", CASES)
def test_optdel_delta_is_valid_and_smaller(stops, deltas):
    steps = [StepSpec(EPS, d) for d in deltas]
    g_opt, _ = iterative_guarantee(stops, steps, rule=OptimalDelta())
    g_l11, _ = iterative_guarantee(stops, steps)
    assert g_opt.delta < g_l11.delta
    p0 = exact_alg3(0, stops, deltas, stop_after_zero_or_three)
    p1 = exact_alg3(1, stops, deltas, stop_after_zero_or_three)
    assert satisfies_odp(p0, p1, partition=output_length, costs=g_opt.costs, delta=g_opt.delta)
    assert satisfies_odp(p1, p0, partition=output_length, costs=g_opt.costs, delta=g_opt.delta)


def test_class_frequencies_of_the_implementation_match_alg3():
    stops, deltas = (1, 3), [Fraction(1, 5), Fraction(1, 10), Fraction(1, 10)]
    steps = [StepSpec(EPS, d) for d in deltas]

    def step(history, bit, rng):
        return rr_sample(bit, deltas[len(history)], rng)

    mech = IterativeMechanism(step, stops=stops, steps=steps,
                              stopping_rule=stop_after_zero_or_three)
    exact = exact_alg3(0, stops, deltas, stop_after_zero_or_three)
    p_stop1 = exact.prob(lambda o: len(o) == 1)
    rng = odp.SeededRandom(2)
    n = 4000
    lengths = Counter(len(mech.release(0, rng)) for _ in range(n))
    assert set(lengths) <= {1, 3}
    assert stats.binomtest(lengths[1], n, float(p_stop1)).pvalue > 1e-3


def test_early_stop_is_charged_its_prefix_through_the_accountant():
    steps = StepSpec("1/10", 0)
    stop_at_five = IterativeMechanism(lambda h, x, r: len(h), stops=[5, 10, 20], steps=steps,
                                      stopping_rule=lambda h: len(h) >= 5)
    acc = odp.Accountant("3")
    out = acc.run(stop_at_five, None)
    rec = acc.last_round
    assert out == (0, 1, 2, 3, 4)
    assert rec.label == 5 and rec.charged == Fraction(1, 2) and rec.sup_epsilon == 2
    assert rec.refund == Fraction(3, 2)
    assert acc.remaining.epsilon == Fraction(5, 2)


# ------------------------------------------------------------------ composition rules


def test_basic_composition_and_its_refusal():
    steps = [StepSpec("0.1", "1e-6")] * 4
    assert BasicComposition().delta_upper(steps, Fraction(2, 5)) == Fraction(4, 10**6)
    with pytest.raises(InvalidParameter):
        BasicComposition().delta_upper(steps, Fraction(3, 10))
    assert basic_costs([2, 4], steps) == [Fraction(1, 5), Fraction(2, 5)]
    assert PrefixDeltaSum().per_stop([2, 4], steps, [Fraction(1, 5), Fraction(2, 5)]) == [
        Fraction(2, 10**6), Fraction(4, 10**6)]


def test_buckets_composition_is_an_upper_bound_of_the_exact_pure_dp_composition():
    """k steps of (ε, 0)-DP randomized response compose to the exact δ(ε') of Kairouz et al.;
    the privacy-buckets COMP must bound it from above, and be below the trivial bound."""
    eps = Fraction(1, 2)
    k = 4
    steps = [StepSpec(eps, 0)] * k
    target = Fraction(1)
    bound = BucketsComposition().delta_upper(steps, target)
    # exact δ(ε') of k-fold ε-RR: Σ_i C(k,i) (p^{k-i} q^i − e^{ε'} p^i q^{k-i})₊, p = e^ε/(1+e^ε)
    e = math.exp(float(eps))
    p, q = e / (1 + e), 1 / (1 + e)
    exact = sum(max(math.comb(k, i) * (p ** (k - i) * q**i - math.exp(1) * p**i * q ** (k - i)), 0)
                for i in range(k + 1))
    assert exact <= float(bound) <= exact + 1e-3


def test_step_spec_validation_and_json():
    s = StepSpec("0.5", "1e-6", {"mechanism": "gaussian", "sigma": "2", "sensitivity": "1"})
    assert s.to_json()["mechanism"]["sigma"] == "2"
    assert StepSpec("1/2").worst_case_spec() == {"mechanism": "approximate_dp",
                                                 "epsilon": "1/2", "delta": "0"}
    for bad in (lambda: StepSpec("-1"), lambda: StepSpec("1", "1"),
                lambda: StepSpec("1", 0, {"sigma": 1})):
        with pytest.raises(InvalidParameter):
            bad()


@pytest.mark.parametrize("kwargs", [
    {"stops": []}, {"stops": [3, 2]}, {"stops": [0, 2]}, {"stops": [2], "steps": [StepSpec(1)]},
    {"stops": [1, 2], "costs": ["1"]}, {"stops": [1], "costs": ["1/2"]},
])
def test_bad_iterative_parameters(kwargs):
    args = {"stops": [1], "steps": StepSpec(1)}
    args.update(kwargs)
    with pytest.raises(InvalidParameter):
        IterativeMechanism(lambda h, x, r: 0, **args)


# ------------------------------------------------------------------ noisy gradient descent


def test_noisy_gradient_step_is_epsilon_dp_on_the_grid():
    """The integer vector of the gridded mean gradient moves by at most ``units`` in L1 norm
    when one record is replaced (the claim behind the per-step ε), on random data."""
    rng = np.random.default_rng(0)
    n, d = 40, 5
    mech = NoisyGradientDescent(n=n, dim=d, epsilon_step="1/10", stops=[3])
    x = rng.normal(size=(n, d))
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    w = rng.normal(size=d)

    base = mech.grid_gradient(w, x, y)  # the mechanism's own code path
    worst = 0
    for i in range(n):
        x2, y2 = x.copy(), y.copy()
        x2[i] = rng.normal(size=d) * 10
        y2[i] = -y2[i]
        worst = max(worst, sum(abs(a - b) for a, b in zip(base, mech.grid_gradient(w, x2, y2))))
    assert 0 < worst <= mech.units
    assert mech.guarantee.costs[3] == Fraction(3, 10) and mech.guarantee.delta == 0


def test_noisy_gradient_release_draws_the_noise_of_the_step_guarantee():
    """Each step is ε_k-DP because the integer mean-gradient vector moves by at most ``units``
    in L1 norm (test above) and every coordinate gets discrete Laplace noise
    ``P(z) ∝ exp(−ε_k|z|/units)``.  This ties ``release()`` to that model, computed from the
    declared ε_k and ``units`` (not from the attribute the release reads): the noise of each
    released coordinate, ``g̃_j/g − u_j``, matches its pmf (chi-square, 1000 seeded one-step
    releases × d = 3 coordinates).  A noise scale 4× too small fails with p < 10⁻¹⁰⁰."""
    from gof_support import chi_square_pvalue, clamp, discrete_laplace_pmf

    rng = np.random.default_rng(4)
    n, d = 8, 3
    x = rng.normal(size=(n, d))
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    mech = NoisyGradientDescent(n=n, dim=d, epsilon_step="1/2", stops=[1],
                                granularity=Fraction(1, 8))
    assert mech.units == 6  # ⌈(2C*/n + …)/g⌉ + d = ⌈2 + tiny⌉ + 3
    model_scale = Fraction(mech.units) / mech.epsilon_step
    centre = mech.grid_gradient(np.zeros(d), x, y)
    seeded = odp.SeededRandom(12)
    noise = []
    for _ in range(1000):
        out = mech.release((x, y), seeded)
        assert len(out) == 1
        for value, u in zip(out.steps[0], centre):
            units = Fraction(float(value)) / mech.granularity
            assert units.denominator == 1  # on the grid (exact in float64 here)
            noise.append(clamp(int(units) - u, -70, 70))
    assert chi_square_pvalue(noise, discrete_laplace_pmf(model_scale, -70, 70)) > 1e-3


def test_noisy_gd_stops_early_and_refunds_on_separable_data():
    rng = np.random.default_rng(1)
    n, d = 400, 3
    x = np.hstack([rng.uniform(-1, 1, size=(n, 2)), np.ones((n, 1))])
    y = np.where(x[:, 0] + 0.3 * x[:, 1] > 0, 1.0, -1.0)
    mech = NoisyGradientDescent(n=n, dim=d, epsilon_step="1/5", stops=list(range(10, 101, 10)),
                                learning_rate=4.0, regularization=1e-2, stop_threshold=0.05,
                                window=10)
    acc = odp.Accountant("25", rng=odp.SeededRandom(3))
    out = acc.run(mech, (x, y))
    rec = acc.last_round
    assert output_length(out) == rec.label < 100
    assert rec.charged == Fraction(rec.label, 5) and rec.refund == 20 - rec.charged
    assert np.mean(np.sign(x @ out.weights) == y) > 0.9


def _clipped_row_above_the_clip(d: int, clip: float) -> tuple[np.ndarray, Fraction]:
    """A feature row whose clipped gradient at w = 0 (label −1), as computed in floats, has the
    largest exact L1 norm among 600 random rows — above ``clip`` (float clipping overshoots)."""
    rows = np.random.default_rng(0).uniform(1, 3, size=(600, d))
    grads = logistic_gradients(np.zeros(d), rows, -np.ones(len(rows)), clip)
    norms = [sum((Fraction(float(v)) for v in g), Fraction(0)) for g in grads]
    best = max(range(len(rows)), key=norms.__getitem__)
    return rows[best], norms[best]


def test_noisy_gradient_units_cover_adversarial_float_rounding():
    """Every record sits at the clip boundary with the same gradient a (whose float norm
    overshoots C); the neighbour flips record 0's label, which negates its gradient exactly.
    The column sums n·a and (n−2)·a are rounded by fsum; n is chosen so that they round in
    opposite directions on as many coordinates as possible, and the grid g = 1/(n·2⁶⁰) is so
    fine that every float error shows in the integer vectors.  The exact-arithmetic
    sensitivity ⌈(2C/n)/g⌉ + d is then exceeded; the declared ``units`` is not."""
    d, clip = 16, 1
    row, norm = _clipped_row_above_the_clip(d, float(clip))
    assert norm > clip  # the float clipping overshoots C
    a = [Fraction(float(v)) for v in logistic_gradients(np.zeros(d), row[None, :],
                                                        -np.ones(1), float(clip))[0]]

    def rounding_excess(n):  # Σ_j (fl(n a_j) − n a_j) + ((n−2) a_j − fl((n−2) a_j))
        return sum((Fraction(float(n * v)) - n * v) + ((n - 2) * v - Fraction(float((n - 2) * v)))
                   for v in a)

    n = max(range(4000, 4400), key=rounding_excess)
    k = 2**60
    mech = NoisyGradientDescent(n=n, dim=d, epsilon_step="1/10", stops=[1], clip=clip,
                                granularity=Fraction(1, n * k))
    x = np.tile(row, (n, 1))
    y = -np.ones(n)
    y_flip = y.copy()
    y_flip[0] = 1.0
    w = np.zeros(d)
    mean, mean_flip = mech.mean_gradient(w, x, y), mech.mean_gradient(w, x, y_flip)
    moved = sum(abs(p - q) for p, q in zip(mean, mean_flip))
    assert Fraction(2 * clip, n) < moved <= mech.sensitivity
    grid, grid_flip = mech.grid_gradient(w, x, y), mech.grid_gradient(w, x, y_flip)
    moved_units = sum(abs(p - q) for p, q in zip(grid, grid_flip))
    exact_arithmetic_units = math.ceil(Fraction(2 * clip, n) / mech.granularity) + d
    assert exact_arithmetic_units < moved_units <= mech.units
    # the rounding was realised: the excess over 2‖a‖₁ is what the fsum roundings added
    assert moved - 2 * norm / n == rounding_excess(n) / n > 0


def test_noisy_gd_wrong_shapes_are_refused_before_the_reservation():
    mech = NoisyGradientDescent(n=5, dim=2, epsilon_step="1/10", stops=[2])
    for data in [(np.zeros((4, 2)), np.ones(4)),        # n differs
                 (np.zeros((5, 3)), np.ones(5)),        # dim differs
                 (np.zeros((5, 2)), np.ones(4)),        # labels differ
                 (np.zeros((5, 2)),),                   # not a (features, labels) pair
                 ([[0, 1], [1], [2, 3], [4, 5], [6, 7]], np.ones(5))]:  # ragged
        acc = odp.Accountant("1")
        with pytest.raises(InvalidParameter):
            acc.run(mech, data)
        assert acc.history == [] and acc.remaining.epsilon == 1  # nothing charged or recorded


@pytest.mark.parametrize("labels", [
    np.array([0.0, 1.0, 1.0, 0.0, 1.0]),   # sklearn-style 0/1 labels
    np.array([1.0, -1.0, 2.0, 1.0, 1.0]),
    np.array([1.0, -1.0, np.nan, 1.0, 1.0]),
    ["a", "b", "c", "d", "e"],
])
def test_noisy_gd_labels_outside_the_record_domain_are_refused_for_free(labels):
    """Labels are ±1 (the declared record domain): anything else is refused by check_public,
    before the accountant reserves the round, and again by a direct release."""
    mech = NoisyGradientDescent(n=5, dim=2, epsilon_step="1/10", stops=[2])
    x = np.ones((5, 2))
    acc = odp.Accountant("1")
    with pytest.raises(InvalidParameter, match="-1 or \\+1"):
        acc.run(mech, (x, labels))
    assert acc.history == [] and acc.last_round is None and acc.remaining.epsilon == 1
    with pytest.raises(InvalidParameter):
        mech.release((x, labels), odp.SeededRandom(0))


@pytest.mark.parametrize("name,value", [
    ("learning_rate", "abc"), ("learning_rate", None), ("learning_rate", float("nan")),
    ("learning_rate", float("inf")), ("learning_rate", 0), ("learning_rate", -1.0),
    ("learning_rate", True), ("learning_rate", "1e400"),
    ("regularization", "abc"), ("regularization", None), ("regularization", float("nan")),
    ("regularization", -1e-3), ("regularization", float("-inf")),
    ("stop_threshold", "x"), ("stop_threshold", None), ("stop_threshold", float("nan")),
    ("stop_threshold", -0.1), ("stop_threshold", float("inf")),
])
def test_noisy_gd_hyperparameters_must_be_finite_with_their_sign(name, value):
    with pytest.raises(InvalidParameter) as info:
        NoisyGradientDescent(n=5, dim=2, epsilon_step="1/10", stops=[2], **{name: value})
    assert name in str(info.value)


def test_noisy_gd_hyperparameters_accept_numbers_and_decimal_strings():
    mech = NoisyGradientDescent(n=5, dim=2, epsilon_step="1/10", stops=[2], learning_rate="0.5",
                                regularization=0, stop_threshold=np.float32(0.25))
    assert (mech.learning_rate, mech.regularization, mech.stop_threshold) == (0.5, 0.0, 0.25)
    assert all(type(v) is float for v in (mech.learning_rate, mech.regularization,
                                          mech.stop_threshold))


def test_noisy_gd_non_finite_records_contribute_nothing():
    n, d = 6, 2
    x = np.ones((n, d))
    y = -np.ones(n)
    mech = NoisyGradientDescent(n=n, dim=d, epsilon_step="1/10", stops=[1])
    x_bad = x.copy()
    x_bad[2] = [np.nan, 1.0]
    x_bad[4] = [np.inf, -np.inf]
    w = np.zeros(d)
    clean = mech.contributions(w, x, y)
    bad = mech.contributions(w, x_bad, y)
    assert np.all(bad[[2, 4]] == 0) and np.array_equal(np.delete(bad, [2, 4], 0),
                                                        np.delete(clean, [2, 4], 0))
    acc = odp.Accountant("1", rng=odp.SeededRandom(0))
    out = acc.run(mech, (x_bad, y))  # released, no data-dependent failure after the reservation
    assert len(out) == 1 and acc.last_round.reason == "released"


def test_noisy_gd_accepts_numpy_integers_and_stops():
    mech = NoisyGradientDescent(n=np.int64(5), dim=np.int32(2), epsilon_step="1/10",
                                stops=[np.int64(2), 4], window=np.int64(2))
    assert (mech.n, mech.dim, mech.stops, mech.window) == (5, 2, (2, 4), 2)
    assert all(type(v) is int for v in (mech.n, mech.dim, mech.window, *mech.stops))


def test_one_stopping_point_parser():
    from odp.composition import parse_stops
    from odp.optdel import problem

    assert problem.parse_stops is parse_stops  # OptDel uses the same parser
    assert parse_stops([np.int64(3), 7]) == (3, 7)
    for bad in ([True, 2], [2, 2], [0], [], "12", [1.0]):
        with pytest.raises(InvalidParameter):
            parse_stops(bad)


def test_noisy_gd_rejects_wrong_shapes():
    mech = NoisyGradientDescent(n=5, dim=2, epsilon_step="1/10", stops=[2])
    with pytest.raises(InvalidParameter):
        mech.release((np.zeros((4, 2)), np.ones(4)), odp.SeededRandom(0))
    for bad in ({"n": 0}, {"epsilon_step": "0"}, {"clip": 0}, {"window": 0}, {"window": True},
                {"dim": 2.0}, {"n": 10**300, "clip": 10**10}):
        args = {"n": 5, "dim": 2, "epsilon_step": "1/10", "stops": [2]}
        args.update(bad)
        with pytest.raises(InvalidParameter):
            NoisyGradientDescent(**args)


# ------------------------------------------------------------------ finite output spaces


def test_noisy_gd_window_covers_every_mean_gradient_and_clamps_with_negligible_probability():
    """The gradient window [−N, N], N = U + ⌈s·(128 + ℓ)⌉: every gridded mean-gradient
    coordinate has |u_j| ≤ U on every database — here the extreme one, where every record's
    clipped gradient puts its whole L1 norm C on one coordinate — and the clamp changes a run's
    release with probability below 2⁻¹⁸³ (rigorous bound).  The window is in the params."""
    n, d = 12, 3
    mech = NoisyGradientDescent(n=n, dim=d, epsilon_step="1/10", stops=[5, 10],
                                granularity=Fraction(1, 64))
    x = np.zeros((n, d))
    x[:, 1] = 1e6  # huge first-coordinate margins are clipped to L1 norm C on coordinate 1
    y = -np.ones(n)
    units = mech.grid_gradient(np.zeros(d), x, y)
    assert units[1] == mech.clip / mech.granularity == 64  # |mean| = C exactly, in grid units
    assert abs(units[1]) <= mech.covered_units == 66
    assert mech.grid_window.hi == mech.covered_units + mech.grid_margin
    assert mech.grid_margin == math.ceil(mech.noise_scale * (128 + (10 * d).bit_length()))
    assert mech.clamp_bound() < Fraction(1, 2**183)
    lo, hi = mech.params()["grid_window"]
    assert (Fraction(lo), Fraction(hi)) == (Fraction(mech.grid_window.lo, 64),
                                            Fraction(mech.grid_window.hi, 64))


def test_noisy_gd_clamps_each_coordinate_after_the_noise_at_the_window_edges():
    """With its (public) window replaced by a tiny one around the gradient, the released
    coordinates follow the clamped law clamp(u_j + Z_j) of each coordinate (chi-square, 1000
    seeded one-step releases per coordinate), the edges carrying the tails — and not the
    unclamped point masses (binomial test)."""
    from gof_support import binomial_pvalue, chi_square_pvalue

    from odp.mechanisms.window import Window, clamped_laplace_law

    rng = np.random.default_rng(4)
    n, d = 8, 3
    x = rng.normal(size=(n, d))
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    mech = NoisyGradientDescent(n=n, dim=d, epsilon_step="1/2", stops=[1],
                                granularity=Fraction(1, 8))
    centre = mech.grid_gradient(np.zeros(d), x, y)
    mech.grid_window = Window(min(centre) - 5, max(centre) + 5)
    r = math.exp(-float(mech.epsilon_step / mech.units))  # scale units/ε
    seeded = odp.SeededRandom(12)
    columns = [[] for _ in range(d)]
    for _ in range(1000):
        (step,) = mech.release((x, y), seeded).steps
        for j, value in enumerate(step):
            columns[j].append(int(Fraction(float(value)) / mech.granularity))
    lo, hi = mech.grid_window.lo, mech.grid_window.hi
    for j, u in enumerate(centre):
        assert set(columns[j]) <= set(range(lo, hi + 1))
        model = clamped_laplace_law(u, r, mech.grid_window)
        assert chi_square_pvalue(columns[j], model) > 1e-3
        c = (1 - r) / (1 + r)
        hits = columns[j].count(hi)
        assert binomial_pvalue(hits, 1000, model[hi]) > 1e-3
        assert binomial_pvalue(hits, 1000, c * r ** (hi - u)) < 1e-6

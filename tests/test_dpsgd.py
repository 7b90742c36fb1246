"""DP-SGD (odp.mechanisms.dpsgd): exact noise, exact Poisson sampling, the exact sensitivity of
the integer contributions on adversarial records, the ODP claim of a tiny instance against its
exact output distribution, early stopping charged through an accountant, refusals of bad input,
and the example script.

The exact output distribution of a tiny instance (one parameter, two steps, q = 1/2, a public
window of ±8 grid units) is enumerated from the definition of the mechanism: every Poisson batch,
the mechanism's own integer contributions at the model the released history determines, and the
discrete Gaussian pmf — computed in mpmath at 60 digits and turned into rationals rounded up
(``p``) or down (``q``) by a relative 1e-45 so that each check errs on the safe side."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import mpmath
import numpy as np
import pytest
from scipy import stats

import odp
from odp.composition import output_length
from odp.errors import InvalidParameter
from odp.exact import satisfies_odp, tight_delta_upper
from odp.limits import Limits, ResourceLimitExceeded
from odp.mechanisms.dpsgd import (
    DPSGD,
    MAX_STEPS,
    LogisticRegressionModel,
    MLPModel,
    poisson_sample,
)

ROOT = Path(__file__).resolve().parents[1]
mpmath.mp.dps = 60


def _fraction(x):
    man, exp = mpmath.mpf(x).man_exp
    return Fraction(int(man)) * Fraction(2) ** int(exp)


def dg_pmf(sigma2, lo, hi):
    """``N_ℤ(0, σ²)`` on ``[lo, hi]`` (mpmath), normalised over ``[−M, M]`` with the rest of the
    mass below 1e-100."""
    s2 = mpmath.mpf(sigma2.numerator) / sigma2.denominator
    m = int(30 * math.sqrt(float(sigma2))) + max(abs(lo), abs(hi)) + 10
    w = {z: mpmath.exp(-mpmath.mpf(z * z) / (2 * s2)) for z in range(-m, m + 1)}
    total = mpmath.fsum(w.values())
    return {z: w[z] / total for z in range(lo, hi + 1)}, total, s2


# ------------------------------------------------------------------ the step's noise


def test_released_noise_is_the_exact_discrete_gaussian():
    """q = 1 (the batch is every record), one step: ``s − S`` is the noise of each coordinate.
    It matches ``N_ℤ(0, σ²K)`` (chi-square over 1000 seeded releases × 2 coordinates); a
    variance parameter 4× too small fails with p < 1e-10."""
    from gof_support import HIGH, LOW, chi_square_pvalue, clamp

    x = np.array([[0.5], [-2.0], [3.0]])
    y = np.array([1.0, -1.0, 1.0])
    mech = DPSGD(LogisticRegressionModel(1), n=3, sampling_rate=1, noise_multiplier=1,
                 epochs=1, delta="1e-3", clip=1, granularity="1/4")
    assert mech.sensitivity2 == 16 and mech.sigma2 == 16  # σ_u² = σ²·K
    centre = mech.grid_sum(np.zeros(2), x, y, np.arange(3))
    rng = odp.SeededRandom(5)
    noise = []
    for _ in range(1000):
        out = mech.release((x, y), rng)
        assert len(out) == 1
        noise += [clamp(int(s - c), -14, 14) for s, c in zip(out.steps[0], centre)]

    def model(sigma2):
        pmf, _, _ = dg_pmf(Fraction(sigma2), -14, 14)
        tail = (1 - mpmath.fsum(pmf.values())) / 2
        return {**{z: float(p) for z, p in pmf.items()}, LOW: float(tail), HIGH: float(tail)}

    order = [LOW, *range(-14, 15), HIGH]
    assert chi_square_pvalue(noise, model(16), order) > 1e-3
    assert chi_square_pvalue(noise, model(4), order) < 1e-10


# ------------------------------------------------------------------ Poisson sampling


@pytest.mark.parametrize("q", [Fraction(3, 7), Fraction(1, 100), Fraction(1, 2**62 + 1)])
def test_poisson_sampling_is_independent_bernoulli(q):
    rng = odp.SeededRandom(11)
    n, runs = 300, 400 if q.denominator < 2**62 else 4
    counts = np.zeros(n)
    sizes = []
    pair = 0
    for _ in range(runs):
        kept = poisson_sample(n, q, rng)
        assert np.all(np.diff(kept) > 0) and (len(kept) == 0 or 0 <= kept[0] <= kept[-1] < n)
        counts[kept] += 1
        sizes.append(len(kept))
        pair += (0 in kept) and (1 in kept)
    if q.denominator >= 2**62:
        assert sum(sizes) == 0  # q ≈ 2⁻⁶²: nothing is kept in 1200 draws (the Python path)
        return
    p = float(q)
    total = runs * n
    assert stats.binomtest(int(counts.sum()), total, p).pvalue > 1e-3
    # the batch size is Binomial(n, q): compare its mean and variance
    assert abs(np.mean(sizes) - n * p) < 5 * math.sqrt(n * p * (1 - p) / runs)
    # per-record frequencies: chi-square of the n counts against runs·q each
    if p * runs >= 5:
        chi = float(np.sum((counts - runs * p) ** 2 / (runs * p * (1 - p))))
        assert stats.chi2.sf(chi, n) > 1e-3
        assert stats.binomtest(pair, runs, p * p).pvalue > 1e-3  # records 0 and 1 independent


def test_poisson_sampling_edges():
    rng = odp.SeededRandom(0)
    assert list(poisson_sample(5, Fraction(1), rng)) == [0, 1, 2, 3, 4]
    assert len(poisson_sample(0, Fraction(1, 2), rng)) == 0
    with pytest.raises(InvalidParameter):
        poisson_sample(3, Fraction(3, 2), rng)


# ------------------------------------------------------------------ sensitivity


def _adversarial_records(dim, rng):
    x = rng.normal(size=(40, dim)) * 3
    x[0] = 1e300
    x[1] = np.nan
    x[2, 0] = np.inf
    x[3] = 5e-324  # subnormal
    x[4] = -0.0
    x[5] = 1e-160
    x[6, :] = 1e154  # the logistic gradient overflows to inf (the MLP's tanh saturates)
    y = np.where(rng.random(40) < 0.5, -1.0, 1.0)
    return x, y


@pytest.mark.parametrize("make_model", [lambda d: LogisticRegressionModel(d),
                                        lambda d: MLPModel(d, hidden=3, seed=4)])
def test_contributions_have_exact_norm_at_most_k_and_depend_on_their_record_only(make_model):
    rng = np.random.default_rng(1)
    dim = 4
    model = make_model(dim)
    mech = DPSGD(model, n=40, sampling_rate="1/4", noise_multiplier=1, epochs=1,
                 delta="1e-5", clip="0.5", granularity="1/64")
    x, y = _adversarial_records(dim, rng)
    params = rng.normal(size=model.num_params) * 3
    v = mech.grid_vectors(params, x, y)
    assert v.dtype == np.int64
    norms = [sum(int(c) * int(c) for c in row) for row in v]  # Python integers
    assert max(norms) <= mech.sensitivity2 == 32**2
    assert norms[1] == norms[2] == 0  # NaN / inf rows contribute nothing
    if isinstance(model, LogisticRegressionModel):
        assert norms[6] == 0  # an overflowed gradient too
    assert max(norms) > (32 - 2 * math.sqrt(model.num_params)) ** 2  # clipped rows keep ~C/g
    # a record's vector does not depend on the other rows, their number or its position
    for trial in range(5):
        rows = rng.permutation(40)[: 1 + trial * 7]
        again = mech.grid_vectors(params, x[rows], y[rows])
        assert np.array_equal(again, v[rows])
    # adding one record moves the exact integer sum by that record's vector, norm² ≤ K
    batch = np.arange(1, 40)
    for z in range(8):
        xz, yz = np.vstack([x[batch], x[z:z + 1]]), np.concatenate([y[batch], y[z:z + 1]])
        diff = (mech.grid_sum(params, xz, yz, np.arange(40))
                - mech.grid_sum(params, x, y, batch))
        assert np.array_equal(diff, v[z]) and int(np.sum(diff * diff)) <= mech.sensitivity2


def test_logistic_and_mlp_gradients_are_the_loss_gradients():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(5, 3))
    y = np.array([1.0, -1.0, 1.0, -1.0, 1.0])
    for model in (LogisticRegressionModel(3), MLPModel(3, hidden=2, seed=1)):
        params = rng.normal(size=model.num_params) * 0.5
        grads = model.gradients(params, x, y)
        for i in range(5):
            def loss(p):
                return math.log1p(math.exp(-y[i] * float(model.decision(p, x[i:i + 1])[0])))
            for j in range(model.num_params):
                e = np.zeros(model.num_params)
                e[j] = 1e-6
                numeric = (loss(params + e) - loss(params - e)) / 2e-6
                assert abs(numeric - grads[i, j]) < 1e-6


# ------------------------------------------------------------------ exact ODP of a tiny instance

TINY = dict(n=2, sampling_rate="1/2", noise_multiplier=1, epochs=2, steps_per_epoch=1,
            clip=1, granularity="1/2", window=8, learning_rate=0.5, stop_threshold=0.6)


def tiny(**kw):
    return DPSGD(LogisticRegressionModel(1, fit_intercept=False), **{**TINY, **kw})


def exact_release(mech, x, y, bias):
    """The exact law of the release's outputs ``(s_1, …)`` on records ``(x, y)``: probabilities
    rounded up (``bias = +1``) or down (``−1``) by a relative 1e-45."""
    window = mech.grid_window
    pmf, _, _ = dg_pmf(mech.sigma2, -3 * window.hi, 3 * window.hi)
    factor = 1 + bias * mpmath.mpf(10) ** -45
    q = mpmath.mpf(mech.q.numerator) / mech.q.denominator

    def step_law(params):
        v = [int(c) for c in mech.grid_vectors(params, x, y)[:, 0]]
        sums = {0: mpmath.mpf(1)}
        for vi in v:  # the Poisson batch: each record in with probability q
            nxt = {}
            for s, pr in sums.items():
                nxt[s] = nxt.get(s, 0) + pr * (1 - q)
                nxt[s + vi] = nxt.get(s + vi, 0) + pr * q
            sums = nxt
        law = {}
        for s, pr in sums.items():
            for out in range(window.lo, window.hi + 1):
                if out == window.lo:
                    mass = mpmath.fsum(pmf[z] for z in pmf if s + z <= out)
                elif out == window.hi:
                    mass = mpmath.fsum(pmf[z] for z in pmf if s + z >= out)
                else:
                    mass = pmf[out - s]
                law[out] = law.get(out, 0) + pr * mass
        return law

    out = {}

    def walk(history, params, prob):
        k = len(history)
        arrays = [np.array([s], dtype=np.int64) for s in history]
        if k == mech.stops[-1] or (k in mech.stops[:-1] and mech.stops_now(arrays)):
            out[history] = _fraction(prob * factor)
            return
        for s, pr in step_law(params).items():
            walk(history + (s,), mech.update(params, np.array([s], dtype=np.int64)), prob * pr)

    walk((), mech.model.initial_params(), mpmath.mpf(1))
    return out


# records: (feature, label); at w = 0 the first has v = −2, the others +2 / −1 / 0
R1, R2, R3, R4 = (3.0, 1.0), (5.0, -1.0), (1.0, 1.0), (0.0, 1.0)


def _data(*records):
    return (np.array([[r[0]] for r in records]).reshape(-1, 1),
            np.array([r[1] for r in records]))


def _check_pair(mech, a, b):
    """Def. 2 both ways for the databases ``a`` and ``b`` (exact, safe rounding), and returns the
    tight δ of the declared costs (an upper bound of it)."""
    g = mech.guarantee
    costs = g.costs
    pa_up, pb_up = exact_release(mech, *_data(*a), +1), exact_release(mech, *_data(*b), +1)
    pa_dn, pb_dn = exact_release(mech, *_data(*a), -1), exact_release(mech, *_data(*b), -1)
    tight = Fraction(0)
    for p, q in ((pa_up, pb_dn), (pb_up, pa_dn)):
        assert satisfies_odp(p, q, partition=len, costs=costs, delta=g.delta)
        tight = max(tight, tight_delta_upper(p, q, lambda o: costs[len(o)]))
    return tight, (pa_dn, pb_up, pb_dn, pa_up)


def test_tiny_instance_satisfies_its_odp_claim_exactly_and_a_too_small_claim_fails():
    mech = tiny(delta="1/100")
    assert mech.stops == (1, 2) and mech.sensitivity2 == 4 and mech.sigma2 == 4
    assert [int(v) for v in mech.grid_vectors(np.zeros(1), *_data(R1, R2, R3, R4))[:, 0]] \
        == [-2, 2, -1, 0]
    g = mech.guarantee
    assert g.delta == Fraction(1, 100) and g.costs[1] < g.costs[2]
    tight, (pa_dn, pb_up, pb_dn, pa_up) = _check_pair(mech, [R1], [R1, R2])  # add/remove
    assert tight <= g.delta
    assert {len(o) for o in pa_dn} == {1, 2}  # the rule stops after step 1 on some outputs
    # the RDP-based costs are conservative here: at 3/4 of them the exact δ is still < 1e-3
    three_quarters = {k: c * 3 / 4 for k, c in g.costs.items()}
    assert satisfies_odp(pb_up, pa_dn, partition=len, costs=three_quarters,
                         delta=Fraction(1, 1000))
    # deliberately wrong claims fail on the same exact distributions (rounded the other way):
    # the costs ÷ 3, and the costs of one step less (nothing for a stop after step 1)
    for wrong in ({k: c / 3 for k, c in g.costs.items()}, {1: Fraction(0), 2: g.costs[1]}):
        assert not satisfies_odp(pb_dn, pa_up, partition=len, costs=wrong, delta=g.delta)


def test_tiny_instance_other_neighbours_and_replace_one():
    mech = tiny(delta="1/100")
    for a, b in (([R2], [R2, R1]), ([], [R3]), ([R1, R3], [R1, R3, R2])):
        _check_pair(mech, a, b)
    rep = tiny(delta="1/100", neighbours="replace-one")
    assert rep.guarantee.costs[2] > 2 * mech.guarantee.costs[2] - Fraction(1, 10**6)
    _check_pair(rep, [R1, R3], [R2, R3])


def test_tiny_release_follows_the_exact_law():
    """The implementation's outputs have the exact law the check uses (chi-square on 2000
    seeded runs over the outcomes (length, s_1))."""
    from gof_support import chi_square_pvalue

    mech = tiny(delta="1/100")
    data = _data(R1, R2)
    law = exact_release(mech, *data, 0)
    model: dict = {}
    for o, p in law.items():
        key = (len(o), o[0])
        model[key] = model.get(key, 0) + float(p)
    rng = odp.SeededRandom(8)
    samples = []
    for _ in range(2000):
        r = mech.release(data, rng)
        samples.append((len(r), int(r.steps[0][0])))
    order = sorted(model, key=lambda k: (k[1], k[0]))
    assert chi_square_pvalue(samples, model, order) > 1e-3


# ------------------------------------------------------------------ accountant, early stopping


def _separable(n, dim, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, size=(n, dim))
    y = np.where(x[:, 0] + 0.5 * x[:, 1] > 0, 1.0, -1.0)
    return x, y


def test_early_stop_is_charged_the_epochs_it_ran_through_the_accountant(tmp_path):
    x, y = _separable(2000, 3)
    settings = dict(n=2000, sampling_rate="1/20", noise_multiplier=2, epochs=6, delta="1e-6",
                    learning_rate=2.0)
    noise = DPSGD(LogisticRegressionModel(3), **settings).noise_norm()
    mech = DPSGD(LogisticRegressionModel(3), **settings, stop_threshold=0.3 + noise)
    acc = odp.Accountant("10", "1e-5", ledger=tmp_path / "l.db", rng=odp.SeededRandom(2),
                         neighbours=odp.Neighbours.ADD_REMOVE)  # DP-SGD's relation
    fit = acc.run(mech, (x, y))
    rec = acc.last_round
    assert len(fit) < mech.stops[-1] and len(fit) in mech.stops  # stopped early, at an epoch end
    assert rec.charged == mech.cost(len(fit)) < rec.sup_epsilon == mech.cost(mech.stops[-1])
    assert rec.delta == Fraction(1, 10**6) and rec.label == len(fit)
    assert fit.accuracy(x, y) > 0.85
    json.dumps(rec.params)  # the ledger's record of the mechanism is JSON
    assert rec.params["neighbours"] == "add-remove" and rec.params["model"] == "logistic"
    # with a threshold that never fires, the run pays its worst case
    never = DPSGD(LogisticRegressionModel(3), **settings)
    acc.run(never, (x, y))
    assert acc.last_round.charged == acc.last_round.sup_epsilon
    acc.close()


def test_mlp_trains_and_stops():
    x, y = _separable(1500, 2, seed=5)
    settings = dict(n=1500, sampling_rate="1/15", noise_multiplier="1.5", epochs=8,
                    check_every=2, delta="1e-6", learning_rate=1.0)
    model = MLPModel(2, hidden=4, seed=2)
    noise = DPSGD(model, **settings).noise_norm()
    mech = DPSGD(model, **settings, stop_threshold=0.2 + noise)
    calls = []
    mech.progress = lambda done, total: calls.append((done, total))
    fit = mech.release((x, y), odp.SeededRandom(3))
    assert output_length(fit) == len(fit) in mech.stops
    assert calls[-1] == (len(fit), mech.stops[-1]) and len(calls) == len(fit)
    assert fit.accuracy(x, y) > 0.8


def test_add_remove_does_not_look_at_the_size_but_replace_one_does():
    x, y = _separable(50, 2)
    mech = DPSGD(LogisticRegressionModel(2), n=1000, sampling_rate="1/10", noise_multiplier=1,
                 epochs=1, delta="1e-5")
    mech.check_public((x, y))  # any number of rows: the size is private under add/remove
    mech.check_public((x[:0], y[:0]))
    assert len(mech.release((x[:0], y[:0]), odp.SeededRandom(0))) == 10  # empty data runs
    rep = DPSGD(LogisticRegressionModel(2), n=1000, sampling_rate="1/10", noise_multiplier=1,
                epochs=1, delta="1e-5", neighbours="replace-one")
    with pytest.raises(InvalidParameter, match="public"):
        rep.check_public((x, y))
    for bad in ((x[:, :1], y), (x, y[:-1]), (x, y * 2), (x,)):
        with pytest.raises(InvalidParameter):
            mech.check_public(bad)


def test_default_window_makes_the_clamp_negligible():
    mech = DPSGD(MLPModel(30, hidden=8), n=10**6, sampling_rate="1/1000", noise_multiplier=8,
                 epochs=1, delta="1e-6")
    assert mech.clamp_bound() < Fraction(1, 2**100)
    assert mech.grid_window.hi < 2**62 and mech.sensitivity2 == 2**32


# ------------------------------------------------------------------ bad input


def _build(**kw):
    base = dict(n=100, sampling_rate="1/10", noise_multiplier=1, epochs=2, delta="1e-5")
    return DPSGD(LogisticRegressionModel(2), **{**base, **kw})


@pytest.mark.parametrize("kw,match", [
    (dict(sampling_rate=0), "sampling rate"),
    (dict(sampling_rate="1.5"), "sampling rate"),
    (dict(sampling_rate="-0.1"), "sampling rate"),
    (dict(sampling_rate="nan"), "q"),
    (dict(noise_multiplier=0), "noise multiplier"),
    (dict(noise_multiplier=-1), "noise multiplier"),
    (dict(noise_multiplier=2**21), "noise multiplier"),
    (dict(epochs=10**9), "MAX_STEPS"),
    (dict(epochs=0), "epochs"),
    (dict(delta=0), "delta"),
    (dict(delta=1), "delta"),
    (dict(delta="-1e-5"), "delta"),
    (dict(delta="nan"), "delta"),
    (dict(granularity=2), "grid"),
    (dict(granularity="1e-9"), "grid"),
    (dict(window=0), "window"),
    (dict(neighbours="swap"), "neighbours"),
    (dict(learning_rate="inf"), "learning_rate"),
    (dict(n=0), "n"),
])
def test_bad_parameters_are_refused_before_anything_is_computed(kw, match, monkeypatch):
    from odp.composition import RDPComposition

    def boom(*a, **k):  # the accounting must not run for a refused configuration
        raise AssertionError("accounting ran")

    monkeypatch.setattr(RDPComposition, "epsilon_upper", boom)
    with pytest.raises(InvalidParameter, match=match) as info:
        _build(**kw)
    assert "\n" not in str(info.value)


def test_huge_runs_are_refused_by_the_limits_with_the_limit_named():
    with pytest.raises(ResourceLimitExceeded, match="max_memory") as info:
        DPSGD(MLPModel(100, hidden=64), n=10**6, sampling_rate="1/100", noise_multiplier=1,
              epochs=10_000, delta="1e-5")  # 10⁶ released vectors of 6529 int64 values
    assert info.value.estimate.memory > 50 * 2**30
    with pytest.raises(ResourceLimitExceeded, match="max_seconds") as info:
        DPSGD(LogisticRegressionModel(10), n=10**6, sampling_rate="1/100", noise_multiplier=1,
              epochs=100, delta="1e-5")  # 10⁴ steps, each sampling 10⁶ records
    assert info.value.estimate.seconds > 600
    with pytest.raises(ResourceLimitExceeded, match="max_seconds"):
        _build(limits=Limits(max_seconds=1), epochs=1000)
    assert MAX_STEPS == 10**7


# ------------------------------------------------------------------ the example script


def test_example_script_trains_and_reports_accuracy_and_epsilon():
    script = ROOT / "examples" / "dpsgd_breast_cancer.py"
    env = {"PYTHONPATH": str(ROOT / "python"), "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, str(script), "--seed", "3"], capture_output=True,
                          text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "logistic:" in out and "mlp:" in out
    accuracies = [float(a) for a in __import__("re").findall(r"test accuracy ([0-9.]+)%", out)]
    assert len(accuracies) == 2 and min(accuracies) > 80
    charged = __import__("re").findall(r"epsilon charged ([0-9.]+) .* worst case ([0-9.]+)", out)
    assert len(charged) == 2 and all(float(c) <= float(w) for c, w in charged)
    bad = subprocess.run([sys.executable, str(script), "--sampling-rate", "2"],
                         capture_output=True, text=True, env=env, timeout=60)
    assert bad.returncode == 2 and bad.stdout.count("\n") == 0
    assert bad.stderr.count("\n") == 1 and "sampling rate" in bad.stderr


def test_buckets_comp_is_refused_for_the_discrete_step_with_its_real_reason():
    """Privacy buckets has no pair for the subsampled *discrete* Gaussian: the refusal names the
    step and the COMP to use, instead of "no ε below 1e6 certifies δ" (docs/dpsgd.md)."""
    with pytest.raises(InvalidParameter) as info:
        DPSGD(LogisticRegressionModel(3), n=100, sampling_rate="1/10", noise_multiplier=2,
              epochs=2, delta="1e-5", composition=odp.composition.BucketsComposition())
    text = str(info.value)
    assert "subsampled_discrete_gaussian" in text and "RDPComposition" in text
    assert "1e6" not in text


def test_epsilon_search_failure_says_what_the_comp_said():
    """A COMP that certifies nothing at any ε: the search's refusal carries its last reason."""
    from odp.composition import BasicComposition, StepSpec

    class Never(BasicComposition):
        name = "never"

        def delta_upper(self, steps, epsilon):
            raise InvalidParameter("this COMP certifies nothing here")

    with pytest.raises(InvalidParameter, match="no ε below 1e6.*certifies nothing here"):
        Never().epsilon_upper([StepSpec(1, 0)], Fraction(1, 10**5))

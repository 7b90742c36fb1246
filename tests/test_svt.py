"""SVT (Hartmann et al. 2022, Alg. 2, Lemma 8): the exact output distribution of the discrete-noise
mechanism, checked against the declared ODP guarantee with odp.exact, plus the batch/interactive
accounting behaviour and the Sec. 4.1 release application.

The exact distributions use the exponential parametrisation of the discrete Laplace noise:
``P(x) ∝ r^{|x|}`` with *rational* r, so every output probability is an exact rational and
``e^{ℰ(S_{c'})} = r_ρ^{-m} r_ν^{-2mc'}`` is an exact rational too.  The ODP inequality
``Σ_o (p(o) − e^{ℰ(class(o))} q(o))₊ ≤ δ`` is then decided by odp.exact with those factors
folded into q (cost 0).  The same closed form is also evaluated at the mechanism's own
irrational r with mpmath (60 digits)."""

from __future__ import annotations

import itertools
from collections import Counter
from fractions import Fraction

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import odp
from odp.errors import BudgetExceeded, InvalidParameter
from odp.exact import FiniteDist, satisfies_odp_cost
from odp.readable import ExactValue
from odp.samplers import discrete_laplace_tail
from odp.mechanisms.svt import (
    DEFAULT_MAX_QUERIES,
    SessionClosed,
    SparseVectorMechanism,
    SVTParameters,
    SVTSession,
    adaptive_output_distribution,
    answer_probability,
    count_top,
    entry_epsilon,
    output_distribution,
    sparse_vector_release,
    svt_split,
)

R1, R2 = Fraction(1, 2), Fraction(2, 3)


def odp_holds_exp(p, q, weight, delta=0):
    """Def. 2 for one ordered pair with exact rational factors ``weight(o) = e^{ℰ(class(o))}``:
    fold them into q and decide with odp.exact (cost 0, so e^0 = 1 exactly)."""
    scaled = {o: weight(o) * q.get(o, Fraction(0)) for o in set(p) | set(q)}
    return satisfies_odp_cost(p, scaled, lambda _o: Fraction(0), delta)


def lemma8_weight(m, r1=R1, r2=R2):
    """e^{ε1 + (c'/c) ε2} with e^{ε1} = r1^{-m}, e^{ε2/c} = r2^{-2m} (scales m/ε1, 2cm/ε2)."""
    return lambda o: r1 ** (-m) * r2 ** (-2 * m * count_top(o))


# ------------------------------------------------------------------ the exact model itself


def _brute_force(answers, gaps, r1, r2, reach=3000):
    """Direct summation over ρ ∈ [−reach, reach] at 40 digits (the omitted mass is < r1^reach)."""
    total = mpmath.mpf(0)
    for z in range(-reach, reach + 1):
        term = (1 - r1) / (1 + r1) * r1 ** abs(z)
        for a, d in zip(answers, gaps):
            g = discrete_laplace_tail(d + z, r2)
            term *= g if a else 1 - g
        total += term
    return total


def test_closed_form_matches_direct_summation_and_sums_to_one():
    with mpmath.workdps(40):
        r1, r2 = mpmath.mpf(1) / 2, mpmath.mpf(2) / 3
        for answers, gaps in [((True,), (0,)), ((False, True), (3, -2)),
                              ((True, False, False, True), (1, 5, -4, 0)), ((), ())]:
            exact = answer_probability(answers, gaps, R1, R2)
            assert isinstance(exact, Fraction)
            assert abs(_brute_force(answers, gaps, r1, r2) - mpmath.mpf(exact.numerator) /
                       exact.denominator) < mpmath.mpf(10) ** -30
    dist = output_distribution([3, 0, 5, 1], [2, 2, 2, 2], c=2, r_threshold=R1, r_query=R2)
    assert sum(dist.values()) == 1
    assert set(dist) == {o for o in dist if count_top(o) <= 2}
    # cut-off: nothing after the second ⊤; STOP: nothing longer than 4
    assert all(len(o) == 4 or (count_top(o) == 2 and o[-1]) for o in dist)


# ------------------------------------------------------------------ Lemma 8, exactly

_node = st.tuples(st.integers(-3, 3), st.sampled_from([-1, 0, 1]), st.integers(-3, 3),
                  st.booleans())


def _histories(depth):
    out = [()]
    for length in range(1, depth):
        out += list(itertools.product((True, False), repeat=length))
    return out


@settings(max_examples=150, deadline=None)
@given(c=st.sampled_from([1, 2]), depth=st.integers(1, 4), m=st.sampled_from([1, 2]),
       nodes=st.lists(_node, min_size=15, max_size=15))
def test_lemma8_exact_for_adaptive_analysts(c, depth, m, nodes):
    """An adaptive analyst picks, after each history of answers, a query (value on x, shift to
    x' with |shift| ≤ m, threshold) or STOP.  Both orders of the pair satisfy Lemma 8's ODP
    inequality with δ = 0; the claim without ε1 fails on some pairs (next test)."""
    plan = dict(zip(_histories(depth), nodes))

    def strategy(on_x_prime):
        def pick(history):
            if len(history) >= depth:
                return None
            n, shift, t, stop = plan[history]
            if stop and history:
                return None
            return (n + m * shift if on_x_prime else n, t)
        return pick

    p = adaptive_output_distribution(strategy(False), c, R1, R2)
    q = adaptive_output_distribution(strategy(True), c, R1, R2)
    assert sum(p.values()) == 1 == sum(q.values())
    p, q = FiniteDist(p), FiniteDist(q)
    assert odp_holds_exp(p, q, lemma8_weight(m))
    assert odp_holds_exp(q, p, lemma8_weight(m))


def test_wrong_claims_are_detected_by_the_same_check():
    """(a) charging (c'/c)·ε2 without ε1; (b) Lemma 8's claim for a mechanism whose query noise
    is only cΔ/ε2 (the 'monotone queries' variant) — both violate Def. 2 on some pair."""
    without_eps1 = lambda o: R2 ** (-2 * count_top(o))  # noqa: E731
    p = FiniteDist(output_distribution([0, 0], 0, c=1, r_threshold=R1, r_query=R2))
    q = FiniteDist(output_distribution([1, 1], 0, c=1, r_threshold=R1, r_query=R2))
    assert odp_holds_exp(q, p, lemma8_weight(1)) and odp_holds_exp(p, q, lemma8_weight(1))
    assert not odp_holds_exp(p, q, without_eps1)
    # (b): r_ν = e^{-ε2/(cm)}, i.e. e^{ε2/c} = r_ν^{-1}; non-monotone neighbours
    half_noise = lambda o: R1 ** -1 * R2 ** (-count_top(o))  # noqa: E731
    violated = False
    for vals in itertools.product(range(-2, 3), repeat=3):
        for shifts in itertools.product((-1, 1), repeat=3):
            other = [v + s for v, s in zip(vals, shifts)]
            p = FiniteDist(output_distribution(vals, 0, c=2, r_threshold=R1, r_query=R2))
            q = FiniteDist(output_distribution(other, 0, c=2, r_threshold=R1, r_query=R2))
            if not odp_holds_exp(p, q, half_noise):
                violated = True
                break
        if violated:
            break
    assert violated


def test_lemma8_at_the_mechanisms_own_parameters_high_precision():
    """A real SparseVectorMechanism on small databases (counts; add/remove one record): its own
    grid values and its own noise parameters r = e^{-1/scale}, evaluated at 60 digits."""
    queries = [lambda d: sum(1 for v in d if v >= 1), lambda d: len(d),
               lambda d: sum(1 for v in d if v > 1)]  # sensitivity 1 each
    mech = SparseVectorMechanism(queries, [2, 3, 1], epsilon1="0.5", epsilon2="1", c=2,
                                 granularity=1)
    svt = mech.svt
    assert svt.units == 1
    pairs = [([1, 1, 2], [1, 1]), ([0, 2, 2], [0, 2, 2, 1]), ([3], [])]
    with mpmath.workdps(60):
        r1 = mpmath.exp(-1 / mpmath.mpf(svt.threshold_scale.numerator) *
                        svt.threshold_scale.denominator)
        r2 = mpmath.exp(-mpmath.mpf(svt.query_scale.denominator) / svt.query_scale.numerator)
        for a, b in pairs:
            for x, y in ((a, b), (b, a)):
                px = output_distribution([svt.to_grid(f(x)) for f in queries],
                                         [svt.to_grid(t) for t in mech.thresholds], c=2, r_threshold=r1, r_query=r2)
                py = output_distribution([svt.to_grid(f(y)) for f in queries],
                                         [svt.to_grid(t) for t in mech.thresholds], c=2, r_threshold=r1, r_query=r2)
                for o, prob in px.items():
                    cost = mech.guarantee.cost(mech.guarantee.classify(o))
                    bound = mpmath.exp(mpmath.mpf(cost.numerator) / cost.denominator) * py[o]
                    assert prob <= bound * (1 + mpmath.mpf(10) ** -40)
        # ε1 is needed: without it some output of some pair breaks the bound
        x, y = [0, 0], [0, 0, 0]  # y has the larger values: all-⊥ is likelier on x
        px = output_distribution([svt.to_grid(f(x)) for f in queries], [2, 3, 1], c=2, r_threshold=r1, r_query=r2)
        py = output_distribution([svt.to_grid(f(y)) for f in queries], [2, 3, 1], c=2, r_threshold=r1, r_query=r2)
        assert any(px[o] > mpmath.exp(svt.cost(count_top(o)) - svt.epsilon1) * py[o]
                   for o in px)


def test_empirical_class_frequencies_match_exact_probabilities():
    queries = [lambda d: d[0], lambda d: d[1], lambda d: d[2], lambda d: d[3]]
    mech = SparseVectorMechanism(queries, [1, 0, 2, 1], epsilon1="1", epsilon2="2", c=2,
                                 granularity=1)
    data = (2, -1, 2, 0)
    r1, r2 = mech.svt.noise_parameters()
    exact = output_distribution(list(data), [1, 0, 2, 1], c=2, r_threshold=r1, r_query=r2)
    by_class = Counter()
    for o, prob in exact.items():
        by_class[count_top(o)] += prob
    assert abs(sum(by_class.values()) - 1) < 1e-12
    rng = odp.SeededRandom(11)
    n = 3000
    seen = Counter(count_top(mech.release(data, rng)) for _ in range(n))
    classes = sorted(by_class)
    observed = [seen[k] for k in classes]
    expected = [n * by_class[k] for k in classes]
    assert stats.chisquare(observed, expected).pvalue > 1e-3
    # the full outputs, too (pooled small cells are fine at this size)
    seen_full = Counter(mech.release(data, rng) for _ in range(n))
    outs = sorted(exact, key=lambda o: -exact[o])[:6]
    rest = n - sum(seen_full[o] for o in outs)
    assert stats.chisquare([seen_full[o] for o in outs] + [rest],
                           [n * exact[o] for o in outs] + [n * (1 - sum(exact[o] for o in outs))]
                           ).pvalue > 1e-3


# ------------------------------------------------------------------ accounting behaviour


def test_batch_mechanism_is_charged_by_its_class():
    acc = odp.Accountant("3", rng=odp.SeededRandom(3))
    mech = SparseVectorMechanism([lambda d, i=i: d[i] for i in range(6)], 50, epsilon1="1/4",
                                 epsilon2="3/4", c=3)
    answers = acc.run(mech, [100, 0, 0, 100, 0, 0])
    rec = acc.last_round
    k = count_top(answers)
    assert answers[0] and answers[3] and k == 2  # far above/below threshold at these scales
    assert rec.label == k and rec.charged == Fraction(1, 4) + Fraction(k, 3) * Fraction(3, 4)
    assert rec.refund == Fraction(1, 4)
    assert acc.remaining.epsilon == 3 - rec.charged


def test_session_matches_batch_and_settles_at_cut_off():
    data = [100, 0, 100, 100, 0]
    queries = [lambda d, i=i: d[i] for i in range(5)]
    batch = SparseVectorMechanism(queries, 50, epsilon1="1/2", epsilon2="1/2", c=2)
    expected = batch.release(data, odp.SeededRandom(9))
    acc = odp.Accountant("2", rng=odp.SeededRandom(9))
    session = SVTSession(acc, data, epsilon1="1/2", epsilon2="1/2", c=2)
    assert acc.last_round.interactive and acc.remaining.epsilon == 1  # sup held while open
    got = []
    for q in queries:
        got.append(session.ask(q, 50))
        if not session.open:
            break
    assert tuple(got) == expected == (True, False, True)
    assert session.record.charged == 1 and session.record.label == 2
    with pytest.raises(SessionClosed):
        session.ask(queries[3], 50)
    assert len(acc.history) == 1


def test_session_stop_refunds_and_refuses_later_queries():
    acc = odp.Accountant("2", rng=odp.SeededRandom(1))
    with SVTSession(acc, [0, 0, 0], epsilon1="1/2", epsilon2="1", c=4) as session:
        assert session.ask(lambda d: d[0], 100) is False
        assert session.ask(lambda d: d[1], 100) is False
    assert session.record.charged == Fraction(1, 2) and session.record.label == 0
    assert acc.remaining.epsilon == Fraction(3, 2)
    before = acc.remaining
    with pytest.raises(SessionClosed):
        session.ask(lambda d: d[2], 100)
    assert acc.remaining == before and len(acc.history) == 1


def test_session_overlapping_another_round_is_charged_its_sup():
    acc = odp.Accountant("3", rng=odp.SeededRandom(2))
    session = SVTSession(acc, [0], epsilon1="1/2", epsilon2="1/2", c=1)
    session.ask(lambda d: d[0], 100)
    acc.run(odp.LaplaceMechanism(lambda d: d[0], epsilon="1/4"), [0])
    rec = session.stop()
    assert rec.charged == 1 and rec.reason == "interactive-overlap"


def test_session_error_inside_a_query_charges_the_sup():
    acc = odp.Accountant("2", rng=odp.SeededRandom(2))

    def broken(_d):
        raise RuntimeError("boom")

    session = SVTSession(acc, [0], epsilon1="1/2", epsilon2="1/2", c=1)
    with pytest.raises(RuntimeError):
        session.ask(broken, 1)
    assert acc.last_round.charged == 1 and not session.open


def test_session_over_budget_draws_nothing():
    acc = odp.Accountant("1/2", rng=odp.SeededRandom(2))
    with pytest.raises(BudgetExceeded):
        SVTSession(acc, [0], epsilon1="1/2", epsilon2="1/2", c=1)
    assert acc.history == [] and acc.remaining.epsilon == Fraction(1, 2)


# ------------------------------------------------------------------ Sec. 4.1 application


def test_sparse_vector_release_spends_the_leftover_on_the_selected_entries():
    vector = [0] * 30
    for i in (3, 11, 20):
        vector[i] = 1000
    entries = [lambda v, i=i: v[i] for i in range(30)]
    acc = odp.Accountant("1", rng=odp.SeededRandom(4))
    eps1, eps2 = svt_split("1/2", 10)
    out = sparse_vector_release(acc, vector, entries, 500, c=10, epsilon1=eps1, epsilon2=eps2,
                                epsilon3="1/2")
    assert out.selected == [3, 11, 20]
    k = out.count
    assert out.svt_round.charged == eps1 + Fraction(k, 10) * eps2
    assert out.epsilon_per_entry == (Fraction(1, 2) + Fraction(10 - k, 10) * eps2) / k
    assert all(r.charged == out.epsilon_per_entry for r in out.entry_rounds)
    spent = out.svt_round.charged + sum(r.charged for r in out.entry_rounds)
    assert spent == 1 and acc.remaining.epsilon == 0  # the whole plan, not more
    assert all(abs(out.values[i] - 1000) < 100 for i in out.selected)
    assert all(isinstance(v, ExactValue) for v in out.values.values())  # print as decimals
    # the standard analysis would give ε3/c per entry, far less
    assert entry_epsilon(k, 10, eps2, Fraction(1, 2), odp=False) == Fraction(1, 20)
    assert out.epsilon_per_entry > 3 * Fraction(1, 20)


def test_sparse_vector_release_checks_the_whole_plan_first():
    acc = odp.Accountant("1", rng=odp.SeededRandom(4))
    with pytest.raises(BudgetExceeded):
        sparse_vector_release(acc, [0], [lambda v: v[0]], 1, c=1, epsilon1="1/2",
                              epsilon2="1/2", epsilon3="1/2")
    assert acc.history == []


def _sparse_vector():
    vector = [0] * 30
    for i in (3, 11, 20):
        vector[i] = 1000
    return vector


@pytest.mark.parametrize("bad", [
    dict(names=["a"]),                       # three entries below, one name (the reviewer's repro)
    dict(names="abc"),                       # a string is not a list of names
    dict(c=0), dict(c=True), dict(epsilon3="0"), dict(threshold="x"),
    dict(granularity="-1"), dict(sensitivity=0),
    dict(entries=[lambda v: v[0], "not a function", lambda v: v[2]]),
    dict(entries=[]), dict(window=(5, 5)), dict(window="wide"),
])
def test_sparse_vector_release_validates_every_stage_before_the_first_round(bad):
    acc = odp.Accountant("1", rng=odp.SeededRandom(4))
    args = dict(entries=[lambda v: v[0], lambda v: v[1], lambda v: v[2]], threshold=500, c=2,
                epsilon1="1/4", epsilon2="1/4", epsilon3="1/4")
    args.update(bad)
    with pytest.raises(InvalidParameter):
        sparse_vector_release(acc, [1000, 1000, 1000], args.pop("entries"),
                              args.pop("threshold"), **args)
    assert acc.history == [] and acc.remaining.epsilon == 1  # nothing charged or recorded


def test_sparse_vector_release_keeps_its_releases_when_a_later_round_is_refused(tmp_path):
    # Another process spends on the shared ledger after the plan check (here: while the SVT
    # round runs); the second Laplace round is then refused.  The first one must not be lost.
    path = tmp_path / "shared.db"
    acc = odp.Accountant("1", ledger=path, rng=odp.SeededRandom(4))
    other = odp.Accountant(ledger=path)
    eps1, eps2 = svt_split("1/2", 10)
    per_entry = entry_epsilon(3, 10, eps2, Fraction(1, 2))  # c' = 3 with this seed (see above)
    spent = []

    def entry(i):
        def f(v):
            if i == 3 and not spent:
                spent.append(other.charge(odp.DP(per_entry * Fraction(3, 2)), mechanism="other"))
            return v[i]
        return f

    with pytest.raises(BudgetExceeded) as info:
        sparse_vector_release(acc, _sparse_vector(), [entry(i) for i in range(30)], 500, c=10,
                              epsilon1=eps1, epsilon2=eps2, epsilon3="1/2")
    partial = info.value.partial
    assert partial.selected == [3, 11, 20] and partial.epsilon_per_entry == per_entry
    assert not partial.complete and list(partial.values) == [3]
    assert abs(partial.values[3] - 1000) < 100
    names = [r.mechanism for r in acc.history]
    assert names == ["svt", "other", "laplace[entry 3]"]  # the refused round left no row
    assert [r.round_id for r in partial.entry_rounds] == [acc.history[2].round_id]
    assert partial.svt_round.round_id == acc.history[0].round_id


def test_sparse_vector_release_keeps_its_releases_when_a_later_round_fails():
    calls = {11: 0}

    def flaky(v):  # answers the SVT round, then fails in its own Laplace round
        calls[11] += 1
        if calls[11] > 1:
            raise ZeroDivisionError("boom")
        return v[11]

    entries = [lambda v, i=i: v[i] for i in range(30)]
    entries[11] = flaky
    acc = odp.Accountant("1", rng=odp.SeededRandom(4))
    eps1, eps2 = svt_split("1/2", 10)
    with pytest.raises(ZeroDivisionError) as info:
        sparse_vector_release(acc, _sparse_vector(), entries, 500, c=10, epsilon1=eps1,
                              epsilon2=eps2, epsilon3="1/2", names=[f"v{i}" for i in range(30)])
    partial = info.value.partial
    assert list(partial.values) == [3] and not partial.complete
    failed = acc.history[-1]
    assert failed.mechanism == "laplace[v11]" and failed.charged == failed.sup_epsilon


# ------------------------------------------------------------------ parameters


def test_split_and_costs():
    e1, e2 = svt_split("1/2", 20)
    assert e1 + e2 == Fraction(1, 2)
    assert abs(float(e1 / e2) - 1 / 40 ** (2 / 3)) < 1e-4
    p = SVTParameters("1/4", "3/4", 3)
    assert [p.cost(k) for k in range(4)] == [Fraction(1, 4), Fraction(1, 2), Fraction(3, 4), 1]
    assert p.guarantee().sup_epsilon == 1 and p.guarantee().delta == 0
    assert p.units == 1000 and p.query_scale == Fraction(2 * 3 * 1000) / Fraction(3, 4)


@pytest.mark.parametrize("kwargs", [
    {"epsilon1": "0", "epsilon2": "1", "c": 1},
    {"epsilon1": "1", "epsilon2": "-1", "c": 1},
    {"epsilon1": "1", "epsilon2": "1", "c": 0},
    {"epsilon1": "1", "epsilon2": "1", "c": True},
    {"epsilon1": "1", "epsilon2": "1", "c": 1, "sensitivity": 0},
])
def test_bad_parameters_raise_typed_errors(kwargs):
    with pytest.raises(InvalidParameter):
        SparseVectorMechanism([len], 1, **kwargs)


def test_threshold_list_length_must_match():
    with pytest.raises(InvalidParameter):
        SparseVectorMechanism([len, len], [1, 2, 3], epsilon1=1, epsilon2=1, c=1)


# ------------------------------------------------------------------ finite output spaces


class _CountingRandom(odp.SeededRandom):
    """A seeded source that counts the draws made from it (to see that nothing is drawn)."""

    def __init__(self, seed):
        super().__init__(seed)
        self.draws = 0

    def randbelow(self, n):
        self.draws += 1
        return super().randbelow(n)


def test_session_declares_max_queries_and_refuses_query_max_plus_one_for_free(tmp_path):
    """max_queries = 3: the third answer ends the session like a STOP (settled at its class,
    here c' = 0: charged ε1), and the fourth query raises SessionClosed without drawing noise,
    moving the budget or writing a ledger row.  The declared maximum is in the round's
    parameters."""
    rng = _CountingRandom(5)
    acc = odp.Accountant("2", ledger=tmp_path / "l.db", rng=rng)
    session = SVTSession(acc, [0] * 5, epsilon1="1/2", epsilon2="1", c=4, max_queries=3)
    assert acc.ledger.rounds()[0].params["max_queries"] == 3
    for i in range(3):
        assert session.open
        assert session.ask(lambda d, i=i: d[i], 10**6) is False  # far below the threshold
    assert not session.open and session.record.label == 0
    assert session.record.charged == Fraction(1, 2)
    before = (acc.remaining, rng.draws, len(acc.history), acc.ledger.chain_head)
    with pytest.raises(SessionClosed, match="max_queries=3"):
        session.ask(lambda d: d[3], 10**6)
    assert (acc.remaining, rng.draws, len(acc.history), acc.ledger.chain_head) == before
    assert session.answers == [False, False, False] and session.stop() is session.record


def test_session_default_max_queries_is_recorded():
    acc = odp.Accountant("2", rng=odp.SeededRandom(1))
    with SVTSession(acc, [0], epsilon1="1/2", epsilon2="1", c=1) as session:
        assert session.max_queries == DEFAULT_MAX_QUERIES == 10**6
        assert acc.last_round.params["max_queries"] == DEFAULT_MAX_QUERIES
        session.ask(lambda d: d[0], 100)


@pytest.mark.parametrize("bad", [0, -1, 1.5, "3", None, True])
def test_bad_max_queries_is_refused_before_the_reservation(bad):
    acc = odp.Accountant("2", rng=odp.SeededRandom(1))
    with pytest.raises(InvalidParameter):
        SVTSession(acc, [0], epsilon1="1/2", epsilon2="1", c=1, max_queries=bad)
    assert acc.history == [] and acc.remaining.epsilon == 2


def test_lemma8_exact_with_a_declared_maximum_for_an_analyst_who_never_stops():
    """An adaptive analyst who would never send STOP (and whose queries alternate around the
    threshold): with max_queries = 4 the output space is the finite set of answer tuples of
    length ≤ 4 (ending at the cut-off or at the maximum), the exact distribution sums to 1, and
    Lemma 8's claim holds both ways on neighbours (every value shifted by ±m) — decided with
    odp.exact; the claim without ε1 fails on some pair."""
    without_eps1 = lambda o: R2 ** (-2 * count_top(o))  # noqa: E731
    wrong_found = False
    for c in (1, 2):
        for shift in (-1, 1):
            def strategy(on_x_prime, shift=shift):
                def pick(history):
                    n = (len(history) % 3) - 1 + (shift if on_x_prime else 0)
                    return (n, 0)
                return pick

            p = adaptive_output_distribution(strategy(False), c, R1, R2, max_queries=4)
            q = adaptive_output_distribution(strategy(True), c, R1, R2, max_queries=4)
            assert sum(p.values()) == 1 == sum(q.values())
            assert max(len(o) for o in p) == 4 and all(len(o) <= 4 for o in q)
            assert all(len(o) == 4 or count_top(o) == c for o in p)  # every run ended by a bound
            p, q = FiniteDist(p), FiniteDist(q)
            assert odp_holds_exp(p, q, lemma8_weight(1)) and odp_holds_exp(q, p, lemma8_weight(1))
            wrong_found |= not odp_holds_exp(p, q, without_eps1)
    assert wrong_found


def test_session_with_max_queries_follows_the_truncated_model():
    """Sessions at their own noise scales (g = 1) whose analyst asks 5 queries unless the
    session ends: with max_queries = 3 the answer tuples of 2000 seeded sessions follow
    ``adaptive_output_distribution(…, max_queries=3)`` (chi-square), and never have 4 answers —
    the model without the maximum is refuted (p = 0)."""
    from gof_support import chi_square_pvalue

    data = [1, 0, 2, 1, 3]
    thresholds = [1, 1, 1, 2, 2]
    acc = odp.Accountant(10**6, rng=odp.SeededRandom(17))
    seen = []
    for _ in range(2000):
        session = SVTSession(acc, data, epsilon1="1", epsilon2="2", c=2, granularity=1,
                             max_queries=3)
        for i in range(5):
            if not session.open:
                break
            session.ask(lambda d, i=i: d[i], thresholds[i])
        session.stop()
        seen.append(tuple(session.answers))
    r1, r2 = session.svt.noise_parameters()

    def strategy(history):
        i = len(history)
        return (data[i], thresholds[i]) if i < 5 else None

    model = adaptive_output_distribution(strategy, 2, r1, r2, max_queries=3)
    assert chi_square_pvalue(seen, model) > 1e-3
    assert chi_square_pvalue(seen, adaptive_output_distribution(strategy, 2, r1, r2)) == 0

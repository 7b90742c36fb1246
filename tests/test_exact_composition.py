"""Exact mirrors of Lemma 20 and Theorem 7 (Hartmann et al. 2022, Alg. 1 and App. B), and the
concrete counterexample to the flawed δ-rule of Sec. 3.2.  Lean counterparts: ``Odp.Core.lemma20``,
``Odp.Core.odp_composition``, ``Odp.Core.odp_composition_randomized`` (machine-checked; see
``Odp/paper_mapping.md``).

Random adaptive adversaries of 2–3 rounds choose, after every history, a random finite
mechanism pair ``(M(x^{i,0}), M(x^{i,1}))``, a random partition with random costs that fit the
remaining ε, and the δ_i that makes the declared ODP guarantee true (checked exactly).  The view
distributions under b = 0 and b = 1 are computed exactly and must satisfy (ε_t, δ_t)-DP."""

from __future__ import annotations

import random
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from odp.exact import (
    ExperimentRound,
    FiniteDist,
    InvalidAdversary,
    composition_views,
    randomized_views,
    satisfies_dp,
    tight_delta_upper,
)
from odp.guarantees import ODP


def _random_dist(rng: random.Random, outcomes) -> FiniteDist:
    w = [rng.randint(0, 6) for _ in outcomes]
    if not any(w):
        w[0] = 1
    return FiniteDist({o: Fraction(x, sum(w)) for o, x in zip(outcomes, w)})


class RandomAdversary:
    """A deterministic adaptive adversary derived from a seed: its choice after a history is a
    pure function of (seed, history), and it only ever chooses rounds that Alg. 1 line 4 admits
    under the paper's rule (it replays its own choices to know the remaining budget)."""

    def __init__(self, seed: int, epsilon_t: Fraction, delta_t: Fraction, max_rounds: int):
        self.seed, self.eps_t, self.delta_t, self.max_rounds = seed, epsilon_t, delta_t, max_rounds
        self.memo: dict[tuple, ExperimentRound | None] = {}

    def remaining(self, history: tuple) -> tuple[Fraction, Fraction]:
        eps, delta = self.eps_t, self.delta_t
        for i in range(len(history)):
            rnd = self(history[:i])
            eps -= rnd.guarantee.cost(rnd.guarantee.classify(history[i]))
            delta -= rnd.guarantee.delta
        return eps, delta

    def __call__(self, history: tuple) -> ExperimentRound | None:
        if history in self.memo:
            return self.memo[history]
        rng = random.Random(f"{self.seed}:{history}")
        if len(history) >= self.max_rounds or (history and rng.random() < 0.2):
            self.memo[history] = None
            return None
        eps_r, delta_r = self.remaining(history)
        outcomes = list(range(rng.randint(2, 3)))
        labels = {o: rng.randint(0, 1) for o in outcomes}
        costs = {k: eps_r * Fraction(rng.randint(0, 4), 4) for k in (0, 1)}
        p1 = _random_dist(rng, outcomes)
        noise = _random_dist(rng, outcomes)
        lam = Fraction(rng.randint(1, 4), 4)
        cost = lambda o: costs[labels[o]]  # noqa: E731
        while True:
            p0 = FiniteDist({o: (1 - lam) * p1[o] + lam * noise[o] for o in outcomes})
            delta_i = tight_delta_upper(p0, p1, cost) if lam else Fraction(0)
            if delta_i <= delta_r:
                break
            lam = lam / 2 if lam > Fraction(1, 2**20) else Fraction(0)
        rnd = ExperimentRound(p0, p1, ODP(labels.__getitem__, costs, delta_i))
        self.memo[history] = rnd
        return rnd


budgets = st.tuples(
    st.fractions(min_value=0, max_value=2, max_denominator=4),
    st.fractions(min_value=0, max_value=Fraction(1, 2), max_denominator=16),
)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32), budgets)
def test_lemma20_two_rounds(seed, budget):
    """Two rounds: M1 is ODP, M2 (chosen after seeing M1's output v) is (ε_t − ℰ(v), δ_t − δ)-DP."""
    eps_t, delta_t = budget
    v0, v1 = composition_views(RandomAdversary(seed, eps_t, delta_t, 2), eps_t, delta_t)
    assert satisfies_dp(v0, v1, eps_t, delta_t)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32), budgets)
def test_theorem7_random_adaptive_adversaries_three_rounds(seed, budget):
    eps_t, delta_t = budget
    adversary = RandomAdversary(seed, eps_t, delta_t, 3)
    v0, v1 = composition_views(adversary, eps_t, delta_t)
    assert satisfies_dp(v0, v1, eps_t, delta_t)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32), budgets)
def test_theorem7_randomised_adversary_with_coins_in_view(seed, budget):
    eps_t, delta_t = budget
    coins = FiniteDist({0: Fraction(1, 3), 1: Fraction(2, 3)})
    v0, v1 = randomized_views(
        coins, lambda r: RandomAdversary(seed * 2 + r, eps_t, delta_t, 2), eps_t, delta_t
    )
    assert satisfies_dp(v0, v1, eps_t, delta_t)


def test_theorem7_is_tight_enough_to_fail_when_budget_is_shrunk():
    """Sanity check that the DP check on views is not vacuous: a run that uses its δ fully
    violates (ε_t, δ_t') for a smaller δ_t'."""
    t = Fraction(1, 4)
    p0 = FiniteDist({"x": t, "y": 1 - t})
    p1 = FiniteDist({"y": Fraction(1)})
    rounds = {(): ExperimentRound(p0, p1, ODP(lambda o: "all", {"all": 0}, t))}
    v0, v1 = composition_views(rounds.get, 0, t)
    assert satisfies_dp(v0, v1, 0, t)
    assert not satisfies_dp(v0, v1, 0, t - Fraction(1, 100))


def _flawed_delta_adversary(t: Fraction):
    """Round 1: a ⊥-free mechanism whose excess sits entirely in class A (Δ_A = t, Δ_B = 0),
    so it is (𝒫, ℰ ≡ 0, t)-ODP.  Round 2: after class B, a (0, t)-DP mechanism."""
    half = Fraction(1, 2)
    m1 = ExperimentRound(
        FiniteDist({"a": half + t, "b": half - t}),
        FiniteDist({"a": half, "b": half}),
        ODP({"a": "A", "b": "B"}.__getitem__, {"A": 0, "B": 0}, t),
        class_deltas={"A": t, "B": Fraction(0)},
    )
    m2_after_b = ExperimentRound(
        FiniteDist({1: t, 0: 1 - t}),
        FiniteDist({0: Fraction(1)}),
        ODP(lambda o: "all", {"all": 0}, t),
        class_deltas={"all": t},
    )
    constant = ExperimentRound(
        FiniteDist({0: Fraction(1)}), FiniteDist({0: Fraction(1)}),
        ODP(lambda o: "all", {"all": 0}, 0), class_deltas={"all": Fraction(0)},
    )
    choices = {(): m1, ("b",): m2_after_b, ("a",): constant}
    return choices.get


@pytest.mark.parametrize("t", [Fraction(1, 10), Fraction(1, 4), Fraction(1, 1000)])
def test_flawed_delta_rule_is_violated_by_a_concrete_counterexample(t):
    """Sec. 3.2: subtracting the δ of the realised class (here 0 after class B) instead of δ_i
    lets the adversary run a (0, t)-DP mechanism it could not afford; the views then violate
    (ε_t, δ_t) = (0, t)-DP on V = {(a, ·)} ∪ {(b, 1)}."""
    adversary = _flawed_delta_adversary(t)
    v0, v1 = composition_views(adversary, 0, t, delta_rule="flawed")
    bad_set = [v for v in set(v0) | set(v1) if v[0] == "a" or v == ("b", 1)]
    assert v0.prob(bad_set) == Fraction(1, 2) + t + (Fraction(1, 2) - t) * t
    assert v1.prob(bad_set) == Fraction(1, 2)
    assert not satisfies_dp(v0, v1, 0, t)
    # Under the paper's rule the same adversary is refused at round 2 (δ_r = 0 < t).
    with pytest.raises(InvalidAdversary):
        composition_views(adversary, 0, t, delta_rule="paper")

"""Hypothesis strategies shared by the exact-specification tests."""

from __future__ import annotations

from fractions import Fraction

from hypothesis import strategies as st

from odp.exact import FiniteDist


@st.composite
def finite_dists(draw, outcomes, *, allow_zero=True):
    """A distribution on ``outcomes`` with random rational probabilities."""
    low = 0 if allow_zero else 1
    weights = draw(st.lists(st.integers(low, 12), min_size=len(outcomes), max_size=len(outcomes)))
    if sum(weights) == 0:
        weights[0] = 1
    total = sum(weights)
    return FiniteDist({o: Fraction(w, total) for o, w in zip(outcomes, weights)})


@st.composite
def mechanism_pairs(draw, n_outcomes=None):
    """``(outcomes, p, q)``: the output distributions of a mechanism on two neighbours."""
    n = n_outcomes or draw(st.integers(2, 5))
    outcomes = list(range(n))
    return outcomes, draw(finite_dists(outcomes)), draw(finite_dists(outcomes))


small_epsilons = st.fractions(min_value=0, max_value=2, max_denominator=8)

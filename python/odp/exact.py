"""Exact finite output distributions and exact checks of Defs. 1, 2 and 5.

Everything here is rational: probabilities are ``Fraction``s.  The only irrational numbers are
the factors ``e^ε``; they are enclosed in rigorous rational brackets (:mod:`odp.rational`), and
each check is *decided*: the bracket is refined until the answer is certain.  (For rational
ε ≠ 0, ``e^ε`` is irrational, so an exact tie cannot happen and refinement terminates; ε = 0
gives the exact factor 1.)

The worst event.  For fixed distributions ``p = M(x)``, ``q = M(x')`` and an output-wise cost
``c(o)`` (ODP: ``c(o) = ℰ(P_k)`` for the class of ``o``; DP: ``c ≡ ε``),

    max_S  Pr_p(S) − Σ_k e^{ℰ(P_k)} Pr_q(S ∩ P_k)  =  Σ_o (p(o) − e^{c(o)} q(o))₊,

attained at ``S* = {o : p(o) > e^{c(o)} q(o)}`` (each output contributes independently).  So
the ODP inequality holds for *all* S iff that sum is ≤ δ.  This is the discrete form of the
positive part μ₊ in App. B of the paper (Lean, compiled in CI for finite output spaces:
``Odp.Core.events_iff_excess`` and ``Odp.Core.ODPcost_iff_ODPsum``; ``Odp.tsum_tsub_le`` in the
stated-only Mathlib layer).  Subset DP (Def. 5) restricts the sum to the region R.

The composition experiment (Alg. 1) is available as :func:`composition_views`, which builds
the exact distributions of the view V⁰ and V¹ of a finite adaptive adversary; Theorem 7 says
they satisfy (ε_t, δ_t)-DP.  ``delta_rule="flawed"`` implements the variant in which the δ
subtracted depends on the realised class — the error the paper's Lean proof uncovered
(Sec. 3.2); the test-suite exhibits a concrete counterexample.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache
from typing import Any, Callable, Hashable, Iterable, Iterator, Mapping, Sequence

from .errors import InvalidParameter
from .guarantees import DP, ODP, SubsetDP, as_odp
from .rational import exp_bracket

__all__ = [
    "FiniteDist",
    "excess_bracket",
    "satisfies_dp",
    "satisfies_odp",
    "satisfies_odp_cost",
    "satisfies_subset_dp",
    "tight_delta_upper",
    "mechanism_satisfies",
    "ExperimentRound",
    "InvalidAdversary",
    "composition_views",
    "randomized_views",
]

_DIGITS_SCHEDULE = (30, 60, 120, 240, 480, 960)


class FiniteDist(Mapping[Hashable, Fraction]):
    """A probability distribution on finitely many outcomes with ``Fraction`` probabilities."""

    __slots__ = ("_p",)

    def __init__(self, probs: Mapping[Hashable, Any], *, normalised: bool = True):
        p: dict[Hashable, Fraction] = {}
        for outcome, value in probs.items():
            v = Fraction(value)
            if v < 0:
                raise InvalidParameter(f"negative probability {v} for {outcome!r}")
            if v:
                p[outcome] = p.get(outcome, Fraction(0)) + v
        if normalised and sum(p.values()) != 1:
            raise InvalidParameter(f"probabilities sum to {sum(p.values())}, not 1")
        self._p = p

    @classmethod
    def point(cls, outcome: Hashable) -> "FiniteDist":
        return cls({outcome: 1})

    @classmethod
    def uniform(cls, outcomes: Iterable[Hashable]) -> "FiniteDist":
        outs = list(outcomes)
        return cls({o: Fraction(1, len(outs)) for o in outs})

    def __getitem__(self, outcome: Hashable) -> Fraction:
        return self._p.get(outcome, Fraction(0))

    def __iter__(self) -> Iterator[Hashable]:
        return iter(self._p)

    def __len__(self) -> int:
        return len(self._p)

    def __contains__(self, outcome: object) -> bool:
        return outcome in self._p

    def prob(self, event: Callable[[Hashable], bool] | Iterable[Hashable]) -> Fraction:
        """``Pr(event)`` for a predicate or a collection of outcomes."""
        if callable(event):
            return sum((v for o, v in self._p.items() if event(o)), Fraction(0))
        members = set(event)
        return sum((v for o, v in self._p.items() if o in members), Fraction(0))

    def map(self, f: Callable[[Hashable], Hashable]) -> "FiniteDist":
        out: dict[Hashable, Fraction] = {}
        for o, v in self._p.items():
            key = f(o)
            out[key] = out.get(key, Fraction(0)) + v
        return FiniteDist(out)

    def bind(self, f: Callable[[Hashable], "FiniteDist"]) -> "FiniteDist":
        out: dict[Hashable, Fraction] = {}
        for o, v in self._p.items():
            for o2, v2 in f(o).items():
                out[o2] = out.get(o2, Fraction(0)) + v * v2
        return FiniteDist(out)

    def __repr__(self) -> str:
        body = ", ".join(f"{o!r}: {v}" for o, v in self._p.items())
        return f"FiniteDist({{{body}}})"


@lru_cache(maxsize=4096)
def _exp(x: Fraction, digits: int) -> tuple[Fraction, Fraction]:
    return exp_bracket(x, digits)


def excess_bracket(
    p: Mapping[Hashable, Fraction],
    q: Mapping[Hashable, Fraction],
    cost: Callable[[Hashable], Fraction],
    *,
    region: Callable[[Hashable], bool] | None = None,
    digits: int = 30,
) -> tuple[Fraction, Fraction]:
    """Rational ``(lo, hi)`` enclosing ``Σ_{o ∈ R} (p(o) − e^{cost(o)} q(o))₊``.

    Only outcomes with ``p(o) > 0`` can contribute.  Monotone in ``e^{cost}``: the upper end
    uses the lower bracket of ``e^{cost}`` and vice versa.
    """
    lo = Fraction(0)
    hi = Fraction(0)
    for o, po in p.items():
        if po <= 0 or (region is not None and not region(o)):
            continue
        qo = q.get(o, Fraction(0)) if hasattr(q, "get") else q[o]
        e_lo, e_hi = _exp(Fraction(cost(o)), digits)
        hi += max(po - e_lo * qo, Fraction(0))
        lo += max(po - e_hi * qo, Fraction(0))
    return lo, hi


def _decide_excess_at_most(delta: Fraction, bracket: Callable[[int], tuple[Fraction, Fraction]]
                           ) -> bool:
    """Decide ``excess ≤ delta`` exactly by refining the bracket."""
    delta = Fraction(delta)
    for digits in _DIGITS_SCHEDULE:
        lo, hi = bracket(digits)
        if hi <= delta:
            return True
        if lo > delta:
            return False
    raise InvalidParameter(  # pragma: no cover - would need an exact tie with irrational e^ε
        "could not decide the inequality at 960 digits (an exact tie?)"
    )


def satisfies_odp_cost(p: Mapping, q: Mapping, cost: Callable[[Hashable], Fraction],
                       delta: Any) -> bool:
    """Output-wise form of Def. 2: ``∀S: Pr_p(S) ≤ δ + Σ_{o∈S} e^{cost(o)} q(o)`` (exact).

    Lean: ``Odp.Core.ODPcost`` (and ``Odp.Core.ODP_iff_ODPcost`` for the partition form)."""
    return _decide_excess_at_most(
        Fraction(delta), lambda d: excess_bracket(p, q, cost, digits=d)
    )


def satisfies_odp(p: Mapping, q: Mapping, *, partition: Callable[[Hashable], Hashable],
                  costs: Mapping[Hashable, Any], delta: Any) -> bool:
    """Def. 2 for one ordered pair ``(p, q) = (M(x), M(x'))``, partition form (exact)."""
    costs = {k: Fraction(v) for k, v in costs.items()}
    return satisfies_odp_cost(p, q, lambda o: costs[partition(o)], delta)


def satisfies_dp(p: Mapping, q: Mapping, epsilon: Any, delta: Any) -> bool:
    """Def. 1 for one ordered pair (exact): ``∀S: Pr_p(S) ≤ e^ε Pr_q(S) + δ``."""
    eps = Fraction(epsilon)
    return satisfies_odp_cost(p, q, lambda _o: eps, delta)


def satisfies_subset_dp(p: Mapping, q: Mapping, *, region: Callable[[Hashable], bool],
                        epsilon: Any, delta: Any) -> bool:
    """Def. 5 for one ordered pair (exact): ``∀S ⊆ R: Pr_p(S) ≤ e^ε Pr_q(S) + δ``."""
    eps = Fraction(epsilon)
    return _decide_excess_at_most(
        Fraction(delta), lambda d: excess_bracket(p, q, lambda _o: eps, region=region, digits=d)
    )


def tight_delta_upper(p: Mapping, q: Mapping, cost: Callable[[Hashable], Fraction], *,
                      region: Callable[[Hashable], bool] | None = None,
                      digits: int = 30) -> Fraction:
    """A rational upper bound (within ~10^-digits) of the smallest δ for which the output-wise
    ODP inequality (or subset DP, with ``region``) holds for the ordered pair (p, q)."""
    return excess_bracket(p, q, cost, region=region, digits=digits)[1]


def mechanism_satisfies(
    mechanism: Mapping[Hashable, Mapping],
    neighbours: Iterable[tuple[Hashable, Hashable]],
    guarantee: DP | ODP | SubsetDP,
    *,
    subset_region: Callable[[Hashable], bool] | None = None,
) -> bool:
    """Check a guarantee for a finite mechanism ``{database: output distribution}`` on every
    ordered neighbouring pair given (pass both orders for a symmetric relation)."""
    for x, x2 in neighbours:
        p, q = mechanism[x], mechanism[x2]
        if isinstance(guarantee, SubsetDP):
            if subset_region is None:
                raise InvalidParameter("a SubsetDP check needs subset_region (a predicate)")
            ok = satisfies_subset_dp(p, q, region=subset_region, epsilon=guarantee.epsilon, delta=guarantee.delta)
        else:
            g = as_odp(guarantee)
            ok = satisfies_odp(p, q, partition=g.classify, costs=g.costs, delta=g.delta)
        if not ok:
            return False
    return True


# --------------------------------------------------------------------------------------------
# The composition experiment (Alg. 1) with exact view distributions
# --------------------------------------------------------------------------------------------


class InvalidAdversary(InvalidParameter):
    """The adversary chose a round that Alg. 1 line 4 does not allow."""


@dataclass(frozen=True)
class ExperimentRound:
    """One round chosen by the adversary (Alg. 1 line 4): the output distributions
    ``M_i(x^{i,0})`` and ``M_i(x^{i,1})`` and the declared guarantee ``(𝒫_i, ℰ_i, δ_i)``.

    ``class_deltas`` (optional) are the per-class Δ(P_k) of Lemma 6; they are used only by
    the *flawed* δ-rule, to show why it is wrong.
    """

    p0: FiniteDist
    p1: FiniteDist
    guarantee: ODP
    class_deltas: Mapping[Hashable, Fraction] | None = field(default=None)


Adversary = Callable[[tuple], "ExperimentRound | None"]


def composition_views(
    adversary: Adversary,
    epsilon_t: Any,
    delta_t: Any,
    *,
    delta_rule: str = "paper",
    check_guarantees: bool = True,
) -> tuple[FiniteDist, FiniteDist]:
    """Exact distributions of the views ``V⁰`` and ``V¹`` of Alg. 1 for a deterministic
    adversary given as ``history (tuple of outputs) -> ExperimentRound | None`` (None = stop).

    ``delta_rule="paper"``: line 8 subtracts δ_i whatever the class (Theorem 7 holds).
    ``delta_rule="flawed"``: line 8 subtracts Δ(P_k) of the realised class (unsound).
    Raises :class:`InvalidAdversary` when a round violates the line-4 constraints (or, with
    ``check_guarantees``, when the declared ODP guarantee does not hold for ``(p0, p1)``).
    """
    if delta_rule not in ("paper", "flawed"):
        raise InvalidParameter("delta_rule must be 'paper' or 'flawed'")
    eps_t, dlt_t = Fraction(epsilon_t), Fraction(delta_t)

    def views(history: tuple, eps_r: Fraction, delta_r: Fraction) -> tuple[dict, dict]:
        rnd = adversary(history)
        if rnd is None:
            return {history: Fraction(1)}, {history: Fraction(1)}
        g = rnd.guarantee
        if g.sup_epsilon > eps_r:
            raise InvalidAdversary(f"after {history}: sup ε {g.sup_epsilon} > remaining {eps_r}")
        if delta_rule == "paper":
            if g.delta > delta_r:
                raise InvalidAdversary(f"after {history}: δ_i {g.delta} > remaining {delta_r}")
        else:
            if rnd.class_deltas is None:
                raise InvalidAdversary("the flawed rule needs class_deltas")
            if max(rnd.class_deltas.values()) > delta_r:
                raise InvalidAdversary(f"after {history}: a class δ exceeds remaining {delta_r}")
        if check_guarantees and not satisfies_odp(rnd.p0, rnd.p1, partition=g.classify, costs=g.costs, delta=g.delta):
            raise InvalidAdversary(f"after {history}: the declared ODP guarantee does not hold")
        out0: dict = {}
        out1: dict = {}
        for o in set(rnd.p0) | set(rnd.p1):
            label = g.classify(o)
            charged = (rnd.class_deltas[label] if delta_rule == "flawed" and rnd.class_deltas
                       else g.delta)
            sub0, sub1 = views(history + (o,), eps_r - g.cost(label), delta_r - charged)
            w0, w1 = rnd.p0[o], rnd.p1[o]
            for v, pv in sub0.items():
                if w0 * pv:
                    out0[v] = out0.get(v, Fraction(0)) + w0 * pv
            for v, pv in sub1.items():
                if w1 * pv:
                    out1[v] = out1.get(v, Fraction(0)) + w1 * pv
        return out0, out1

    v0, v1 = views((), eps_t, dlt_t)
    return FiniteDist(v0), FiniteDist(v1)


def randomized_views(
    coins: FiniteDist,
    adversary_for: Callable[[Hashable], Adversary],
    epsilon_t: Any,
    delta_t: Any,
    **kwargs: Any,
) -> tuple[FiniteDist, FiniteDist]:
    """Theorem 7 for a randomised adversary: its coins ``r ~ coins`` are drawn first (Alg. 1
    line 1) and are part of the view ``V^b = (r, A_1, …)``."""
    out0: dict = {}
    out1: dict = {}
    for r, pr in coins.items():
        v0, v1 = composition_views(adversary_for(r), epsilon_t, delta_t, **kwargs)
        for v, pv in v0.items():
            out0[(r, v)] = out0.get((r, v), Fraction(0)) + pr * pv
        for v, pv in v1.items():
            out1[(r, v)] = out1.get((r, v), Fraction(0)) + pr * pv
    return FiniteDist(out0), FiniteDist(out1)


def all_subsets(outcomes: Sequence[Hashable]) -> Iterator[frozenset]:
    """Every subset of a small outcome set (for brute-force cross-checks in tests)."""
    n = len(outcomes)
    for mask in range(1 << n):
        yield frozenset(outcomes[i] for i in range(n) if mask >> i & 1)

"""Composition theorems for iterative mechanisms with early stopping (paper 002, Sec. 5).

An iterative mechanism (Alg. 3) runs steps ``M_1, M_2, …`` and may stop after ``k_1 < k_2 < …
< k_n`` steps; its ODP partition is the output length, class ``P_i`` = "stopped after ``k_i``
steps", with cost ``ℰ(P_i) = ε^{k_i}``.  The one δ of its (𝒫, ℰ, δ)-ODP guarantee comes from a
*δ rule* (:class:`DeltaRule`):

* :class:`Lemma11` — Lemma 11: for any DP composition theorem COMP that applies to the steps,
  ``δ = Σ_i COMP(M_1, …, M_{k_i}; ε^{k_i})``.  COMP is a :class:`PrefixComposition`:

  - :class:`BasicComposition` — ``COMP(steps; ε) = Σ_k δ_k`` when ``ε ≥ Σ_k ε_k`` (Dwork et al.
    2006), exact rationals.  With it the default costs are the prefix sums ``Σ_{k ≤ k_i} ε_k``.
  - :class:`BucketsComposition` — privacy buckets (Meiser & Mohammadi 2018, :mod:`odp.buckets`):
    a rigorous upper bound on the tight δ(ε) of the steps' worst-case pairs.  Each step must
    then describe its mechanism family (:attr:`StepSpec.mechanism`); a step without one is
    analysed as the generic (ε_k, δ_k) worst case (``approximate_dp``, the optimal composition
    theorem of Kairouz–Oh–Viswanath / Murtagh–Vadhan).

* :class:`OptDel` — Thm. 15: the *optimal* δ for every choice of (ε_k, δ_k)-DP steps and
  stopping rules, computed directly (not via Lemma 11) by :func:`odp.optdel.optdel_upper`.

Every δ returned is a rigorous rational **upper** bound; a rule that cannot certify a δ < 1 raises
:class:`~odp.errors.InvalidParameter`.  The steps of an iterative mechanism are adaptive (step k
may depend on the outputs of steps 1…k−1); basic composition, the optimal composition theorem
and OptDel hold adaptively, and the fixed worst-case pairs used by privacy buckets dominate
adaptive compositions of mechanisms each dominated by its pair.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Mapping, Sequence

from .budget import format_fraction, parse_delta, parse_epsilon
from .errors import InvalidParameter
from .guarantees import ODP
from .stops import parse_stops

__all__ = [
    "StepSpec",
    "PrefixComposition",
    "BasicComposition",
    "BucketsComposition",
    "DeltaRule",
    "Lemma11",
    "OptDel",
    "basic_costs",
    "parse_stops",
    "expand_steps",
    "output_length",
    "iterative_guarantee",
]


@dataclass(frozen=True)
class StepSpec:
    """The privacy description of one step of an iterative mechanism.

    ``epsilon``, ``delta``: the step is (ε_k, δ_k)-DP (parsed exactly).
    ``mechanism``: optional finer description for mechanism-aware composition theorems, in the
    JSON form of :func:`odp.buckets.mechanism_from_dict`, e.g.
    ``{"mechanism": "discrete_laplace", "scale": "1000", "sensitivity": 1}`` or
    ``{"mechanism": "gaussian", "sigma": "2", "sensitivity": "1"}``.  It must describe a pair
    that dominates the step on every pair of neighbouring databases.
    """

    epsilon: Fraction
    delta: Fraction = Fraction(0)
    mechanism: Mapping[str, Any] | None = field(default=None)

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", parse_epsilon(self.epsilon, name="step epsilon"))
        object.__setattr__(self, "delta", parse_delta(self.delta, name="step delta"))
        if self.mechanism is not None:
            if not isinstance(self.mechanism, Mapping) or "mechanism" not in self.mechanism:
                raise InvalidParameter(
                    "StepSpec.mechanism must be a dict such as {'mechanism': 'gaussian', "
                    "'sigma': '2', 'sensitivity': '1'}"
                )
            object.__setattr__(self, "mechanism", dict(self.mechanism))

    def worst_case_spec(self) -> dict[str, Any]:
        """The mechanism description used by mechanism-aware composition: :attr:`mechanism`, or
        the generic (ε_k, δ_k) worst case (Kairouz et al. 2017, Lemma 12 of paper 002)."""
        if self.mechanism is not None:
            return dict(self.mechanism)
        return {"mechanism": "approximate_dp", "epsilon": str(self.epsilon),
                "delta": str(self.delta)}

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"epsilon": str(self.epsilon), "delta": str(self.delta)}
        if self.mechanism is not None:
            out["mechanism"] = {k: (str(v) if isinstance(v, Fraction) else v)
                                for k, v in self.mechanism.items()}
        return out


def expand_steps(steps: StepSpec | Sequence[StepSpec], count: int) -> tuple[StepSpec, ...]:
    """``count`` step specs: a single :class:`StepSpec` is repeated, a sequence must have
    exactly ``count`` entries."""
    if isinstance(steps, StepSpec):
        return (steps,) * count
    out = tuple(steps)
    if len(out) != count or not all(isinstance(s, StepSpec) for s in out):
        raise InvalidParameter(
            f"give one StepSpec, or exactly {count} of them (one per step up to the last stop)"
        )
    return out


def basic_costs(stops: Sequence[int], steps: Sequence[StepSpec]) -> list[Fraction]:
    """The basic-composition costs ``ε^{k_i} = Σ_{k ≤ k_i} ε_k`` (exact)."""
    return [sum((s.epsilon for s in steps[:k]), Fraction(0)) for k in stops]


class PrefixComposition(ABC):
    """A DP composition theorem COMP for Lemma 11: ``delta_upper(steps, ε)`` is a rigorous upper
    bound on the δ with which the (adaptive) sequence ``steps`` is (ε, δ)-DP."""

    name: str = "composition"

    @abstractmethod
    def delta_upper(self, steps: Sequence[StepSpec], epsilon: Fraction) -> Fraction:
        """δ such that the steps compose to (ε, δ)-DP; ``InvalidParameter`` if none < 1."""

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name}


class BasicComposition(PrefixComposition):
    """Basic composition (Dwork, Kenthapadi, McSherry, Mironov, Naor 2006): k mechanisms that
    are (ε_k, δ_k)-DP compose to (Σ ε_k, Σ δ_k)-DP, adaptively.  It certifies nothing for
    ε < Σ ε_k."""

    name = "basic"

    def delta_upper(self, steps: Sequence[StepSpec], epsilon: Fraction) -> Fraction:
        epsilon = parse_epsilon(epsilon)
        total = sum((s.epsilon for s in steps), Fraction(0))
        if epsilon < total:
            raise InvalidParameter(
                f"basic composition needs epsilon >= the sum of the step epsilons "
                f"({format_fraction(total)}); got {format_fraction(epsilon)} — raise the cost or "
                "use a tighter composition theorem (BucketsComposition)"
            )
        return sum((s.delta for s in steps), Fraction(0))


class BucketsComposition(PrefixComposition):
    """Privacy buckets (paper 003) as COMP: :func:`odp.buckets.composition_delta_upper` on the
    steps' worst-case pairs (:meth:`StepSpec.worst_case_spec`), in order.  ``options`` go to
    :class:`odp.buckets.PrivacyBucketsAccountant` (``buckets``, ``factor``, ``tail_mass``)."""

    name = "privacy-buckets"

    def __init__(self, **options: Any):
        self.options = dict(options)

    def delta_upper(self, steps: Sequence[StepSpec], epsilon: Fraction) -> Fraction:
        from .buckets import composition_delta_upper, mechanism_from_dict

        groups: list[tuple[Any, int]] = []
        for step in steps:  # run-length encode equal steps (r-fold composition is cheaper)
            spec = step.worst_case_spec()
            if groups and groups[-1][0] == spec:
                groups[-1] = (spec, groups[-1][1] + 1)
            else:
                groups.append((spec, 1))
        mechanisms = [(mechanism_from_dict(spec), count) for spec, count in groups]
        return Fraction(composition_delta_upper(mechanisms, parse_epsilon(epsilon), **self.options))

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "options": {k: str(v) for k, v in self.options.items()}}


class DeltaRule(ABC):
    """Computes the ODP δ of an iterative mechanism (Alg. 3) from its stops ``k_1 < … < k_n``,
    the step descriptions ``steps`` (``k_n`` of them) and the costs ``ℰ(P_i)`` (one per stop).
    The result must be a rigorous rational upper bound."""

    name: str = "rule"

    @abstractmethod
    def delta_upper(self, stops: Sequence[int], steps: Sequence[StepSpec],
                    costs: Sequence[Fraction]) -> Fraction:
        """The ODP δ (upper bound)."""

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name}


class Lemma11(DeltaRule):
    """Lemma 11: ``δ = Σ_i COMP(M_1, …, M_{k_i}; ε^{k_i})`` for a composition theorem COMP
    (:class:`BasicComposition` by default)."""

    def __init__(self, composition: PrefixComposition | None = None):
        self.composition = composition if composition is not None else BasicComposition()
        self.name = f"lemma11[{self.composition.name}]"

    def per_stop(self, stops: Sequence[int], steps: Sequence[StepSpec],
                 costs: Sequence[Fraction]) -> list[Fraction]:
        """``δ^{k_i} = COMP(M_1..M_{k_i}; ε^{k_i})`` for each stop."""
        return [Fraction(self.composition.delta_upper(steps[:k], cost))
                for k, cost in zip(stops, costs)]

    def delta_upper(self, stops: Sequence[int], steps: Sequence[StepSpec],
                    costs: Sequence[Fraction]) -> Fraction:
        return sum(self.per_stop(stops, steps, costs), Fraction(0))

    def to_json(self) -> dict[str, Any]:
        return {"name": "lemma11", "composition": self.composition.to_json()}


class OptDel(DeltaRule):
    """Thm. 15 (paper 002): the smallest δ valid for *every* sequence of (ε_k, δ_k)-DP steps and
    stopping rules, as a rigorous upper bound (:func:`odp.optdel.optdel_upper`).  Only the
    (ε_k, δ_k) of the steps are used."""

    name = "optdel"

    def __init__(self, **options: Any):
        self.options = dict(options)

    def delta_upper(self, stops: Sequence[int], steps: Sequence[StepSpec],
                    costs: Sequence[Fraction]) -> Fraction:
        from .optdel import optdel_upper

        return Fraction(optdel_upper(list(stops), [(s.epsilon, s.delta) for s in steps],
                                     list(costs), **self.options))


def output_length(release: Any) -> int:
    """The partition of Alg. 3 (Sec. 5): the number of steps in the release.  A release object
    with a ``steps`` attribute is measured by it (e.g. a fitted model that carries its noisy
    gradients)."""
    steps = getattr(release, "steps", release)
    return len(steps)


def iterative_guarantee(stops: Any, steps: StepSpec | Sequence[StepSpec],
                        costs: Sequence[Any] | None = None,
                        rule: DeltaRule | None = None) -> tuple[ODP, dict[str, Any]]:
    """The (𝒫, ℰ, δ)-ODP guarantee of an iterative mechanism (Alg. 3, Lemma 11 / Thm. 15).

    Returns ``(guarantee, details)``: classes are the stop lengths ``k_i`` (int labels),
    ``ℰ(P_i)`` the given ``costs`` (default: basic-composition prefix sums), and δ from
    ``rule`` (default: Lemma 11 with basic composition).  ``details`` is JSON-able."""
    stops = parse_stops(stops)
    spec = expand_steps(steps, stops[-1])
    if costs is None:
        cost_list = basic_costs(stops, spec)
    else:
        cost_list = [parse_epsilon(c, name="cost") for c in costs]
        if len(cost_list) != len(stops):
            raise InvalidParameter(f"give one cost per stopping point ({len(stops)}), "
                                   f"got {len(cost_list)}")
    rule = rule if rule is not None else Lemma11()
    delta = Fraction(rule.delta_upper(stops, spec, cost_list))
    if delta >= 1:
        raise InvalidParameter(f"the {rule.name} delta is {format_fraction(delta)} >= 1: "
                               "lower the step deltas or raise the costs")
    guarantee = ODP(output_length, dict(zip(stops, cost_list)), delta)
    details = {
        "stops": list(stops),
        "costs": [str(c) for c in cost_list],
        "delta": str(delta),
        "rule": rule.to_json(),
        "steps": _compress_steps(spec),
    }
    return guarantee, details


def _compress_steps(steps: Sequence[StepSpec]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for s in steps:
        js = s.to_json()
        if out and out[-1]["step"] == js:
            out[-1]["count"] += 1
        else:
            out.append({"step": js, "count": 1})
    return out

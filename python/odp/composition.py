"""Composition theorems for iterative mechanisms with early stopping (Hartmann et al. 2022, Sec. 5).

An iterative mechanism (Alg. 3) runs steps ``M_1, M_2, …`` and may stop after ``k_1 < k_2 < …
< k_n`` steps; its ODP partition is the output length, class ``P_i`` = "stopped after ``k_i``
steps", with cost ``ℰ(P_i) = ε^{k_i}``.  The one δ of its (𝒫, ℰ, δ)-ODP guarantee comes from a
*δ rule* (:class:`DeltaRule`):

* :class:`PrefixDeltaSum` — Lemma 11: for any DP composition theorem COMP that applies to the
  steps, ``δ = Σ_i COMP(M_1, …, M_{k_i}; ε^{k_i})``, the sum over the stops of the δ of each
  prefix.  COMP is a :class:`PrefixComposition`:

  - :class:`BasicComposition` — ``COMP(steps; ε) = Σ_k δ_k`` when ``ε ≥ Σ_k ε_k`` (Dwork et al.
    2006), exact rationals.  With it the default costs are the prefix sums ``Σ_{k ≤ k_i} ε_k``.
  - :class:`BucketsComposition` — privacy buckets (Meiser & Mohammadi 2018, :mod:`odp.buckets`):
    a rigorous upper bound on the tight δ(ε) of the steps' worst-case pairs.  Each step must
    then describe its mechanism family (:attr:`StepSpec.mechanism`); a step without one is
    analysed as the generic (ε_k, δ_k) worst case (``approximate_dp``, the optimal composition
    theorem of Kairouz–Oh–Viswanath / Murtagh–Vadhan).
  - :class:`RDPComposition` — Rényi DP: the steps' RDP curves (from :attr:`StepSpec.mechanism`,
    e.g. DP-SGD's Poisson-subsampled discrete Gaussian, :mod:`odp.subsampled_rdp`) add at every
    order (Mironov 2017, Prop. 1, adaptively), and ``δ(ε)`` is a sound RDP → DP conversion,
    tighter than Mironov's but not the optimal one (Canonne–Kamath–Steinke 2020, Prop. 12;
    Balle et al. 2020, Thm. 21), at the best order.
  - :class:`ReplaceOneComposition` — wraps an add/remove COMP for replace-one neighbours (two
    add/remove steps apart): group privacy ``(ε, δ) ↦ (2ε, (1 + e^ε)δ)``.

  A COMP also inverts itself: :meth:`PrefixComposition.epsilon_upper` is the ε it certifies at
  a given δ (used to choose the costs ``ε^{k_i}`` of Lemma 11).

* :class:`OptimalDelta` — Thm. 15 ("OptDel"): the *optimal* δ for every choice of (ε_k, δ_k)-DP
  steps and stopping rules, computed directly (not via Lemma 11) by
  :func:`odp.optdel.optdel_upper`.

The paper's names stay available here as aliases: ``Lemma11`` is :class:`PrefixDeltaSum` and
``OptDel`` is :class:`OptimalDelta`.

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
from .rational import bisect_on_grid
from .stops import parse_stops

__all__ = [
    "StepSpec",
    "PrefixComposition",
    "BasicComposition",
    "BucketsComposition",
    "RDPComposition",
    "ReplaceOneComposition",
    "step_rdp",
    "DeltaRule",
    "PrefixDeltaSum",
    "OptimalDelta",
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
        the generic (ε_k, δ_k) worst case (Kairouz et al. 2017, Hartmann et al. 2022, Lemma 12)."""
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

    def epsilon_upper(self, steps: Sequence[StepSpec], delta: Fraction) -> Fraction:
        """An ε (a multiple of 10⁻⁹) with ``delta_upper(steps, ε) <= delta``: bisection on the
        non-increasing δ(ε).  Subclasses with a closed form override it."""
        target = parse_delta(delta)
        unit = Fraction(1, 10**9)
        self.check(steps)  # a step this COMP cannot analyse is said as such, not as "no ε"
        why: list[str] = []

        def ok(e: Fraction) -> bool:
            try:
                return self.delta_upper(steps, e) <= target
            except InvalidParameter as exc:  # certifies nothing at this ε
                why[:] = [str(exc)]
                return False

        hi = Fraction(1)
        while not ok(hi):
            hi *= 2
            if hi > 10**6:
                last = f" (at ε = {format_fraction(hi / 2)}: {why[0]})" if why else ""
                raise InvalidParameter(f"{self.name}: no ε below 1e6 certifies "
                                       f"δ = {format_fraction(target)}{last}")
        if ok(Fraction(0)):
            return Fraction(0)
        return bisect_on_grid(ok, Fraction(0), hi, unit.denominator)

    def check(self, steps: Sequence[StepSpec]) -> None:
        """Raise :class:`InvalidParameter` if this COMP cannot analyse some step at all
        (whatever ε): called before a search for ε, so that such a step is reported as itself
        and not as "no ε certifies δ".  The default accepts every step."""

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
    """Privacy buckets (Meiser and Mohammadi 2018) as COMP:
    :func:`odp.buckets.composition_delta_upper` on the steps' worst-case pairs
    (:meth:`StepSpec.worst_case_spec`), in order.  ``options`` go to
    :class:`odp.buckets.PrivacyBucketsAccountant` (``buckets``, ``factor``, ``tail_mass``)."""

    name = "privacy-buckets"

    def __init__(self, **options: Any):
        self.options = dict(options)

    def check(self, steps: Sequence[StepSpec]) -> None:
        """Every step's description must be a pair privacy buckets can build
        (:func:`odp.buckets.mechanism_from_dict`).  DP-SGD's Poisson-subsampled *discrete*
        Gaussian (``subsampled_discrete_gaussian``, :class:`odp.mechanisms.DPSGD`) has no such
        pair: its shift is any integer vector of norm at most √K, and no one-dimensional pair is
        shown to dominate that (use :class:`RDPComposition`, DPSGD's default)."""
        from .buckets import mechanism_from_dict

        seen: list[dict[str, Any]] = []
        for step in steps:
            spec = step.worst_case_spec()
            if spec in seen:
                continue
            seen.append(spec)
            kind = spec.get("mechanism")
            if kind == "subsampled_discrete_gaussian":
                raise InvalidParameter(
                    "privacy buckets has no pair for DP-SGD's Poisson-subsampled discrete "
                    "Gaussian step ('subsampled_discrete_gaussian'): use RDPComposition() (the "
                    "default of DPSGD); for a continuous Gaussian step use the 'poisson_gaussian' "
                    "pair (odp.dpsgd.Accounting(composition='buckets'))")
            try:
                mechanism_from_dict(spec)
            except (InvalidParameter, TypeError) as exc:
                raise InvalidParameter(
                    f"privacy buckets cannot analyse the step {spec}: {exc}") from None

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


def step_rdp(step: StepSpec, alpha: Any) -> Fraction:
    """An upper bound on the order-α Rényi DP of one step, from its description
    (:attr:`StepSpec.mechanism`; add/remove neighbours for the subsampled ones):

    * ``{"mechanism": "subsampled_discrete_gaussian", "q": …, "sigma": …}`` — DP-SGD's
      Poisson-subsampled discrete Gaussian step with noise multiplier σ (integer α only;
      :func:`odp.subsampled_rdp.subsampled_discrete_gaussian_rdp`);
    * ``{"mechanism": "subsampled_gaussian", "q": …, "sigma": …}`` — the continuous sampled
      Gaussian of sensitivity 1 (:func:`odp.rdp.subsampled_gaussian_rdp`, MTZ 2019);
    * ``{"mechanism": "gaussian" | "discrete_gaussian", "sigma": …, "sensitivity": …}`` —
      ``αΔ²/(2σ²)`` (Mironov 2017, Table II; CKS 2020, Prop. 5 for the discrete one, integer Δ);
    * no description and ``δ_k = 0``: the ε_k-DP step is ``(α, min(ε_k, αε_k²/2))``-RDP.

    Anything else raises :class:`InvalidParameter` (an (ε_k, δ_k > 0) step has no RDP curve)."""
    from .budget import parse_alpha, parse_positive
    from .conversions import pure_dp_to_rdp
    from .rdp import subsampled_gaussian_rdp
    from .subsampled_rdp import subsampled_discrete_gaussian_rdp

    a = parse_alpha(alpha)
    spec = step.mechanism
    if spec is None:
        if step.delta != 0:
            raise InvalidParameter(
                "RDP composition needs each step's mechanism (StepSpec.mechanism) or a pure "
                f"ε-DP step; got an ({format_fraction(step.epsilon)}, "
                f"{format_fraction(step.delta)})-DP step without one")
        return pure_dp_to_rdp(step.epsilon, a)
    kind = spec.get("mechanism")
    try:
        if kind == "subsampled_discrete_gaussian":
            return subsampled_discrete_gaussian_rdp(spec["q"], spec["sigma"], a)
        if kind == "subsampled_gaussian":
            if parse_positive(spec.get("sensitivity", 1), name="sensitivity") != 1:
                raise InvalidParameter("subsampled_gaussian steps have sensitivity 1 (scale σ)")
            return subsampled_gaussian_rdp(spec["q"], spec["sigma"], a)
        if kind in ("gaussian", "discrete_gaussian"):
            sigma = parse_positive(spec["sigma"], name="sigma")
            sens = parse_positive(spec.get("sensitivity", 1), name="sensitivity")
            if kind == "discrete_gaussian" and sens.denominator != 1:
                raise InvalidParameter("the discrete Gaussian needs an integer sensitivity")
            return a * sens * sens / (2 * sigma * sigma)
    except KeyError as exc:
        raise InvalidParameter(f"the step description {dict(spec)} lacks {exc}") from None
    raise InvalidParameter(
        f"RDP composition does not know the mechanism {kind!r}; known: subsampled_discrete_"
        "gaussian, subsampled_gaussian, gaussian, discrete_gaussian (or a pure ε-DP step)")


class RDPComposition(PrefixComposition):
    """Rényi-DP composition as COMP (Lemma 11 "with RDP as COMP"): the steps' RDP values
    (:func:`step_rdp`) add at every order of ``orders`` (Mironov 2017, Prop. 1; adaptive
    composition), and

        δ(ε) = min_α  e^{(α−1)(ε_α − ε)} · (α−1)^{α−1} / α^α

    — a sound RDP → DP conversion, tighter than Mironov 2017's (Canonne, Kamath, Steinke 2020,
    Prop. 12; Balle et al. 2020, Thm. 21; :func:`odp.conversions.rdp_to_dp_epsilon` solved
    for δ), evaluated with rigorous brackets and rounded up.  It is not the optimal conversion:
    for RDP(2, 0.5) at δ = 1e-5 it gives ε = 10.6266, where the optimal one gives at most
    9.694 (tests/test_conversion_claims.py).  :meth:`epsilon_upper` is the inverse, the best
    order of :func:`odp.conversions.best_rdp_to_dp`.  Default orders: the integers of
    :data:`odp.subsampled_rdp.INTEGER_ORDERS` (the discrete step is accounted at integer orders).

    Neighbours are those of the steps' descriptions (add/remove for DP-SGD); wrap it in
    :class:`ReplaceOneComposition` for replace-one neighbours."""

    name = "rdp"

    def __init__(self, orders: Sequence[Any] | None = None):
        from .budget import parse_alpha
        from .subsampled_rdp import INTEGER_ORDERS

        raw = INTEGER_ORDERS if orders is None else orders
        if isinstance(raw, (str, bytes)):
            raise InvalidParameter("orders must be a sequence of Rényi orders > 1")
        parsed = tuple(sorted({parse_alpha(a) for a in raw}))
        if not parsed:
            raise InvalidParameter("orders must not be empty")
        self.orders = parsed
        self._cache: dict[tuple[Any, Fraction], Fraction] = {}

    def _value(self, step: StepSpec, alpha: Fraction) -> Fraction:
        key = (_spec_key(step), alpha)
        if key not in self._cache:
            self._cache[key] = step_rdp(step, alpha)
        return self._cache[key]

    def curve(self, steps: Sequence[StepSpec]) -> dict[Fraction, Fraction]:
        """``{α: Σ_k ε_k(α)}`` over the orders (equal consecutive steps counted once)."""
        groups: list[tuple[StepSpec, int]] = []
        for step in steps:
            if groups and groups[-1][0] == step:
                groups[-1] = (step, groups[-1][1] + 1)
            else:
                groups.append((step, 1))
        return {a: sum((count * self._value(step, a) for step, count in groups), Fraction(0))
                for a in self.orders}

    def delta_upper(self, steps: Sequence[StepSpec], epsilon: Fraction) -> Fraction:
        from .floats import round_up_significant
        from .rational import exp_bracket, log_bracket

        eps = parse_epsilon(epsilon)
        best = Fraction(1)
        for a, total in self.curve(steps).items():
            x = (a - 1) * (total - eps)
            if x > 1000:  # δ > 1 at this order (skipping an order only loses tightness)
                continue
            if a.denominator == 1:  # (α−1)^{α−1}/α^α exactly
                ai = int(a)
                value = exp_bracket(x)[1] * Fraction((ai - 1) ** (ai - 1), ai**ai)
            else:  # e^{x + (α−1)ln(α−1) − α ln α}, each logarithm bracketed outward
                log_factor = (a - 1) * log_bracket(a - 1)[1] - a * log_bracket(a)[0]
                value = exp_bracket(x + log_factor)[1]
            best = min(best, value)
        if best >= 1:
            raise InvalidParameter(
                f"RDP composition certifies no δ < 1 at ε = {format_fraction(eps)} for these "
                f"{len(steps)} steps: raise ε or the noise")
        return round_up_significant(best, 20)

    def epsilon_upper(self, steps: Sequence[StepSpec], delta: Fraction) -> Fraction:
        from .conversions import best_rdp_to_dp

        return best_rdp_to_dp(self.curve(steps), delta)[0]

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "orders": [str(a) for a in self.orders]}


def _spec_key(step: StepSpec) -> Any:
    mech = step.mechanism
    items = tuple(sorted((k, str(v)) for k, v in mech.items())) if mech is not None else None
    return (step.epsilon, step.delta, items)


class ReplaceOneComposition(PrefixComposition):
    """An add/remove COMP turned into one for **replace-one** neighbours.  Replacing a record
    is removing it and adding the new one, so replace-one neighbours ``x, x'`` are two add/remove
    steps apart (through ``x`` minus the record); if the steps are ``(ε, δ)``-DP for add/remove,
    then ``Pr[M(x) ∈ S] ≤ e^ε(e^ε Pr[M(x') ∈ S] + δ) + δ`` (group privacy, Dwork & Roth 2014,
    Thm. 2.2 for δ = 0, the same two lines for δ > 0): ``(2ε, (1 + e^ε)δ)``-DP.  So
    ``δ_rep(ε) = (1 + e^{ε/2}) · δ_inner(ε/2)`` (``e^{ε/2}`` bracketed from above).

    The mechanism must be defined on databases of every size (DP-SGD is: it normalises by a
    public size, never by the data's).  The result holds for :attr:`odp.Neighbours.REPLACE_ONE`
    (:mod:`odp.neighbours`), the relation of a default accountant."""

    def __init__(self, inner: PrefixComposition):
        if not isinstance(inner, PrefixComposition):
            raise InvalidParameter("ReplaceOneComposition wraps a PrefixComposition")
        self.inner = inner
        self.name = f"replace-one[{inner.name}]"

    def delta_upper(self, steps: Sequence[StepSpec], epsilon: Fraction) -> Fraction:
        from .rational import exp_bracket

        half = parse_epsilon(epsilon) / 2
        return (1 + exp_bracket(half)[1]) * self.inner.delta_upper(steps, half)

    def epsilon_upper(self, steps: Sequence[StepSpec], delta: Fraction) -> Fraction:
        """``2ε'`` where ``ε' = inner.epsilon_upper(δ/(1 + e^{ε'' }))`` for an ``ε'' ≥ ε'`` found
        by iteration, so that ``(1 + e^{ε'})·δ_inner(ε') ≤ δ``."""
        from .rational import exp_bracket

        target = parse_delta(delta)
        margin = Fraction(1, 1000)
        guess = self.inner.epsilon_upper(steps, target / 2)
        for _ in range(60):
            share = target / (1 + exp_bracket(guess + margin)[1])
            eps = self.inner.epsilon_upper(steps, share)
            if eps <= guess + margin:
                return 2 * eps
            guess = eps
        raise InvalidParameter("replace-one: the ε iteration did not settle")  # pragma: no cover

    def to_json(self) -> dict[str, Any]:
        return {"name": "replace-one", "inner": self.inner.to_json()}


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


class PrefixDeltaSum(DeltaRule):
    """The sum over the stops of the δ of each prefix: ``δ = Σ_i COMP(M_1, …, M_{k_i};
    ε^{k_i})`` for a composition theorem COMP (:class:`BasicComposition` by default) —
    Hartmann et al. 2022, Lemma 11 (alias ``Lemma11``)."""

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


class OptimalDelta(DeltaRule):
    """The smallest δ valid for *every* sequence of (ε_k, δ_k)-DP steps and stopping rules, as a
    rigorous upper bound (:func:`odp.optdel.optdel_upper`) — Hartmann et al. 2022, Thm. 15
    ("OptDel", alias ``OptDel``).  Only the (ε_k, δ_k) of the steps are used."""

    name = "optdel"

    def __init__(self, **options: Any):
        self.options = dict(options)

    def delta_upper(self, stops: Sequence[int], steps: Sequence[StepSpec],
                    costs: Sequence[Fraction]) -> Fraction:
        from .optdel import optdel_upper

        return Fraction(optdel_upper(list(stops), [(s.epsilon, s.delta) for s in steps],
                                     list(costs), **self.options))


#: The paper's names (Hartmann et al. 2022, Lemma 11 and Thm. 15's OptDel).
Lemma11 = PrefixDeltaSum
OptDel = OptimalDelta


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
    ``rule`` (default: Lemma 11 with basic composition).  ``details`` is JSON-able; with a
    :class:`PrefixDeltaSum` rule it records the per-stop ``δ^{k_i} = COMP(M_1..M_{k_i}; ε^{k_i})``
    (``stop_deltas``, summing to the δ), which a certificate's ``mech lemma11`` row carries
    (:mod:`odp.certs.mechanisms`)."""
    stops = parse_stops(stops)
    spec = expand_steps(steps, stops[-1])
    if costs is None:
        cost_list = basic_costs(stops, spec)
    else:
        cost_list = [parse_epsilon(c, name="cost") for c in costs]
        if len(cost_list) != len(stops):
            raise InvalidParameter(f"give one cost per stopping point ({len(stops)}), "
                                   f"got {len(cost_list)}")
    rule = rule if rule is not None else PrefixDeltaSum()
    per_stop = rule.per_stop(stops, spec, cost_list) if isinstance(rule, PrefixDeltaSum) else None
    delta = (sum(per_stop, Fraction(0)) if per_stop is not None
             else Fraction(rule.delta_upper(stops, spec, cost_list)))
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
    if per_stop is not None:  # Lemma 11's δ^{k_i}, for the certificate's ``mech lemma11`` row
        details["stop_deltas"] = [str(d) for d in per_stop]
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

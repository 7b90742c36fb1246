"""The privacy vocabulary of odp: every guarantee and cost that crosses a module boundary.

One frozen, typed value per notion of privacy (in the spirit of dp-accounting's ``DpEvent``
and OpenDP's measures), each with exact ``Fraction`` fields, validation at construction,
``__eq__``/``__hash__`` and a lossless JSON form (``to_json`` / ``from_json``):

* :class:`DP`, :class:`ODP`, :class:`SubsetDP` — the paper's guarantees (below);
* :class:`GuaranteeRecord` — an ODP guarantee as a ledger row and a certificate record it (its
  classes in order with their exact costs, δ, and Lemma 6's per-class deltas; the partition
  function itself is code and is not recorded);
* :class:`ZCDP`, :class:`RDP` — the zCDP / Rényi-DP costs used by :mod:`odp.filters`;
* :class:`GDP` — a μ-Gaussian-DP guarantee (chargeable to an accountant after conversion);
* :data:`PrivacyCost` — any of those, as held by filters and :mod:`odp.interactive`;
  :data:`CostLike` — what the public API accepts and normalises to one of them.

The privacy-loss pairs of :mod:`odp.buckets` (``PLDMechanism`` and its subclasses) are frozen
dataclasses with the same JSON discipline (``describe`` / ``mechanism_from_dict``).

Privacy guarantees as values: ``DP`` (Def. 1), ``ODP`` (Def. 2) and ``SubsetDP`` (Def. 5).

Paper: Hartmann, Bindschaedler, Bentkamp, West, *Privacy accounting εconomics* (PoPETs 2022),
Section 3.  A guarantee is declared by a mechanism *before* it runs and never depends on the data.

* :class:`DP` — (ε, δ)-differential privacy (Def. 1).
* :class:`ODP` — (𝒫, ℰ, δ)-output differential privacy (Def. 2): a *partition* of the output
  space, given as a total, data-independent function ``partition(output) -> label``, a cost
  ``ℰ(P_k)`` per class label ``k`` and one δ.  ``Pr(M(x) ∈ S) ≤ δ + Σ_k e^{ℰ(P_k)}
  Pr(M(x') ∈ S ∩ P_k)``.
* :class:`SubsetDP` — (R, ε, δ)-subset DP (Def. 5): the DP inequality for subsets of one class.

Conversions (the lemma numbers are the paper's):

* Lemma 3: ``DP(ε, δ).to_odp(partition)`` — any partition with the constant cost ε.
* Lemma 4: ``ODP.to_dp()`` — (sup_k ℰ(P_k), δ)-DP; ``ODP.sup_epsilon`` is that sup.
* Lemma 6: ``ODP.from_subset_dp(partition, {k: SubsetDP(k, ε_k, Δ_k)})`` — ODP with ℰ(P_k) = ε_k
  and δ = Σ_k Δ_k.

Class labels must be ``str`` or ``int`` so that they can be written to a ledger.  The labels
of a partition are exactly the keys of ``costs``: a release whose label is not among them is an
:class:`~odp.errors.InvalidGuarantee` (the partition must be total).
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Callable, Hashable, Mapping, Protocol, Union

from .budget import (Budget, Number, display_named, format_fraction, parse_alpha, parse_delta,
                     parse_epsilon)
from .errors import InvalidBudget, InvalidGuarantee, InvalidParameter
from .samplers import RandomSource

__all__ = ["Data", "Release", "MechanismLike", "Label", "Partition", "ALL", "trivial_partition", "DP", "ODP", "SubsetDP",
           "GuaranteeRecord", "ZCDP", "RDP", "GDP", "Guarantee", "PrivacyCost", "CostLike",
           "DeclaresGuarantee", "as_odp", "cost_from_json"]

#: A mechanism's dataset and its release (a number, an array, a tuple of answers, ⊥ …) are
#: opaque to the accounting, which sees a release only through the declared partition: ``Any``.
Data = Any
Release = Any

#: A class label of a partition: ``str`` or ``int`` (JSON scalars, so a ledger can record it).
Label = Union[str, int]
#: A partition of the output space: a total, data-independent map release -> class label.  A
#: release is whatever a mechanism outputs (a number, an array, a tuple, ⊥ …), hence ``Any``.
Partition = Callable[[Any], Label]

#: Label of the single class of the trivial partition used by Lemma 3 when none is given.
ALL = "all"


def trivial_partition(_release: Any) -> Label:
    """The one-class partition {Range(M)} (every output in class ``"all"``)."""
    return ALL


def _check_label(label: Any) -> Label:
    """A class label: ``str`` or an integer (numpy integers are converted to ``int`` so that
    they can be recorded as JSON); ``bool`` is refused (it would collide with 0 and 1)."""
    if isinstance(label, str):
        return label
    if isinstance(label, numbers.Integral) and not isinstance(label, bool):
        return int(label)  # numpy.bool_ is not Integral
    raise InvalidGuarantee(
        f"class labels must be str or int (so they can be recorded), got {label!r}"
    )


class DP:
    """(ε, δ)-differential privacy (Def. 1).  Takes the same inputs as :class:`odp.Budget`."""

    __slots__ = ("_budget", "_odp")

    def __init__(self, epsilon: Number, delta: Number = 0):
        self._budget = Budget(epsilon, delta)
        self._odp: ODP | None = None

    @property
    def epsilon(self) -> Fraction:
        return self._budget.epsilon

    @property
    def delta(self) -> Fraction:
        return self._budget.delta

    @property
    def sup_epsilon(self) -> Fraction:
        return self._budget.epsilon

    def to_odp(self, partition: Partition | None = None, labels: tuple[Label, ...] | None = None
               ) -> "ODP":
        """Lemma 3: an (ε, δ)-DP mechanism is (𝒫, ℰ ≡ ε, δ)-ODP for any partition 𝒫.

        Without arguments the trivial one-class partition is used.  With a ``partition`` its
        ``labels`` (all class labels it can return) must be given.
        """
        if partition is None:
            return ODP(trivial_partition, {ALL: self.epsilon}, self.delta)
        if not labels:
            raise InvalidGuarantee("to_odp(partition) needs the labels the partition can return")
        return ODP(partition, {label: self.epsilon for label in labels}, self.delta)

    def as_odp(self) -> "ODP":
        """The form the accountant uses (Lemma 3 with the trivial partition); cached."""
        if self._odp is None:
            self._odp = self.to_odp()
        return self._odp

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DP) and self._budget == other._budget

    def __hash__(self) -> int:
        return hash(("DP", self._budget))

    def __repr__(self) -> str:
        return f"DP(epsilon={format_fraction(self.epsilon)}, delta={format_fraction(self.delta)})"

    def to_json(self) -> dict[str, str]:
        return {"type": "DP", "epsilon": str(self.epsilon), "delta": str(self.delta)}

    @classmethod
    def from_json(cls, data: object) -> "DP":
        """The inverse of :meth:`to_json` (exact; ``InvalidGuarantee`` on anything else)."""
        obj = _json_object(data, "DP", ("epsilon", "delta"))
        try:
            return cls(_exact_text(obj["epsilon"], "epsilon"), _exact_text(obj["delta"], "delta"))
        except InvalidBudget as exc:
            raise InvalidGuarantee(str(exc)) from None


class ODP:
    """(𝒫, ℰ, δ)-output differential privacy (Def. 2).

    Parameters
    ----------
    partition:
        Total, data-independent function from a release to its class label (``str``/``int``).
        It must look only at the release, never at the data.
    costs:
        ``{label: ℰ(P_label)}`` — the ε charged when the release falls in that class.  The keys
        are all the classes the partition can return.
    delta:
        The one δ of the guarantee.  It is charged whatever the class (paper, Sec. 3.2: a
        class-dependent δ is unsound — see ``tests/test_exact_composition.py``).
    """

    __slots__ = ("_partition", "_costs", "_delta", "_sup", "_class_deltas", "_record")

    def __init__(self, partition: Partition, costs: Mapping[Label, Number], delta: Number = 0):
        if not callable(partition):
            raise InvalidGuarantee("partition must be a function release -> class label")
        if not isinstance(costs, Mapping) or not costs:
            raise InvalidGuarantee("costs must be a non-empty mapping {class label: epsilon}")
        parsed: dict[Label, Fraction] = {}
        for raw_label, cost in costs.items():
            label = _check_label(raw_label)
            try:
                parsed[label] = parse_epsilon(cost, name=f"cost of class {label!r}")
            except InvalidBudget as exc:
                raise InvalidGuarantee(str(exc)) from None
        try:
            self._delta = parse_delta(delta)
        except InvalidBudget as exc:
            raise InvalidGuarantee(str(exc)) from None
        self._partition = partition
        self._costs = parsed
        self._sup = max(parsed.values())
        self._class_deltas: dict[Label, Fraction] | None = None
        self._record: GuaranteeRecord | None = None

    @property
    def partition(self) -> Partition:
        return self._partition

    @property
    def costs(self) -> dict[Label, Fraction]:
        return dict(self._costs)

    @property
    def delta(self) -> Fraction:
        return self._delta

    @property
    def sup_epsilon(self) -> Fraction:
        """sup_k ℰ(P_k): the DP ε of the mechanism by Lemma 4 (what Alg. 1 line 4 checks)."""
        return self._sup

    @property
    def class_deltas(self) -> dict[Label, Fraction] | None:
        """The per-class Δ(P_k) when the guarantee was built by Lemma 6 (``from_subset_dp``),
        else None.  Informational (certificates cite Lemma 6 with them); the δ charged is
        always :attr:`delta`."""
        return None if self._class_deltas is None else dict(self._class_deltas)

    def classify(self, release: Any) -> Label:
        """The class label of ``release`` (Alg. 1 line 6).  Raises ``InvalidGuarantee`` if the
        partition fails or returns a label without a declared cost."""
        try:
            label = self._partition(release)
        except Exception as exc:  # the partition is user code
            raise InvalidGuarantee(f"the partition function failed on the release: {exc!r}") from exc
        checked: Label | None
        try:
            checked = _check_label(label)
        except InvalidGuarantee:
            checked = None
        if checked is None or checked not in self._costs:
            raise InvalidGuarantee(
                f"the partition returned {checked!r}, which is not a declared class "
                f"({', '.join(map(repr, self._costs))}); the partition must be total"
            )
        return checked

    def cost(self, label: Label) -> Fraction:
        """ℰ(P_label)."""
        try:
            return self._costs[label]
        except KeyError:
            raise InvalidGuarantee(f"unknown class {label!r}") from None

    def to_dp(self) -> DP:
        """Lemma 4: a (𝒫, ℰ, δ)-ODP mechanism is (sup_k ℰ(P_k), δ)-DP."""
        return DP(self._sup, self._delta)

    def as_odp(self) -> "ODP":
        return self

    @classmethod
    def from_dp(cls, dp: DP, partition: Partition | None = None,
                labels: tuple[Label, ...] | None = None) -> "ODP":
        """Lemma 3 (see :meth:`DP.to_odp`)."""
        return dp.to_odp(partition, labels)

    @classmethod
    def from_subset_dp(cls, partition: Partition, per_class: Mapping[Label, "SubsetDP"]) -> "ODP":
        """Lemma 6: if M is (P_k, ℰ(P_k), Δ(P_k))-subset DP for every class k, then M is
        (𝒫, ℰ, Σ_k Δ(P_k))-ODP.  ``per_class[k]`` must be the subset-DP guarantee of class k."""
        if not per_class:
            raise InvalidGuarantee("from_subset_dp needs one SubsetDP per class")
        costs: dict[Label, Fraction] = {}
        total_delta = Fraction(0)
        for label, guarantee in per_class.items():
            if not isinstance(guarantee, SubsetDP):
                raise InvalidGuarantee(f"class {label!r}: expected a SubsetDP, got {guarantee!r}")
            if guarantee.region != label:
                raise InvalidGuarantee(
                    f"class {label!r}: the SubsetDP is for region {guarantee.region!r}"
                )
            costs[label] = guarantee.epsilon
            total_delta += guarantee.delta
        if total_delta >= 1:
            raise InvalidGuarantee(f"sum of the per-class deltas is >= 1: {total_delta}")
        result = cls(partition, costs, total_delta)
        result._class_deltas = {label: g.delta for label, g in per_class.items()}
        result._record = None
        return result

    def __repr__(self) -> str:
        costs = ", ".join(f"{k!r}: {format_fraction(v)}" for k, v in self._costs.items())
        return f"ODP(costs={{{costs}}}, delta={format_fraction(self._delta)})"

    def record(self) -> "GuaranteeRecord":
        """What a ledger row and a certificate record of this guarantee (all but the
        partition function): its classes in declaration order with their costs, δ and, after
        Lemma 6, the per-class deltas."""
        if self._record is None:  # cached: the guarantee is immutable once built
            self._record = GuaranteeRecord._trusted(
                tuple(self._costs.items()), self._delta,
                None if self._class_deltas is None else tuple(self._class_deltas.items()))
        return self._record

    def __eq__(self, other: object) -> bool:
        """Equal when the partition is the same function and the records are equal."""
        return (isinstance(other, ODP) and self._partition == other._partition
                and self.record() == other.record())

    def __hash__(self) -> int:
        return hash(("ODP", self.record()))

    def to_json(self) -> dict[str, Any]:  # Any: JSON values (see GuaranteeRecord.to_json)
        return self.record().to_json()

    @classmethod
    def from_json(cls, data: object, partition: Partition) -> "ODP":
        """The inverse of :meth:`to_json` given the partition function (which is code, not
        data): ``ODP.from_json(g.to_json(), g.partition) == g``."""
        return GuaranteeRecord.from_json(data).with_partition(partition)


class SubsetDP:
    """(R, ε, δ)-subset differential privacy (Def. 5) for the class (region) ``region``:
    ``Pr(M(x) ∈ S) ≤ e^ε Pr(M(x') ∈ S) + δ`` for all ``S ⊆ R``."""

    __slots__ = ("region", "_budget")

    def __init__(self, region: Hashable, epsilon: Number, delta: Number = 0):
        self.region = _check_label(region)
        self._budget = Budget(epsilon, delta)

    @property
    def epsilon(self) -> Fraction:
        return self._budget.epsilon

    @property
    def delta(self) -> Fraction:
        return self._budget.delta

    def __repr__(self) -> str:
        return (
            f"SubsetDP(region={self.region!r}, epsilon={format_fraction(self.epsilon)}, "
            f"delta={format_fraction(self.delta)})"
        )

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, SubsetDP) and type(self.region) is type(other.region)
                and self.region == other.region and self._budget == other._budget)

    def __hash__(self) -> int:
        return hash(("SubsetDP", self.region, self._budget))

    def to_json(self) -> dict[str, Any]:  # Any: the region is a JSON str or int
        return {"type": "SubsetDP", "region": self.region, "epsilon": str(self.epsilon),
                "delta": str(self.delta)}

    @classmethod
    def from_json(cls, data: object) -> "SubsetDP":
        obj = _json_object(data, "SubsetDP", ("region", "epsilon", "delta"))
        try:
            return cls(obj["region"], _exact_text(obj["epsilon"], "epsilon"),
                       _exact_text(obj["delta"], "delta"))
        except InvalidBudget as exc:
            raise InvalidGuarantee(str(exc)) from None


# ----------------------------------------------------------------------------- JSON helpers

def _json_object(data: object, kind: str, fields: tuple[str, ...],
                 optional: tuple[str, ...] = ()) -> dict[str, object]:
    """``data`` as a JSON object of type ``kind`` with exactly ``fields`` (plus ``optional``)."""
    if not isinstance(data, dict) or data.get("type") != kind:
        raise InvalidGuarantee(f"expected a JSON object with \"type\": \"{kind}\", got {data!r}")
    keys = set(data) - {"type"}
    missing = set(fields) - keys
    unknown = keys - set(fields) - set(optional)
    if missing or unknown:
        raise InvalidGuarantee(f"{kind} JSON: missing {sorted(missing)}, unknown {sorted(unknown)}")
    return data


def _exact_text(value: object, name: str) -> Fraction:
    """A recorded exact number: the text ``str(Fraction)`` writes (so the JSON round-trip is
    byte-for-byte lossless), e.g. ``"1/10"``, ``"0"``."""
    if not isinstance(value, str):
        raise InvalidGuarantee(f"{name} must be recorded as exact text such as '1/10', got {value!r}")
    try:
        x = Fraction(value)
    except (ValueError, ZeroDivisionError):
        raise InvalidGuarantee(f"{name}: {value!r} is not an exact number") from None
    if str(x) != value:
        raise InvalidGuarantee(f"{name}: {value!r} is not in canonical form {str(x)!r}")
    return x


def _label_pairs(value: object, name: str) -> tuple[tuple[Label, Fraction], ...]:
    if not isinstance(value, list):
        raise InvalidGuarantee(f"{name} must be a list of [label, value] pairs, got {value!r}")
    out: list[tuple[Label, Fraction]] = []
    for pair in value:
        if not isinstance(pair, list) or len(pair) != 2:
            raise InvalidGuarantee(f"{name}: expected a [label, value] pair, got {pair!r}")
        out.append((_check_label(pair[0]), _exact_text(pair[1], f"{name} of {pair[0]!r}")))
    return tuple(out)


# ----------------------------------------------------------------------------- the record

@dataclass(frozen=True)
class GuaranteeRecord:
    """A declared (𝒫, ℰ, δ)-ODP guarantee as recorded in a ledger row and a certificate: the
    classes of 𝒫 in declaration order with their costs ℰ(P_k), the one δ, and — when the
    guarantee was built by Lemma 6 — the per-class deltas Δ(P_k).  The partition function is
    code and is not recorded.

    Validated at construction (labels ``str``/``int`` and distinct, costs ≥ 0, 0 ≤ δ < 1);
    ``from_json(r.to_json()) == r`` and ``to_json(from_json(d)) == d`` for every recorded
    ``d`` (exact text only), so chain hashes over recorded rows never change.
    """

    classes: tuple[tuple[Label, Fraction], ...]
    delta: Fraction
    class_deltas: tuple[tuple[Label, Fraction], ...] | None = None

    def __post_init__(self) -> None:
        if not self.classes:
            raise InvalidGuarantee("a guarantee record needs at least one class")
        labels = [_check_label(label) for label, _ in self.classes]
        if len({(type(x), x) for x in labels}) != len(labels):
            raise InvalidGuarantee(f"duplicate class labels in {labels!r}")
        for label, cost in self.classes:
            if not isinstance(cost, Fraction) or cost < 0:
                raise InvalidGuarantee(f"class {label!r}: cost must be a Fraction >= 0, got {cost!r}")
        if not isinstance(self.delta, Fraction) or not 0 <= self.delta < 1:
            raise InvalidGuarantee(f"delta must be a Fraction in [0, 1), got {self.delta!r}")
        if self.class_deltas is not None:
            for label, d in self.class_deltas:
                _check_label(label)
                if not isinstance(d, Fraction) or d < 0:
                    raise InvalidGuarantee(f"class delta of {label!r} must be a Fraction >= 0")

    @classmethod
    def _trusted(cls, classes: tuple[tuple[Label, Fraction], ...], delta: Fraction,
                 class_deltas: tuple[tuple[Label, Fraction], ...] | None) -> "GuaranteeRecord":
        """Built from an already validated :class:`ODP` (no re-validation on the hot path)."""
        new = object.__new__(cls)
        object.__setattr__(new, "classes", classes)
        object.__setattr__(new, "delta", delta)
        object.__setattr__(new, "class_deltas", class_deltas)
        return new

    @property
    def labels(self) -> tuple[Label, ...]:
        return tuple(label for label, _ in self.classes)

    @property
    def costs(self) -> tuple[Fraction, ...]:
        """ℰ(P_k) in declaration order (the ``blocks`` row of a certificate, Lemma 4)."""
        return tuple(cost for _, cost in self.classes)

    @property
    def sup_epsilon(self) -> Fraction:
        """sup_k ℰ(P_k) (Lemma 4)."""
        return max(self.costs)

    def index_of(self, label: object) -> int | None:
        """Position of ``label`` among the classes (same value *and* type: ``1 != "1"``, and
        ``True`` is no class), or None."""
        for i, (declared, _) in enumerate(self.classes):
            if declared == label and type(declared) is type(label):
                return i
        return None

    def with_partition(self, partition: Partition) -> ODP:
        """The :class:`ODP` guarantee this records, with its partition function."""
        guarantee = ODP(partition, dict(self.classes), self.delta)
        if self.class_deltas is not None:
            guarantee._class_deltas = dict(self.class_deltas)
            guarantee._record = None
        return guarantee

    def to_json(self) -> dict[str, Any]:  # Any: JSON values (lists of [label, text] pairs)
        """The recorded JSON form (the ledger's ``guarantee`` column, sorted-key text)."""
        out: dict[str, Any] = {
            "type": "ODP",
            "costs": [[label, str(cost)] for label, cost in self.classes],
            "delta": str(self.delta),
        }
        if self.class_deltas is not None:
            out["class_deltas"] = [[k, str(d)] for k, d in self.class_deltas]
        return out

    @classmethod
    def from_json(cls, data: object) -> "GuaranteeRecord":
        """The inverse of :meth:`to_json`; raises :class:`~odp.errors.InvalidGuarantee` on
        anything it did not write (unknown keys, inexact or non-canonical numbers)."""
        obj = _json_object(data, "ODP", ("costs", "delta"), optional=("class_deltas",))
        deltas = obj.get("class_deltas")
        return cls(_label_pairs(obj["costs"], "costs"), _exact_text(obj["delta"], "delta"),
                   None if deltas is None else _label_pairs(deltas, "class_deltas"))


# ----------------------------------------------------------------------------- zCDP and RDP

@dataclass(frozen=True)
class ZCDP:
    """A ρ-zCDP guarantee (Bun & Steinke 2016, Def. 1.1); with δ > 0, approximate zCDP."""

    rho: Fraction
    delta: Fraction = Fraction(0)

    def __init__(self, rho: Number, delta: Number = 0):
        try:
            object.__setattr__(self, "rho", parse_epsilon(rho, name="rho"))
            object.__setattr__(self, "delta", parse_delta(delta))
        except InvalidBudget as exc:
            raise InvalidParameter(str(exc)) from None

    @classmethod
    def _trusted(cls, rho: Fraction, delta: Fraction) -> "ZCDP":
        new = object.__new__(cls)
        object.__setattr__(new, "rho", rho)
        object.__setattr__(new, "delta", delta)
        return new

    @property
    def approximate(self) -> bool:
        return self.delta > 0

    def __str__(self) -> str:
        return f"ρ={self.rho}" + (f", δ={self.delta}" if self.delta else "")

    def __repr__(self) -> str:  # short decimals, a long one rounded up and marked (≤)
        return (f"ZCDP({display_named('rho', self.rho)}"
                + (f", {display_named('delta', self.delta)})" if self.delta else ")"))

    def to_json(self) -> dict[str, str]:
        return {"type": "zCDP", "rho": str(self.rho), "delta": str(self.delta)}

    @classmethod
    def from_json(cls, data: object) -> "ZCDP":
        obj = _json_object(data, "zCDP", ("rho", "delta"))
        return cls(_exact_text(obj["rho"], "rho"), _exact_text(obj["delta"], "delta"))


@dataclass(frozen=True)
class RDP:
    """An (α, ε)-RDP guarantee at one order α > 1 (Mironov 2017, Def. 4)."""

    alpha: Fraction
    epsilon: Fraction

    def __init__(self, alpha: Number, epsilon: Number):
        object.__setattr__(self, "alpha", parse_alpha(alpha))
        try:
            object.__setattr__(self, "epsilon", parse_epsilon(epsilon))
        except InvalidBudget as exc:
            raise InvalidParameter(str(exc)) from None

    def __str__(self) -> str:
        return f"α={self.alpha}, ε={self.epsilon}"

    def __repr__(self) -> str:  # short decimals, a long ε rounded up and marked (≤)
        return f"RDP(alpha={format_fraction(self.alpha)}, {display_named('epsilon', self.epsilon)})"

    def to_json(self) -> dict[str, str]:
        return {"type": "RDP", "alpha": str(self.alpha), "epsilon": str(self.epsilon)}

    @classmethod
    def from_json(cls, data: object) -> "RDP":
        obj = _json_object(data, "RDP", ("alpha", "epsilon"))
        return cls(_exact_text(obj["alpha"], "alpha"), _exact_text(obj["epsilon"], "epsilon"))


@dataclass(frozen=True)
class GDP:
    """A μ-Gaussian-DP guarantee (Dong, Roth, Su 2022, Def. 2.7): distinguishing neighbours is
    at least as hard as distinguishing N(0, 1) from N(μ, 1).  Converted to (ε, δ)-DP by
    :func:`odp.conversions.gdp_to_dp_epsilon` (their Cor. 2.13, exact)."""

    mu: Fraction

    def __init__(self, mu: Number):
        try:
            object.__setattr__(self, "mu", parse_epsilon(mu, name="mu"))
        except InvalidBudget as exc:
            raise InvalidParameter(str(exc)) from None

    def __str__(self) -> str:
        return f"μ={self.mu}"

    def __repr__(self) -> str:  # a short decimal, a long one rounded up and marked (≤)
        return f"GDP({display_named('mu', self.mu)})"

    def to_json(self) -> dict[str, str]:
        return {"type": "GDP", "mu": str(self.mu)}

    @classmethod
    def from_json(cls, data: object) -> "GDP":
        obj = _json_object(data, "GDP", ("mu",))
        return cls(_exact_text(obj["mu"], "mu"))


# ----------------------------------------------------------------------------- unions

Guarantee = Union[DP, ODP]

#: A normalised privacy cost, as filters and :mod:`odp.interactive` hold it.
PrivacyCost = Union[DP, ODP, ZCDP, RDP]


class DeclaresGuarantee(Protocol):
    """Anything with a declared ``guarantee`` (every odp mechanism)."""

    @property
    def guarantee(self) -> Guarantee: ...


class MechanismLike(DeclaresGuarantee, Protocol):
    """What :meth:`odp.Accountant.run` runs: a declared guarantee and ``release(data, rng)``
    (:class:`odp.Mechanism` and any object of that shape)."""

    def release(self, data: Data, rng: RandomSource) -> Release: ...


#: What the public API accepts as a cost and normalises (``odp.filters`` ``parse``): a
#: :data:`PrivacyCost`, an :class:`odp.Budget`, a number or an ``(ε, δ)`` pair, a mechanism
#: declaring a guarantee, or an RDP curve ``alpha -> epsilon``.
CostLike = Union[DP, ODP, ZCDP, RDP, Budget, Number, "tuple[Number, Number]",
                 "list[Number]", DeclaresGuarantee, "Callable[[Fraction], Number]"]

_FROM_JSON: dict[str, Callable[[object], PrivacyCost | SubsetDP | GuaranteeRecord | GDP]] = {
    "DP": DP.from_json, "ODP": GuaranteeRecord.from_json, "SubsetDP": SubsetDP.from_json,
    "zCDP": ZCDP.from_json, "RDP": RDP.from_json, "GDP": GDP.from_json,
}


def cost_from_json(data: object) -> PrivacyCost | SubsetDP | GuaranteeRecord | GDP:
    """Any vocabulary value from its JSON form (by its ``"type"``); an ``"ODP"`` object gives
    its :class:`GuaranteeRecord` (the partition function is not data)."""
    kind = data.get("type") if isinstance(data, dict) else None
    if not isinstance(kind, str) or kind not in _FROM_JSON:
        raise InvalidGuarantee(f"not a JSON privacy guarantee of a known type: {data!r}")
    return _FROM_JSON[kind](data)


def as_odp(guarantee: object) -> ODP:
    """Normalise a declared guarantee to :class:`ODP` (``DP`` via Lemma 3)."""
    if isinstance(guarantee, ODP):
        return guarantee
    if isinstance(guarantee, DP):
        return guarantee.as_odp()
    raise InvalidGuarantee(f"expected an odp.DP or odp.ODP guarantee, got {guarantee!r}")

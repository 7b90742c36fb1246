"""Privacy guarantees as values: ``DP`` (Def. 1), ``ODP`` (Def. 2) and ``SubsetDP`` (Def. 5).

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
from fractions import Fraction
from typing import Any, Callable, Hashable, Mapping, Union

from .budget import Budget, Number, format_fraction, parse_delta, parse_epsilon
from .errors import InvalidBudget, InvalidGuarantee

Label = Union[str, int]
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

    def to_json(self) -> dict[str, Any]:
        return {"type": "DP", "epsilon": str(self.epsilon), "delta": str(self.delta)}


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

    __slots__ = ("_partition", "_costs", "_delta", "_sup", "_class_deltas")

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
        try:
            label = _check_label(label)
        except InvalidGuarantee:
            label = None
        if label is None or label not in self._costs:
            raise InvalidGuarantee(
                f"the partition returned {label!r}, which is not a declared class "
                f"({', '.join(map(repr, self._costs))}); the partition must be total"
            )
        return label

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
        return result

    def __repr__(self) -> str:
        costs = ", ".join(f"{k!r}: {format_fraction(v)}" for k, v in self._costs.items())
        return f"ODP(costs={{{costs}}}, delta={format_fraction(self._delta)})"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "type": "ODP",
            "costs": [[label, str(cost)] for label, cost in self._costs.items()],
            "delta": str(self._delta),
        }
        if self._class_deltas is not None:
            out["class_deltas"] = [[k, str(d)] for k, d in self._class_deltas.items()]
        return out


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


Guarantee = Union[DP, ODP]


def as_odp(guarantee: Any) -> ODP:
    """Normalise a declared guarantee to :class:`ODP` (``DP`` via Lemma 3)."""
    if isinstance(guarantee, ODP):
        return guarantee
    if isinstance(guarantee, DP):
        return guarantee.as_odp()
    raise InvalidGuarantee(f"expected an odp.DP or odp.ODP guarantee, got {guarantee!r}")

"""The privacy vocabulary of odp: every guarantee and cost that crosses a module boundary.

Paper: Hartmann, Bindschaedler, Bentkamp, West, *Privacy accounting εconomics* (PoPETs 2022),
Section 3.  A guarantee is declared by a mechanism *before* it runs and never depends on the
data.  One value per notion of privacy (in the spirit of dp-accounting's ``DpEvent`` and
OpenDP's measures):

* :class:`DP` — (ε, δ)-differential privacy (Def. 1);
* :class:`ODP` — (𝒫, ℰ, δ)-output differential privacy (Def. 2): a *partition* of the output
  space, given as a total, data-independent function ``partition(output) -> label``, a cost
  ``ℰ(P_k)`` per class label ``k`` and one δ: ``Pr(M(x) ∈ S) ≤ δ + Σ_k e^{ℰ(P_k)}
  Pr(M(x') ∈ S ∩ P_k)``;
* :class:`SubsetDP` — (R, ε, δ)-subset DP (Def. 5): the DP inequality for subsets of one class;
* :class:`GuaranteeRecord` — an ODP guarantee as a ledger row and a certificate record it (its
  classes in order with their exact costs, δ, and Lemma 6's per-class deltas; the partition
  function itself is code and is not recorded);
* :class:`ZCDP`, :class:`RDP` — the zCDP / Rényi-DP costs used by :mod:`odp.filters`;
* :class:`GDP` — a μ-Gaussian-DP guarantee (chargeable to an accountant after conversion).

The unions over them (``PrivacyCost``, what the API accepts as ``CostLike``, …) and the
protocol of a mechanism are in :mod:`odp.protocols`; the names they are made of (``Label``,
``Partition``, ``Number``) in :mod:`odp.types`.  The privacy-loss pairs of :mod:`odp.buckets`
(``PLDMechanism`` and its subclasses) are frozen dataclasses with the same JSON discipline.

Conversions (the lemma numbers are the paper's):

* Lemma 3: ``DP(ε, δ).to_odp(partition)`` — any partition with the constant cost ε.
* Lemma 4: ``ODP.to_dp()`` — (sup_k ℰ(P_k), δ)-DP; ``ODP.sup_epsilon`` is that sup.
* Lemma 6: ``ODP.from_subset_dp(partition, {k: SubsetDP(k, ε_k, Δ_k)})`` — ODP with ℰ(P_k) = ε_k
  and δ = Σ_k Δ_k.

Class labels must be ``str`` or ``int`` so that they can be written to a ledger.  The labels
of a partition are exactly the keys of ``costs``: a release whose label is not among them is an
:class:`~odp.errors.InvalidGuarantee` (the partition must be total).

**One idiom.**  Every value is a frozen, slotted dataclass: its fields are its data (exact
``Fraction``\\ s, labels, an ODP guarantee's partition function) and the values derived from
them (a DP guarantee's Lemma 3 form, an ODP guarantee's sup and record), all set once, when it
is built, by the class's ``_fill``; nothing changes a value afterwards.  It is built one way:
the public constructor validates what the caller gives (a number that is not a valid ε or δ is
an :class:`~odp.errors.InvalidBudget`, translated by :func:`_parse` where the class speaks of
guarantees or parameters) and ends in ``_fill``; the private classmethod ``_trusted`` is
``_fill`` without the validation, for values already validated (the hot paths: Lemma 3 for a
DP guarantee, an ODP guarantee's record, a filter's running sum, the JSON readers).  Each has
``__eq__``/``__hash__`` by value and a lossless JSON form (``to_json`` / ``from_json``, which
refuses anything it did not write with :class:`~odp.errors.InvalidGuarantee`).
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable, ClassVar, Hashable, Mapping, TypeVar, Union

from .budget import display_named, format_fraction, parse_alpha, parse_delta, parse_epsilon
from .errors import InvalidGuarantee, InvalidParameter, budget_error_as
from .neighbours import Neighbours
from .types import Label, Number, Partition
# Re-exported for odp.mechanisms.dpsgd, which still imports them from here (odp.types is their
# home).
from .types import Data as Data, Release as Release

__all__ = ["ALL", "trivial_partition", "DP", "ODP", "SubsetDP", "GuaranteeRecord", "ZCDP",
           "RDP", "GDP", "as_odp", "cost_from_json"]

#: Label of the single class of the trivial partition used by Lemma 3 when none is given.
ALL = "all"


def trivial_partition(_release: Any) -> Label:
    """The one-class partition {Range(M)} (every output in class ``"all"``)."""
    return ALL


_set = object.__setattr__  # how ``_fill`` sets a frozen value's fields (nothing else does)
_V = TypeVar("_V", bound="_Value")


class _Value:
    """The base of the vocabulary's classes: the one private fast path (module docstring)."""

    __slots__ = ()
    _fill: ClassVar[Callable[..., None]]  #: sets the fields, in order, and the derived ones

    @classmethod
    def _trusted(cls: type[_V], *fields: Any) -> _V:
        """A value from fields already validated: the public constructor without the
        validation (each class's ``_fill`` takes its fields in order)."""
        new = object.__new__(cls)
        new._fill(*fields)
        return new


def _parse(parse: Callable[..., Fraction], value: object, name: str,
           error: type[InvalidParameter]) -> Fraction:
    """``parse(value, name=name)`` (an exact ε, δ, ρ or μ in its range), its
    :class:`~odp.errors.InvalidBudget` raised as ``error`` with the same message
    (:func:`odp.errors.budget_error_as`): :class:`~odp.errors.InvalidGuarantee` for an ODP
    guarantee's costs and for the JSON readers, :class:`~odp.errors.InvalidParameter` for a
    zCDP, RDP or GDP parameter."""
    with budget_error_as(error):
        return parse(value, name=name)


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


def _check_partition(partition: object) -> None:
    if not callable(partition):
        raise InvalidGuarantee("partition must be a function release -> class label")


@dataclass(frozen=True, slots=True, init=False, repr=False)
class DP(_Value):
    """(ε, δ)-differential privacy (Def. 1).  Takes the same inputs as :class:`odp.Budget`."""

    epsilon: Fraction
    delta: Fraction
    #: Lemma 3 with the trivial partition: the form the accountant charges (:meth:`as_odp`)
    _odp: ODP = field(compare=False)

    def __init__(self, epsilon: Number, delta: Number = 0) -> None:
        self._fill(parse_epsilon(epsilon), parse_delta(delta))  # an InvalidBudget as it is

    def _fill(self, epsilon: Fraction, delta: Fraction) -> None:
        _set(self, "epsilon", epsilon)
        _set(self, "delta", delta)
        _set(self, "_odp", ODP._trusted(trivial_partition, {ALL: epsilon},
                                         GuaranteeRecord._trusted(((ALL, epsilon),), delta, None)))

    @property
    def sup_epsilon(self) -> Fraction:
        return self.epsilon

    def to_odp(self, partition: Partition | None = None, labels: tuple[Label, ...] | None = None
               ) -> ODP:
        """Lemma 3: an (ε, δ)-DP mechanism is (𝒫, ℰ ≡ ε, δ)-ODP for any partition 𝒫.

        Without arguments the trivial one-class partition is used.  With a ``partition`` its
        ``labels`` (all class labels it can return) must be given.
        """
        if partition is None:
            return self._odp
        if not labels:
            raise InvalidGuarantee("to_odp(partition) needs the labels the partition can return")
        return ODP(partition, {label: self.epsilon for label in labels}, self.delta)

    def as_odp(self) -> ODP:
        """The form the accountant uses (Lemma 3 with the trivial partition)."""
        return self._odp

    def __repr__(self) -> str:
        return f"DP(epsilon={format_fraction(self.epsilon)}, delta={format_fraction(self.delta)})"

    def to_json(self) -> dict[str, str]:
        return {"type": "DP", "epsilon": str(self.epsilon), "delta": str(self.delta)}

    @classmethod
    def from_json(cls, data: object) -> DP:
        """The inverse of :meth:`to_json` (exact; ``InvalidGuarantee`` on anything else)."""
        obj = _json_object(data, "DP", ("epsilon", "delta"))
        return cls._trusted(_json_number(obj, "epsilon"), _json_number(obj, "delta", parse_delta))


@dataclass(frozen=True, slots=True, init=False, eq=False, repr=False)
class ODP(_Value):
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

    partition: Partition
    delta: Fraction
    #: sup_k ℰ(P_k): the DP ε of the mechanism by Lemma 4 (what Alg. 1 line 4 checks)
    sup_epsilon: Fraction
    _costs: dict[Label, Fraction]  #: ℰ by label (never handed out: :attr:`costs` is a copy)
    _record: GuaranteeRecord  #: what a ledger row and a certificate record (:meth:`record`)

    def __init__(self, partition: Partition, costs: Mapping[Label, Number], delta: Number = 0
                 ) -> None:
        _check_partition(partition)
        if not isinstance(costs, Mapping) or not costs:
            raise InvalidGuarantee("costs must be a non-empty mapping {class label: epsilon}")
        parsed: dict[Label, Fraction] = {}
        for raw_label, cost in costs.items():
            label = _check_label(raw_label)
            parsed[label] = _parse(parse_epsilon, cost, f"cost of class {label!r}",
                                   InvalidGuarantee)
        exact_delta = _parse(parse_delta, delta, "delta", InvalidGuarantee)
        self._fill(partition, parsed,
                   GuaranteeRecord._trusted(tuple(parsed.items()), exact_delta, None))

    def _fill(self, partition: Partition, costs: dict[Label, Fraction],
              record: GuaranteeRecord) -> None:
        """``costs``: ℰ by label, the classes of ``record`` (which it keeps: not a copy)."""
        _set(self, "partition", partition)
        _set(self, "delta", record.delta)
        _set(self, "sup_epsilon", max(costs.values()))
        _set(self, "_costs", costs)
        _set(self, "_record", record)

    @property
    def costs(self) -> dict[Label, Fraction]:
        return dict(self._costs)

    @property
    def class_deltas(self) -> dict[Label, Fraction] | None:
        """The per-class Δ(P_k) when the guarantee was built by Lemma 6 (``from_subset_dp``),
        else None.  Informational (certificates cite Lemma 6 with them); the δ charged is
        always :attr:`delta`."""
        deltas = self._record.class_deltas
        return None if deltas is None else dict(deltas)

    def classify(self, release: Any) -> Label:
        """The class label of ``release`` (Alg. 1 line 6).  Raises ``InvalidGuarantee`` if the
        partition fails or returns a label without a declared cost."""
        try:
            label = self.partition(release)
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
        return DP._trusted(self.sup_epsilon, self.delta)

    def as_odp(self) -> ODP:
        return self

    @classmethod
    def from_dp(cls, dp: DP, partition: Partition | None = None,
                labels: tuple[Label, ...] | None = None) -> ODP:
        """Lemma 3 (see :meth:`DP.to_odp`)."""
        return dp.to_odp(partition, labels)

    @classmethod
    def from_subset_dp(cls, partition: Partition, per_class: Mapping[Label, SubsetDP]) -> ODP:
        """Lemma 6: if M is (P_k, ℰ(P_k), Δ(P_k))-subset DP for every class k, then M is
        (𝒫, ℰ, Σ_k Δ(P_k))-ODP.  ``per_class[k]`` must be the subset-DP guarantee of class k."""
        if not per_class:
            raise InvalidGuarantee("from_subset_dp needs one SubsetDP per class")
        costs: dict[Label, Fraction] = {}
        deltas: dict[Label, Fraction] = {}
        for raw_label, guarantee in per_class.items():
            if not isinstance(guarantee, SubsetDP):
                raise InvalidGuarantee(f"class {raw_label!r}: expected a SubsetDP, got {guarantee!r}")
            if guarantee.region != raw_label:
                raise InvalidGuarantee(
                    f"class {raw_label!r}: the SubsetDP is for region {guarantee.region!r}"
                )
            label = _check_label(raw_label)
            costs[label] = guarantee.epsilon
            deltas[label] = guarantee.delta
        total_delta = sum(deltas.values(), Fraction(0))
        if total_delta >= 1:
            raise InvalidGuarantee(f"sum of the per-class deltas is >= 1: {total_delta}")
        _check_partition(partition)
        return cls._trusted(partition, costs, GuaranteeRecord._trusted(
            tuple(costs.items()), total_delta, tuple(deltas.items())))

    def __repr__(self) -> str:
        costs = ", ".join(f"{k!r}: {format_fraction(v)}" for k, v in self._costs.items())
        return f"ODP(costs={{{costs}}}, delta={format_fraction(self.delta)})"

    def record(self) -> GuaranteeRecord:
        """What a ledger row and a certificate record of this guarantee (all but the
        partition function): its classes in declaration order with their costs, δ and, after
        Lemma 6, the per-class deltas."""
        return self._record

    def __eq__(self, other: object) -> bool:
        """Equal when the partition is the same function and the records are equal."""
        return (isinstance(other, ODP) and self.partition == other.partition
                and self._record == other._record)

    def __hash__(self) -> int:
        return hash(("ODP", self._record))

    def to_json(self) -> dict[str, Any]:  # Any: JSON values (see GuaranteeRecord.to_json)
        return self._record.to_json()

    @classmethod
    def from_json(cls, data: object, partition: Partition) -> ODP:
        """The inverse of :meth:`to_json` given the partition function (which is code, not
        data): ``ODP.from_json(g.to_json(), g.partition) == g``."""
        return GuaranteeRecord.from_json(data).with_partition(partition)


@dataclass(frozen=True, slots=True, init=False, repr=False)
class SubsetDP(_Value):
    """(R, ε, δ)-subset differential privacy (Def. 5) for the class (region) ``region``:
    ``Pr(M(x) ∈ S) ≤ e^ε Pr(M(x') ∈ S) + δ`` for all ``S ⊆ R``."""

    region: Label
    epsilon: Fraction
    delta: Fraction

    def __init__(self, region: Hashable, epsilon: Number, delta: Number = 0) -> None:
        self._fill(_check_label(region), parse_epsilon(epsilon), parse_delta(delta))

    def _fill(self, region: Label, epsilon: Fraction, delta: Fraction) -> None:
        _set(self, "region", region)
        _set(self, "epsilon", epsilon)
        _set(self, "delta", delta)

    def __repr__(self) -> str:
        return (
            f"SubsetDP(region={self.region!r}, epsilon={format_fraction(self.epsilon)}, "
            f"delta={format_fraction(self.delta)})"
        )

    def to_json(self) -> dict[str, Any]:  # Any: the region is a JSON str or int
        return {"type": "SubsetDP", "region": self.region, "epsilon": str(self.epsilon),
                "delta": str(self.delta)}

    @classmethod
    def from_json(cls, data: object) -> SubsetDP:
        obj = _json_object(data, "SubsetDP", ("region", "epsilon", "delta"))
        return cls._trusted(_check_label(obj["region"]), _json_number(obj, "epsilon"),
                            _json_number(obj, "delta", parse_delta))


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


def _json_number(obj: dict[str, object], key: str,
                 parse: Callable[..., Fraction] = parse_epsilon) -> Fraction:
    """``obj[key]``: exact text (:func:`_exact_text`) in the range ``parse`` checks (ε, ρ, μ ≥ 0;
    0 ≤ δ < 1; an RDP order α > 1), else :class:`~odp.errors.InvalidGuarantee`."""
    return _parse(parse, _exact_text(obj[key], key), key, InvalidGuarantee)


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

@dataclass(frozen=True, slots=True, init=False)
class GuaranteeRecord(_Value):
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
    class_deltas: tuple[tuple[Label, Fraction], ...] | None

    def __init__(self, classes: tuple[tuple[Label, Fraction], ...], delta: Fraction,
                 class_deltas: tuple[tuple[Label, Fraction], ...] | None = None) -> None:
        if not classes:
            raise InvalidGuarantee("a guarantee record needs at least one class")
        labels = [_check_label(label) for label, _ in classes]
        if len({(type(x), x) for x in labels}) != len(labels):
            raise InvalidGuarantee(f"duplicate class labels in {labels!r}")
        for label, cost in classes:
            if not isinstance(cost, Fraction) or cost < 0:
                raise InvalidGuarantee(f"class {label!r}: cost must be a Fraction >= 0, got {cost!r}")
        if not isinstance(delta, Fraction) or not 0 <= delta < 1:
            raise InvalidGuarantee(f"delta must be a Fraction in [0, 1), got {delta!r}")
        if class_deltas is not None:
            for label, d in class_deltas:
                _check_label(label)
                if not isinstance(d, Fraction) or d < 0:
                    raise InvalidGuarantee(f"class delta of {label!r} must be a Fraction >= 0")
        self._fill(classes, delta, class_deltas)

    def _fill(self, classes: tuple[tuple[Label, Fraction], ...], delta: Fraction,
              class_deltas: tuple[tuple[Label, Fraction], ...] | None) -> None:
        _set(self, "classes", classes)
        _set(self, "delta", delta)
        _set(self, "class_deltas", class_deltas)

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
        _check_partition(partition)
        return ODP._trusted(partition, dict(self.classes), self)

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
    def from_json(cls, data: object) -> GuaranteeRecord:
        """The inverse of :meth:`to_json`; raises :class:`~odp.errors.InvalidGuarantee` on
        anything it did not write (unknown keys, inexact or non-canonical numbers)."""
        obj = _json_object(data, "ODP", ("costs", "delta"), optional=("class_deltas",))
        deltas = obj.get("class_deltas")
        return cls(_label_pairs(obj["costs"], "costs"), _exact_text(obj["delta"], "delta"),
                   None if deltas is None else _label_pairs(deltas, "class_deltas"))


# ----------------------------------------------------------------------------- zCDP and RDP

@dataclass(frozen=True, slots=True, init=False, repr=False)
class ZCDP(_Value):
    """A ρ-zCDP guarantee (Bun & Steinke 2016, Def. 1.1); with δ > 0, approximate zCDP."""

    rho: Fraction
    delta: Fraction

    def __init__(self, rho: Number, delta: Number = 0) -> None:
        self._fill(_parse(parse_epsilon, rho, "rho", InvalidParameter),
                   _parse(parse_delta, delta, "delta", InvalidParameter))

    def _fill(self, rho: Fraction, delta: Fraction) -> None:
        _set(self, "rho", rho)
        _set(self, "delta", delta)

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
    def from_json(cls, data: object) -> ZCDP:
        obj = _json_object(data, "zCDP", ("rho", "delta"))
        return cls._trusted(_json_number(obj, "rho"), _json_number(obj, "delta", parse_delta))


@dataclass(frozen=True, slots=True, init=False, repr=False)
class RDP(_Value):
    """An (α, ε)-RDP guarantee at one order α > 1 (Mironov 2017, Def. 4).

    ``neighbours``: the relation it holds for (:class:`odp.Neighbours`), when it states one:
    the values odp computes for an add/remove analysis (the Poisson-subsampled Gaussian of
    :mod:`odp.rdp` and :mod:`odp.subsampled_rdp`, DP-SGD's steps) carry
    :attr:`~odp.Neighbours.ADD_REMOVE`, which :meth:`odp.Accountant.charge` honours
    (:func:`odp.neighbours.stated`); ``None`` (the default): the accountant's, your claim.
    Part of the value: two RDP values of different relations are not equal."""

    alpha: Fraction
    epsilon: Fraction
    neighbours: Neighbours | None

    def __init__(self, alpha: Number, epsilon: Number, *,
                 neighbours: Neighbours | str | None = None) -> None:
        self._fill(parse_alpha(alpha), _parse(parse_epsilon, epsilon, "epsilon", InvalidParameter),
                   None if neighbours is None else Neighbours.parse(neighbours))

    def _fill(self, alpha: Fraction, epsilon: Fraction, neighbours: Neighbours | None = None
              ) -> None:
        _set(self, "alpha", alpha)
        _set(self, "epsilon", epsilon)
        _set(self, "neighbours", neighbours)

    def __str__(self) -> str:
        return f"α={self.alpha}, ε={self.epsilon}"

    def __repr__(self) -> str:  # short decimals, a long ε rounded up and marked (≤)
        return (f"RDP(alpha={format_fraction(self.alpha)}, {display_named('epsilon', self.epsilon)}"
                + (f", neighbours={self.neighbours})" if self.neighbours is not None else ")"))

    def to_json(self) -> dict[str, str]:
        out = {"type": "RDP", "alpha": str(self.alpha), "epsilon": str(self.epsilon)}
        if self.neighbours is not None:
            out["neighbours"] = self.neighbours.value
        return out

    @classmethod
    def from_json(cls, data: object) -> RDP:
        obj = _json_object(data, "RDP", ("alpha", "epsilon"), optional=("neighbours",))
        relation = obj.get("neighbours")
        if relation is not None and not (isinstance(relation, str)
                                         and relation in Neighbours._value2member_map_):
            raise InvalidGuarantee(f"RDP JSON: unknown neighbouring relation {relation!r}")
        return cls._trusted(_json_number(obj, "alpha", parse_alpha), _json_number(obj, "epsilon"),
                            None if relation is None else Neighbours(relation))


@dataclass(frozen=True, slots=True, init=False, repr=False)
class GDP(_Value):
    """A μ-Gaussian-DP guarantee (Dong, Roth, Su 2022, Def. 2.7): distinguishing neighbours is
    at least as hard as distinguishing N(0, 1) from N(μ, 1).  Converted to (ε, δ)-DP by
    :func:`odp.conversions.gdp_to_dp_epsilon` (their Cor. 2.13, exact)."""

    mu: Fraction

    def __init__(self, mu: Number) -> None:
        self._fill(_parse(parse_epsilon, mu, "mu", InvalidParameter))

    def _fill(self, mu: Fraction) -> None:
        _set(self, "mu", mu)

    def __str__(self) -> str:
        return f"μ={self.mu}"

    def __repr__(self) -> str:  # a short decimal, a long one rounded up and marked (≤)
        return f"GDP({display_named('mu', self.mu)})"

    def to_json(self) -> dict[str, str]:
        return {"type": "GDP", "mu": str(self.mu)}

    @classmethod
    def from_json(cls, data: object) -> GDP:
        obj = _json_object(data, "GDP", ("mu",))
        return cls._trusted(_json_number(obj, "mu"))


# ----------------------------------------------------------------------------- from JSON

#: A vocabulary value read from its JSON form (an ``"ODP"`` object gives its record).
_Recorded = Union[DP, SubsetDP, GuaranteeRecord, ZCDP, RDP, GDP]

_FROM_JSON: dict[str, Callable[[object], _Recorded]] = {
    "DP": DP.from_json, "ODP": GuaranteeRecord.from_json, "SubsetDP": SubsetDP.from_json,
    "zCDP": ZCDP.from_json, "RDP": RDP.from_json, "GDP": GDP.from_json,
}


def cost_from_json(data: object) -> _Recorded:
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

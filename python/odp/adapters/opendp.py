"""OpenDP measurements as odp mechanisms: ``odp.from_opendp(measurement, d_in)``.

An OpenDP ``Measurement`` states its privacy guarantee through its *privacy map*: for an input
distance ``d_in`` (how far apart neighbouring datasets are in the measurement's input metric),
``measurement.map(d_in)`` is a bound on the privacy loss in the measurement's *output measure*.
:func:`from_opendp` reads that bound once, when the adapter is built, and declares it as an odp
guarantee — :class:`odp.DP` (Lemma 3 of Hartmann et al. 2022 then makes it the one-class ODP
guarantee the accountant charges in Alg. 1):

=================================  ==========================================================
output measure                     declared guarantee
=================================  ==========================================================
``MaxDivergence``                  ``DP(ε, 0)`` with ε = ``map(d_in)`` (pure DP)
``ZeroConcentratedDivergence``     ρ = ``map(d_in)``, charged exactly in a zCDP (or Rényi) lane
                                   of a laned ledger (:mod:`odp.ledger.lanes`); with ``delta=``
                                   also ``DP(ε, δ)`` at the δ you choose, with ε from
                                   :func:`odp.conversions.zcdp_to_dp_epsilon` (Canonne, Kamath,
                                   Steinke 2020, Cor. 13 — a sound bound), rounded up,
                                   for the ODP lane
``Approximate(MaxDivergence)``     ``DP(ε, δ)`` with ``(ε, δ) = map(d_in)``
``SmoothedMaxDivergence``          ``DP(ε, δ)`` at the δ you choose: ε = ``map(d_in)
                                   .epsilon(δ′)``, δ′ the largest float ≤ δ
=================================  ==========================================================

Any other measure (``RenyiDivergence``, ``Approximate(ZeroConcentratedDivergence)``, user
divergences, …) is refused by name with :class:`~odp.errors.InvalidGuarantee`, before anything is
reserved.  OpenDP's maps return floats that OpenDP rounds conservatively; odp rounds each of them
*up* to the shortest decimal not below it (:func:`odp.budget.shortest_decimal_at_least`), so the
ledger reads ``0.5``, ``0.10000000000000001`` or ``0.000001`` — never
``3602879701896397/36028797018963968`` — and never charges less than OpenDP's bound.

**What odp does and does not check.**  The guarantee is OpenDP's claim about its own measurement
(proved in OpenDP's documentation for its constructors), *declared* to odp: odp's certificates
check the ledger arithmetic of the round, not the guarantee (docs/certificates.md).  The release
is drawn by OpenDP **with OpenDP's own random number generator** — the accountant's ``rng``
(odp's exact CSPRNG, or a seeded one) does not drive it, so a seeded accountant does not make
an OpenDP release reproducible.

**Neighbours** (:mod:`odp.neighbours`).  ``d_in`` in the input metric fixes the neighbouring
relation the guarantee holds for, and the adapter reads it off (:func:`relations_covered`):

=======================================================  =========================================
input metric, ``d_in``                                   relations the guarantee holds for
=======================================================  =========================================
``SymmetricDistance``, ``InsertDeleteDistance``; 1       add/remove (one insertion or deletion)
the same; ``d_in ≥ 2``                                   add/remove and replace-one (a replacement
                                                         is one deletion and one insertion)
``ChangeOneDistance``, ``HammingDistance``; ``d_in ≥ 1``  replace-one
``L01InfDistance(M)``, ``M`` one of the first two;        add/remove when every one of
``d_in = (l0, l1, l∞)``                                  ``l0, l1, l∞`` is ≥ 1 (one record in one
                                                         partition); add/remove and replace-one
                                                         when every one is ≥ 2 (a replacement is
                                                         ``(1, 2, 2)`` in one partition,
                                                         ``(2, 2, 1)`` across two)
``AbsoluteDistance``, ``L1Distance``, ``L2Distance``,     a metric on values, not on datasets of
``LInfDistance``, ``DiscreteDistance``                   records: the caller's claim
                                                         (``neighbours=``, default the
                                                         accountant's)
any other metric (``FrameDistance``, the ``…Id…``        the relation cannot be read off: refused
distances, ``L02InfDistance``, a user metric, …)         unless the caller states it
                                                         (``neighbours=``)
=======================================================  =========================================

The mechanism's ``neighbours`` is the one relation covered (``None`` when it covers both, or
for a metric on values: then the accountant's).  An accountant of a relation the measurement does
not cover refuses it before anything is reserved; ``from_opendp(…, neighbours=…)`` states the
relation and is refused at once if ``d_in`` does not cover it.  (A ``d_in`` below 1 covers no
pair of neighbours under these metrics and is refused.)

OpenDP is imported lazily (the ``opendp`` extra: ``pip install -e ".[opendp]"``).  Its
constructors need ``dp.enable_features("contrib")`` (OpenDP's rule; odp does not turn features
on for you); the adapter itself calls only ``map`` and the measurement.  Tested with OpenDP
0.16.0 (``tests/test_opendp_adapter.py``).
"""

from __future__ import annotations

import importlib
import math
import numbers
from fractions import Fraction
from types import ModuleType
from typing import Any

from ..budget import format_fraction, parse_delta, shortest_decimal_at_least
from ..conversions import zcdp_to_dp_epsilon
from ..errors import InvalidGuarantee, InvalidParameter, OdpError, budget_error_as
from ..extras import MissingDependency, install_hint
from ..floats import float_down
from ..guarantees import DP, ZCDP
from ..mechanisms.base import Mechanism
from ..neighbours import Neighbours
from ..types import Data, RandomSource, Release

__all__ = ["OpenDPMechanism", "from_opendp", "SUPPORTED_MEASURES", "relations_covered",
           "metric_known"]

#: The output measures :func:`from_opendp` turns into a guarantee (module docstring).
SUPPORTED_MEASURES = ("MaxDivergence", "ZeroConcentratedDivergence",
                      "Approximate(MaxDivergence)", "SmoothedMaxDivergence")

#: Measures whose guarantee is a curve over δ: the caller chooses δ (optional for zCDP, whose ρ a
#: zCDP lane charges as it is).
_NEEDS_DELTA = ("ZeroConcentratedDivergence", "SmoothedMaxDivergence")
_DELTA_OPTIONAL = ("ZeroConcentratedDivergence",)

_HINTS = {
    "Approximate(ZeroConcentratedDivergence)":
        "convert it to Approximate(MaxDivergence) with OpenDP first: "
        "dp.c.make_fix_delta(dp.c.make_zCDP_to_approxDP(measurement), delta)",
    "Approximate(SmoothedMaxDivergence)":
        "fix its δ with OpenDP first: dp.c.make_fix_delta(measurement, delta)",
    "RenyiDivergence":
        "a Rényi curve is no (ε, δ) guarantee by itself; odp's RDPFilter accounts Rényi "
        "curves (docs/filters.md)",
}


class OpenDPMissing(MissingDependency):
    """OpenDP is not installed: the message names the ``opendp`` extra."""

    def __init__(self) -> None:
        OdpError.__init__(self, "odp.from_opendp needs the OpenDP library, which is not "
                                f"installed: run {install_hint('opendp')} (or pip install "
                                "opendp)")
        self.module, self.extra = "opendp", "opendp"


def _opendp() -> ModuleType:
    """``opendp.mod`` (the module defining ``Measurement``), imported on first use."""
    try:
        return importlib.import_module("opendp.mod")
    except ModuleNotFoundError as exc:
        if exc.name is not None and exc.name.split(".")[0] != "opendp":
            raise  # OpenDP is installed but one of *its* imports is missing: a real error
        raise OpenDPMissing() from exc


def _opendp_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("opendp")
    except PackageNotFoundError:  # imported from a source tree
        return "unknown"


# ----------------------------------------------------------------------------- zCDP -> (ε, δ)

# ----------------------------------------------------------------------------- the adapter

def _map_number(value: Any, what: str, measure: str) -> Fraction:
    """A number OpenDP's privacy map returned, rounded up to a short decimal."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InvalidGuarantee(f"the {measure} privacy map returned {value!r} for {what}; "
                               "expected a number")
    if isinstance(value, float) and not math.isfinite(value):
        raise InvalidGuarantee(f"the {measure} privacy map gives {what} = {value!r}: the "
                               "measurement has no finite guarantee at this d_in")
    if value < 0:
        raise InvalidGuarantee(f"the {measure} privacy map returned a negative {what}: "
                               f"{value!r}")
    return shortest_decimal_at_least(value)


#: OpenDP's dataset metrics counting insertions and deletions, and those counting changed records
#: (of a dataset of fixed size).
_INSERT_DELETE = ("SymmetricDistance()", "InsertDeleteDistance()")
_CHANGE_ONE = ("ChangeOneDistance()", "HammingDistance()")
#: Partitioned datasets, each partition under an insert-delete metric (module docstring).
_PARTITIONED = tuple(f"L01InfDistance({m})" for m in _INSERT_DELETE)
#: OpenDP's metrics on values (numbers, vectors, any two distinct values), not on datasets of
#: records: the relation is the caller's claim.
_ON_VALUES = ("AbsoluteDistance(", "L1Distance(", "L2Distance(", "LInfDistance(",
              "DiscreteDistance(")


def metric_known(metric: str) -> bool:
    """Whether odp reads the neighbouring relation off ``metric`` (a dataset metric of the
    module docstring's table) or knows it for a metric on values (the caller's claim); for any
    other metric the caller must state the relation (``from_opendp(…, neighbours=…)``)."""
    return (metric in _INSERT_DELETE + _CHANGE_ONE + _PARTITIONED
            or metric.startswith(_ON_VALUES))


def _distance(value: Any) -> int | None:
    """``value`` as a whole-number distance, or None."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        return None
    return int(value)


def relations_covered(metric: str, d_in: Any) -> frozenset[Neighbours] | None:
    """The neighbouring relations for which OpenDP's map at ``d_in`` in ``metric`` (its text,
    e.g. ``"SymmetricDistance()"``) bounds the privacy loss (module docstring): add/remove
    neighbours are at symmetric or insert-delete distance 1, replace-one neighbours at 2 (and
    at change-one or Hamming distance 1; for ``L01InfDistance`` of an insert-delete metric, at
    ``(1, 1, 1)`` and ``(2, 2, 2)``); privacy maps are monotone in ``d_in``.  ``None``: a
    metric on values, not on datasets of records (the caller's claim).  A ``d_in`` that covers
    no pair of neighbours, and a metric odp does not know (:func:`metric_known`: the caller
    must state the relation), raise :class:`~odp.errors.InvalidParameter`."""
    if metric in _PARTITIONED:
        parts = ([_distance(x) for x in d_in] if isinstance(d_in, (tuple, list))
                 and len(d_in) == 3 else [None])
        least = None if None in parts else min(p for p in parts if p is not None)
        if least is None or least < 1:
            raise InvalidParameter(
                f"d_in={d_in!r} under {metric} covers no pair of neighbouring datasets: give "
                "(l0, l1, l∞) as three whole numbers of at least 1 — (1, 1, 1) for add/remove "
                "neighbours, (2, 2, 2) for replace-one")
        return frozenset({Neighbours.ADD_REMOVE, Neighbours.REPLACE_ONE} if least >= 2
                         else {Neighbours.ADD_REMOVE})
    if metric.startswith(_ON_VALUES):
        return None
    if metric not in _INSERT_DELETE + _CHANGE_ONE:
        raise InvalidParameter(
            f"odp cannot read the neighbouring relation off OpenDP's input metric {metric}: "
            "state the relation the measurement's guarantee at this d_in holds for, "
            "odp.from_opendp(measurement, d_in, neighbours=odp.Neighbours.ADD_REMOVE) or "
            "REPLACE_ONE (your claim); nothing was reserved or charged")
    if isinstance(d_in, bool) or not isinstance(d_in, numbers.Integral) or int(d_in) < 1:
        raise InvalidParameter(f"d_in={d_in!r} under {metric} covers no pair of neighbouring "
                               "datasets: give an integer distance of at least 1 (1 for "
                               "add/remove neighbours, 2 for replace-one under "
                               f"{_INSERT_DELETE[0]})" if metric in _INSERT_DELETE else
                               f"d_in={d_in!r} under {metric} covers no pair of neighbouring "
                               "datasets: give an integer distance of at least 1")
    if metric in _CHANGE_ONE:
        return frozenset({Neighbours.REPLACE_ONE})
    if int(d_in) >= 2:
        return frozenset({Neighbours.ADD_REMOVE, Neighbours.REPLACE_ONE})
    return frozenset({Neighbours.ADD_REMOVE})


def _short(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "…"


class OpenDPMechanism(Mechanism):
    """An OpenDP ``Measurement`` at a fixed input distance ``d_in``, as an odp mechanism.

    Build it with :func:`odp.from_opendp`.  ``guarantee`` is the :class:`odp.DP` read from the
    measurement's privacy map when the adapter was built (module docstring);
    ``release(data, rng)`` runs the measurement on ``data`` — **OpenDP samples with its own
    random number generator; ``rng`` is not used** (the accountant passes it by protocol).
    ``params()`` records the measurement's input domain, input metric, output measure, d_in,
    what the map returned, the δ chosen (for curves) and the OpenDP version."""

    name = "opendp"

    def __init__(self, measurement: Any, d_in: Any, *, delta: Any = None,
                 neighbours: Neighbours | str | None = None):
        mod = _opendp()
        if not isinstance(measurement, mod.Measurement):
            kind = type(measurement).__name__
            hint = (": a Transformation releases nothing private; chain it with a measurement "
                    "(e.g. `transformation >> dp.m.then_laplace(scale)`)"
                    if isinstance(measurement, getattr(mod, "Transformation", ())) else "")
            raise InvalidParameter(f"odp.from_opendp needs an OpenDP Measurement, got {kind}"
                                   f"{hint}")
        if isinstance(d_in, bool) or d_in is None:
            raise InvalidParameter(f"d_in must be a distance in the measurement's input metric "
                                   f"(e.g. 1), got {d_in!r}")
        measure = str(measurement.output_measure)
        if measure not in SUPPORTED_MEASURES:
            advice = _HINTS.get(measure)
            raise InvalidGuarantee(
                f"odp.from_opendp does not support OpenDP's output measure {measure}; it "
                f"supports {', '.join(SUPPORTED_MEASURES)}" + (f" ({advice})" if advice else ""))
        chosen: Fraction | None = None
        if measure in _NEEDS_DELTA:
            if delta is None and measure not in _DELTA_OPTIONAL:
                raise InvalidParameter(
                    f"this measurement's guarantee ({measure}) is a curve over δ: choose the "
                    "δ to record, e.g. odp.from_opendp(measurement, d_in, delta=\"1e-6\")")
            if delta is not None:
                with budget_error_as(InvalidParameter):
                    chosen = parse_delta(delta)
                if chosen == 0:
                    raise InvalidParameter(f"delta must be > 0 for a {measure} measurement")
        elif delta is not None:
            raise InvalidParameter(
                f"delta= is only for ZeroConcentratedDivergence and SmoothedMaxDivergence "
                f"measurements; this one's ({measure}) guarantee fixes its own δ")
        metric = str(measurement.input_metric)
        try:
            raw = measurement.map(d_in)
        except (TypeError, ValueError, OverflowError) as exc:
            raise InvalidParameter(
                f"d_in={d_in!r} is not a distance of this measurement's input metric {metric} "
                f"(OpenDP: {_short(str(exc))})") from None
        except mod.OpenDPException as exc:
            raise InvalidParameter(f"OpenDP's privacy map refused d_in={d_in!r} "
                                   f"({metric}): {_short(str(exc))}") from None
        stated = None if neighbours is None else Neighbours.parse(neighbours)
        # a user-defined metric (dp.user_distance) is never read as one of OpenDP's by its text
        read_as = (f"user_distance({metric!r})" if str(getattr(
            measurement.input_metric, "type", "")).startswith("Extrinsic") else metric)
        #: the relations OpenDP's map at ``d_in`` covers (None: a metric on values, or one odp
        #: does not know, whose relation the caller states)
        self.covers = (relations_covered(read_as, d_in)
                       if stated is None or metric_known(read_as) else None)
        if stated is not None and self.covers is not None and stated not in self.covers:
            shown = " and ".join(sorted(str(x) for x in self.covers))
            raise InvalidParameter(
                f"d_in={d_in!r} under {metric} covers {shown} neighbours, not {stated}"
                + (" (replacing a record is distance 2: use d_in=2)"
                   if metric in _INSERT_DELETE else "") + "; nothing was reserved or charged")
        #: the relation the guarantee is declared for (None: the accountant's)
        self.neighbours = (stated if stated is not None else
                           next(iter(self.covers)) if self.covers and len(self.covers) == 1
                           else None)
        self.zcdp: ZCDP | None = None
        if measure == "ZeroConcentratedDivergence":
            self.zcdp = ZCDP(_map_number(raw, "ρ", measure))
        guarantee, shown = self._guarantee(measure, raw, chosen)
        self._measurement = measurement
        self.d_in = d_in
        self.output_measure = measure
        self.delta_chosen = chosen
        self._guarantee_value = guarantee
        self._map_text = shown
        self._carrier = str(measurement.input_carrier_type)
        self._params: dict[str, Any] = {
            "library": "opendp",
            "opendp_version": _opendp_version(),
            "input_domain": _short(str(measurement.input_domain)),
            "input_metric": metric,
            "output_measure": measure,
            "d_in": repr(d_in),
            "map": shown,
        }
        if chosen is not None:
            self._params["delta"] = format_fraction(chosen)
        if measure == "ZeroConcentratedDivergence":
            self._params["conversion"] = "zCDP to (ε, δ): Canonne-Kamath-Steinke 2020, Cor. 13"

    @staticmethod
    def _guarantee(measure: str, raw: Any, delta: Fraction | None) -> tuple[DP | ZCDP, str]:
        if measure == "MaxDivergence":
            return DP(_map_number(raw, "ε", measure)), repr(raw)
        if measure == "ZeroConcentratedDivergence":
            rho = _map_number(raw, "ρ", measure)
            if delta is None:  # ρ only: charged by a zCDP or Rényi lane
                return ZCDP(rho), f"rho={raw!r}"
            return DP(zcdp_to_dp_epsilon(rho, delta), delta), f"rho={raw!r}"
        if measure == "Approximate(MaxDivergence)":
            if not (isinstance(raw, tuple) and len(raw) == 2):
                raise InvalidGuarantee(f"the {measure} privacy map returned {raw!r}; expected "
                                       "a pair (ε, δ)")
            eps = _map_number(raw[0], "ε", measure)
            d = _map_number(raw[1], "δ", measure)
            if d >= 1:
                raise InvalidGuarantee(f"the {measure} privacy map gives δ = {raw[1]!r} >= 1")
            return DP(eps, d), repr(raw)
        # SmoothedMaxDivergence: a privacy profile δ -> ε
        assert delta is not None
        epsilon_of = getattr(raw, "epsilon", None)
        if not callable(epsilon_of):
            raise InvalidGuarantee(f"the {measure} privacy map returned {raw!r}; expected a "
                                   "privacy profile with .epsilon(delta)")
        at = float_down(delta)  # ε at a δ′ ≤ δ is valid at δ as well
        try:
            value = epsilon_of(at)
        except Exception as exc:  # OpenDP's errors; the guarantee cannot be read
            raise InvalidGuarantee(f"OpenDP's privacy profile gives no ε at δ={at!r}: "
                                   f"{_short(str(exc))}") from None
        return DP(_map_number(value, "ε", measure), delta), f"epsilon({at!r})={value!r}"

    @property
    def guarantee(self) -> DP | ZCDP:  # type: ignore[override]
        """The declared guarantee: ``DP(ε, δ)``, or for a zCDP measurement built without
        ``delta=`` its ``ZCDP(ρ)`` (which only a laned ledger's zCDP or Rényi lane charges)."""
        return self._guarantee_value

    def lane_guarantees(self) -> list[DP | ZCDP]:
        """What a laned ledger may charge, best first: a zCDP measurement's exact ρ, then its
        (ε, δ) at the chosen δ (if one was chosen); any other measurement's DP guarantee."""
        if self.zcdp is None:
            return [self._guarantee_value]
        out: list[DP | ZCDP] = [self.zcdp]
        if isinstance(self._guarantee_value, DP):
            out.append(self._guarantee_value)
        return out

    @property
    def measurement(self) -> Any:
        """The OpenDP measurement."""
        return self._measurement

    def params(self) -> dict[str, Any]:
        return dict(self._params)

    def check_public(self, data: Data) -> None:
        """Refuse, before anything is reserved, data whose *container* cannot be the
        measurement's input: a vector input (``Vec<…>``) must be a list, tuple or numpy array,
        a numeric scalar input a number.  Element types and values are OpenDP's to check when
        the measurement runs (a value may not fit the carrier type — that depends on the data,
        so refusing it for free would leak it): such a failure happens after the reservation
        and is charged the round's worst case, like any failure inside a mechanism."""
        carrier = self._carrier
        if carrier.startswith("Vec<"):
            if not (isinstance(data, (list, tuple)) or type(data).__name__ == "ndarray"):
                raise InvalidParameter(f"this OpenDP measurement takes a {carrier} (a list, "
                                       f"tuple or numpy array), got {type(data).__name__}")
        elif carrier in _NUMERIC_CARRIERS:
            if isinstance(data, bool) or not isinstance(data, numbers.Real):
                raise InvalidParameter(f"this OpenDP measurement takes one {carrier} number, "
                                       f"got {type(data).__name__}")

    def release(self, data: Data, rng: RandomSource) -> Release:
        """Run the OpenDP measurement on ``data``.  OpenDP draws the noise with its own random
        number generator: ``rng`` is not used."""
        del rng  # OpenDP samples with its own RNG (module docstring)
        return self._measurement(data)

    def __repr__(self) -> str:
        return (f"OpenDPMechanism({self.output_measure}, d_in={self.d_in!r}, "
                f"guarantee={self._guarantee_value!r})")


_NUMERIC_CARRIERS = frozenset({"i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32",
                               "u64", "u128", "usize", "f32", "f64"})


def from_opendp(measurement: Any, d_in: Any, *, delta: Any = None,
                neighbours: Neighbours | str | None = None) -> OpenDPMechanism:
    """An odp mechanism for the OpenDP ``measurement`` at input distance ``d_in``; run it with
    :meth:`odp.Accountant.run` like any odp mechanism.

    ``d_in`` is a distance in the measurement's input metric (an ``int`` for
    ``symmetric_distance``, a ``float`` for ``absolute_distance(T=float)``, …).  ``delta`` is
    required for ``SmoothedMaxDivergence`` measurements and optional for
    ``ZeroConcentratedDivergence`` ones — the δ at which their guarantee is converted to
    (ε, δ)-DP, parsed exactly like every odp δ (``"1e-6"``); without it a zCDP measurement's ρ
    is charged as it is, by a zCDP lane (``odp.Accountant(…, composition="zcdp")``) — and
    refused for the others.  ``neighbours``: the relation the guarantee is stated for
    (:class:`odp.Neighbours`); by default the one ``d_in`` covers in a dataset metric
    (:func:`relations_covered`), else, for a metric on values, the accountant's — your
    claim; for an input metric odp does not know (:func:`metric_known`: ``FrameDistance``,
    the identifier distances, a user metric, …) it is required.  The guarantee is read here, once: a
    measurement that is not an OpenDP ``Measurement``, an unsupported output measure, a
    ``d_in`` of the wrong type or a missing ``delta`` raise :class:`~odp.errors.InvalidParameter`
    / :class:`~odp.errors.InvalidGuarantee` before anything is reserved.  See
    :mod:`odp.adapters.opendp` for what the guarantee is and that OpenDP, not odp's RNG, draws
    the noise.

    Example (``examples/opendp_laplace.py`` runs it)::

        import opendp.prelude as dp
        dp.enable_features("contrib")
        count = (dp.t.make_count(dp.vector_domain(dp.atom_domain(T=int)),
                                 dp.symmetric_distance()) >> dp.m.then_laplace(scale=2.0))
        mech = odp.from_opendp(count, d_in=1)      # DP(epsilon=0.5, delta=0)
        acc.run(mech, [3, 1, 4, 1, 5])
    """
    return OpenDPMechanism(measurement, d_in, delta=delta, neighbours=neighbours)

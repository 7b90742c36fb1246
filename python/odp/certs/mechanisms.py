"""odp's built-in mechanism kinds: one record each, from which every table and message is derived.

A certificate (text v2) gives every round a ``mech`` row after its ``step``: the mechanism and
its exact parameters, amounts in units of ``1/D`` like every other number of the certificate and
counts (the SVT cut-off, stopping points, grid sensitivities) as they are::

    mech toy 200000                      M_toy with ε = 0.2 (D = 10^6)
    mech svt 8 150000 850000             SVT: c = 8, ε1, ε2
    mech iter 10 20 30 40 ; 40 5000 0    Alg. 3: stopping points ; groups (count ε_k δ_k)
    mech lemma11 ; 1 20000 3 2 30000 4   Alg. 3, Lemma 11 with another COMP (buckets, RDP):
                                         per stop k_i ε^{k_i} δ^{k_i}
    mech dp                              a user's DP charge (Lemma 3: one class)
    mech declared                        a user's own mechanism

The checker generated from ``Odp/LedgerCore.lean`` (``mechOk``) and the Lean kernel
(``checkCert``) recompute the round's classes, costs and δ from the row and compare them with the
round's ``step`` and ``blocks`` rows; a round of a user's own mechanism is accepted as declared.

**One record per kind.**  :data:`KINDS` holds one :class:`Kind` per row name, and it is the only
place a kind is described: its Lean constant (``Odp.LedgerCore.kind…``), its parameters (shape,
and the recorded ``params`` keys they are read from), its cost function (the classes' costs and
δ that ``mechOk`` fixes for a row, computed with the generated Lean cost functions), the theorem
of ``Odp/Mech`` proving its guarantee, whether ``Odp/Certs/Link.lean`` links it to Theorem 7,
the hypotheses its guarantee rests on, the neighbouring relation its rounds hold for
(:mod:`odp.neighbours`: replace-one, DP-SGD's as recorded, or the caller's claim for a declared
or DP round), and the note ``odp verify`` gives when it is declared.
The other tables — :data:`LINKED`, :data:`RECORDED`, :data:`HYPOTHESES` — and the
``mech``-row parser, the kernel's rows, the failure messages (:func:`expected_text`) and
``odp verify``'s per-round lines (:func:`guarantees`) are read from those records.  Adding a
kind is adding one record (docs/architecture.md).

A theorem counts only if it is in the Lean sources this odp was generated from
(``odp._lean_rules.LEAN_THEOREMS``, read by ``scripts/gen_rules.py`` from the compiled modules
under ``Odp/Mech``): a round is reported *proved* only then, and *declared* otherwise.

**Which rounds get a built-in row.**  Only a round whose record carries
:data:`odp.mechanisms.builtin.BUILTIN_KEY`, which the accountant writes itself and only for one
of odp's own mechanism objects, constructed by odp and untouched
(:func:`odp.mechanisms.builtin.builtin_key`); its value is a key of :data:`RECORDED` (a
:attr:`Kind.recorded` key).  The recorded ``mechanism`` name is a label: a user's mechanism
named ``"laplace"``, a ``charge(..., mechanism="laplace")``, a user's ``IterativeMechanism`` or
``PTRFunction`` get ``mech dp`` (a DP guarantee) or ``mech declared``.  (Certificate text
version 2 read the kind from the name; such certificates are still re-derived that way, and
:func:`guarantees` reports all their rounds declared.)
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any

from .. import _lean_rules as lean
from ..guarantees import ALL
from ..mechanisms.builtin import BUILTIN_KEY
from ..neighbours import Neighbours
from .units import in_units, to_units
from ..types import Label

__all__ = ["MechRow", "Param", "Costs", "Kind", "KINDS", "LINKED", "CAPSTONE", "round_neighbours",
           "capstone_applies", "RECORDED", "HYPOTHESES", "GENERAL", "Units", "Derived", "derive",
           "row_for", "lean_args", "theorem_of", "guarantees", "expected_text"]


@dataclass(frozen=True)
class MechRow:
    """A ``mech`` row: the mechanism's name (a key of :data:`KINDS`), its
    numeric parameters and, for an iterative mechanism, its step groups ``(count, ε, δ)``."""

    name: str
    params: tuple[int, ...] = ()
    groups: tuple[tuple[int, int, int], ...] | None = None

    def render(self) -> str:
        words = ["mech", self.name, *map(str, self.params)]
        if self.groups is not None:
            words += [";", *(str(x) for g in self.groups for x in g)]
        return " ".join(words)


@dataclass(frozen=True)
class Units:
    """An amount of a ``mech`` row (written in units of ``1/D``)."""

    value: Fraction


@dataclass(frozen=True)
class Derived:
    """A round's ``mech`` row before scaling: the kind, its parameters (amounts as
    :class:`Units`, counts as ``int``) and, for an iterative mechanism, its step groups
    ``(count, ε_k, δ_k)``."""

    kind: str
    params: tuple[Units | int, ...] = ()
    groups: tuple[tuple[int, Fraction, Fraction], ...] | None = None

    def amounts(self) -> list[Fraction]:
        """The amounts that ``D`` must make whole numbers."""
        out = [p.value for p in self.params if isinstance(p, Units)]
        for _, eps, delta in self.groups or ():
            out += [eps, delta]
        return out

    def row(self, d: int) -> MechRow:
        """The row in units of ``1/d``."""
        params = tuple(in_units(p.value, d) if isinstance(p, Units) else p for p in self.params)
        groups = (None if self.groups is None else
                  tuple((n, in_units(e, d), in_units(x, d)) for n, e, x in self.groups))
        return MechRow(self.kind, params, groups)


# ----------------------------------------------------------- reading the recorded parameters

@lru_cache(maxsize=4096)
def _parsed(text: str) -> Fraction:
    """``Fraction(text)``, cached: the run-time check reads the same recorded parameters round
    after round, and parsing a decimal string dominates its cost (fractions are immutable)."""
    return Fraction(text)


def _exact(value: Any, what: str) -> Fraction:
    """A recorded amount: an exact number (a string or an int, never a float), not negative."""
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise TypeError(f"{what} is not an exact number")
    out = _parsed(value) if isinstance(value, str) else Fraction(value)
    if out < 0:
        raise ValueError(f"{what} is negative")
    return out


def _count(params: Mapping[str, Any], key: str) -> int:
    value = params[key]
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise TypeError(f"{key} is not a natural number")
    return value


@dataclass(frozen=True)
class Param:
    """One numeric parameter of a ``mech`` row and the recorded ``params`` key it is read from:
    an amount (an ε or a δ, written in units of ``1/D``) or a count (written as it is)."""

    key: str
    amount: bool = True

    def read(self, params: Mapping[str, Any]) -> Units | int:
        if self.amount:
            return Units(_exact(params[self.key], self.key))
        return _count(params, self.key)


def _amounts(*keys: str) -> tuple[Param, ...]:
    return tuple(Param(k) for k in keys)


_BASIC = {"name": "basic"}


def _composition(p: Mapping[str, Any]) -> Any:
    """The COMP of a Lemma 11 δ rule (``None``: another rule, e.g. OptDel's)."""
    rule = p["rule"]
    return (rule.get("composition") if isinstance(rule, Mapping)
            and rule.get("name") == "lemma11" else None)


def _stops(p: Mapping[str, Any]) -> list[int]:
    stops = p["stops"]
    if not isinstance(stops, list) or not all(
            isinstance(k, int) and not isinstance(k, bool) and k >= 0 for k in stops):
        raise TypeError("stops")
    return stops


def _per_stop(p: Mapping[str, Any]) -> Derived | None:
    """``lemma11``: Alg. 3 under Lemma 11 with a COMP other than basic composition (privacy
    buckets, the optimal composition, RDP), which records per stop ``(k_i, ε^{k_i},
    δ^{k_i})`` (``costs``, ``stop_deltas``; :func:`odp.composition.iterative_guarantee`)."""
    composition = _composition(p)
    if composition is None or composition == _BASIC or "stop_deltas" not in p:
        return None
    stops = _stops(p)
    costs = [_exact(c, "a cost") for c in p["costs"]]
    deltas = [_exact(x, "a stop delta") for x in p["stop_deltas"]]
    if not len(stops) == len(costs) == len(deltas):
        raise ValueError("one cost and one delta per stop")
    return Derived("lemma11", (), tuple(zip(stops, costs, deltas)))


def _prefix_sums(kind: str) -> Callable[[Mapping[str, Any]], Derived | None]:
    """``iter`` (Lemma 11 with basic composition) or ``iter_costs`` (another δ rule, e.g.
    OptDel's): Alg. 3's recorded ``stops``, ``steps`` (run-length groups) and ``costs``, which
    must be the prefix sums of the step ε's (custom costs have no Lean cost function: such a
    round is declared)."""
    def read(p: Mapping[str, Any]) -> Derived | None:
        composition = _composition(p)
        if (composition == _BASIC) != (kind == "iter") or (
                kind == "iter_costs" and composition is not None and "stop_deltas" in p):
            return None  # another kind's round
        stops = _stops(p)
        costs = [_exact(c, "a cost") for c in p["costs"]]
        groups = []
        for g in p["steps"]:
            step = g["step"]
            groups.append((_count(g, "count"), _exact(step["epsilon"], "epsilon"),
                           _exact(step["delta"], "delta")))
        d, eps = to_units([e for _, e, _ in groups])  # the prefix sums, by Lean's iterBlocks
        units = [lean.StepGroup(n, e, 0) for (n, _, _), e in zip(groups, eps)]
        if costs != [Fraction(b, d) for b in lean.iterBlocks(units, stops)]:
            return None
        return Derived(kind, tuple(stops), tuple(groups))
    return read


# ----------------------------------------------------------- the cost functions (Lean's)

@dataclass(frozen=True)
class Costs:
    """What ``mechOk`` fixes for a row: the classes' costs in declaration order and δ, in units
    of ``1/D`` (a kind's :attr:`Kind.cost`).  ``delta`` ``None``: δ is declared, not fixed;
    ``delta_floor``: the row fixes a floor, δ ≥ ``delta``."""

    blocks: tuple[int | Fraction, ...]
    delta: int | None
    delta_floor: bool = False

    def text(self) -> str:
        shown = ", ".join(str(b) for b in self.blocks)
        if self.delta is None:
            return f" (the mechanism's: blocks [{shown}])"
        delta = ("delta at least " if self.delta_floor else "delta ") + str(self.delta)
        return f" (the mechanism's: blocks [{shown}], {delta})"


def _groups(row: MechRow) -> list[lean.StepGroup]:
    return [lean.StepGroup(*g) for g in row.groups or ()]


def _classes(blocks: Callable[[int], Sequence[int]], *, delta: bool
             ) -> Callable[[MechRow], Costs]:
    """The classes of ``blocks(ε)`` (``dpBlocks``: one class, Lemma 3; ``toyBlocks``,
    ``ptrBlocks``, ``iqrBlocks``), ε the first parameter; δ the second (``delta``) or 0."""
    return lambda row: Costs(tuple(blocks(row.params[0])), row.params[1] if delta else 0)


def _svt_costs(row: MechRow) -> Costs | None:
    """Classes ``c' = 0..c`` costing ``ε1 + (c'/c)·ε2`` (Lemma 8): the one list ``svtFrom``
    accepts, ``b·c = ε1·c + c'·ε2``; δ = 0 (``svtOk``)."""
    c, e1, e2 = row.params
    if c <= 0:
        return None
    return Costs(tuple(Fraction(e1 * c + k * e2, c) for k in range(c + 1)), 0)


def _test_release_costs(row: MechRow) -> Costs | None:
    """Classes (values, ⊥) costing ``max(ε1, (u_test/u)·ε2)`` and ``min(that, (max(u_train,
    u_test)/u)·ε2)``: the one pair ``testReleaseOk`` accepts; δ = 0 (Thm. 17)."""
    e1, e2, u, ut, utr = row.params
    if u <= 0:
        return None
    first = Fraction(max(e1 * u, ut * e2), u)
    return Costs((first, min(first, Fraction(max(utr, ut) * e2, u))), 0)


def _recorded_neighbours(params: Mapping[str, Any]) -> Neighbours:
    """An iterative mechanism's relation: DP-SGD records the one it was built with
    (``neighbours``); noisy gradient descent records none and is replace-one."""
    text = params.get("neighbours")
    return Neighbours.REPLACE_ONE if text is None else Neighbours.parse(text)


def _iter_costs(row: MechRow) -> Costs:
    """One class per stop, its prefix sum of the step ε's (``iterBlocks``); δ the sum over the
    stops of the prefix sums of the step δ's (``iterDelta``; Lemma 11, basic composition)."""
    gs = _groups(row)
    return Costs(tuple(lean.iterBlocks(gs, row.params)), lean.iterDelta(gs, row.params))


def _iter_costs_declared_delta(row: MechRow) -> Costs:
    """``iterBlocks`` as for ``iter``; δ is declared (OptDel, Thm. 15)."""
    return Costs(tuple(lean.iterBlocks(_groups(row), row.params)), None)


def _lemma11_costs(row: MechRow) -> Costs:
    """Per stop its ``ε^{k_i}`` (``stopCosts``); δ at least ``Σ_i δ^{k_i}`` (``stopDeltas``)."""
    gs = _groups(row)
    return Costs(tuple(lean.stopCosts(gs)), lean.stopDeltas(gs), delta_floor=True)


# ----------------------------------------------------------- the record

@dataclass(frozen=True)
class Kind:
    """One kind of ``mech`` row: everything odp knows about it (module docstring)."""

    name: str  #: the row's name in the certificate text
    lean_kind: str  #: the Lean constant (``Odp.LedgerCore.<lean_kind>``) that numbers it
    checked: str  #: what ``mechOk`` fixes, for the report
    #: what its guarantee still rests on once its theorem (if any) is accepted: noise laws (the
    #: hypothesis structures of ``Odp/Mech/Common/Noise.lean``, by name), sensitivity and data facts,
    #: numerical bounds computed by tested Python code, the caller's declarations.  A hypothesis
    #: that gains a Lean witness or proof is removed here, and nowhere else.
    hypotheses: tuple[str, ...]
    #: its numeric parameters and the recorded keys they are read from (``None``: one or more
    #: stopping points, an iterative mechanism's)
    params: tuple[Param, ...] | None = ()
    groups: bool = False  #: takes step groups ``; count ε δ …`` (iterative mechanisms)
    #: the :data:`~odp.mechanisms.builtin.BUILTIN_KEY` values of the rounds read as this kind
    recorded: tuple[str, ...] = ()
    #: reads a recorded round whose parameters are not :attr:`params` (``None``: not this kind)
    read: Callable[[Mapping[str, Any]], Derived | None] | None = None
    #: the classes' costs and δ that ``mechOk`` fixes for a row of this kind (``None``: not a
    #: function of the row — ``dp``'s one class is the round's own ε; ``declared``: nothing)
    cost: Callable[[MechRow], Costs | None] | None = None
    theorem: str | None = None  #: the theorem proving the guarantee (if in this build's sources)
    #: one of the ``…Builtin`` disjuncts of ``BuiltinRequest`` (``Odp/Certs/Link.lean``)
    linked: bool = False
    note: str | None = None  #: why it is declared, where that is not "no theorem (yet)"
    #: the neighbouring relation its rounds hold for (:mod:`odp.neighbours`): fixed, read from
    #: the recorded parameters, or ``None`` — the caller's claim (a declared or DP round), the
    #: accountant's relation
    neighbours: Neighbours | Callable[[Mapping[str, Any]], Neighbours] | None = (
        Neighbours.REPLACE_ONE)

    @property
    def number(self) -> int:
        """The kind's number, from the generated Lean constant."""
        value = getattr(lean, self.lean_kind)()
        assert isinstance(value, int)
        return value

    @property
    def arity(self) -> int | None:
        """Its number of numeric parameters (``None``: one or more stopping points)."""
        return None if self.params is None else len(self.params)

    def derive(self, params: Mapping[str, Any]) -> Derived | None:
        """The row of a round recorded with ``params`` (may raise on malformed ones)."""
        if self.read is not None:
            return self.read(params)
        assert self.params is not None
        return Derived(self.name, tuple(p.read(params) for p in self.params))

    def relation(self, params: Mapping[str, Any]) -> Neighbours | None:
        """The relation a round of this kind recorded with ``params`` holds for (``None``: the
        caller's claim); a recorded relation odp does not know raises
        :class:`~odp.errors.InvalidParameter`."""
        if callable(self.neighbours):
            return self.neighbours(params)
        return self.neighbours

    def expected(self, row: MechRow) -> Costs | None:
        """:attr:`cost` of a row of this kind of the right shape, else ``None``."""
        if self.cost is None or self.arity not in (None, len(row.params)):
            return None
        return self.cost(row)


# ----------------------------------------------------------- what the guarantees rest on

_ONE = "one class costing ε (Lemma 3)"
_SENSITIVITY = ("sensitivity: the query moves by at most m = ⌈Δ/g⌉ grid units between "
                "neighbours, for the sensitivity Δ the caller declared (hn in "
                "Odp/Mech/*/Privacy.lean; odp does not check a query's sensitivity)")
_GD_STEPS = ("NoisyGradientDescent's steps are DP by Odp.Mech.noisyStep_dp from "
             "Iter.ShiftDominated (each coordinate's clamped discrete Laplace noise) and "
             "Iter.L1Sensitive (the float analysis of its gradient, argued and tested in Python)")
_SGD_STEPS = ("DP-SGD's steps: the RDP of the Poisson-subsampled discrete Gaussian "
              "(odp.subsampled_rdp, tested Python), with clipping verified in integers")
_STEPS_DP = "Iter.StepsDP — each step is (ε_k, δ_k)-DP as the row says: " + _GD_STEPS
_PTR_NOISE = ("noise law: TailNoise — the PTR test noise (discrete Laplace, scale 1/ε)",
              "noise law: IntLaw.ShiftWithin — the release noise of the IQR sub-bin (discrete "
              "Laplace, scale (L − 1)/ε)")
#: The recorded keys of odp's iterative mechanisms (Alg. 3): their δ rule decides the kind.
_ITERATIVE = ("iterative", "noisy_gd", "dpsgd", "dpsgd_loop")
_CLAMPED_LAPLACE = ("law: clampedLaplace — the clamped discrete Laplace law, scale m/ε grid "
                    "units, written out in Lean (Odp/Mech/Laplace/Law.lean: its masses "
                    "proved to sum to 1; no noise hypothesis); that odp.samplers."
                    "discrete_laplace draws it is tested, not proved")
_IQR_DATA = ("data fact: IQRDataFacts — the stability statistic is 1-Lipschitz and, at 2 or "
             "more, keeps neighbours' IQRs in one bin (argued and tested in Python, not proved)")


# ----------------------------------------------------------- the kinds

#: **The one table**: a record per kind (the lead's merge adjusts theorem names here and nowhere
#: else).  The order is the parser's list of names.
KINDS: dict[str, Kind] = {k.name: k for k in (
    Kind("declared", "kindDeclared",
         checked="nothing: a user's own mechanism, its guarantee is declared",
         hypotheses=("declared: the caller's ODP guarantee (classes, costs, δ) of its own "
                     "mechanism (Theorem 7 takes it as a hypothesis)",),
         note="a user's own mechanism: its guarantee is declared", neighbours=None),
    Kind("dp", "kindDp",
         checked="one class costing the round's sup ε (a DP guarantee through Lemma 3); the DP "
                 "guarantee itself is declared",
         hypotheses=("declared: the caller's claim that its mechanism is (ε, δ)-DP with the "
                     "charged ε and δ (the hypothesis hdp of DpBuiltin, "
                     "Odp/Certs/LinkCore.lean)",),
         linked=True, neighbours=None,
         note="a DP charge (a user's mechanism, an OpenDP measurement, a converted notion): its "
              "one class is checked, the DP guarantee itself is declared"),
    Kind("laplace", "kindLaplace",
         params=_amounts("epsilon"), recorded=("laplace",),
         cost=_classes(lean.dpBlocks, delta=False), checked=_ONE + ", δ = 0",
         theorem="Odp.Mech.laplace_odp", linked=True,
         hypotheses=(_CLAMPED_LAPLACE, _SENSITIVITY)),
    Kind("gaussian", "kindGaussian",
         params=_amounts("epsilon", "delta"), recorded=("gaussian",),
         cost=_classes(lean.dpBlocks, delta=True), checked=_ONE + " and its δ",
         theorem="Odp.Mech.gaussian_odp", linked=True,
         hypotheses=("noise law: GaussNoise — the discrete Gaussian noise (odp.samplers."
                     "discrete_gaussian) with δ at ε at most the declared δ, a bound computed "
                     "by tested Python code (odp.gaussian_dp), not by Lean", _SENSITIVITY)),
    Kind("rr", "kindRr",
         params=_amounts("epsilon"), recorded=("randomized_response",),
         cost=_classes(lean.dpBlocks, delta=False), checked=_ONE + ", δ = 0",
         theorem="Odp.Mech.rr_odp", linked=True,
         hypotheses=("sampler: odp's randomized-response sampler draws the law rrMech "
                     "(Odp/Mech/RandomizedResponse/Privacy.lean)",)),
    Kind("median", "kindMedian",
         params=_amounts("epsilon"), recorded=("median",),
         cost=_classes(lean.dpBlocks, delta=False), checked=_ONE + ", δ = 0",
         theorem="Odp.Mech.expMedian_dp", linked=True,
         hypotheses=("data fact: UtilitySensitivity — the utility −max(#{x_i < y}, #{x_i > y}) "
                     "moves by at most 1 between neighbours (stated, tested in Python)",
                     "sampler: odp's exponential-median sampler draws the law expMech "
                     "(Odp/Mech/PTR/Median.lean)")),
    Kind("erm", "kindErm",
         params=_amounts("epsilon"), recorded=("erm_output_perturbation",),
         cost=_classes(lean.dpBlocks, delta=False), checked=_ONE + ", δ = 0",
         hypotheses=("ERM's DP: ERMRelease.dp — Alg. 4 is ε-DP (Thm. 16; stated in Odp/Mech, "
                     "not proved), and no Lean theorem covers this round",)),
    Kind("toy", "kindToy",
         params=_amounts("epsilon"), recorded=("toy",),
         cost=_classes(lean.toyBlocks, delta=False),
         checked="classes (values, ⊥) costing (ε, 0), δ = 0",
         theorem="Odp.Mech.toy_odp", linked=True,
         hypotheses=(_CLAMPED_LAPLACE + "; and a fair coin (odp's CSPRNG)", _SENSITIVITY)),
    Kind("svt", "kindSvt",
         params=(Param("c", amount=False), *_amounts("epsilon1", "epsilon2")),
         recorded=("svt",), cost=_svt_costs,
         checked="classes c' = 0..c costing ε1 + (c'/c)·ε2 (Lemma 8), δ = 0",
         theorem="Odp.Mech.svt_odp", linked=True,
         hypotheses=("noise law: LapNoise — the threshold noise ρ, scale m/ε1 grid units",
                     "noise law: LapTail — each query's noise ν_i, scale 2cm/ε2 grid units",
                     "sensitivity: every query moves by at most m grid units between "
                     "neighbours (hA in Odp/Mech/SVT/Privacy.lean; odp does not check a query's "
                     "sensitivity)")),
    Kind("ptr", "kindPtr",
         params=_amounts("epsilon", "delta"), recorded=("ptr", "ptr_iqr"),
         cost=_classes(lean.ptrBlocks, delta=True),
         checked="classes (values, ⊥) costing (2ε, ε) and δ (Sec. 4.2)",
         theorem="Odp.Mech.ptr_odp", linked=True,
         hypotheses=(*_PTR_NOISE,
                     "numerical bound: the pass tail Pr(Z ≥ K) ≤ δ' with K chosen by "
                     "odp.mechanisms.ptr.pass_threshold (tested Python)", _IQR_DATA)),
    Kind("iqr", "kindIqr",
         params=_amounts("epsilon", "delta"), recorded=("iqr",),
         cost=_classes(lean.iqrBlocks, delta=True),
         checked="classes (values, ⊥) costing (3ε, 2ε) and δ (Lemma 10)",
         theorem="Odp.Mech.iqr_logBinLap_odp", linked=True,
         hypotheses=("law: odp's M_IQR written out in Lean (Odp/Mech/PTR/IQR.lean: the discrete "
                     "Laplace test through its closed-form tail, the clamped Laplace release "
                     "index; no noise hypothesis); that odp's samplers draw it is tested, not "
                     "proved",
                     "numerical bound: the pass tail Pr(Z ≥ K) ≤ δ/2 of each discretisation, "
                     "K chosen by odp.mechanisms.ptr.pass_threshold (tested Python)",
                     _IQR_DATA)),
    Kind("iter", "kindIter",
         params=None, groups=True, recorded=_ITERATIVE, read=_prefix_sums("iter"),
         cost=_iter_costs, neighbours=_recorded_neighbours,
         checked="one class per stopping point costing the prefix sum of the step ε's, δ = the "
                 "sum over the stops of the prefix sums of the step δ's (Lemma 11, basic "
                 "composition)",
         theorem="Odp.Mech.iter_odp_basic", linked=True,
         hypotheses=(_STEPS_DP,)),
    Kind("iter_costs", "kindIterCosts",
         params=None, groups=True, recorded=_ITERATIVE, read=_prefix_sums("iter_costs"),
         cost=_iter_costs_declared_delta, neighbours=_recorded_neighbours,
         checked="one class per stopping point costing the prefix sum of the step ε's; its δ "
                 "is a numerical bound with no Lean theorem (OptDel, Thm. 15) and is declared",
         hypotheses=(_STEPS_DP,
                     "numerical bound: OptDel's δ (Thm. 15), computed by tested Python code "
                     "(odp.optdel), no Lean theorem"),
         note="costs checked; its δ is a numerical bound with no Lean theorem (OptDel, "
              "Thm. 15), declared"),
    Kind("lemma11", "kindLemma11",
         params=(), groups=True, recorded=_ITERATIVE, read=_per_stop, cost=_lemma11_costs,
         neighbours=_recorded_neighbours,
         checked="one class per stopping point k_i costing the row's ε^{k_i}, and δ ≥ Σ_i "
                 "δ^{k_i} (Lemma 11 with a COMP other than basic composition: privacy "
                 "buckets, the optimal composition, RDP). Proved from the stated hypothesis "
                 "that each prefix M^{k_i} is (ε^{k_i}, δ^{k_i})-DP, a numerical bound "
                 "computed by tested Python code (odp.composition), not by Lean; a δ above the "
                 "sum (DP-SGD declares its target) by Odp.Certs.Lemma11.lemma11_le",
         theorem="Odp.Mech.lemma11", linked=True,
         hypotheses=("numerical bound: Iter.PrefixDP — each prefix M^{k_i} is (ε^{k_i}, "
                     "δ^{k_i})-DP with the row's numbers, upper bounds computed by tested "
                     "Python code (odp.composition: privacy buckets, the optimal composition "
                     "or RDP), not by Lean",
                     "the steps' own DP, which those numbers assume: " + _GD_STEPS + "; "
                     + _SGD_STEPS,
                     "declared, for a training loop accounted by odp.dpsgd.Accounting (odp does "
                     "not run it): that the loop samples each batch with the schedule's rate "
                     "and adds the schedule's Gaussian noise (tested on the loader's batch "
                     "sizes by odp.dpsgd.check_poisson_batches; enforced per step only under "
                     "the Opacus adapter)")),
    Kind("test_release", "kindTestRelease",
         params=(*_amounts("epsilon", "epsilon2"), Param("units", amount=False),
                 Param("units_test", amount=False), Param("units_train", amount=False)),
         recorded=("logreg_with_test",), cost=_test_release_costs,
         checked="classes (values, ⊥) costing max(ε1, (u_test/u)·ε2) and min(that, "
                 "(max(u_train, u_test)/u)·ε2), δ = 0 (Thm. 17 on odp's grid)",
         theorem="Odp.Mech.test_release_odp", linked=True,
         hypotheses=("noise law: TailNoise — the test noise, discrete Laplace of scale u/ε2 "
                     "grid units",
                     "ERM's DP inside test-and-release: ERMRelease — Alg. 4 is ε1-DP in the "
                     "training set, and the coupling of App. D (stated, not proved)",
                     "data fact: TestSensitivity — one test record moves every model's test "
                     "score by at most u_test grid units (Lemma 21; stated, not proved)")),
)}

# ----------------------------------------------------------- the tables read from the records

#: The kinds of ``mech`` row that ``Odp/Certs/Link.lean`` joins to Theorem 7
#: (``BuiltinRequest``: ``DpBuiltin`` … ``Lemma11Builtin``): for a run all of whose rounds are of
#: these kinds, :data:`CAPSTONE` proves that a certificate ``checkCert`` accepts certifies
#: (ε_t, δ_t)-DP from the mechanisms' hypotheses.
LINKED = frozenset(k.name for k in KINDS.values() if k.linked)
CAPSTONE = "Odp.Certs.certificate_sound_builtin"

#: Recorded built-in key (``params[BUILTIN_KEY]``: ``laplace``, ``noisy_gd``, …) -> the kinds
#: its rounds may be (each reads only its own rounds: an iterative mechanism's δ rule decides
#: between ``iter``, ``iter_costs`` and ``lemma11``).
RECORDED: dict[str, tuple[Kind, ...]] = {
    key: tuple(k for k in KINDS.values() if key in k.recorded)
    for kind in KINDS.values() for key in kind.recorded}

#: Each kind's :attr:`Kind.hypotheses`, which ``odp verify`` lists per round
#: (:func:`guarantees`), after :data:`GENERAL`.
HYPOTHESES: dict[str, tuple[str, ...]] = {k.name: k.hypotheses for k in KINDS.values()}

#: What every round rests on, whatever its kind (said once by ``odp verify``).
GENERAL = ("which code made each release: a certificate records what the accountant was told "
           "and cannot show which code made a release; a round is reported as odp's own "
           "mechanism because the accountant recorded it so (odp.mechanisms.builtin: the "
           "mechanism object was exactly one of odp's classes, untouched), and odp's samplers "
           "are taken to draw the laws the Lean models use (docs/certificates.md, trust model)")

_LEGACY = ("certificate text version 2: its mech row was read from the recorded mechanism name, "
           "which any caller can choose — its classes and costs are the named mechanism's "
           "(mechOk), but nothing shows that odp's own mechanism made the round")


def capstone_applies(rounds: Sequence[Mapping[str, Any]]) -> bool:
    """Whether :data:`CAPSTONE` covers a run with these rounds (the ``rounds`` of
    :func:`guarantees`): it is in the Lean sources this odp was generated from, and every round
    is of a linked kind, proved or a DP charge."""
    return CAPSTONE in lean.LEAN_THEOREMS and all(
        r["mechanism"] in LINKED and (r["status"] == "proved" or r["mechanism"] == "dp")
        for r in rounds)


_NAME = re.compile(r"^([a-z_]+)(\[.*\])?$", re.S)


def derive(mechanism: str, params: Mapping[str, Any] | None, *, by_name: bool = False
           ) -> Derived | None:
    """The ``mech`` row of a round recorded with ``params``, if the accountant recorded it as
    made by one of odp's own mechanisms (``params[BUILTIN_KEY]``, module docstring) and the
    parameters that mechanism needs are recorded; else ``None``.  (The row is then checked
    against the round's declared guarantee: it must be that mechanism's guarantee for its
    parameters.)  ``by_name``: certificate text version 2's rule, which read the kind from the
    recorded ``mechanism`` name (a ``[label]`` suffix allowed) — used only to re-derive such
    certificates, never to call a round proved."""
    if not isinstance(params, Mapping):
        return None
    if by_name:
        m = _NAME.match(mechanism) if isinstance(mechanism, str) else None
        key = m.group(1) if m else None
    else:
        key = params.get(BUILTIN_KEY)
    kinds = RECORDED.get(key, ()) if isinstance(key, str) else ()
    try:
        for kind in kinds:
            derived = kind.derive(params)
            if derived is not None:
                return derived
    except (KeyError, TypeError, ValueError, ZeroDivisionError, ArithmeticError):
        pass
    return None


def row_for(mechanism: str, params: Mapping[str, Any] | None,
            classes: Sequence[tuple[Label, Fraction]], *, by_name: bool = False) -> Derived:
    """The ``mech`` row of a round: a built-in's (:func:`derive`), else ``dp`` for a DP
    guarantee (the one class of Lemma 3), else ``declared``."""
    derived = derive(mechanism, params, by_name=by_name)
    if derived is not None:
        return derived
    if [label for label, _ in classes] == [ALL]:
        return Derived("dp")
    return Derived("declared")


def round_neighbours(row: MechRow | None, params: Any) -> Neighbours | None:
    """The neighbouring relation a round with this ``mech`` row holds for
    (:meth:`Kind.relation`; ``None``: no row, or the caller's claim)."""
    if row is None:
        return None
    return KINDS[row.name].relation(params if isinstance(params, Mapping) else {})


def lean_args(row: MechRow | None) -> lean.MechArgs | None:
    """The row as ``odp._lean_rules.check_step`` takes it (``None``: no row, a declared round)."""
    if row is None:
        return None
    groups = [lean.StepGroup(n, e, d) for n, e, d in row.groups or ()]
    return KINDS[row.name].number, list(row.params), groups


def theorem_of(kind: str) -> str | None:
    """The Lean theorem proving ``kind``'s guarantee, if this build's Lean sources have it."""
    name = KINDS[kind].theorem
    return name if name is not None and name in lean.LEAN_THEOREMS else None


def _declared_note(kind: Kind) -> str:
    """Why a round of ``kind`` is declared (its theorem is not in this build's sources)."""
    if kind.note is not None:
        return kind.note
    if kind.theorem is None:
        return "costs checked; no Lean theorem proves this mechanism's guarantee yet"
    return f"costs checked; the Lean theorem {kind.theorem} is not in the Lean sources of this odp"


def guarantees(rows: Sequence[MechRow | None], names: Sequence[str | None] = (), *,
               by_name: bool = False) -> dict[str, Any]:
    """What was established about each round's guarantee (``odp verify``): *proved* (by the
    Lean theorem named) when its ``mech`` row names a mechanism with a theorem in this build's
    sources — ``mechOk`` has then checked the round's classes, costs and δ against the cost
    function of that theorem — else *declared*, with a note saying why; and, per round, the
    hypotheses (:attr:`Kind.hypotheses`) its guarantee still rests on.  ``names``: the recorded
    mechanism names.  ``by_name``: a text-version-2 certificate, whose rows were read from names:
    every round is declared."""
    out = []
    for i, row in enumerate(rows):
        kind = KINDS[row.name if row is not None else "declared"]
        theorem = None if by_name else theorem_of(kind.name)
        entry: dict[str, Any] = {
            "round": i + 1, "mechanism": kind.name,
            "name": names[i] if i < len(names) else None,
            "theorem": theorem, "status": "proved" if theorem else "declared",
            "checked": kind.checked if row is not None else "nothing (no mech row)",
            "hypotheses": list(kind.hypotheses)}
        if by_name:
            entry["note"] = _LEGACY
            if kind.name not in ("declared", "dp"):
                entry["hypotheses"].insert(0, "declared: that odp's own mechanism made the round "
                                              "(only its recorded name says so)")
        elif theorem is None:
            entry["note"] = _declared_note(kind)
        out.append(entry)
    proved = sum(1 for e in out if e["status"] == "proved")
    return {"proved": proved, "declared": len(out) - proved, "rounds": out,
            "general": GENERAL}


def expected_text(row: MechRow) -> str:
    """For a failure message: the classes' costs and δ the row's mechanism has (its kind's
    :attr:`Kind.cost`, computed with the generated Lean cost functions), where its kind has
    them."""
    costs = KINDS[row.name].expected(row)
    return "" if costs is None else costs.text()

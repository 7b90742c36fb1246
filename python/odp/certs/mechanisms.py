"""Which mechanism made a round, and which Lean theorem proves its guarantee: the one table.

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

:data:`KINDS` is the table: for each row name, the Lean constant that names it
(``Odp.LedgerCore.kind…``), the theorem of ``Odp/Mech`` that proves the guarantee (``None``:
none yet), the shape of its parameters and what the check fixes.  A theorem counts only if it
is in the Lean sources this odp was generated from (``odp._lean_rules.LEAN_THEOREMS``, read by
``scripts/gen_rules.py`` from the compiled modules under ``Odp/Mech``): a round is reported
*proved* only then, and *declared* otherwise.  :data:`RECORDED` maps the keys that odp's own
mechanisms record in the ledger (``params["odp_builtin"]``: ``laplace``, ``noisy_gd``, …) to the
function that reads their recorded ``params``.

**Which rounds get a built-in row.**  Only a round whose record carries
:data:`odp.mechanisms.builtin.BUILTIN_KEY`, which the accountant writes itself and only for one
of odp's own mechanism objects, constructed by odp and untouched
(:func:`odp.mechanisms.builtin.builtin_key`).  The recorded ``mechanism`` name is a label: a
user's mechanism named ``"laplace"``, a ``charge(..., mechanism="laplace")``, a user's
``IterativeMechanism`` or ``PTRFunction`` get ``mech dp`` (a DP guarantee) or ``mech
declared``.  (Certificate text version 2 read the kind from the name; such certificates are
still re-derived that way, and :func:`guarantees` reports all their rounds declared.)

:data:`HYPOTHESES` is the one table of what each kind's guarantee still rests on — noise laws
(named as in ``Odp/Mech/Noise.lean``), sensitivity and data facts, numerical bounds computed by
tested Python code, the caller's declarations — which ``odp verify`` lists per round.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any

from .. import _lean_rules as lean
from ..guarantees import ALL, Label
from ..mechanisms.builtin import BUILTIN_KEY
from .units import in_units

__all__ = ["MechRow", "Kind", "KINDS", "LINKED", "CAPSTONE", "capstone_applies", "RECORDED",
           "HYPOTHESES", "GENERAL", "Units", "Derived", "derive", "row_for", "lean_args", "theorem_of",
           "guarantees", "expected_text"]


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
class Kind:
    """One kind of ``mech`` row."""

    name: str  #: the row's name in the certificate text
    lean_kind: str  #: the Lean constant (``Odp.LedgerCore.<lean_kind>``) that numbers it
    theorem: str | None  #: the theorem proving the guarantee (if in this build's sources)
    arity: int | None  #: number of numeric parameters (None: one or more stopping points)
    groups: bool  #: takes step groups ``; count ε δ …`` (iterative mechanisms)
    checked: str  #: what ``mechOk`` fixes, for the report

    @property
    def number(self) -> int:
        """The kind's number, from the generated Lean constant."""
        value = getattr(lean, self.lean_kind)()
        assert isinstance(value, int)
        return value


_ONE = "one class costing ε (Lemma 3)"
#: The table (the lead's merge adjusts theorem names here and nowhere else).
KINDS: dict[str, Kind] = {k.name: k for k in (
    Kind("declared", "kindDeclared", None, 0, False,
         "nothing: a user's own mechanism, its guarantee is declared"),
    Kind("dp", "kindDp", None, 0, False,
         "one class costing the round's sup ε (a DP guarantee through Lemma 3); the DP "
         "guarantee itself is declared"),
    Kind("laplace", "kindLaplace", "Odp.Mech.laplace_odp", 1, False, _ONE + ", δ = 0"),
    Kind("gaussian", "kindGaussian", "Odp.Mech.gaussian_odp", 2, False, _ONE + " and its δ"),
    Kind("rr", "kindRr", "Odp.Mech.rr_odp", 1, False, _ONE + ", δ = 0"),
    Kind("median", "kindMedian", "Odp.Mech.expMedian_dp", 1, False, _ONE + ", δ = 0"),
    Kind("erm", "kindErm", None, 1, False, _ONE + ", δ = 0"),
    Kind("toy", "kindToy", "Odp.Mech.toy_odp", 1, False, "classes (values, ⊥) costing (ε, 0), δ = 0"),
    Kind("svt", "kindSvt", "Odp.Mech.svt_odp", 3, False,
         "classes c' = 0..c costing ε1 + (c'/c)·ε2 (Lemma 8), δ = 0"),
    Kind("ptr", "kindPtr", "Odp.Mech.ptr_odp", 2, False,
         "classes (values, ⊥) costing (2ε, ε) and δ (Sec. 4.2)"),
    Kind("iqr", "kindIqr", "Odp.Mech.iqr_logBin_odp", 2, False,
         "classes (values, ⊥) costing (3ε, 2ε) and δ (Lemma 10)"),
    Kind("iter", "kindIter", "Odp.Mech.iter_odp_basic", None, True,
         "one class per stopping point costing the prefix sum of the step ε's, δ = the sum "
         "over the stops of the prefix sums of the step δ's (Lemma 11, basic composition)"),
    Kind("iter_costs", "kindIterCosts", None, None, True,
         "one class per stopping point costing the prefix sum of the step ε's; its δ is a "
         "numerical bound with no Lean theorem (OptDel, Thm. 15) and is declared"),
    Kind("lemma11", "kindLemma11", "Odp.Mech.lemma11", 0, True,
         "one class per stopping point k_i costing the row's ε^{k_i}, and δ ≥ Σ_i δ^{k_i} "
         "(Lemma 11 with a COMP other than basic composition: privacy buckets, the optimal "
         "composition, RDP). Proved from the stated hypothesis that each prefix M^{k_i} is "
         "(ε^{k_i}, δ^{k_i})-DP, a numerical bound computed by tested Python code "
         "(odp.composition), not by Lean; a δ above the sum (DP-SGD declares its target) by "
         "Odp.Certs.Lemma11.lemma11_le"),
    Kind("test_release", "kindTestRelease", "Odp.Mech.test_release_odp", 5, False,
         "classes (values, ⊥) costing max(ε1, (u_test/u)·ε2) and min(that, "
         "(max(u_train, u_test)/u)·ε2), δ = 0 (Thm. 17 on odp's grid)"),
)}


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


def _amount(params: Mapping[str, Any], key: str) -> Units:
    return Units(_exact(params[key], key))


def _count(params: Mapping[str, Any], key: str) -> int:
    value = params[key]
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise TypeError(f"{key} is not a natural number")
    return value


def _dp(kind: str, *keys: str) -> Callable[[Mapping[str, Any]], Derived]:
    return lambda p: Derived(kind, tuple(_amount(p, k) for k in keys))


def _svt(p: Mapping[str, Any]) -> Derived:
    return Derived("svt", (_count(p, "c"), _amount(p, "epsilon1"), _amount(p, "epsilon2")))


def _iterative(p: Mapping[str, Any]) -> Derived | None:
    """Alg. 3's recorded ``stops``, ``steps`` (run-length groups), ``costs``, δ ``rule`` and,
    for a Lemma 11 rule, the per-stop ``stop_deltas`` (:func:`odp.composition.
    iterative_guarantee`; DP-SGD records the same).  Lemma 11 with a COMP other than basic
    composition (privacy buckets, the optimal composition, RDP) gives a ``lemma11`` row: per stop
    ``(k_i, ε^{k_i}, δ^{k_i})``.  Otherwise custom costs (not the prefix sums) have no Lean cost
    function: such a round is declared."""
    stops = p["stops"]
    if not isinstance(stops, list) or not all(
            isinstance(k, int) and not isinstance(k, bool) and k >= 0 for k in stops):
        raise TypeError("stops")
    costs = [_exact(c, "a cost") for c in p["costs"]]
    rule = p["rule"]
    composition = (rule.get("composition") if isinstance(rule, Mapping)
                   and rule.get("name") == "lemma11" else None)
    basic = composition == {"name": "basic"}
    if composition is not None and not basic and "stop_deltas" in p:
        deltas = [_exact(x, "a stop delta") for x in p["stop_deltas"]]
        if not len(stops) == len(costs) == len(deltas):
            raise ValueError("one cost and one delta per stop")
        return Derived("lemma11", (), tuple(zip(stops, costs, deltas)))
    groups = []
    for g in p["steps"]:
        step = g["step"]
        groups.append((_count(g, "count"), _amount(step, "epsilon").value,
                       _amount(step, "delta").value))
    prefix_sums = []
    for k in stops:  # the basic-composition costs Σ_{t ≤ k} ε_t
        total, left = Fraction(0), k
        for n, eps, _ in groups:
            take = min(n, left)
            total += take * eps
            left -= take
        prefix_sums.append(total)
    if costs != prefix_sums:
        return None
    return Derived("iter" if basic else "iter_costs", tuple(stops), tuple(groups))


def _test_release(p: Mapping[str, Any]) -> Derived:
    return Derived("test_release", (_amount(p, "epsilon"), _amount(p, "epsilon2"),
                                    _count(p, "units"), _count(p, "units_test"),
                                    _count(p, "units_train")))


#: Recorded mechanism name (odp's built-ins) -> reader of its recorded ``params``.
#: The kinds of ``mech`` row that ``Odp/Certs/Link.lean`` joins to Theorem 7
#: (``BuiltinRequest``: ``DpBuiltin`` … ``Lemma11Builtin``): for a run all of whose rounds are of
#: these kinds, :data:`CAPSTONE` proves that a certificate ``checkCert`` accepts certifies
#: (ε_t, δ_t)-DP from the mechanisms' hypotheses.  Not linked: ``declared`` (a user's own
#: guarantee), ``erm`` (Alg. 4's DP is stated, not proved), ``iter_costs`` (Thm. 15).
LINKED = frozenset({"dp", "toy", "laplace", "gaussian", "rr", "svt", "ptr", "iqr",
                    "test_release", "median", "iter", "lemma11"})
CAPSTONE = "Odp.Certs.certificate_sound_builtin"


def capstone_applies(rounds: Sequence[Mapping[str, Any]]) -> bool:
    """Whether :data:`CAPSTONE` covers a run with these rounds (the ``rounds`` of
    :func:`guarantees`): it is in the Lean sources this odp was generated from, and every round
    is of a linked kind, proved or a DP charge."""
    return CAPSTONE in lean.LEAN_THEOREMS and all(
        r["mechanism"] in LINKED and (r["status"] == "proved" or r["mechanism"] == "dp")
        for r in rounds)


RECORDED: dict[str, Callable[[Mapping[str, Any]], Derived | None]] = {
    "laplace": _dp("laplace", "epsilon"),
    "gaussian": _dp("gaussian", "epsilon", "delta"),
    "randomized_response": _dp("rr", "epsilon"),
    "median": _dp("median", "epsilon"),
    "erm_output_perturbation": _dp("erm", "epsilon"),
    "toy": _dp("toy", "epsilon"),
    "svt": _svt,
    "ptr": _dp("ptr", "epsilon", "delta"),
    "ptr_iqr": _dp("ptr", "epsilon", "delta"),
    "iqr": _dp("iqr", "epsilon", "delta"),
    "iterative": _iterative,
    "noisy_gd": _iterative,
    "dpsgd": _iterative,
    "logreg_with_test": _test_release,
}

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
    reader = RECORDED.get(key) if isinstance(key, str) else None
    if reader is None:
        return None
    try:
        return reader(params)
    except (KeyError, TypeError, ValueError, ZeroDivisionError, ArithmeticError):
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


_NOTES = {
    "declared": "a user's own mechanism: its guarantee is declared",
    "dp": "a DP charge (a user's mechanism, an OpenDP measurement, a converted notion): its one "
          "class is checked, the DP guarantee itself is declared",
    "iter_costs": "costs checked; its δ is a numerical bound with no Lean theorem (OptDel, "
                  "Thm. 15), declared",
}

_SENSITIVITY = ("sensitivity: the query moves by at most m = ⌈Δ/g⌉ grid units between "
                "neighbours, for the sensitivity Δ the caller declared (hn in "
                "Odp/Mech/Laplace.lean; odp does not check a query's sensitivity)")
_GD_STEPS = ("NoisyGradientDescent's steps are DP by Odp.Mech.noisyStep_dp from "
             "Iter.ShiftDominated (each coordinate's clamped discrete Laplace noise) and "
             "Iter.L1Sensitive (the float analysis of its gradient, argued and tested in Python)")
_SGD_STEPS = ("DP-SGD's steps: the RDP of the Poisson-subsampled discrete Gaussian "
              "(odp.subsampled_rdp, tested Python), with clipping verified in integers")
_STEPS_DP = "Iter.StepsDP — each step is (ε_k, δ_k)-DP as the row says: " + _GD_STEPS
_PTR = ("noise law: TailNoise — the PTR test noise (discrete Laplace, scale 1/ε)",
        "noise law: IntLaw.ShiftWithin — the release noise of the IQR sub-bin (discrete "
        "Laplace, scale (L − 1)/ε)",
        "numerical bound: the pass tail Pr(Z ≥ K) ≤ δ' with K chosen by "
        "odp.mechanisms.ptr.pass_threshold (tested Python)",
        "data fact: IQRDataFacts — the stability statistic is 1-Lipschitz and, at 2 or more, "
        "keeps neighbours' IQRs in one bin (argued and tested in Python, not proved)")

#: **The one table** of what each kind's guarantee still rests on once its theorem (if any)
#: is accepted: noise laws (the hypothesis structures of ``Odp/Mech/Noise.lean``, by name),
#: sensitivity and data facts, numerical bounds computed by tested Python code, and the
#: caller's declarations.  ``odp verify`` lists them per round (:func:`guarantees`), after
#: :data:`GENERAL`.  A hypothesis that gains a Lean witness or proof is removed here, and
#: nowhere else.
HYPOTHESES: dict[str, tuple[str, ...]] = {
    "declared": ("declared: the caller's ODP guarantee (classes, costs, δ) of its own mechanism "
                 "(Theorem 7 takes it as a hypothesis)",),
    "dp": ("declared: the caller's claim that its mechanism is (ε, δ)-DP with the charged ε "
           "and δ (the hypothesis hdp of DpBuiltin, Odp/Certs/LinkCore.lean)",),
    "laplace": ("noise law: LapNoise — the discrete Laplace noise, scale m/ε grid units "
                "(odp.samplers.discrete_laplace)", _SENSITIVITY),
    "gaussian": ("noise law: GaussNoise — the discrete Gaussian noise (odp.samplers."
                 "discrete_gaussian) with δ at ε at most the declared δ, a bound computed by "
                 "tested Python code (odp.gaussian_dp), not by Lean", _SENSITIVITY),
    "rr": ("sampler: odp's randomized-response sampler draws the law rrMech "
           "(Odp/Mech/Basic.lean)",),
    "median": ("data fact: UtilitySensitivity — the utility −max(#{x_i < y}, #{x_i > y}) "
               "moves by at most 1 between neighbours (stated, tested in Python)",
               "sampler: odp's exponential-median sampler draws the law expMech "
               "(Odp/Mech/IQRMedian.lean)"),
    "erm": ("ERM's DP: ERMRelease.dp — Alg. 4 is ε-DP (Thm. 16; stated in Odp/Mech, not "
            "proved), and no Lean theorem covers this round",),
    "toy": ("noise law: LapNoise — the Laplace release's noise, scale m/ε grid units "
            "(odp.samplers.discrete_laplace), and a fair coin", _SENSITIVITY),
    "svt": ("noise law: LapNoise — the threshold noise ρ, scale m/ε1 grid units",
            "noise law: LapTail — each query's noise ν_i, scale 2cm/ε2 grid units",
            "sensitivity: every query moves by at most m grid units between neighbours (hA in "
            "Odp/Mech/SVT.lean; odp does not check a query's sensitivity)"),
    "ptr": _PTR,
    "iqr": _PTR[:2] + ("numerical bound: the pass tail Pr(Z ≥ K) ≤ δ/2 of each "
                       "discretisation, K chosen by odp.mechanisms.ptr.pass_threshold (tested "
                       "Python)",) + _PTR[3:],
    "iter": (_STEPS_DP,),
    "iter_costs": (_STEPS_DP,
                   "numerical bound: OptDel's δ (Thm. 15), computed by tested Python code "
                   "(odp.optdel), no Lean theorem"),
    "lemma11": ("numerical bound: Iter.PrefixDP — each prefix M^{k_i} is (ε^{k_i}, "
                "δ^{k_i})-DP with the row's numbers, upper bounds computed by tested Python "
                "code (odp.composition: privacy buckets, the optimal composition or RDP), not "
                "by Lean",
                "the steps' own DP, which those numbers assume: " + _GD_STEPS + "; "
                + _SGD_STEPS),
    "test_release": ("noise law: TailNoise — the test noise, discrete Laplace of scale u/ε2 "
                     "grid units",
                     "ERM's DP inside test-and-release: ERMRelease — Alg. 4 is ε1-DP in the "
                     "training set, and the coupling of App. D (stated, not proved)",
                     "data fact: TestSensitivity — one test record moves every model's test "
                     "score by at most u_test grid units (Lemma 21; stated, not proved)"),
}

#: What every round rests on, whatever its kind (said once by ``odp verify``).
GENERAL = ("which code made each release: a certificate records what the accountant was told "
           "and cannot show which code made a release; a round is reported as odp's own "
           "mechanism because the accountant recorded it so (odp.mechanisms.builtin: the "
           "mechanism object was exactly one of odp's classes, untouched), and odp's samplers "
           "are taken to draw the laws the Lean models use (docs/certificates.md, trust model)")

_LEGACY = ("certificate text version 2: its mech row was read from the recorded mechanism name, "
           "which any caller can choose — its classes and costs are the named mechanism's "
           "(mechOk), but nothing shows that odp's own mechanism made the round")


def guarantees(rows: Sequence[MechRow | None], names: Sequence[str | None] = (), *,
               by_name: bool = False) -> dict[str, Any]:
    """What was established about each round's guarantee (``odp verify``): *proved* (by the
    Lean theorem named) when its ``mech`` row names a mechanism with a theorem in this build's
    sources — ``mechOk`` has then checked the round's classes, costs and δ against the cost
    function of that theorem — else *declared*, with a note saying why; and, per round, the
    hypotheses (:data:`HYPOTHESES`) its guarantee still rests on.  ``names``: the recorded
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
            "hypotheses": list(HYPOTHESES[kind.name])}
        if by_name:
            entry["note"] = _LEGACY
            if kind.name not in ("declared", "dp"):
                entry["hypotheses"].insert(0, "declared: that odp's own mechanism made the round "
                                              "(only its recorded name says so)")
        elif theorem is None:
            if kind.name in _NOTES:
                entry["note"] = _NOTES[kind.name]
            elif kind.theorem is None:
                entry["note"] = "costs checked; no Lean theorem proves this mechanism's guarantee yet"
            else:
                entry["note"] = (f"costs checked; the Lean theorem {kind.theorem} is not in the "
                                 "Lean sources of this odp")
        out.append(entry)
    proved = sum(1 for e in out if e["status"] == "proved")
    return {"proved": proved, "declared": len(out) - proved, "rounds": out,
            "general": GENERAL}


def expected_text(row: MechRow) -> str:
    """For a failure message: the classes' costs and δ the row's mechanism has (computed with
    the generated Lean cost functions), where they are a plain list."""
    p = row.params
    blocks: Sequence[int | Fraction] | None = None
    delta: int | None = None
    if row.name in ("laplace", "rr", "median", "erm") and len(p) == 1:
        blocks, delta = lean.dpBlocks(p[0]), 0
    elif row.name == "gaussian" and len(p) == 2:
        blocks, delta = lean.dpBlocks(p[0]), p[1]
    elif row.name == "toy" and len(p) == 1:
        blocks, delta = lean.toyBlocks(p[0]), 0
    elif row.name in ("ptr", "iqr") and len(p) == 2:
        blocks = (lean.ptrBlocks if row.name == "ptr" else lean.iqrBlocks)(p[0])
        delta = p[1]
    elif row.name in ("iter", "iter_costs"):
        groups = [lean.StepGroup(*g) for g in row.groups or ()]
        blocks = lean.iterBlocks(groups, p)
        delta = lean.iterDelta(groups, p) if row.name == "iter" else None
    elif row.name == "lemma11":
        groups = [lean.StepGroup(*g) for g in row.groups or ()]
        blocks = lean.stopCosts(groups)
        shown = ", ".join(str(b) for b in blocks)
        return (f" (the mechanism's: blocks [{shown}], delta at least "
                f"{lean.stopDeltas(groups)})")
    elif row.name == "svt" and len(p) == 3 and p[0] > 0:
        c, e1, e2 = p
        blocks = [Fraction(e1 * c + k * e2, c) for k in range(c + 1)]
        delta = 0
    if blocks is None:
        return ""
    shown = ", ".join(str(b) for b in blocks)
    return f" (the mechanism's: blocks [{shown}]" + ("" if delta is None else f", delta {delta}") + ")"

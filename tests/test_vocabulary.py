"""The typed vocabulary (odp.guarantees): validation, exact JSON round-trips, equality and hashing;
the renamed modules and classes (the old names of odp.buckets still warn until that package drops
them; odp.concurrent and positional calls of keyword-only parameters are gone)."""

from __future__ import annotations

import json
import subprocess
import sys
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import odp
from odp.errors import InvalidGuarantee, InvalidParameter
from odp.guarantees import (
    DP,
    GDP,
    ODP,
    RDP,
    ZCDP,
    GuaranteeRecord,
    SubsetDP,
    cost_from_json,
)

fractions = st.fractions(min_value=0, max_value=50, max_denominator=10**6)
deltas = st.fractions(min_value=0, max_value=Fraction(999, 1000), max_denominator=10**9)
labels = st.one_of(st.text(min_size=1, max_size=5), st.integers(-10**6, 10**6))


def _through_json(value: dict) -> dict:
    return json.loads(json.dumps(value, sort_keys=True, separators=(",", ":")))


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(labels, fractions, min_size=1, max_size=6), deltas,
       st.booleans())
def test_guarantee_records_round_trip_exactly(costs, delta, with_class_deltas):
    class_deltas = (tuple((k, delta / (2 * len(costs))) for k in costs)
                    if with_class_deltas else None)
    record = GuaranteeRecord(tuple(costs.items()), delta, class_deltas)
    data = _through_json(record.to_json())
    back = GuaranteeRecord.from_json(data)
    assert back == record and hash(back) == hash(record)
    assert back.to_json() == data  # byte-identical re-serialisation: chain hashes never move
    assert back.sup_epsilon == max(costs.values())
    assert cost_from_json(data) == record


@settings(max_examples=100, deadline=None)
@given(fractions, deltas)
def test_dp_zcdp_and_subset_dp_round_trip(eps, delta):
    for value in (DP(eps, delta), ZCDP(eps, delta), SubsetDP("k", eps, delta), SubsetDP(3, eps)):
        data = _through_json(value.to_json())
        back = type(value).from_json(data)
        assert back == value and hash(back) == hash(value) and back.to_json() == data
        assert cost_from_json(data) == value
    rdp = RDP(Fraction(3, 2) + eps, eps)
    assert RDP.from_json(_through_json(rdp.to_json())) == rdp


def test_odp_round_trip_needs_its_partition_and_compares_by_value():
    def part(r):
        return "low" if r < 0 else 2

    g = ODP(part, {"low": "1/4", 2: "1"}, "1e-6")
    assert ODP.from_json(_through_json(g.to_json()), part) == g
    assert ODP(part, {"low": "0.25", 2: 1}, "0.000001") == g  # same values, exact
    assert ODP(part, {"low": "1/3", 2: 1}, "1e-6") != g
    assert ODP(lambda r: 2, {"low": "1/4", 2: "1"}, "1e-6") != g  # another partition
    assert len({g, ODP(part, {"low": "1/4", 2: "1"}, "1e-6")}) == 1
    lemma6 = ODP.from_subset_dp(part, {"low": SubsetDP("low", "1/4", "1e-7"),
                                       2: SubsetDP(2, 1, "2e-7")})
    record = lemma6.record()
    assert record.class_deltas == (("low", Fraction(1, 10**7)), (2, Fraction(2, 10**7)))
    assert ODP.from_json(lemma6.to_json(), part).class_deltas == lemma6.class_deltas


@pytest.mark.parametrize("bad", [
    {"type": "ODP", "costs": [["a", "1/2"]]},                                # no delta
    {"type": "ODP", "costs": [["a", "1/2"]], "delta": "0", "extra": 1},       # unknown key
    {"type": "ODP", "costs": [["a", "0.5"]], "delta": "0"},                   # not canonical
    {"type": "ODP", "costs": [["a", "-1"]], "delta": "0"},                    # negative cost
    {"type": "ODP", "costs": [[True, "1"]], "delta": "0"},                    # bool label
    {"type": "ODP", "costs": [["a", "1"], ["a", "2"]], "delta": "0"},         # duplicate class
    {"type": "ODP", "costs": [], "delta": "0"},                               # no class
    {"type": "ODP", "costs": [["a", 1]], "delta": "0"},                       # inexact number
    {"type": "ODP", "costs": [["a", "1"]], "delta": "1"},                     # δ >= 1
    {"type": "DP", "epsilon": "1"},
])
def test_malformed_records_are_refused(bad):
    with pytest.raises(InvalidGuarantee):
        cost_from_json(bad)


def test_construction_validates():
    with pytest.raises(InvalidGuarantee):
        GuaranteeRecord((("a", Fraction(1)), ("a", Fraction(2))), Fraction(0))
    with pytest.raises(InvalidGuarantee):
        GuaranteeRecord((("a", Fraction(-1)),), Fraction(0))
    with pytest.raises(InvalidParameter):
        ZCDP(-1)
    with pytest.raises(InvalidParameter):
        RDP(1, 1)  # the order must be > 1
    # a label of another type is another class: 1 is not "1"
    record = GuaranteeRecord(((1, Fraction(1)), ("1", Fraction(2))), Fraction(0))
    assert record.index_of(1) == 0 and record.index_of("1") == 1 and record.index_of(True) is None


def test_the_ledger_records_exactly_the_json_of_the_vocabulary(tmp_path):
    acc = odp.Accountant(epsilon=1, delta="1e-6", ledger=tmp_path / "l.db",
                         rng=odp.SeededRandom(1))
    mech = odp.LaplaceMechanism(lambda d: 1.0, epsilon="1/10")
    acc.run(mech, None)
    rec = acc.ledger.rounds()[0]
    assert isinstance(rec.guarantee, GuaranteeRecord)
    assert rec.guarantee == mech.guarantee.as_odp().record()
    assert rec.to_json()["guarantee"] == mech.guarantee.as_odp().to_json()


def test_filters_speak_the_vocabulary():
    from odp.filters import RDP as FRDP, ZCDP as FZCDP, BasicFilter, RDPFilter, ZCDPFilter

    assert FZCDP is ZCDP and FRDP is RDP
    f = BasicFilter(1, "1e-6")
    f.charge(DP("1/4", "1e-7"))
    assert f.accumulator.to_cost(f.rounds[0]) == DP("1/4", "1e-7")
    z = ZCDPFilter(1)
    z.charge(ZCDP("1/8"))
    assert z.privacy_loss() == ZCDP("1/8")
    r = RDPFilter(2, 1)
    r.charge(RDP(2, "1/4"))
    assert r.accumulator.to_cost(r.rounds[0]) == RDP(2, "1/4") == r.privacy_loss()


def test_interactive_child_costs_are_vocabulary_values():
    from odp.filters import BasicFilter
    from odp.interactive import ConcurrentComposition, SubComposition

    parent = ConcurrentComposition([1, 2], BasicFilter(1))
    child = parent.launch(SubComposition(BasicFilter("1/2")))
    assert child.cost == DP("1/2")


# ------------------------------------------------------------------ one idiom


def _values():
    def part(r):
        return r

    return [DP("1/4", "1e-7"), ODP(part, {"a": "1/4", 2: 1}, "1e-6"), SubsetDP("k", "1/3"),
            GuaranteeRecord((("a", Fraction(1, 3)),), Fraction(0), (("a", Fraction(0)),)),
            ZCDP("1/8", "1e-9"), RDP(2, "1/4"), GDP("1/2"),
            ODP.from_subset_dp(part, {"a": SubsetDP("a", "1/4", "1e-7"), 2: SubsetDP(2, 1)})]


def test_every_value_is_a_frozen_slotted_dataclass():
    import dataclasses

    for value in _values():
        assert dataclasses.is_dataclass(value) and not hasattr(value, "__dict__"), value
        name = dataclasses.fields(value)[0].name
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(value, name, getattr(value, name))


def test_the_fast_path_builds_the_value_the_constructor_builds():
    def part(r):
        return r

    e, d = Fraction(1, 4), Fraction(1, 10**7)
    assert DP._trusted(e, d) == DP(e, d) and repr(DP._trusted(e, d)) == repr(DP(e, d))
    assert SubsetDP._trusted("k", e, d) == SubsetDP("k", e, d)
    assert ZCDP._trusted(e, d) == ZCDP(e, d) and RDP._trusted(Fraction(2), e) == RDP(2, e)
    assert GDP._trusted(e) == GDP(e)
    classes = (("a", e), (2, Fraction(1)))
    assert GuaranteeRecord._trusted(classes, d, None) == GuaranteeRecord(classes, d)
    record = GuaranteeRecord(classes, d)
    assert ODP._trusted(part, dict(classes), record) == ODP(part, dict(classes), d)
    # the derived values are the ones the constructor computes, fixed when it was built
    g = DP(e, d)
    assert g.as_odp() is g.as_odp() is g.to_odp()
    assert g.as_odp() == ODP(odp.guarantees.trivial_partition, {"all": e}, d)
    lemma6 = ODP.from_subset_dp(part, {"a": SubsetDP("a", e, d), 2: SubsetDP(2, 1)})
    assert lemma6.record() is lemma6.record() and lemma6.sup_epsilon == 1
    assert lemma6.record().class_deltas == (("a", d), (2, Fraction(0))) and lemma6.delta == d
    assert lemma6.to_dp() == DP(1, d)


def test_bad_numbers_raise_the_vocabularys_errors():
    """A budget error (InvalidBudget) is an InvalidGuarantee in an ODP guarantee and in every
    JSON reader, an InvalidParameter in a zCDP, RDP or GDP parameter, and stays an InvalidBudget
    in DP and SubsetDP (which take what odp.Budget takes)."""
    from odp.errors import InvalidBudget

    for make in (lambda: DP(-1), lambda: DP(1, 1), lambda: SubsetDP("a", -1)):
        with pytest.raises(InvalidBudget):
            make()
    with pytest.raises(InvalidGuarantee, match="cost of class 'a' must be >= 0"):
        ODP(lambda r: r, {"a": -1})
    with pytest.raises(InvalidGuarantee, match="delta must be < 1"):
        ODP(lambda r: r, {"a": 1}, 1)
    for make in (lambda: ZCDP(-1), lambda: ZCDP(1, 1), lambda: RDP(2, -1), lambda: GDP(-1)):
        with pytest.raises(InvalidParameter) as info:
            make()
        assert type(info.value) is InvalidParameter
    for bad in ({"type": "DP", "epsilon": "-1", "delta": "0"},
                {"type": "SubsetDP", "region": "a", "epsilon": "1", "delta": "1"},
                {"type": "zCDP", "rho": "-1", "delta": "0"},
                {"type": "RDP", "alpha": "2", "epsilon": "-1"},
                {"type": "GDP", "mu": "-1/2"}):
        with pytest.raises(InvalidGuarantee):
            cost_from_json(bad)


def test_values_copy_and_pickle_as_the_same_value():
    import copy
    import pickle

    for value in _values()[:-1]:
        if isinstance(value, ODP):
            continue  # its partition is code (a local function here)
        for clone in (copy.copy(value), copy.deepcopy(value), pickle.loads(pickle.dumps(value))):
            assert clone == value and hash(clone) == hash(value)
    g = pickle.loads(pickle.dumps(DP("1/4")))
    assert g.as_odp().record() == DP("1/4").as_odp().record()


def test_protocols_and_aliases_live_in_their_own_modules():
    import typing

    import odp.guarantees
    import odp.protocols
    import odp.types

    for name in ("Number", "Label", "Partition", "Data", "Release", "RandomSource"):
        assert name in odp.types.__all__
    for name in ("MechanismLike", "DeclaresGuarantee", "CostLike", "PrivacyCost", "Guarantee",
                 "Chargeable", "Convertible", "RDPCurve"):
        assert name in odp.protocols.__all__ and not hasattr(odp.guarantees, name)
    assert set(typing.get_args(odp.protocols.PrivacyCost)) == {DP, ODP, ZCDP, RDP}


# ------------------------------------------------------------------ renamed names, old names


def test_buckets_names_do_not_clash_and_old_names_are_gone():
    """A 0.1.0 package keeps no deprecation shims: the buckets' pair classes are PLDMechanism
    and PLDRandomizedResponse, and the names that clashed with odp's own are not there."""
    from odp.buckets import PLDMechanism, PLDRandomizedResponse
    import odp.buckets as buckets
    import odp.buckets.mechanisms as bm

    for module in (buckets, bm):
        for old in ("Mechanism", "RandomizedResponse"):
            with pytest.raises(AttributeError):
                getattr(module, old)
    new = PLDRandomizedResponse("1/2", 3)
    assert PLDMechanism.from_json(new.to_json()) == new
    # the names that clashed now denote different things
    assert odp.RandomizedResponse is not PLDRandomizedResponse
    assert odp.Mechanism is not PLDMechanism


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-W", "default", "-c", code], capture_output=True,
                          text=True, timeout=120)


def test_odp_interactive_imports_quietly_and_odp_concurrent_is_gone():
    """``odp.concurrent`` shadowed the standard library's package of that name; the package is
    ``odp.interactive`` and the old name is not kept (no pre-release shims)."""
    quiet = _run("import warnings; warnings.simplefilter('error'); import odp, odp.interactive; "
                 "from odp.interactive import ConcurrentComposition; print('ok')")
    assert quiet.returncode == 0 and quiet.stdout.strip() == "ok", quiet.stderr
    with pytest.raises(ModuleNotFoundError):
        import odp.concurrent  # noqa: F401


# ------------------------------------------------------------------ keyword-only parameters


def test_keyword_only_parameters_are_keyword_only():
    from odp.exact import satisfies_odp
    from odp.mechanisms.svt import output_distribution

    r1, r2 = Fraction(1, 2), Fraction(1, 3)
    new = output_distribution([1, 2], [1, 1], c=1, r_threshold=r1, r_query=r2)
    assert sum(new.values()) == 1
    with pytest.raises(TypeError, match="positional argument"):
        output_distribution([1, 2], [1, 1], 1, r1, r2)
    p = {"a": Fraction(1, 2), "b": Fraction(1, 2)}
    q = {"a": Fraction(1, 4), "b": Fraction(3, 4)}
    with pytest.raises(TypeError, match="positional argument"):
        satisfies_odp(p, q, lambda o: o, {"a": 1, "b": 0}, 0)
    assert satisfies_odp(p, q, partition=lambda o: o, costs={"a": 1, "b": 0}, delta=0)
    assert not satisfies_odp(p, q, partition=lambda o: o, costs={"a": 0, "b": 0}, delta=0)


def test_no_function_takes_more_than_four_positional_parameters():
    """At most four positional parameters, the ledger included.  The only exceptions: the
    transition check the ledgers call positionally,
    ``check(ε_r, δ_r, sup, charged, δ, blocks, realized)`` (``TransitionCheck`` in
    ``odp.ledger.base``), and the file generated from the Lean source
    (``_lean_rules.py``), whose functions take the Lean definitions' arguments in their order."""
    import ast
    from pathlib import Path

    root = Path(odp.__file__).parent
    allowed = {("certs/enforce.py", "generated_check"), ("certs/lean.py", "__call__"),
               ("certs/transition.py", "transition_text")}
    offenders = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel == "_lean_rules.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                names = [a.arg for a in node.args.posonlyargs + node.args.args
                         if a.arg not in ("self", "cls")]
                if len(names) > 4 and (rel, node.name) not in allowed:
                    offenders.append(f"{rel}:{node.lineno} {node.name}")
    assert offenders == []

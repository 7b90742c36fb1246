"""The checker generated from ``Odp/LedgerCore.lean`` (scripts/gen_rules.py).

* the committed module is byte-identical to a fresh generation;
* editing a copy of the Lean rules changes the generated checker's behaviour on ledgers that
  exercise the edit (so the Python side really consumes the Lean text);
* the generator refuses constructs outside its subset;
* exact Python mirrors of the LedgerCore theorems (``replay_sound``, ``admits_iff``,
  ``blocksOk_bound``, ``deltasOk_sound``) on random finite instances;
* every Lean declaration that certificates cite exists in the file they name.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from odp import _lean_rules as lean
from odp.certs import rules
from script_support import load_module, load_script

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "Odp" / "LedgerCore.lean"




gen = load_script("scripts/gen_rules.py", "gen_rules")


def _generate_module(tmp_path: Path, source_text: str, name: str):
    src = tmp_path / "Odp" / "LedgerCore.lean"
    src.parent.mkdir(parents=True, exist_ok=True)
    src.write_text(source_text)
    out = tmp_path / f"{name}.py"
    out.write_text(gen.generate(src, tmp_path))
    return load_module(out, name)


def test_committed_module_is_a_fresh_generation(tmp_path):
    out = tmp_path / "fresh.py"
    assert gen.main(["--output", str(out)]) == 0
    assert out.read_bytes() == (ROOT / "python" / "odp" / "_lean_rules.py").read_bytes(), (
        "python/odp/_lean_rules.py is stale: run python scripts/gen_rules.py")


def test_header_names_source_and_hash():
    import hashlib

    digest = hashlib.sha256(SOURCE.read_bytes()).hexdigest()
    assert lean.SOURCE == "Odp/LedgerCore.lean" and lean.SOURCE_SHA256 == digest
    assert digest in (ROOT / "python" / "odp" / "_lean_rules.py").read_text().splitlines()[3]


# A ledger that spends ε to the last unit, and one that overspends δ.
EXACT = (lean.State(10, 5), [lean.Entry(4, 4, 2), lean.Entry(6, 6, 3)])
DELTA_OVER = (lean.State(10, 5), [lean.Entry(4, 4, 3), lean.Entry(6, 6, 3)])


def test_mutation_strict_inequality_changes_behaviour(tmp_path):
    text = SOURCE.read_text()
    assert "decide (e.supEps ≤ s.eps)" in text
    strict = _generate_module(tmp_path, text.replace("decide (e.supEps ≤ s.eps)",
                                                     "decide (e.supEps < s.eps)"), "strict")
    assert lean.replay(*EXACT) == lean.State(0, 0)
    assert strict.replay(*[strict.State(10, 5), [strict.Entry(4, 4, 2), strict.Entry(6, 6, 3)]]) is None


def test_mutation_dropped_conjunct_changes_behaviour(tmp_path):
    text = SOURCE.read_text()
    dropped = _generate_module(tmp_path, text.replace(
        " && decide (e.delta ≤ s.delta)", ""), "dropped")
    assert lean.replay(*DELTA_OVER) is None
    s = dropped.State(10, 5)
    assert dropped.replay(s, [dropped.Entry(4, 4, 3), dropped.Entry(6, 6, 3)]) == dropped.State(0, 0)


def test_mutation_in_update_changes_behaviour(tmp_path):
    text = SOURCE.read_text()
    plus = _generate_module(tmp_path, text.replace("s.eps - e.charged", "s.eps + e.charged"),
                            "plus")
    assert plus.update(plus.State(10, 5), plus.Entry(4, 4, 2)) == plus.State(14, 3)
    assert lean.update(lean.State(10, 5), lean.Entry(4, 4, 2)) == lean.State(6, 3)


def test_natural_subtraction_is_truncated_as_in_lean():
    assert lean.update(lean.State(3, 1), lean.Entry(0, 5, 2)) == lean.State(0, 0)
    assert lean._nat_sub(2, 7) == 0 and lean._nat_sub(7, 2) == 5
    with pytest.raises(ValueError):
        lean.State(-1, 0)
    with pytest.raises(ValueError):
        lean.Entry(1, True, 0)


REGION = """-- BEGIN GENERATOR SUBSET
structure State where
  eps : Nat
def listLen : List Nat → Nat
  | [] => 0
  | x :: xs => listLen xs + 1
{extra}
-- END GENERATOR SUBSET
"""


@pytest.mark.parametrize("extra, message", [
    ("def f (s : State) : Nat :=\n  match s with | _ => 0", "unsupported construct 'match'"),
    ("def f (s : State) : Nat :=\n  fun x => x", "unsupported construct 'fun'"),
    ("def f (s : State) : Bool :=\n  s.eps ≤ 3", "comparisons are only supported"),
    ("def f (s : State) : Bool :=\n  decide (s.eps ≥ 3)", "unsupported character"),
    ("def f (s : State) : Int :=\n  s.eps", "unknown type"),
    ("theorem t : True := trivial", "unsupported top-level construct"),
    ("def f (s : State) : Nat :=\n  let x := 1\n  x", "unsupported construct 'let'"),
    ("def f (s : State) : Nat :=\n  s.eps; 1", "unsupported character ';'"),
    ("def g (ys : List Nat) : List Nat → Nat\n  | [] => 0\n  | x :: xs => g xs ys",
     "recursive calls must be on the tail"),
    ("def g (k : Nat) : List Nat → Nat\n  | [] => 0\n  | x :: xs => x + g (k + 1) xs", "tail position"),
    ("def f (s : State) : State :=\n  ⟨s.eps, 1⟩", "needs 1 components"),
    ("def f (s : State) : Nat :=\n  s.missing", "has no field"),
    ("def f (s : State) : Nat := [s.eps]", "a list where Nat is expected"),
    ("def f (s : State) : List Nat := s.eps :: s.eps", "expected List Nat, got Nat"),
    ("def g : List Nat → List Nat → Bool\n  | [], [] => true\n  | x :: xs, y :: ys => g ys xs"
     "\n  | _, _ => false", "recursive calls must be on the tails"),
    ("def g (k : Nat) : List Nat → List Nat → Bool\n  | [], [] => true\n"
     "  | x :: xs, y :: ys => g (k + 1) xs ys\n  | _, _ => false", "keep its leading parameters"),
    ("def g : List Nat → List Nat → Bool\n  | [], [] => true\n  | _, _ => false",
     "needs exactly the three lines"),
    ("def g : List Nat → List Nat → Bool\n  | [], [] => g [] []\n"
     "  | x :: xs, y :: ys => g xs ys\n  | _, _ => false", "recursion outside"),
    ("def g : List Nat → List Nat → Nat\n  | [], [] => 0\n"
     "  | x :: xs, y :: ys => listLen xs + g xs ys\n  | _, _ => 0", "may only be passed"),
])
def test_generator_refuses_constructs_outside_the_subset(tmp_path, extra, message):
    src = tmp_path / "Odp" / "LedgerCore.lean"
    src.parent.mkdir(parents=True)
    src.write_text(REGION.replace("{extra}", extra))
    with pytest.raises(gen.GenerationError, match=re.escape(message)):
        gen.generate(src, tmp_path)


def test_generator_requires_the_markers(tmp_path):
    src = tmp_path / "x.lean"
    src.write_text("def f : Nat := 1\n")
    with pytest.raises(gen.GenerationError, match="GENERATOR SUBSET"):
        gen.generate(src, tmp_path)
    assert gen.main(["--source", str(src), "--output", str(tmp_path / "o.py")]) == 1


# ------------------------------------------------------------------ mirrors of LedgerCore theorems

nats = st.integers(0, 60)
entries = st.lists(st.builds(lean.Entry, nats, nats, nats), max_size=8)


def _total(es, field):
    return sum(getattr(e, field) for e in es)


@settings(max_examples=300, deadline=None)
@given(st.builds(lean.State, nats, nats), entries)
def test_replay_sound_mirror(s, es):
    """Mirror of ``Odp.LedgerCore.replay_sound``."""
    t = lean.replay(s, es)
    if t is not None:
        assert _total(es, "charged") <= s.eps and _total(es, "delta") <= s.delta
        assert t.eps == s.eps - _total(es, "charged") and t.delta == s.delta - _total(es, "delta")


@settings(max_examples=300, deadline=None)
@given(st.builds(lean.State, nats, nats), st.builds(lean.Entry, nats, nats, nats))
def test_admits_iff_mirror(s, e):
    """Mirror of ``Odp.LedgerCore.admits_iff``."""
    assert lean.admits(s, e) == (e.charged <= e.supEps and e.supEps <= s.eps and e.delta <= s.delta)


@settings(max_examples=300, deadline=None)
@given(st.lists(nats, min_size=1, max_size=6), st.integers(0, 7), nats, nats)
def test_blocks_and_deltas_mirrors(bs, k, charged, delta):
    """Mirrors of ``blockAt_le_listMax``, ``blocksOk_sound``, ``blocksOk_bound``, ``deltasOk_sound``."""
    assert lean.listMax(bs) == max(bs) and lean.listLen(bs) == len(bs)
    assert all(lean.blockAt(j, bs) <= lean.listMax(bs) for j in range(len(bs) + 2))
    assert lean.blockAt(k, bs) == (bs[k] if k < len(bs) else 0)
    e = lean.Entry(max(bs), charged, delta)
    if lean.blocksOk(e, bs, k):
        assert k < len(bs) and charged == bs[k] and all(b <= e.supEps for b in bs)
    assert lean.deltasOk(e, bs) == (sum(bs) <= delta)


def test_generated_replay_handles_long_ledgers():
    es = [lean.Entry(1, 1, 0)] * 50_000  # no recursion limit: replay is a loop
    assert lean.replay(lean.State(50_000, 0), es) == lean.State(0, 0)
    assert lean.listMax(list(range(100_000))) == 99_999  # a fold, linear


def test_cited_declarations_exist_in_their_files():
    for name, path in rules.all_cited():
        text = (ROOT / path).read_text()
        short = name.split(".")[-1]
        assert re.search(rf"^(theorem|def|lemma)\s+{re.escape(short)}\b", text, re.M), (name, path)
        namespace = ".".join(name.split(".")[:-1])
        assert f"namespace {namespace}" in text, (name, namespace)


# ------------------------------------------------------------------ the grammar added for mech rows

EXTRA = """-- BEGIN GENERATOR SUBSET
structure State where
  eps : Nat
def seven : Nat := 7
def pair (a : Nat) : List Nat := [a, a * 2 + seven]
def twice (s : State) : List Nat := s.eps :: pair s.eps
def eq2 : List Nat → List Nat → Bool
  | [], [] => true
  | x :: xs, y :: ys => decide (x = y) && eq2 xs ys
  | _, _ => false
def dot (c : Nat) : List Nat → List Nat → Nat
  | [], [] => 0
  | x :: xs, y :: ys => c * x * y + dot c xs ys
  | _, _ => 1000
def bump (c : Nat) : List Nat → List Nat
  | [] => [c]
  | x :: xs => (x + c) :: bump c xs
-- END GENERATOR SUBSET
"""


def test_list_literals_cons_and_two_list_recursion(tmp_path):
    mod = _generate_module(tmp_path, EXTRA, "extra")
    assert mod.seven() == 7 and list(mod.pair(3)) == [3, 13]
    assert list(mod.twice(mod.State(2))) == [2, 2, 11]
    assert mod.eq2([1, 2], [1, 2]) and not mod.eq2([1, 2], [1]) and not mod.eq2([], [0])
    assert mod.dot(2, [1, 2], [3, 4]) == 2 * 3 + 2 * 8
    assert mod.dot(1, [1, 2], [3]) == 3 + 1000  # Lean: the `_, _` case once one list ends
    assert list(mod.bump(5, [1, 2])) == [6, 7, 5]  # a map: built front to back
    assert list(mod.bump(1, range(200_000)))[-2:] == [200_000, 1]  # linear, no recursion


@settings(max_examples=300, deadline=None)
@given(st.lists(nats, max_size=6), st.lists(nats, max_size=6))
def test_list_eq_mirror(xs, ys):
    """Mirror of ``Odp.LedgerCore.listEq_eq`` (and its converse)."""
    assert lean.listEq(xs, ys) == (xs == ys)
    assert lean.listEq(xs, list(xs))


groups_st = st.lists(st.builds(lean.StepGroup, st.integers(0, 5), nats, nats), max_size=4)


@settings(max_examples=300, deadline=None)
@given(groups_st, st.integers(0, 25), nats)
def test_prefix_sums_over_step_groups(gs, k, acc):
    """``prefixEps``/``prefixDelta`` are the prefix sums of the expanded step list."""
    eps = [g.eps for g in gs for _ in range(g.count)]
    dlt = [g.delta for g in gs for _ in range(g.count)]
    assert lean.prefixEps(k, acc, gs) == acc + sum(eps[:k])
    assert lean.prefixDelta(k, acc, gs) == acc + sum(dlt[:k])
    assert lean.stepCount(gs) == len(eps) and lean.groupsLen(gs) == len(gs)


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 6), nats, nats, st.lists(nats, max_size=8))
def test_svt_from_mirror(c, e1, e2, bs):
    """Mirror of ``Odp.LedgerCore.svtFrom_at``: accepted lists are exactly ε1 + (c'/c)·ε2."""
    ok = lean.svtFrom(c, e1, e2, 0, bs)
    assert ok == (len(bs) == c + 1 and all(b * c == e1 * c + k * e2 for k, b in enumerate(bs)))


def test_scan_theorems_reads_compiled_modules_with_their_namespaces(tmp_path):
    mech = tmp_path / "Odp" / "Mech"
    mech.mkdir(parents=True)
    (mech / "A.lean").write_text(
        "/- header -/\nmodule\n\npublic import Odp.LedgerCore\n\nnamespace Odp.Mech\n"
        "noncomputable section\n-- theorem commented_out : True := trivial\n"
        "theorem toy_odp : True := trivial\nprivate theorem hidden : True := trivial\n"
        "@[simp] theorem svt_odp : True := trivial\nend\nnamespace Inner\n"
        "theorem deep : True := trivial\nend Inner\nend Odp.Mech\n"
        "theorem _root_.top_level : True := trivial\n")
    (mech / "B.lean").write_text("import Mathlib\nnamespace Odp.Mech\ntheorem not_compiled : True"
                                 " := trivial\nend Odp.Mech\n")
    found = gen.scan_theorems(tmp_path)
    assert found == {"Odp.Mech.toy_odp": "Odp/Mech/A.lean", "Odp.Mech.svt_odp": "Odp/Mech/A.lean",
                     "Odp.Mech.Inner.deep": "Odp/Mech/A.lean", "top_level": "Odp/Mech/A.lean"}


def test_generated_module_lists_this_trees_mechanism_theorems():
    assert lean.LEAN_THEOREMS == gen.scan_theorems(ROOT)
    for name, path in lean.LEAN_THEOREMS.items():
        assert path in lean.LEAN_SOURCES and name.split(".")[-1] in (ROOT / path).read_text()

"""Planted escapes, each on a scratch copy of the Lean tree, through the real check
(scripts/lean_check.py with the real toolchain, Lean 4.28.0-pre as WebAssembly): every one must
make it fail, with a line naming the file (or declaration) and the reason.

To keep the time down, a plant is compiled with ``--only`` the module it touches and what that
imports; modules whose source is unchanged come from the check's cache of builds of the same
source bytes (``--cache``, hash-checked; the audit and the kernel replay still check every
declaration). The weakened-statement case needs every module (the statement file imports them
all), so it is the slow one when the cache is empty, as in a fresh CI run (about 9 compiles).

The scan-level escapes (set_option, #eval, run_cmd, partial, unsafe, …) are refused before any
Lean runs; tests/test_lean_check.py covers each of them without the toolchain. Here the same
escapes also go through the compiler and the audit with the scan switched off
(``--no-source-scan``), to show the audit and the kernel replay catch them on their own.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from lean_support import ROOT, copy_tree, plant, replace, scratch_cache, toolchain  # noqa: F401
from script_support import load_module
from test_lean_check import check

#: A proof of `False`: an unsafe loop, admitted by skipping the kernel's check.
CHEAT = """set_option debug.skipKernelTC true in
unsafe def cheatLoop : False := cheatLoop

set_option debug.skipKernelTC true in
theorem cheat : False := cheatLoop

theorem one_eq_two : (1 : Nat) = 2 := cheat.elim"""


def _run(args: list[str], capsys) -> tuple[int, str]:
    code = check.main(args)
    return code, capsys.readouterr().out


def test_skip_kernel_tc_is_refused_by_the_source_scan(tmp_path, capsys):
    """The planted proof of `False` in Odp/Core/Field.lean: the full check refuses it before
    compiling, naming the file, the line and the reason."""
    root = copy_tree(tmp_path)
    plant(root, "Odp/Core/Field.lean", "end ExpField", CHEAT)
    code, out = _run(["--src", str(root)], capsys)
    assert code == 1
    assert "FAIL Odp/Core/Field.lean:" in out and "set_option debug.skipKernelTC" in out
    assert "`unsafe`" in out
    assert "ok   " not in out  # nothing was compiled


def test_skip_kernel_tc_is_caught_by_the_audit_and_the_replay(toolchain, tmp_path, capsys):  # noqa: F811
    """The same plant with the source scan switched off: Lean compiles it (that is the escape),
    and the audit fails: `cheatLoop` is unsafe, and the kernel, replaying the module's
    declarations, rejects `cheat`."""
    root = copy_tree(tmp_path)
    plant(root, "Odp/Core/Field.lean", "end ExpField", CHEAT)
    code, out = _run(["--src", str(root), "--only", "Odp.Core.Field", "--audit",
                      "--no-source-scan"], capsys)
    assert code == 1, out
    assert "ok   Odp.Core.Field" in out  # the compiler let it through
    assert "AUDIT-FAIL Odp.Core.ExpField.cheatLoop is unsafe" in out
    assert "AUDIT-FAIL kernel replay: the kernel rejects Odp.Core.ExpField.cheat" in out


def test_partial_and_changed_axioms_are_caught_by_the_audit(toolchain, tmp_path, capsys):  # noqa: F811
    """Without the source scan: a `partial def` fails the audit, and so does a pinned theorem
    whose axioms changed (the example certificate's proof made to mention `Classical.choice`,
    which is pinned as using no axiom)."""
    root = copy_tree(tmp_path)
    plant(root, "Odp/Certs/Example.lean", "end Odp.Certs.Example",
          "partial def spin (n : Nat) : Nat := spin (n + 1)")
    replace(root, "Odp/Certs/Example.lean",
            "      = some ⟨600000, 970⟩ := by\n  decide",
            "      = some ⟨600000, 970⟩ := by\n  have _ : Nat := Classical.choice ⟨0⟩\n  decide")
    code, out = _run(["--src", str(root), "--only", "Odp.Certs.Example", "--audit",
                      "--no-source-scan"], capsys)
    assert code == 1, out
    assert "ok   Odp.Certs.Example" in out
    # a partial def is, for the kernel, an opaque constant and a partial helper
    assert "AUDIT-FAIL Odp.Certs.Example.spin is opaque" in out
    assert "AUDIT-FAIL Odp.Certs.Example.spin._unsafe_rec is partial" in out
    assert ("AUDIT-FAIL Odp.Certs.Example.run_ok (example certificate, replayed by the kernel) "
            "reaches the axioms {Classical.choice}, but pinned.txt pins {none}") in out


def test_eval_and_run_cmd_are_refused_even_when_they_compile(tmp_path, capsys):
    """`#eval` and `run_cmd` in a theory file: refused by the scan with the line named."""
    root = copy_tree(tmp_path)
    plant(root, "Odp/Certs/Example.lean", "end Odp.Certs.Example",
          "#eval (1 : Nat) + 1\n\nrun_cmd pure ()")
    code, out = _run(["--src", str(root), "--only", "Odp.Certs.Example", "--audit"], capsys)
    assert code == 1
    lines = [l for l in out.splitlines() if l.startswith("  FAIL Odp/Certs/Example.lean:")]
    assert any("(#eval)" in l for l in lines) and any("metaprogramming" in l for l in lines)


def test_a_non_module_file_with_an_axiom_and_sorry_fails_the_check(tmp_path, capsys):
    """The second plant: a file under Odp/Core without a `module` header."""
    root = copy_tree(tmp_path)
    (root / "Odp" / "Core" / "Bad.lean").write_text(
        "namespace Odp.Core\n\naxiom bad : False\n\ntheorem uses_bad : (1 : Nat) = 2 := sorry\n\n"
        "end Odp.Core\n", encoding="utf-8")
    code, out = _run(["--src", str(root)], capsys)
    assert code == 1
    assert "FAIL Odp/Core/Bad.lean: not a `module` file and not on the external list" in out


def test_a_weakened_statement_fails_the_statement_file(toolchain, tmp_path, capsys):  # noqa: F811
    """A main theorem given an extra hypothesis (so it says less) still compiles where it is
    proved, but Odp/Core/Spec.lean, which states it in full, no longer does."""
    root = copy_tree(tmp_path)
    replace(root, "Odp/Core/Ledger.lean",
            "    (hrows : cs.map CertStep.entry = A.rowsAlong os) :",
            "    (hrows : cs.map CertStep.entry = A.rowsAlong os) (_hshort : os.length ≤ 1) :")
    code, out = _run(["--src", str(root), "--only", "Odp.Core.Spec"], capsys)
    assert code == 1, out
    assert "ok   Odp.Core.Ledger" in out  # the weakened theorem is still proved
    # … and the statement file fails at that statement only (the rest still holds)
    spec = next(line for line in out.splitlines() if "FAIL Odp.Core.Spec" in line)
    assert spec.endswith(": 1 error(s)"), spec
    assert "checkCert_certificate_sound" in out


# --- the attacks on the checker itself ---------------------------------------------------------

def _scratch_checker(root: Path):
    """A copy of the checker's own files (scripts/, python/odp/lean_toolchain.py) beside a
    scratch tree, loaded from there: its trusted base is then the scratch copy, so a planted
    compile-time write aims at files of the test, never at this repository's."""
    shutil.copytree(ROOT / "scripts", root / "scripts")
    (root / "python" / "odp").mkdir(parents=True)
    shutil.copy2(ROOT / "python" / "odp" / "lean_toolchain.py",
                 root / "python" / "odp" / "lean_toolchain.py")
    return load_module(root / "scripts" / "lean_check.py", "lean_check_scratch")


def test_a_compile_time_write_into_the_checker_or_the_toolchain_is_refused(
        toolchain, tmp_path, capsys, monkeypatch, request):  # noqa: F811
    """An attack on the checker: while Lean compiles a module, its code rewrites a line of the
    audit program (which the old checker read only after compiling) and drops a file into the
    downloaded toolchain. Each module is now compiled in a sandbox that can write only its own
    output directory: both writes are refused, the module fails, and the audit program and the
    toolchain are as they were. (The scan is switched off, so the compiler runs the code.)"""
    root = copy_tree(tmp_path / "tree")
    scratch = _scratch_checker(root)
    # the sandboxed compiles run as other users: the scratch cache must be reachable by them
    # (pytest's tmp_path sits below a directory only its owner may enter)
    reachable = Path(tempfile.mkdtemp(prefix="odp-lean-cache-test."))
    reachable.chmod(0o755)
    request.addfinalizer(lambda: shutil.rmtree(reachable, ignore_errors=True))
    cache = scratch_cache(reachable / "cache", toolchain)
    monkeypatch.setenv("ODP_LEAN_CACHE", str(cache))
    audit = root / "scripts" / "lean" / "AxiomAudit.lean"
    before = audit.read_bytes()
    lib = cache / toolchain.lib.parent.parent.name / "lean" / "lib"
    evil = lib / "Init" / "Evil.olean"
    plant(root, "Odp/Certs/Example.lean", "end Odp.Certs.Example",
          f'#eval IO.FS.writeFile "{audit}" "-- the replay stops here"\n\n'
          f'#eval IO.FS.writeFile "{evil}" "not the core library"')
    code = scratch.main(["--src", str(root), "--only", "Odp.Certs.Example", "--audit",
                         "--no-source-scan", "--no-cache"])
    out = capsys.readouterr().out
    assert code == 1, out
    assert "FAIL Odp.Certs.Example" in out
    assert out.count("permission denied") >= 2, out
    assert audit.read_bytes() == before
    assert not evil.exists()


def test_new_syntax_and_an_instance_of_a_core_class_fail_the_audit(toolchain, tmp_path, capsys):  # noqa: F811
    """Without the scan, notation (a parser and a macro: they change what a statement file
    reads as) and an instance that makes `≤` on Nat mean `True` compile; the audit reads each
    module's environment-extension entries and instances from its .olean and refuses both."""
    root = copy_tree(tmp_path)
    plant(root, "Odp/Certs/Example.lean", "end Odp.Certs.Example",
          'notation "⟪" x "⟫" => x\n\n'
          "instance (priority := high) hijack : LE Nat := ⟨fun _ _ => True⟩")
    code, out = _run(["--src", str(root), "--only", "Odp.Certs.Example", "--audit",
                      "--no-source-scan"], capsys)
    assert code == 1, out
    assert "ok   Odp.Certs.Example" in out  # the compiler let both through
    assert "AUDIT-FAIL Odp.Certs.Example has entries in the environment extension" in out
    assert ("AUDIT-FAIL instance Odp.Certs.Example.hijack of the class LE on (Nat) is not "
            "pinned") in out


def test_exit_in_a_statement_file_fails(toolchain, tmp_path, capsys):  # noqa: F811
    """`#exit` in a statement file stops Lean reading it (a warning only): the statements
    after it were never checked. The scan refuses it; without the scan, a statement file must
    compile with no warning at all."""
    root = copy_tree(tmp_path)
    replace(root, "Odp/Core/Spec.lean", "\nend OdpSpec", "\n#exit\n\nend OdpSpec")
    code, out = _run(["--src", str(root), "--only", "Odp.Core.Spec"], capsys)
    assert code == 1 and "FAIL Odp/Core/Spec.lean:" in out and "(#exit)" in out
    code, out = _run(["--src", str(root), "--only", "Odp.Core.Spec", "--no-source-scan"], capsys)
    assert code == 1, out
    assert "a statement file must compile with no warning" in out


def test_the_compiler_sees_only_init(toolchain, tmp_path):  # noqa: F811
    """Beside the import allow-list of the header, the compiles get a library path that holds
    only `Init` and the checked modules: a module that imports `Lean` (the metaprogramming
    library) does not compile, whatever its header looks like to a reader."""
    box = check.sandbox.Sandbox.detect()
    work = Path(tempfile.mkdtemp(prefix="odp-lean-check-test."))
    work.chmod(0o755)  # the sandboxed compile must reach what the Build puts below it
    try:
        text = "module\npublic import\n  Lean\n\ntheorem t : True := trivial\n"
        mods = {"Odp.X": check.Module("Odp.X", work / "X.lean", ["Lean"], text=text)}
        (work / "w").mkdir()
        build = check.Build(toolchain, box, work / "w", mods)
        res = build.compile(mods["Odp.X"])
        assert not res.ok
        assert "unknown module prefix" in res.output or "Lean" in res.output, res.output
        assert "Odp/X.olean" not in build.digests
    finally:
        shutil.rmtree(work, ignore_errors=True)


def test_a_vacuous_field_in_a_hypothesis_fails_the_statement_file(toolchain, tmp_path, capsys):  # noqa: F811
    """Issue 30's second attack: one plausible extra field in `LapNoise` ("the noise is centred
    at 0") makes it unsatisfiable, and every theorem taking it vacuous — while each proof still
    compiles where it is. `Odp/Mech/Spec.lean` writes the structure out (its constructor's type),
    so the statement file no longer compiles, at that line."""
    root = copy_tree(tmp_path)
    replace(root, "Odp/Mech/Common/Noise.lean",
            "  shift_down : ∀ f, Bdd f → E (fun z => f (z - 1)) ≤ exp α * E f\n",
            "  shift_down : ∀ f, Bdd f → E (fun z => f (z - 1)) ≤ exp α * E f\n"
            "  centred : E (ind (fun z => decide (z = 0))) = 1\n")
    code, out = _run(["--src", str(root), "--only", "Odp.Mech.Spec"], capsys)
    assert code == 1, out
    assert "ok   Odp.Mech.Common.Noise" in out and "ok   Odp.Mech.SVT.Privacy" in out  # the proofs still hold
    spec = next(line for line in out.splitlines() if "FAIL Odp.Mech.Spec" in line)
    assert "error" in spec, spec
    assert "LapNoise.mk" in out, out


#: A module named like a statement file, in another folder, declaring into the namespace the
#: core statement file looks names up in first: inside `namespace OdpSpec`,
#: `Lean.Grind.OrderedRing` would resolve to this class (with a field false in every ordered
#: field) before the core's.
SHADOW_SPEC = """module

@[expose] public section

set_option autoImplicit false

namespace OdpSpec.Lean.Grind

class OrderedRing (R : Type) [_root_.Lean.Grind.Semiring R] [LE R] [LT R] [Std.IsPreorder R] :
    Prop where
  toOrderedRing : _root_.Lean.Grind.OrderedRing R
  le_total' : ∀ a b : R, a ≤ b

end OdpSpec.Lean.Grind
"""

#: An `LE` on every ExpField's carrier, through a reducible alias of ours: instance search sees
#: through `Carrier`, so `(1 : F) ≤ 0` becomes `True`.
ALIAS_INSTANCE = """module

public import Odp.Core.Field

@[expose] public section

set_option autoImplicit false

namespace Odp.Core

@[reducible] def Carrier (F : Type) : Type := F

instance (priority := high) carrierLE {F : Type} [ExpField F] : LE (Carrier F) := ⟨fun _ _ => True⟩

theorem one_le_zero {F : Type} [ExpField F] : (1 : F) ≤ 0 := trivial

end Odp.Core
"""


def test_only_the_statement_modules_declare_in_their_namespaces(toolchain, tmp_path, capsys):  # noqa: F811
    """An adversarial review's two redirections: a new `Odp/Core/Order/Spec.lean` (any module
    named …Spec used to be exempt) declaring `OdpSpec.Lean.Grind.OrderedRing`, and a proof
    renamed into `Odp.Mech.Spec`, where `Odp/Mech/Spec.lean` finds `cor18` before the pinned
    `Odp.Mech.cor18`. Both compile; the audit refuses both, naming the module."""
    root = copy_tree(tmp_path)
    (root / "Odp/Core/Order").mkdir()
    (root / "Odp/Core/Order/Spec.lean").write_text(SHADOW_SPEC, encoding="utf-8")
    code, out = _run(["--src", str(root), "--only", "Odp.Core.Order.Spec", "--audit"], capsys)
    assert code == 1, out
    assert "ok   Odp.Core.Order.Spec" in out  # it compiles: the audit is what refuses it
    assert ("AUDIT-FAIL OdpSpec.Lean.Grind.OrderedRing is declared in Odp.Core.Order.Spec: the "
            "namespaces OdpSpec, Odp.Core.Spec, Odp.Mech.Spec, Odp.Certs.Spec are reserved"
            ) in out
    plant(root, "Odp/Certs/Example.lean", "end Odp.Certs.Example",
          "theorem _root_.Odp.Mech.Spec.cor18 : True := trivial")
    code, out = _run(["--src", str(root), "--only", "Odp.Certs.Example", "--audit"], capsys)
    assert code == 1, out
    assert "AUDIT-FAIL Odp.Mech.Spec.cor18 is declared in Odp.Certs.Example" in out


def test_pinned_instances_are_parent_projections_and_aliases_are_not_exempt(  # noqa: F811
        toolchain, tmp_path, capsys):  # noqa: F811
    """An instance under a pinned name that is not the parent projection the structure records
    (ExpField no longer extending `Lean.Grind.OrderedRing`, a hand-written
    `ExpField.toOrderedRing` in its place) fails the audit; so does an instance of a core class
    on an Odp `abbrev`/reducible alias, which instance search sees through."""
    root = copy_tree(tmp_path)
    (root / "Odp/Core/Carrier.lean").write_text(ALIAS_INSTANCE, encoding="utf-8")
    code, out = _run(["--src", str(root), "--only", "Odp.Core.Carrier", "--audit"], capsys)
    assert code == 1, out
    assert "ok   Odp.Core.Carrier" in out
    assert ("AUDIT-FAIL instance Odp.Core.carrierLE of the class LE on (Odp.Core.Carrier(def)) "
            "is not pinned") in out
    # the pinned name, written by hand: the parent dropped, an instance of the same name added
    replace(root, "Odp/Core/Field.lean", "    Std.LawfulOrderLT R, Lean.Grind.OrderedRing R where\n",
            "    Std.LawfulOrderLT R where\n  (orderedRing : Lean.Grind.OrderedRing R)\n")
    plant(root, "Odp/Core/Field.lean", "namespace ExpField",
          "instance ExpField.toOrderedRing {R : Type} [h : ExpField R] : "
          "Lean.Grind.OrderedRing R :=\n  h.orderedRing")
    code, out = _run(["--src", str(root), "--only", "Odp.Core.Field", "--audit"], capsys)
    assert code == 1, out
    assert ("instance Odp.Core.ExpField.toOrderedRing of the class Lean.Grind.OrderedRing is "
            "pinned in scripts/lean/instances.txt as a parent projection, but it is not a "
            "projection of its structure") in out

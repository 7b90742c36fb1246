"""Issue 24's planted escapes, each on a scratch copy of the Lean tree, through the real check
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

from lean_support import copy_tree, plant, replace, toolchain  # noqa: F401  (fixture)
from test_lean_check import check

#: The proof of `False` of issue 24: an unsafe loop, admitted by skipping the kernel's check.
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
    assert any("`#eval`" in l for l in lines) and any("metaprogramming" in l for l in lines)


def test_a_non_module_file_with_an_axiom_and_sorry_fails_the_check(tmp_path, capsys):
    """Issue 24's second plant: a file under Odp/Core without a `module` header."""
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

"""The real Lean toolchain (Lean 4.28.0-pre, WebAssembly): the kernel decides certificates, the
cached `Odp/LedgerCore.olean` is used only when it matches its recorded hashes, and
scripts/lean_check.py fails on a false lemma, an unfinished proof and a new axiom (the planted
escapes: tests/test_lean_escapes.py).

Each test compiles one to three Lean files (about 20-60 s each on our machines)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import odp
from odp import _lean_rules as rules
from odp.certs.kernel import check_kernel
from odp.cli import main

from lean_support import replayed_final, scratch_cache, toolchain  # noqa: F401  (fixture)
from test_lean_check import check

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"


@pytest.mark.parametrize("name,accepted", [("ok_blocks", True), ("bad_refund", False)])
def test_kernel_decides_the_example_ledgers(toolchain, name, accepted):  # noqa: F811
    text = (EXAMPLES / f"{name}.ledger").read_text(encoding="utf-8")
    result = check_kernel(text, replayed_final(text))
    assert result.ok is accepted, result.message
    if not accepted:
        assert "rejected" in result.message and "chunk0_ok" in result.message


def test_kernel_refuses_a_wrong_final_budget(toolchain):  # noqa: F811
    """A ledger that replays, claimed to end one unit higher than it does: the kernel refuses."""
    text = (EXAMPLES / "ok_basic.ledger").read_text(encoding="utf-8")
    eps, delta = replayed_final(text)
    wrong = check_kernel(text, (eps + 1, delta))
    assert not wrong.ok and "rejected" in wrong.message


def test_cli_kernel_check_of_a_run_certificate_in_chunks(toolchain, tmp_path):  # noqa: F811
    """`odp verify --kernel` on an accountant's certificate, split into chunks of 2 steps."""
    acc = odp.Accountant("2", "1e-6", rng=odp.SeededRandom(3))
    for _ in range(5):
        acc.run(odp.ToyMechanism(len, epsilon="0.2"), [1, 2, 3])
        acc.charge(odp.DP("0.05", "1e-7"))
    path = tmp_path / "run.cert"
    acc.certificate().write(path)
    import odp.certs.kernel as kernel
    old, kernel.CHUNK = kernel.CHUNK, 3
    try:
        lean_file = tmp_path / "Run.lean"
        code = main(["verify", str(path), "--kernel", "--json", "--lean-file", str(lean_file)])
    finally:
        kernel.CHUNK = old
    assert code == 0
    assert lean_file.read_text(encoding="utf-8").count("decide +kernel") == 4  # 10 steps / 3


def test_a_tampered_cached_ledger_core_is_rebuilt(toolchain, tmp_path, monkeypatch):  # noqa: F811
    """`odp verify --kernel` keeps the compiled `Odp/LedgerCore.olean` in the cache with the
    SHA-256 of its source and of each file; one that no longer matches (here: changed bytes) is
    not used but compiled again, and the certificate is still decided."""
    import odp.certs.kernel as kernel
    from odp import lean_toolchain as lt

    cache = scratch_cache(tmp_path / "cache", toolchain)
    monkeypatch.setenv("ODP_LEAN_CACHE", str(cache))
    messages: list[str] = []
    build = kernel._ledger_core(lt.ensure_toolchain(say=messages.append), messages.append)
    assert build.parent == cache / "ledgercore"
    olean = build / "Odp" / "LedgerCore.olean"
    assert lt.stamp_problem(build, rules.SOURCE_SHA256) is None
    assert (cache / "ledgercore").stat().st_mode & 0o077 == 0
    original = olean.read_bytes()
    tampered = original[:-1] + bytes([original[-1] ^ 1])
    olean.write_bytes(tampered)
    assert "LedgerCore.olean differs" in lt.stamp_problem(build, rules.SOURCE_SHA256)
    text = (EXAMPLES / "ok_blocks.ledger").read_text(encoding="utf-8")
    result = check_kernel(text, replayed_final(text), say=messages.append)
    assert result.ok, result.message
    assert any("not reusing the cached" in m and "differs" in m for m in messages), messages
    assert olean.read_bytes() != tampered  # rebuilt
    assert lt.stamp_problem(build, rules.SOURCE_SHA256) is None


def _copy_repo(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "Odp", tmp_path / "Odp")
    return tmp_path


def _plant(root: Path, rel: str, before: str, text: str) -> None:
    path = root / rel
    src = path.read_text(encoding="utf-8")
    assert before in src
    path.write_text(src.replace(before, text + "\n\n" + before), encoding="utf-8")


def test_check_fails_on_a_false_lemma(toolchain, tmp_path, capsys):  # noqa: F811
    root = _copy_repo(tmp_path)
    _plant(root, "Odp/Core/Field.lean", "end ExpField",
           "theorem false_lemma {R : Type} [ExpField R] (a : R) : exp a ≤ 0 := by grind")
    assert check.main(["--src", str(root), "--only", "Odp.Core.Field"]) == 1
    out = capsys.readouterr().out
    assert "FAIL Odp.Core.Field" in out and "error" in out


def test_check_fails_on_an_unfinished_proof_even_without_the_source_scan(toolchain, tmp_path, capsys):  # noqa: F811,E501
    root = _copy_repo(tmp_path)
    _plant(root, "Odp/Core/Field.lean", "end ExpField",
           "theorem unfinished {R : Type} [ExpField R] (a : R) : 0 < exp a := by sorry")
    assert check.main(["--src", str(root), "--only", "Odp.Core.Field", "--no-source-scan"]) == 1
    out = capsys.readouterr().out
    assert "FAIL Odp.Core.Field" in out and "unfinished proof" in out


def test_audit_fails_on_a_new_axiom_even_without_the_source_scan(toolchain, tmp_path, capsys):  # noqa: F811,E501
    root = _copy_repo(tmp_path)
    _plant(root, "Odp/Certs/Example.lean", "end Odp.Certs.Example",
           "axiom planted : (1 : Nat) = 2\n\ntheorem uses_planted : (1 : Nat) = 2 := planted")
    code = check.main(["--src", str(root), "--only", "Odp.Certs.Example", "--no-source-scan",
                       "--audit"])
    out = capsys.readouterr().out
    assert code == 1
    assert "ok   Odp.LedgerCore" in out and "ok   Odp.Certs.Example" in out  # compiled fine
    assert "AUDIT-FAIL Odp.Certs.Example.planted is a new axiom" in out

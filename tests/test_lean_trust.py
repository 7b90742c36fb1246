"""The Lean check's trusted base without the Lean toolchain: the sandbox the modules are compiled
in (scripts/lean/sandbox.py), the tokenizer that reads headers and scans sources
(scripts/lean/lexer.py), and the toolchain's tree digest (odp.lean_toolchain.tree_digest).

The same layers with the real toolchain, against the attacks they are for (a compile-time
write into the checker or the toolchain, an instance of a core class, new syntax, `#exit` in a
statement file): tests/test_lean_escapes.py.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from odp import lean_toolchain as lt
from script_support import load_script

ROOT = Path(__file__).resolve().parent.parent
sandbox = load_script("scripts/lean/sandbox.py", "odp_lean_sandbox_test")
lexer = load_script("scripts/lean/lexer.py", "odp_lean_lexer_test")


def _scratch() -> Path:
    base = Path(tempfile.mkdtemp(prefix="odp-sandbox-test."))
    base.chmod(0o755)
    return base


def _victim(base: Path, mode: int = 0o644) -> Path:
    """A file the sandboxed command must not be able to change, owned by the test's user (as
    the checker's files are: a fresh clone is 0644). In the namespace sandbox it may even be
    writable by everyone (``mode=0o666``): the read-only mounts stop the write."""
    victim = base / "victim.txt"
    victim.write_text("original", encoding="utf-8")
    victim.chmod(mode)
    return victim


def test_a_sandboxed_command_writes_only_its_own_directory():
    """What a module's compile-time code could try: overwrite a checker file, create a file
    beside it, leave a process running. Only its own output directory is writable, and
    nothing of it is left running."""
    box = sandbox.Sandbox.detect()
    base = _scratch()
    victim = _victim(base)
    uid = box.identity()
    out = box.make_writable_dir(base / "out", uid)
    script = (f"echo mine > {out}/ok.txt; echo evil > {victim}; echo new > {base}/new.txt; "
              "(sleep 300 &); echo done")
    res = box.run(["/bin/sh", "-c", script], uid=uid, writable=out,
                  env={"PATH": "/usr/bin:/bin"}, cwd="/tmp", timeout=60)
    assert res.returncode == 0 and "done" in res.stdout
    assert (out / "ok.txt").read_text() == "mine\n"
    assert victim.read_text() == "original"  # refused: permission denied / read-only
    assert not (base / "new.txt").exists()
    assert ("Permission denied" in res.stderr) or ("Read-only file system" in res.stderr)
    if box.kind == "uid":
        assert sandbox.processes_of(uid) == []  # the background sleep was killed


def test_each_command_gets_a_user_of_its_own():
    """As root, two compiles never share a user id, so one cannot write the other's output."""
    box = sandbox.Sandbox.detect()
    if box.kind != "uid":
        pytest.skip("a user id per command is the root sandbox; this machine runs the "
                    "namespace sandbox")
    ids = {box.identity() for _ in range(70)}  # more than one block
    assert len(ids) == 70 and all(i >= sandbox.UID_BASE for i in ids)
    base = _scratch()
    first, second = box.identity(), box.identity()
    out1 = box.make_writable_dir(base / "one", first)
    out2 = box.make_writable_dir(base / "two", second)
    res = box.run(["/bin/sh", "-c", f"echo x > {out2}/x; echo y > {out1}/y"], uid=first,
                  writable=out1, env={"PATH": "/usr/bin:/bin"}, cwd="/tmp", timeout=60)
    assert (out1 / "y").exists() and not (out2 / "x").exists(), res.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to start the check as another user")
def test_the_namespace_sandbox_of_an_unprivileged_user(tmp_path):
    """The sandbox a non-root user gets (a read-only mount namespace with the noroot secure
    bits locked), exercised by running the same test as an unprivileged user: the write and a
    remount that would undo the read-only mounts are both refused."""
    base = _scratch()
    base.chmod(0o777)  # the unprivileged user creates its output directory here
    victim = _victim(base, 0o666)
    out = base / "out"
    program = f"""
import importlib.util, sys
spec = importlib.util.spec_from_file_location("sb", {str(ROOT / 'scripts/lean/sandbox.py')!r})
sb = importlib.util.module_from_spec(spec); sys.modules["sb"] = sb; spec.loader.exec_module(sb)
box = sb.Sandbox.detect()
assert box.kind == "userns", box.kind
out = box.make_writable_dir(__import__("pathlib").Path({str(out)!r}), box.identity())
res = box.run(["/bin/sh", "-c", "echo mine > {out}/ok.txt; echo evil > {victim}; "
               "mount -o remount,rw / && echo REMOUNTED"], uid=0, writable=out,
              env={{"PATH": "/usr/bin:/bin"}}, cwd="/tmp", timeout=60)
print(res.stdout, res.stderr)
"""
    (base / "t.py").write_text(program, encoding="utf-8")
    (base / "t.py").chmod(0o644)
    python = "/usr/bin/python3" if Path("/usr/bin/python3").exists() else sys.executable
    res = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", python,
                          "-I", str(base / "t.py")], capture_output=True, text=True, timeout=120)
    if "refuses unprivileged user and mount namespaces" in res.stderr:
        pytest.skip("this machine refuses unprivileged namespaces (the check then refuses to "
                    "run for non-root users)")
    assert res.returncode == 0, res.stderr
    assert (out / "ok.txt").read_text() == "mine\n"
    assert victim.read_text() == "original"
    assert "REMOUNTED" not in res.stdout


# --- the tokenizer ------------------------------------------------------------------------------

@pytest.mark.parametrize("source,expected", [
    ("module\npublic import\n  Lean\n", ["Lean"]),
    ("module\n/- c -/ public -- c\n import Odp.A\nimport all Odp.B\n", ["Odp.A", "Odp.B"]),
    ("module\npublic import «Lean».Elab\n", ["Lean.Elab"]),
    ("module\nimport Odp.A import Odp.B\ntheorem t : True := trivial\n", ["Odp.A", "Odp.B"]),
])
def test_the_header_is_read_from_tokens(source, expected):
    assert [i.module for i in lexer.header(source).imports] == expected


def test_an_import_after_the_header_is_a_problem():
    head = lexer.header("module\nimport Odp.A\ntheorem t : True := trivial\nimport Lean\n")
    assert any("after the header" in p.reason for p in head.problems)


@pytest.mark.parametrize("planted", [
    "attribute [«command_elab» Lean.Parser.Command.check] f",
    "@[«macro» Lean.Parser.Term.app] def m := 0",
    "#exit", "#eval 1", "#print axioms t", "#check 1",
    "set_option «debug».skipKernelTC true in theorem t : True := trivial",
    "theorem t : True := by «sorry»",
    "def f := «Lean».«Elab».x",
])
def test_guillemets_and_hash_commands_do_not_slip_past_the_scan(planted):
    assert lexer.scan("module\n" + planted + "\n"), planted


# --- the toolchain's tree digest ----------------------------------------------------------------

def test_the_tree_digest_sees_every_change(tmp_path):
    root = tmp_path / "tree"
    (root / "lib" / "Init").mkdir(parents=True)
    (root / "lib" / "Init" / "Core.olean").write_bytes(b"core")
    (root / "lean.js").write_bytes(b"glue")
    first = lt.tree_digest(root)
    (root / "lib" / "Init" / "Core.olean").write_bytes(b"tampered")
    assert lt.tree_digest(root) != first
    (root / "lib" / "Init" / "Core.olean").write_bytes(b"core")
    assert lt.tree_digest(root) == first
    (root / "lib" / "Init" / "Evil.olean").write_bytes(b"")
    assert lt.tree_digest(root) != first
    (root / "lib" / "Init" / "Evil.olean").unlink()
    (root / "lean.js").chmod(0o755)
    assert lt.tree_digest(root) != first
    (root / "lean.js").chmod(0o644)
    (root / "link").symlink_to(root / "lean.js")
    assert lt.tree_digest(root).startswith("not a plain tree")

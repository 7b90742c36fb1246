"""scripts/lean_check.py and odp.lean_toolchain without running Lean: which files are checked or
refused, the source scan, the audit's generated module list and pinned theorems, the cache's
ownership and mode checks and build records, the lean.js patch, integrity checks of downloads
(against a real HTTP server on loopback), and safe unpacking.

The same checks with the real toolchain, on planted escapes: tests/test_lean_escapes.py."""

from __future__ import annotations

import base64
import hashlib
import http.server
import io
import os
import re
import shutil
import tarfile
import threading
from pathlib import Path
from types import SimpleNamespace

import pytest

import odp
from odp import lean_toolchain as lt
from odp.cli import main as cli_main
from lean_support import copy_tree, plant
from script_support import load_script

ROOT = Path(__file__).resolve().parent.parent


check = load_script("scripts/lean_check.py", "lean_check")

CORE = ["Odp.Core.Field", "Odp.Core.Sum", "Odp.Core.Prob", "Odp.Core.Defs", "Odp.Core.Lemmas",
        "Odp.Core.Lemma20", "Odp.Core.Composition", "Odp.Core.Ledger", "Odp.Core.Spec"]


def test_every_lean_file_is_checked_or_listed_as_external():
    tree = check.collect(ROOT)
    assert not tree.refused, tree.refused
    mods = tree.modules
    assert set(CORE) | {"Odp.LedgerCore", "Odp.Certs.Example"} <= set(mods)
    for m, mod in mods.items():
        assert "import Mathlib" not in mod.path.read_text(encoding="utf-8"), m
        assert all(d in mods for d in mod.odp_imports), (m, mod.odp_imports)
    files = {p.relative_to(ROOT).as_posix() for p in check.lean_files(ROOT)}
    external = {rel for rel, _ in tree.external}
    checked = {mod.path.relative_to(ROOT).as_posix() for mod in mods.values()}
    assert files == external | checked and not external & checked
    # the Mathlib layer is the external workflow's; the list is explicit
    assert {"OdpMathlib/Composition.lean", "OdpMathlib/Rules.lean", "OdpCheck.lean"} <= external
    assert external <= set(check.EXTERNAL)
    # the ledger link reaches every theory module; the statement file reaches everything
    assert check.closure(mods, ["Odp.Core.Ledger"]) == set(CORE) - {"Odp.Core.Spec"} | {"Odp.LedgerCore"}
    assert check.closure(mods, ["Odp.Core.Spec"]) >= set(CORE) | {"Odp.Certs.Example"}


def test_each_mechanism_has_one_folder():
    """The layout of docs/lean.md: every module of Odp/Mech but the statement file is in one
    folder (a mechanism's, or Common); each folder's `Link` module joins it to the certificates
    through Odp.Certs.LinkCore and the capstone Odp.Certs.Link imports every one; no model or
    proof of a mechanism, nor the statement file Odp.Mech.Spec, reaches a certificate module."""
    mods = check.collect(ROOT).modules
    mech = [m for m in mods if m.startswith("Odp.Mech.")]
    assert [m for m in mech if len(m.split(".")) != 4] == ["Odp.Mech.Spec"]
    links = sorted(m for m in mech if m.endswith(".Link"))
    assert {m.split(".")[2] for m in links} == {
        "Toy", "Laplace", "Gaussian", "RandomizedResponse", "SVT", "PTR", "TestRelease", "Iterative"}
    for link in links:
        assert "Odp.Certs.LinkCore" in check.closure(mods, [link]), link
    assert set(links) <= set(mods["Odp.Certs.Link"].odp_imports)
    for m in mech:
        if not m.endswith(".Link"):
            reached = check.closure(mods, [m])
            assert not [d for d in reached if d.startswith("Odp.Certs.")], m


def test_the_audit_is_given_every_compiled_module_and_pinned_theorem():
    mods = sorted(check.collect(ROOT).modules)
    pins = check.read_pins()
    text = check.audit_source(mods, [p.name for p in pins])
    modules = re.search(r"^def auditModules : List Name := \[(.*)\]$", text, re.M).group(1)
    assert re.findall(r"`([\w.]+)", modules) == mods
    theorems = re.search(r"^def mainTheorems : List Name := \[(.*)\]$", text, re.M).group(1)
    assert re.findall(r"`([\w.']+)", theorems) == [p.name for p in pins]
    # the committed tool itself lists nothing: lean_check.py fills it in
    raw = check.AUDIT.read_text(encoding="utf-8")
    assert "def auditModules : List Name := [] -- @odp-audit-modules" in raw


def test_pinned_theorems_are_the_main_ones_and_spec_states_them():
    pins = {p.name: p for p in check.read_pins()}
    for name in ("Odp.Core.odp_composition", "Odp.Core.odp_composition_randomized",
                 "Odp.Core.odp_composition_alg1", "Odp.Core.lemma20", "Odp.Core.odp_of_dp",
                 "Odp.Core.dp_of_odp_sup", "Odp.Core.odp_of_subsetDP",
                 "Odp.Core.accountant_composition", "Odp.Core.certificate_sound"):
        assert name in pins, name
    assert pins["Odp.Core.odp_composition"].axioms == {"Classical.choice", "propext"}
    assert pins["Odp.LedgerCore.replay_sound"].axioms == frozenset()
    for pin in pins.values():
        assert pin.axioms <= {"propext", "Classical.choice", "Quot.sound"}, pin
        assert pin.label
    spec = (ROOT / "Odp" / "Core" / "Spec.lean").read_text(encoding="utf-8")
    stated = set(re.findall(r"^theorem (\w+)", spec, re.M))
    for name in pins:
        if name.startswith("OdpSpec."):
            assert name.split(".", 1)[1] in stated, name
    # each pinned Spec theorem is proved by the theorem that claims it, as is
    for name, target in [("theorem7", "Odp.Core.odp_composition"), ("lemma20", "Odp.Core.lemma20"),
                         ("certificate_sound", "Odp.Core.certificate_sound")]:
        block = spec.split(f"theorem {name} ", 1)[1].split("\n\n", 1)[0]
        assert block.rstrip().endswith(f"@{target}"), name


def test_comments_are_not_code():
    src = "/- sorry /- nested -/ admit -/\ntheorem t : True := trivial -- sorry\n/-- doc axiom -/\n"
    assert check.escape_hatches(src) == []
    assert check.is_module("/- header -/\n-- x\nmodule\n\npublic import A\n")
    assert not check.is_module("import Mathlib\n")
    assert not check.is_module("modules_are_not_module\n")
    assert check.imports("module\npublic import Odp.A\nimport Odp.B\n-- import Odp.C\n"
                         "public meta import all Odp.D\n") == ["Odp.A", "Odp.B", "Odp.D"]


@pytest.mark.parametrize("hidden", [
    # a string literal holding a comment mark hides nothing
    'def s : String := "/-"\nset_option debug.skipKernelTC true in\ndef t : String := "-/"\n',
    'def s : String := "\\"/-"\nunsafe def x : Nat := 0\ndef u : String := "-/"\n',
    "def c : Char := '\"'\nset_option debug.skipKernelTC true in\ndef s : String := \"\"\n",
    'def s : String := r#"/-"#\nrun_cmd pure ()\n',
    "def «/-» : Nat := 0\n#eval 1\n",
    # an interpolated string: Lean reads `"/-"` as a term inside it, not as the string's end
    'def s : String := s!"{"/-"}"\nset_option debug.skipKernelTC true in\ndef t := 0 -- -/\n',
    # a plain string with a brace: refused too (whether it is interpolated depends on context)
    'def s : String := "{/-"\ntheorem t : True := trivial\n',
])
def test_strings_do_not_hide_code_from_the_scan(hidden):
    assert check.escape_hatches(hidden), hidden
    tokens, problems = check.lexer.tokenize("theorem h' : True := trivial -- '\"\n")
    assert [t.name for t in tokens[:2]] == ["theorem", "h'"] and not problems


SCAN_PLANTS = [
    ("theorem t : 1 = 2 := by sorry", "`sorry`"),
    ("theorem t : 1 = 1 := by admit", "`admit`"),
    ("theorem t : 1 = 1 := by native_decide", "`native_decide`"),
    ("theorem t : 1 = 1 := by decide +native", "`decide +native`"),
    ("axiom bad : False", "`axiom`"),
    ("@[implemented_by foo] def f : Nat := 0", "`implemented_by`"),
    ("@[extern \"c_f\"] def g : Nat := 0", "`extern`"),
    ("set_option debug.skipKernelTC true in\ntheorem t : True := trivial", "set_option debug.skipKernelTC"),
    ("set_option pp.all true", "set_option pp.all"),
    ("unsafe def loop : Nat := loop", "`unsafe`"),
    ("partial def loop (n : Nat) : Nat := loop n", "`partial`"),
    ("opaque secret : Nat", "`opaque`"),
    ("run_cmd pure ()", "metaprogramming"),
    ("#eval 1 + 1", "(#eval)"),
    ("#exit", "(#exit)"),
    ("#print axioms Nat.add", "(#print)"),
    ("@[«command_elab» Lean.Parser.Command.check] def h : Nat := 0", "attribute `command_elab`"),
    ("attribute [«command_elab» Lean.Parser.Command.check] Nat.add", "attribute `command_elab`"),
    ("meta def m : Nat := 0", "`meta`"),
    ("def w : IO Unit := IO.FS.writeFile \"/tmp/x\" \"\"", "I/O"),
    ("elab \"x\" : term => pure (Lean.mkConst ``Nat)", "new syntax"),
    ("macro \"x\" : term => `(1)", "new syntax"),
    ("syntax \"x\" : term", "new syntax"),
    ("macro_rules | `(1) => `(2)", "new syntax"),
    ("notation a \" ≤ \" b => True", "new syntax"),
    ("infixl:65 \" +++ \" => Nat.add", "new syntax"),
    ("initialize pure ()", "`initialize`"),
    ("register_simp_attr my_simp", "new syntax"),
    ("def s : String := s!\"{1}\"", "interpolated string"),
    ("def f := Lean.addDecl", "metaprogramming"),
    ("@[macro Lean.Parser.Term.app] def m : Lean.Macro := fun _ => Lean.Macro.throwUnsupported",
     "attribute `macro`"),
    ("attribute [init] Nat.add", "attribute `init`"),
    ("export Nat (add)", "`export`"),
]


@pytest.mark.parametrize("planted,reason", SCAN_PLANTS, ids=[p[1] for p in SCAN_PLANTS])
def test_source_scan_refuses_escape_hatches(tmp_path, capsys, planted, reason):
    root = copy_tree(tmp_path)
    plant(root, "Odp/Core/Sum.lean", "end Odp.Core", planted)
    code = check.main(["--src", str(root), "--scan-only"])
    out = capsys.readouterr().out
    assert code == 1
    line = next(l for l in out.splitlines() if "FAIL Odp/Core/Sum.lean:" in l)
    assert reason in line, out


@pytest.mark.parametrize("allowed", [
    "set_option maxHeartbeats 400000 in\ntheorem t : True := trivial",
    "set_option linter.unusedVariables false",
    "set_option maxRecDepth 2000",
    "set_option autoImplicit false",
    "@[simp, grind =] theorem t2 : (1 : Nat) = 1 := rfl",
    "@[elab_as_elim, macro_inline] def t3 : Nat := 0",
    "def prefixLen (l : List Nat) : Nat := l.length  -- `partial` in a comment",
    "theorem h' : True := trivial\ndef c : Char := 'a'",
])
def test_source_scan_allows_the_allow_list(allowed):
    assert check.escape_hatches(allowed + "\n") == []


def test_string_contents_are_read_as_code_by_the_scan():
    """Conservative: a refused word inside a string literal is refused too (an interpolated
    string holds terms)."""
    assert check.escape_hatches('def msg : String := s!"{(sorry : Nat)}"\n')


def test_the_unmodified_tree_passes_the_scan(capsys):
    assert check.main(["--src", str(ROOT), "--scan-only"]) == 0
    assert "Lean source scan passed" in capsys.readouterr().out


def test_a_file_neither_compiled_nor_external_fails_the_check(tmp_path, capsys):
    """A planted escape: a file under Odp/Core without a `module` header, holding
    a new axiom and an unfinished proof, was neither compiled nor scanned."""
    root = copy_tree(tmp_path)
    (root / "Odp" / "Core" / "Bad.lean").write_text(
        "namespace Odp.Core\naxiom bad : False\ntheorem t : (1 : Nat) = 2 := sorry\nend Odp.Core\n",
        encoding="utf-8")
    assert check.main(["--src", str(root)]) == 1
    out = capsys.readouterr().out
    assert "FAIL Odp/Core/Bad.lean: not a `module` file and not on the external list" in out
    assert "ok   " not in out  # refused before anything was compiled


@pytest.mark.parametrize("imported,why", [
    ("OdpMathlib.Prob", "a checked module may import only Odp modules"),
    ("Odp.Nowhere", "which has no file"),
    ("Lean", "a checked module may import only Odp modules"),
    ("Std", "a checked module may import only Odp modules"),
    # the import of the attack: `public import` and the module name on two lines
    ("\n  Lean", "a checked module may import only Odp modules"),
])
def test_checked_modules_import_only_checked_modules(tmp_path, capsys, imported, why):
    root = copy_tree(tmp_path)
    plant(root, "Odp/Core/Sum.lean", "public import Odp.Core.Field", f"public import {imported}")
    assert check.main(["--src", str(root), "--scan-only"]) == 1
    line = next(l for l in capsys.readouterr().out.splitlines() if "FAIL Odp/Core/Sum.lean" in l)
    assert f"imports {imported.strip()}" in line and why in line


def test_the_statement_file_is_required(tmp_path, capsys):
    root = copy_tree(tmp_path)
    (root / "Odp" / "Core" / "Spec.lean").unlink()
    assert check.main(["--src", str(root), "--scan-only"]) == 1
    assert "FAIL Odp/Core/Spec.lean is missing" in capsys.readouterr().out


@pytest.mark.parametrize("rel", ["Odp/Mech/Spec.lean", "Odp/Certs/Spec.lean"])
def test_every_statement_file_is_required(tmp_path, capsys, rel):
    """Deleting a statement file fails the check, naming it (it used to pass)."""
    root = copy_tree(tmp_path)
    (root / rel).unlink()
    assert check.main(["--src", str(root), "--scan-only"]) == 1
    assert f"FAIL {rel} is missing" in capsys.readouterr().out


def test_a_symbolic_link_is_refused(tmp_path, capsys):
    root = copy_tree(tmp_path)
    (root / "Odp" / "Core" / "Extra.lean").symlink_to(root / "Odp" / "Core" / "Sum.lean")
    assert check.main(["--src", str(root), "--scan-only"]) == 1
    assert "FAIL Odp/Core/Extra.lean: a symbolic link" in capsys.readouterr().out


# --- the cache: ownership, mode, build records ------------------------------------------------

def test_a_fresh_cache_is_private(tmp_path, monkeypatch):
    cache = tmp_path / "a" / "cache"
    monkeypatch.setenv("ODP_LEAN_CACHE", str(cache))
    assert lt.cache_root() == cache
    assert (cache.stat().st_mode & 0o777) == 0o700
    assert ((tmp_path / "a").stat().st_mode & 0o777) == 0o700


@pytest.mark.parametrize("mode", [0o777, 0o775, 0o757])
def test_a_cache_others_can_write_is_refused(tmp_path, monkeypatch, mode):
    cache = tmp_path / "cache"
    cache.mkdir()
    cache.chmod(mode)
    monkeypatch.setenv("ODP_LEAN_CACHE", str(cache))
    with pytest.raises(lt.ToolchainError, match=re.escape(str(cache)) + r".*can be written by others"):
        lt.cache_root()


def test_a_cache_owned_by_another_user_is_refused(tmp_path, monkeypatch):
    if os.getuid() != 0:
        pytest.skip("needs root to give a directory to another uid")
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    os.chown(cache, 65534, 65534)
    monkeypatch.setenv("ODP_LEAN_CACHE", str(cache))
    with pytest.raises(lt.ToolchainError, match=re.escape(str(cache)) + " is owned by uid 65534"):
        lt.cache_root()


def test_a_cache_below_a_directory_others_can_write_is_refused(tmp_path, monkeypatch):
    parent = tmp_path / "shared"
    parent.mkdir()
    parent.chmod(0o777)  # not sticky: anyone could rename the cache away
    monkeypatch.setenv("ODP_LEAN_CACHE", str(parent / "cache"))
    with pytest.raises(lt.ToolchainError, match="above it, can be written by others"):
        lt.cache_root()


def test_a_foreign_symlink_as_cache_is_refused(tmp_path, monkeypatch):
    if os.getuid() != 0:
        pytest.skip("needs root to make a link owned by another uid")
    target = tmp_path / "target"
    target.mkdir(mode=0o700)
    link = tmp_path / "cache"
    link.symlink_to(target)
    os.chown(link, 65534, 65534, follow_symlinks=False)
    monkeypatch.setenv("ODP_LEAN_CACHE", str(link))
    with pytest.raises(lt.ToolchainError, match="symbolic link owned by uid 65534"):
        lt.cache_root()


def _certificate(tmp_path: Path) -> Path:
    acc = odp.Accountant("2", "1e-6", rng=odp.SeededRandom(3))
    acc.run(odp.ToyMechanism(len, epsilon="0.2"), [1, 2, 3])
    path = tmp_path / "run.cert"
    acc.certificate().write(path)
    return path


@pytest.mark.parametrize("owner", ["others can write", "another user"])
def test_odp_verify_kernel_refuses_an_unsafe_cache(tmp_path, monkeypatch, capsys, owner):
    """`odp verify --kernel` with ODP_LEAN_CACHE at a directory it must not trust: exit 2, the
    message names the directory and what is wrong, and nothing is written into it."""
    if owner == "another user" and os.getuid() != 0:
        pytest.skip("needs root to give a directory to another uid")
    cert = _certificate(tmp_path)
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    if owner == "another user":
        os.chown(cache, 65534, 65534)
    else:
        cache.chmod(0o777)
    monkeypatch.setenv("ODP_LEAN_CACHE", str(cache))
    code = cli_main(["verify", str(cert), "--kernel"])
    out = " ".join(capsys.readouterr().out.split())  # odp verify wraps lines at 100 columns
    assert code == 2
    assert f"refusing the Lean cache {cache}" in out
    assert ("owned by uid 65534" if owner == "another user" else "can be written by others") in out
    assert list(cache.iterdir()) == []


def test_build_records_catch_any_change(tmp_path):
    build = tmp_path / "b"
    (build / "Odp").mkdir(parents=True)
    (build / "Odp" / "X.olean").write_bytes(b"olean bytes")
    (build / "Odp" / "X.ir").write_bytes(b"ir")
    lt.write_stamp(build, "ab" * 32, module="Odp.X")
    assert lt.stamp_problem(build, "ab" * 32) is None
    assert lt.stamp_problem(build, "cd" * 32) == "built from other source bytes"
    (build / "Odp" / "X.olean").write_bytes(b"tampered")
    assert "Odp/X.olean differs" in lt.stamp_problem(build, "ab" * 32)
    (build / "Odp" / "X.olean").write_bytes(b"olean bytes")
    (build / "Odp" / "Y.olean").write_bytes(b"extra")
    assert "Odp/Y.olean was not part of the build" == lt.stamp_problem(build, "ab" * 32)
    (build / "Odp" / "Y.olean").unlink()
    (build / "Odp" / "X.ir").unlink()
    assert lt.stamp_problem(build, "ab" * 32) == "Odp/X.ir is missing"
    (build / lt.STAMP).unlink()
    assert lt.stamp_problem(build, "ab" * 32) == "no build record beside it"


def _build(path: Path) -> SimpleNamespace:
    """What ModuleCache reads of a run's build: its store and the files written into it."""
    path.mkdir(parents=True, exist_ok=True)
    digests = {p.relative_to(path).as_posix(): lt.sha256_file(p)
               for p in path.rglob("*") if p.is_file()}
    return SimpleNamespace(store=path, digests=digests)


def test_module_cache_reuses_only_identical_builds(tmp_path):
    cache = check.ModuleCache(tmp_path / "modules")
    build = tmp_path / "build"
    (build / "Odp" / "Core").mkdir(parents=True)
    for ext in ("olean", "olean.private", "ir"):
        (build / "Odp" / "Core" / f"Field.{ext}").write_bytes(f"field {ext}".encode())
    (build / "Odp" / "Core" / "Fields.olean").write_bytes(b"another module")
    key = "12" * 32
    cache.store("Odp.Core.Field", key, _build(build))
    entry = tmp_path / "modules" / key[:32]
    assert sorted(p.name for p in (entry / "Odp" / "Core").iterdir()) == [
        "Field.ir", "Field.olean", "Field.olean.private"]
    fresh = _build(tmp_path / "fresh")
    assert cache.fetch("Odp.Core.Field", key, fresh)
    assert (tmp_path / "fresh" / "Odp" / "Core" / "Field.olean").read_bytes() == b"field olean"
    assert set(fresh.digests) == {"Odp/Core/Field.olean", "Odp/Core/Field.olean.private",
                                  "Odp/Core/Field.ir"}
    assert not cache.fetch("Odp.Core.Field", "34" * 32, _build(tmp_path / "other"))
    (entry / "Odp" / "Core" / "Field.olean").write_bytes(b"tampered")
    assert not cache.fetch("Odp.Core.Field", key, _build(tmp_path / "again"))


def test_module_cache_keeps_the_recently_used_entries(tmp_path, monkeypatch):
    cache = check.ModuleCache(tmp_path / "modules")
    build = tmp_path / "build"
    (build / "Odp").mkdir(parents=True)
    keys = [f"{i:02d}" * 32 for i in range(3)]
    for i, key in enumerate(keys):
        (build / "Odp" / "M.olean").write_bytes(bytes([i]))
        cache.store("Odp.M", key, _build(build))
        os.utime(tmp_path / "modules" / key[:32] / lt.STAMP, (1000 + i, 1000 + i))
    monkeypatch.setattr(cache, "KEEP", 2)
    assert cache.fetch("Odp.M", keys[0], _build(tmp_path / "use"))  # the oldest, used again: kept
    (build / "Odp" / "M.olean").write_bytes(b"x")
    cache.store("Odp.M", "99" * 32, _build(build))
    left = sorted(p.name for p in (tmp_path / "modules").iterdir() if p.is_dir())
    assert left == sorted([keys[0][:32], ("99" * 32)[:32]])


def test_module_keys_follow_the_imports(tmp_path):
    root = copy_tree(tmp_path)
    mods = check.collect(root).modules
    keys = check.module_keys(mods, set(mods))
    plant(root, "Odp/Core/Lemmas.lean", "end Odp.Core", "-- a comment changes the bytes")
    keys2 = check.module_keys(check.collect(root).modules, set(mods))
    changed = {m for m in mods if keys[m] != keys2[m]}
    assert changed == {m for m in mods if "Odp.Core.Lemmas" in check.closure(mods, [m])}
    assert "Odp.Core.Field" not in changed and "Odp.Core.Spec" in changed


# --- toolchain download and unpacking ---------------------------------------------------------

def test_patch_is_exact():
    js = "a;" + lt._DLSYM_SLOW + "b;"
    patched = lt.patch_lean_js(js)
    assert lt._DLSYM_SLOW not in patched and lt._DLSYM_FAST in patched
    assert patched.startswith("a;") and patched.endswith("b;")
    with pytest.raises(lt.ToolchainError):
        lt.patch_lean_js("no such code")
    with pytest.raises(lt.ToolchainError):
        lt.patch_lean_js(lt._DLSYM_SLOW * 2)


def _tgz(files: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def test_unpacking_skips_macos_and_escaping_entries(tmp_path):
    data = _tgz({"package/lean.js": b"js", "package/._lean.js": b"junk",
                 "package/lib/._Init.olean": b"junk", "package/lib/Init.olean": b"olean",
                 "package/../../evil": b"x", "other/x": b"y"})
    lt._extract(data, "package/", tmp_path / "out", strip=1)
    files = sorted(str(p.relative_to(tmp_path / "out")) for p in (tmp_path / "out").rglob("*") if p.is_file())
    assert files == ["lean.js", "lib/Init.olean"]
    assert not (tmp_path / "evil").exists()


class _Registry(http.server.BaseHTTPRequestHandler):
    payload = b""

    def do_GET(self):  # noqa: N802 (http.server API)
        self.send_response(200)
        self.send_header("Content-Length", str(len(self.payload)))
        self.end_headers()
        self.wfile.write(self.payload)

    def log_message(self, *args):
        pass


@pytest.fixture
def registry(monkeypatch):
    server = http.server.HTTPServer(("127.0.0.1", 0), _Registry)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setenv("ODP_NPM_REGISTRY", f"http://127.0.0.1:{server.server_port}")
    yield _Registry
    server.shutdown()


def test_download_checks_the_pinned_integrity(registry):
    registry.payload = b"a tarball"
    good = "sha512-" + base64.b64encode(hashlib.sha512(b"a tarball").digest()).decode()
    assert lt._download("pkg", "1.0.0", good, lambda s: None) == b"a tarball"
    registry.payload = b"a tampered tarball"
    with pytest.raises(lt.ToolchainError, match="integrity mismatch"):
        lt._download("pkg", "1.0.0", good, lambda s: None)


def test_a_tampered_package_is_never_installed(registry, tmp_path, monkeypatch):
    """ensure_toolchain with a registry that serves the wrong bytes: an error, and no toolchain
    marked ready in the cache."""
    monkeypatch.setenv("ODP_LEAN_CACHE", str(tmp_path / "cache"))
    registry.payload = _tgz({"package/lean.js": b"x"})
    try:
        with pytest.raises(lt.ToolchainError, match="integrity mismatch"):
            lt.ensure_toolchain(say=lambda s: None)
        assert not (lt.toolchain_dir() / "READY").exists()
    finally:
        shutil.rmtree(lt.cache_root(), ignore_errors=True)


def test_cache_must_be_visible_to_the_webassembly_lean(monkeypatch):
    monkeypatch.setenv("ODP_LEAN_CACHE", "/var/lib/odp")
    with pytest.raises(lt.ToolchainError, match="/tmp or /home"):
        lt.cache_root()


def test_diagnostics_are_parsed_from_lean_output():
    out = ("/tmp/x/F.lean:3:8: warning: declaration uses `sorry`\n"
           "/tmp/x/F.lean:5:2: error: unsolved goals\n⊢ False\nAUDIT-OK\n")
    diags = lt.parse_diagnostics(out, Path("/tmp/x/F.lean"))
    assert [(d.line, d.severity) for d in diags] == [(3, "warning"), (5, "error")]
    assert diags[1].text.endswith("⊢ False")
    stdout = "[DEBUG:F] content: module\npublic import X\n[DEBUG:G] Now calling lean_shell_main...\nreal output\n[DEBUG:N] x\n"
    assert lt.lean_output(stdout) == "real output"


def test_the_lake_branch_matches_the_unfinished_proof_warning_of_both_quote_styles():
    """scripts/check_lean.sh (lake branch) fails the build on Lean's warning for an unfinished
    proof: Lean 4.28+ prints it with backticks, older versions with straight quotes."""
    import subprocess

    script = (ROOT / "scripts" / "check_lean.sh").read_text(encoding="utf-8")
    assignment = re.search(r'^unfinished=".*"$', script, re.M).group(0)
    pattern = subprocess.run(["bash", "-c", assignment + '; printf %s "$unfinished"'],
                             capture_output=True, text=True, check=True).stdout
    for line, hit in [("Odp/X.lean:3:8: warning: declaration uses `sorry`", True),
                      ("Odp/X.lean:3:8: warning: declaration uses 'sorry'", True),
                      ("Odp/X.lean:3:8: warning: unused variable `sorry_count`", False)]:
        res = subprocess.run(["grep", "-E", pattern], input=line, text=True, capture_output=True)
        assert (res.returncode == 0) == hit, (pattern, line)

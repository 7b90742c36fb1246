"""Shared pytest configuration.

mpmath's working precision is global state.  Tests that compute high-precision references set
it; without isolation the precision a test runs at would depend on which tests ran before it.
Every test therefore starts at its module's ``MPMATH_DPS`` (default 50 significant digits), may
change it freely, and has it restored afterwards.
"""

from __future__ import annotations

import os as _os
import subprocess
from pathlib import Path as _Path

import pytest

DEFAULT_MPMATH_DPS = 50


@pytest.fixture(autouse=True)
def _isolated_mpmath_precision(request):
    try:
        import mpmath
    except ImportError:  # pragma: no cover - mpmath is in the test extra
        yield
        return
    saved = mpmath.mp.dps
    mpmath.mp.dps = getattr(request.module, "MPMATH_DPS", DEFAULT_MPMATH_DPS)
    try:
        yield
    finally:
        mpmath.mp.dps = saved


# ---------------------------------------------------------------------------- ledger backends
# The ledger contract runs on every backend: a SQLite file, and a real PostgreSQL server that
# the test session starts itself (tests/pg_server.py).  Where the server cannot be started the
# PostgreSQL cases skip, loudly (see pytest_terminal_summary) — unless ODP_REQUIRE_POSTGRES=1
# (CI), where they fail instead.

_PG_SKIPS: list[str] = []


@pytest.fixture(scope="session")
def pg_server():
    from pg_server import REQUIRE_ENV, PgServer, PgUnavailable

    required = _os.environ.get(REQUIRE_ENV) == "1"
    try:
        import psycopg  # noqa: F401
    except ImportError:
        reason = "psycopg is not installed (pip install 'odp[postgres]')"
        if required:
            pytest.fail(f"{REQUIRE_ENV}=1 but {reason}")
        _PG_SKIPS.append(reason)
        pytest.skip(f"POSTGRESQL TESTS NOT RUN: {reason}")
    server = PgServer()
    try:
        server.start()
    except (PgUnavailable, OSError, subprocess.SubprocessError) as exc:
        reason = f"PostgreSQL could not be started: {exc}"
        if required:
            pytest.fail(f"{REQUIRE_ENV}=1 but {reason}")
        _PG_SKIPS.append(reason)
        pytest.skip(f"POSTGRESQL TESTS NOT RUN: {reason} (set {REQUIRE_ENV}=1 to fail instead)")
    _PG_RUNNING.append(server)
    try:
        yield server
    finally:
        _PG_RUNNING.remove(server)
        server.stop()


_PG_RUNNING: list = []  # the session's server while it runs


@pytest.fixture(autouse=True)
def _drop_the_tests_databases():
    """Every test's PostgreSQL databases are dropped when it ends (see PgServer.drop_databases:
    a server full of old databases makes each later checkpoint, restart and the final cleanup
    slow).  Autouse fixtures are set up first, so this runs after the test's own teardown."""
    yield
    for server in _PG_RUNNING:
        if server.databases:
            server.drop_databases()


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if _PG_SKIPS:
        terminalreporter.write_sep("!", "PostgreSQL ledger tests were SKIPPED", red=True)
        terminalreporter.write_line(f"reason: {_PG_SKIPS[0]}")
        terminalreporter.write_line("the PostgreSQL backend is untested in this run; set "
                                    "ODP_REQUIRE_POSTGRES=1 to make this a failure")


class LedgerBackend:
    """Make, open, dump and edit ledgers of one backend the same way in every test."""

    def __init__(self, name: str, tmp_path: _Path, server=None):
        self.name = name
        self.tmp_path = tmp_path
        self.server = server
        self._n = 0

    def __repr__(self) -> str:
        return self.name

    def create(self, epsilon="1", delta="0", **kwargs) -> str:
        """A new ledger with the budget (ε, δ); returns what ``Accountant(ledger=…)`` takes."""
        import odp
        from odp.ledger import SQLiteLedger, init_postgres_ledger

        self._n += 1
        budget = odp.Budget(epsilon, delta)
        if self.name == "sqlite":
            path = str(self.tmp_path / f"ledger{self._n}.db")
            SQLiteLedger(path, budget, **kwargs).close()
            return path
        url = self.server.new_database()
        init_postgres_ledger(url, budget, **kwargs)
        return url

    def open(self, spec: str, **kwargs):
        from odp.ledger import PostgresLedger, SQLiteLedger

        cls = SQLiteLedger if self.name == "sqlite" else PostgresLedger
        return cls(spec, **kwargs)

    def dump(self, spec: str) -> bytes:
        """Everything the ledger stores, byte for byte (SQLite: the files; PostgreSQL: every
        row of its tables)."""
        if self.name == "sqlite":
            out = b""
            for suffix in ("", "-wal", ".head"):
                p = _Path(spec + suffix)
                out += suffix.encode() + b"\0" + (p.read_bytes() if p.exists() else b"")
            return out
        import psycopg

        with psycopg.connect(spec) as conn:
            rows = [conn.execute(f"SELECT * FROM {t} ORDER BY 1").fetchall()
                    for t in ("odp_schema", "odp_meta", "odp_events")]
        return repr(rows).encode()

    def sql(self, spec: str, statement: str):
        """Run one statement on the ledger's database directly (as an operator would)."""
        if self.name == "sqlite":
            import sqlite3

            conn = sqlite3.connect(spec, isolation_level=None)
            try:
                return conn.execute(statement).fetchall()
            finally:
                conn.close()
        import psycopg

        with psycopg.connect(spec, autocommit=True) as conn:
            cur = conn.execute(statement)
            return cur.fetchall() if cur.description else None

    @property
    def db_error(self):
        if self.name == "sqlite":
            import sqlite3

            return sqlite3.DatabaseError
        import psycopg

        return psycopg.Error

    def table(self, name: str) -> str:
        return name if self.name == "sqlite" else f"odp_{name}"


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request, tmp_path):
    server = request.getfixturevalue("pg_server") if request.param == "postgres" else None
    return LedgerBackend(request.param, tmp_path, server)


# ------------------------------------------------------------------------- test selection
# The default run (``python -m pytest``; pyproject.toml's addopts ``-m "not slow"``) leaves out
# the slow and heavy tests; ``python -m pytest -m slow`` runs exactly those, and .ci/run runs
# both.  Every test that needs the Lean toolchain (the ``toolchain`` fixture of
# tests/lean_support.py: the WebAssembly Lean under Node, minutes of CPU and gigabytes of memory
# per test) is marked ``lean`` and ``slow`` here, so a new Lean test cannot land in the default
# run by accident (tests/test_test_selection.py checks it).  ``tryfirst``: the marks must be on
# the items before ``-m`` deselects.

LEAN_FIXTURE = "toolchain"


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    for item in items:
        if LEAN_FIXTURE in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.lean)
            item.add_marker(pytest.mark.slow)

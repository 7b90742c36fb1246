"""The PostgreSQL ledger against a real server started by the tests (conftest.py ``pg_server``):
what is specific to a server — the same certificate as SQLite byte for byte, explicit
creation, foreign tables, migrations, credentials, server restarts and lost connections,
edits made with plain SQL.  The shared contract is in test_ledger_contract.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from fractions import Fraction
from pathlib import Path

import pytest

import odp
from odp.certs import verify
from odp.certs.trust import Trust, assess
from odp.errors import LedgerCorrupted, LedgerError, LedgerUnavailable
from odp.ledger import (
    PostgresLedger,
    SQLiteLedger,
    init_postgres_ledger,
    pg_schema,
    postgres,
    upgrade_postgres_ledger,
)
from odp.ledger.chain import ChainVerifier, EventRow, Genesis, write_key

psycopg = pytest.importorskip("psycopg")

SRC = str(Path(__file__).resolve().parents[1] / "python")


@pytest.fixture
def url(pg_server):
    return pg_server.new_database()


def _sql(url: str, *statements: str):
    with psycopg.connect(url, autocommit=True) as conn:
        out = None
        for statement in statements:
            cur = conn.execute(statement)
            out = cur.fetchall() if cur.description else None
        return out


def _tamper(url: str, *statements: str) -> None:
    """Edit with plain SQL as the database owner would: the append-only triggers disabled
    around the edit and enabled again (only the edit itself remains)."""
    _sql(url, "ALTER TABLE odp_events DISABLE TRIGGER USER",
         "ALTER TABLE odp_meta DISABLE TRIGGER USER", *statements,
         "ALTER TABLE odp_events ENABLE TRIGGER USER", "ALTER TABLE odp_meta ENABLE TRIGGER USER")


def _python(code: str, *args: str) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code), *args], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


# ------------------------------------------------------------------ same run, same certificate
def _deterministic_run(ledger, monkeypatch) -> odp.Accountant:
    ids = iter(f"round-{i:04d}" for i in range(1000))
    monkeypatch.setattr("odp.accountant._round_id", lambda: next(ids))
    acc = odp.Accountant(ledger=ledger)
    acc.charge(odp.DP("1/10", "1e-7"))
    g = odp.ODP(lambda r: "low" if r < 5 else "high", {"low": "1/20", "high": "3/10"})
    with acc.reserve(g, mechanism="mine", params={"k": 3}) as res:
        res.settle(2)
    acc.reserve(g).abort()
    reservations = acc.reserve_many([g, odp.DP("1/7")])
    acc.settle_many([(reservations[0], 9), (reservations[1], None)])
    acc.charge_many([odp.DP("1/1000")] * 3 + [(g, 1)])
    return acc


def test_a_postgres_run_gives_the_sqlite_certificate_byte_for_byte(url, tmp_path, monkeypatch):
    """The same calls with the same ledger id, clock and round ids give the same rows, the
    same hashes and the same certificate on both backends.  Only the sidecar's ``created``
    (the wall-clock time of the export, not part of the run) may differ; it is compared
    apart."""
    ticks = iter(1_800_000_000 + i / 8 for i in range(10_000))  # exact binary fractions
    clock = lambda: next(ticks)  # noqa: E731
    budget = odp.Budget(2, "1e-6")
    lite = SQLiteLedger._open(tmp_path / "l.db", budget, clock=clock, ledger_id="a" * 32)
    a = _deterministic_run(lite, monkeypatch)
    ticks = iter(1_800_000_000 + i / 8 for i in range(10_000))
    postgres._init_ledger(url, budget, ledger_id="a" * 32)
    b = _deterministic_run(PostgresLedger._open(url, clock=lambda: next(ticks)), monkeypatch)
    assert a.ledger.events() == b.ledger.events()
    assert a.ledger.chain_head == b.ledger.chain_head and a.remaining == b.remaining
    ca, cb = a.certificate(), b.certificate()
    assert ca.text == cb.text
    sa, sb = dict(ca.sidecar), dict(cb.sidecar)
    assert sa.pop("created")[:4] == sb.pop("created")[:4]
    assert json.dumps(sa, sort_keys=True) == json.dumps(sb, sort_keys=True)
    pa, pb = ca.write(tmp_path / "a.cert"), cb.write(tmp_path / "b.cert")
    assert pa[0].read_bytes() == pb[0].read_bytes()
    assert verify(cb.text, cb.sidecar).ok
    head = cb.sidecar["ledger"]["head"]
    report = assess(cb.text, cb.sidecar, Trust(expect_head=(head["rows"], head["head"])), 8)
    assert report.failure is None
    b.ledger.close()
    tampered = dict(cb.sidecar, budget={"epsilon": "3", "delta": "1/1000000"})
    assert assess(cb.text, tampered, Trust(), 8).failure is not None  # a wrong claim fails


# ------------------------------------------------------------------ creating, schema, migrations
def test_ledgers_are_created_only_by_init(url):
    with pytest.raises(LedgerError, match="holds no odp ledger.*odp ledger init"):
        odp.Accountant(1, ledger=url)
    assert _sql(url, "SELECT count(*) FROM pg_class WHERE relname LIKE 'odp%'") == [(0,)]
    init_postgres_ledger(url, odp.Budget(1))
    with pytest.raises(LedgerError, match="already holds an odp ledger"):
        init_postgres_ledger(url, odp.Budget(1))
    with pytest.raises(LedgerError, match=r"holds the budget Budget\(epsilon=1"):
        odp.Accountant(2, ledger=url)
    with odp.Accountant(1, ledger=url) as acc:
        assert acc.remaining.epsilon == 1


def test_foreign_tables_of_the_same_names_are_refused_and_untouched(url):
    _sql(url, "CREATE TABLE odp_events (id serial PRIMARY KEY, payload text)",
         "INSERT INTO odp_events (payload) VALUES ('theirs')")
    with pytest.raises(LedgerError, match="not an odp ledger.*odp_events"):
        init_postgres_ledger(url, odp.Budget(1))
    with pytest.raises(LedgerError, match="not an odp ledger"):
        odp.Accountant(ledger=url)
    assert _sql(url, "SELECT * FROM odp_events") == [(1, "theirs")]
    assert _sql(url, "SELECT count(*) FROM pg_class WHERE relname = 'odp_meta'") == [(0,)]
    # A ledger in another schema of the same database, chosen by the URL's search_path.
    _sql(url, "CREATE SCHEMA team_a")
    other = url + "?options=-csearch_path%3Dteam_a"
    init_postgres_ledger(other, odp.Budget("1/2"))
    with odp.Accountant(ledger=other) as acc:
        acc.charge(odp.DP("1/4"))
        assert acc.remaining.epsilon == Fraction(1, 4)


def test_the_server_refuses_non_exact_amounts_and_truncate(url):
    init_postgres_ledger(url, odp.Budget(1))
    with odp.Accountant(ledger=url) as acc:
        acc.charge(odp.DP("0.1"))
    row = ("3, 'settle', 'x', NULL, NULL, NULL, NULL, NULL, NULL, '\"all\"', '0.1', "
           "'released', NULL, 0, 'p', 'h', NULL")
    with pytest.raises(psycopg.errors.CheckViolation, match="odp_events_exact_amounts"):
        _sql(url, f"INSERT INTO odp_events VALUES ({row})")
    with pytest.raises(psycopg.Error, match="append-only"):
        _sql(url, "TRUNCATE odp_events")


def test_newer_versions_are_refused_and_version_1_upgrades(url, pg_server):
    # A version-1 ledger: only the first migration applied.
    with psycopg.connect(url, autocommit=True) as conn:
        for statement in pg_schema.MIGRATIONS[0]:
            conn.execute(statement)
        conn.execute("INSERT INTO odp_schema VALUES (1, 0)")
        genesis = Genesis("b" * 32, Fraction(1), Fraction(0))
        for k, v in [("epsilon", "1"), ("delta", "0"), ("ledger_id", genesis.ledger_id),
                     ("created", "0.0"), ("chain_version", "1"), ("genesis_hash", genesis.hash)]:
            conn.execute("INSERT INTO odp_meta VALUES (%s, %s)", (k, v))
    with pytest.raises(LedgerError, match=r"version-1 ledger.*odp ledger upgrade"):
        odp.Accountant(ledger=url)
    ro = PostgresLedger(url, readonly=True)
    assert ro.schema_version == 1 and ro.remaining.epsilon == 1
    ro.close()
    assert upgrade_postgres_ledger(url) == (1, pg_schema.SCHEMA_VERSION)
    assert upgrade_postgres_ledger(url) == (2, 2)  # idempotent
    fresh = pg_server.new_database()
    init_postgres_ledger(fresh, odp.Budget(1))
    described = []
    for u in (url, fresh):
        with psycopg.connect(u) as conn:
            ns, _ = pg_schema.namespace(conn)
            described.append(pg_schema.describe(conn, ns))
    assert described[0] == described[1] == pg_schema.expected(pg_schema.SCHEMA_VERSION)
    with odp.Accountant(ledger=url) as acc:
        acc.charge(odp.DP("0.5"))
        assert acc.ledger.schema_version == 2
    _sql(url, "INSERT INTO odp_schema VALUES (3, 0)")
    with pytest.raises(LedgerError, match="version 3.*upgrade odp"):
        odp.Accountant(ledger=url)


# ------------------------------------------------------------------ edits made with plain SQL
def test_edits_with_plain_sql_are_caught(url, pg_server):
    init_postgres_ledger(url, odp.Budget(1))
    with odp.Accountant(ledger=url) as acc:
        for eps in ("0.1", "0.2", "0.05"):
            acc.charge(odp.DP(eps))
    _tamper(url, "UPDATE odp_events SET charged = '0' WHERE seq = 4")
    with pytest.raises(LedgerCorrupted, match=r"row 4: its values do not match its hash"):
        odp.Accountant(ledger=url)
    _tamper(url, "UPDATE odp_events SET charged = '1/5' WHERE seq = 4")
    odp.Accountant(ledger=url).close()  # restored: opens again
    _sql(url, "ALTER TABLE odp_events DISABLE TRIGGER odp_events_append_only")
    with pytest.raises(LedgerCorrupted, match="trigger odp_events_append_only was altered"):
        odp.Accountant(ledger=url)
    _sql(url, "ALTER TABLE odp_events ENABLE TRIGGER odp_events_append_only",
         "CREATE INDEX sneaky ON odp_events (owner)")
    with pytest.raises(LedgerCorrupted, match="unexpected schema objects index sneaky"):
        odp.Accountant(ledger=url)
    _sql(url, "DROP INDEX sneaky")
    _tamper(url, "DELETE FROM odp_events WHERE seq = 3")
    with pytest.raises(LedgerCorrupted, match=r"row 4: row 3 is missing"):
        odp.Accountant(ledger=url)
    fresh = pg_server.new_database()
    init_postgres_ledger(fresh, odp.Budget(1))
    _tamper(fresh, "UPDATE odp_meta SET value = '1000' WHERE key = 'epsilon'")
    with pytest.raises(LedgerCorrupted, match="recorded budget or identity was edited"):
        odp.Accountant(ledger=fresh)


def test_rows_lost_on_the_server_are_noticed_by_a_live_client(url):
    """The server's durability replaces the head file; a client that verified rows notices
    when the server no longer has them (a failover to a lagging replica, a restored backup)."""
    init_postgres_ledger(url, odp.Budget(1))
    acc = odp.Accountant(ledger=url)
    for _ in range(3):
        acc.charge(odp.DP("0.1"))
    _tamper(url, "DELETE FROM odp_events WHERE seq >= 5")
    with pytest.raises(LedgerCorrupted, match="row 6, which this process had verified, is gone"):
        acc.charge(odp.DP("0.1"))
    acc.close()


def test_a_keyed_postgres_ledger_needs_its_key(url, tmp_path):
    key = tmp_path / "k"
    write_key(key)
    init_postgres_ledger(url, odp.Budget(1), key_file=key)
    with pytest.raises(LedgerError, match="is keyed"):
        odp.Accountant(ledger=url)
    with odp.Accountant(ledger=PostgresLedger(url, key_file=key)) as acc:
        acc.charge(odp.DP("0.1"))
        assert acc.ledger.mac_checked
    rows = _sql(url, "SELECT seq, kind, round_id, mechanism, params, guarantee, sup_epsilon, "
                     "delta, interactive, label, charged, reason, owner, created FROM odp_events "
                     "ORDER BY seq")
    genesis = PostgresLedger(url, readonly=True).genesis
    verifier = ChainVerifier(genesis)
    for stored in rows:  # rewrite the chain consistently, without the key
        stored = list(stored)
        if stored[1] == "settle":
            stored[10] = "0"
        row = EventRow.from_stored(stored)
        prev = verifier.state.head
        digest = verifier.check(row, None, None)
        charged = f"charged = '{stored[10]}', " if stored[1] == "settle" else ""
        _tamper(url, f"UPDATE odp_events SET {charged}prev_hash = '{prev}', "
                     f"row_hash = '{digest}' WHERE seq = {row.seq}")
    with pytest.raises(LedgerCorrupted, match="HMAC tag does not verify"):
        PostgresLedger(url, key_file=key)


# ------------------------------------------------------------------ credentials
def test_credentials_never_appear_in_messages(url, pg_server, monkeypatch, capsys):
    from odp.cli import main

    init_postgres_ledger(url, odp.Budget(1))
    wrong = url.replace(pg_server.password, "Wr0ngSecret")
    with pytest.raises(LedgerUnavailable) as err:
        odp.Accountant(ledger=wrong)
    assert "Wr0ngSecret" not in str(err.value) and "password authentication failed" in \
        str(err.value)
    with PostgresLedger(url) as ledger:
        assert pg_server.password not in repr(ledger) and pg_server.password not in ledger._where
        with pytest.raises(odp.BudgetExceeded) as over:
            odp.Accountant(ledger=ledger).charge(odp.DP(2))
        assert pg_server.password not in str(over.value)
    _tamper(url, "UPDATE odp_meta SET value = '7' WHERE key = 'epsilon'")
    with pytest.raises(LedgerCorrupted) as bad:
        odp.Accountant(ledger=url)
    assert pg_server.password not in str(bad.value) and "odp@127.0.0.1" in str(bad.value)
    assert main(["ledger", "show", url]) == 2
    captured = capsys.readouterr()
    assert pg_server.password not in captured.out + captured.err and "genesis" in captured.err
    # the password from libpq's environment, not the URL
    fresh = pg_server.new_database()
    init_postgres_ledger(fresh, odp.Budget(1))
    monkeypatch.setenv("PGPASSWORD", pg_server.password)
    bare = fresh.replace(f":{pg_server.password}@", "@")
    assert pg_server.password not in bare
    with odp.Accountant(ledger=bare) as acc:
        acc.charge(odp.DP("0.5"))
    monkeypatch.setenv("PGPASSWORD", "Wr0ngSecret")
    with pytest.raises(LedgerUnavailable) as err:
        odp.Accountant(ledger=bare)
    assert "Wr0ngSecret" not in str(err.value)


# ------------------------------------------------------------------ server restarts, lost connections
def test_connection_loss_mid_round_keeps_the_round_reserved(url, pg_server):
    init_postgres_ledger(url, odp.Budget(1))
    acc = odp.Accountant(ledger=url)
    g = odp.ODP(lambda r: r, {"cheap": "0.1", "dear": "0.4"})
    res = acc.reserve(g)
    pg_server.pause()
    try:
        with pytest.raises(LedgerUnavailable, match=rf"round {res.round_id} stays reserved, "
                                                    r"held at its sup ε=2/5.*reconnects"):
            res.settle("cheap")
        assert res.open
    finally:
        pg_server.resume()
    rec = res.settle("cheap")  # the next call reconnects
    assert rec.charged == Fraction(1, 10) and acc.remaining.epsilon == Fraction(9, 10)
    acc.close()


def test_a_server_restart_mid_run_keeps_the_budget_exact(url, pg_server):
    """``pg_ctl restart`` while a client charges: every call either succeeds (reconnecting),
    or fails with LedgerUnavailable saying so; the ledger holds exactly the rounds it
    recorded, each charged 1/1000, and verifies."""
    init_postgres_ledger(url, odp.Budget(1))
    worker = _python(
        """
        import sys, time, odp
        from odp.errors import LedgerUnavailable
        acc = odp.Accountant(ledger=sys.argv[1])
        ok = lost = 0
        deadline = time.monotonic() + 60
        while ok < 600 and time.monotonic() < deadline:
            if ok == 20 and lost == 0:
                print("running", flush=True)
            try:
                acc.charge(odp.DP("1/1000"))
                ok += 1
            except LedgerUnavailable as exc:
                lost += 1
                print("LOST", exc, file=sys.stderr, flush=True)
                time.sleep(0.05)
        print(ok, lost, flush=True)
        """, url)
    assert worker.stdout.readline().strip() == "running"
    pg_server.restart()
    out, err = worker.communicate(timeout=300)
    assert worker.returncode == 0, err
    ok, lost = map(int, out.split())
    assert all("reconnects" in line for line in err.splitlines() if line.startswith("LOST"))
    with odp.Accountant(ledger=url) as acc:  # opening verifies the whole chain
        rounds = acc.history
        assert all(r.status == "settled" and r.charged == Fraction(1, 1000) for r in rounds)
        assert ok <= len(rounds) <= ok + lost
        assert acc.spent.epsilon == Fraction(len(rounds), 1000)
        assert ok == 600  # the restart cost at most a few failed calls, not the run


def test_the_cli_reads_postgres_ledgers(url, tmp_path, capsys):
    from odp.cli import main

    assert main(["ledger", "init", url, "--epsilon", "1", "--delta", "1e-6"]) == 0
    assert "created" in capsys.readouterr().out
    assert main(["ledger", "init", url, "--epsilon", "1"]) == 2
    assert "already holds" in capsys.readouterr().err
    with odp.Accountant(ledger=url) as acc:
        acc.charge(odp.DP("0.25"))
    assert main(["ledger", "show", url]) == 0
    out = capsys.readouterr().out
    assert "remaining  ε=0.75" in out and "2 rows verified" in out
    assert main(["ledger", "verify", url, "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["ok"] and info["rows"] == 2
    cert = tmp_path / "run.cert"
    assert main(["certify", url, "-o", str(cert)]) == 0
    capsys.readouterr()
    assert main(["verify", str(cert), "--ledger", url]) == 0
    assert "holds this history" in capsys.readouterr().out
    assert main(["ledger", "upgrade", url]) == 0
    assert "already at version" in capsys.readouterr().out
    assert main(["ledger", "reanchor", url]) == 2
    assert "no head file" in capsys.readouterr().err
    assert main(["ledger", "restore", url]) == 2
    assert "nothing to restore" in capsys.readouterr().err


def test_the_readme_sharing_commands_work_as_written(url, tmp_path, monkeypatch, capsys):
    """README "Sharing a budget across machines": its `odp ledger init` line and its Python
    lines, with the example URL replaced by the test server's."""
    import re
    import shlex

    from odp.cli import main

    root = Path(__file__).resolve().parents[1]
    text = (root / "README.md").read_text()
    section = text.split("## Sharing a budget across machines", 1)[1].split("\n## ", 1)[0]
    example = re.search(r"postgresql://\S+?(?=[\s\"'])", section).group(0)
    init = next(line for line in section.splitlines() if line.startswith("odp ledger init"))
    args = shlex.split(init.split("#")[0].replace(example, url))[1:]
    assert main(args) == 0
    block = re.search(r"```python\n(.*?)```", section, re.S).group(1).replace(example, url)
    namespace: dict = {"odp": odp}
    exec(compile(block, "README.md", "exec"), namespace)  # noqa: S102 - our own README
    assert namespace["acc"].spent.epsilon == Fraction(1, 100)
    namespace["acc"].close()
    monkeypatch.chdir(tmp_path)
    commands = re.findall(r"`(odp (?:ledger|certify)[^`]*URL[^`]*)`", section)
    assert commands
    for command in commands:
        variants = ([command.replace("show|verify", "show"), command.replace("show|verify",
                                                                             "verify")]
                    if "show|verify" in command else [command])
        for variant in variants:
            assert main(shlex.split(variant.replace("URL", url))[1:]) == 0, variant
    assert (tmp_path / "run.cert").exists()
    capsys.readouterr()


def test_a_role_with_only_the_documented_grants_can_charge_but_not_edit(url, pg_server):
    init_postgres_ledger(url, odp.Budget(1))
    db = url.rsplit("/", 1)[1]
    _sql(url, "DROP ROLE IF EXISTS analyst",
         "CREATE ROLE analyst LOGIN PASSWORD 'analyst-pw'",
         f'GRANT CONNECT ON DATABASE "{db}" TO analyst', "GRANT USAGE ON SCHEMA public TO analyst",
         "GRANT SELECT, INSERT ON odp_events TO analyst",
         "GRANT SELECT, UPDATE ON odp_meta TO analyst", "GRANT SELECT ON odp_schema TO analyst")
    analyst = f"postgresql://analyst:analyst-pw@127.0.0.1:{pg_server.port}/{db}"
    with odp.Accountant(ledger=analyst) as acc:
        acc.charge(odp.DP("0.25"))
        with acc.reserve(odp.DP("0.25")) as res:
            res.settle(None)
        assert acc.remaining.epsilon == Fraction(1, 2)
    for statement in ("DELETE FROM odp_events", "ALTER TABLE odp_events DISABLE TRIGGER USER",
                      "UPDATE odp_meta SET value = '9' WHERE key = 'epsilon'"):
        with pytest.raises(psycopg.Error, match="permission denied|must be owner|append-only"):
            _sql(analyst, statement)
    assert PostgresLedger(url, readonly=True).remaining.epsilon == Fraction(1, 2)


@pytest.mark.slow
def test_without_a_server_the_tests_skip_loudly_or_fail_when_required(tmp_path):
    """No PostgreSQL binaries: the PostgreSQL cases skip with a banner — and fail under
    ODP_REQUIRE_POSTGRES=1, as CI sets it."""
    root = Path(__file__).resolve().parents[1]
    env = dict(os.environ, ODP_PG_BINDIR=str(tmp_path / "none"), PYTHONPATH=SRC)
    env.pop("ODP_REQUIRE_POSTGRES", None)
    argv = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-o", "addopts=", "-q",
            "-rs", "tests/test_ledger_contract.py::test_readonly_open_writes_nothing"]
    run = subprocess.run(argv, cwd=root, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-2000:]
    assert "PostgreSQL ledger tests were SKIPPED" in run.stdout
    assert "POSTGRESQL TESTS NOT RUN" in run.stdout and "1 passed, 1 skipped" in run.stdout
    env["ODP_REQUIRE_POSTGRES"] = "1"
    run = subprocess.run(argv, cwd=root, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 1 and "ODP_REQUIRE_POSTGRES=1 but PostgreSQL could not be " \
                                   "started" in run.stdout, run.stdout[-2000:]


def test_settles_commit_asynchronously_reservations_and_charges_durably(url):
    """Reservations and a-posteriori charges wait for the server's WAL flush; settles run with
    synchronous_commit = off (a lost settle leaves its round reserved, recovered at its sup).
    Observed through a logging cursor on the ledger's own connection."""
    import psycopg

    init_postgres_ledger(url, odp.Budget(1))
    acc = odp.Accountant(ledger=url)
    assert acc.remaining.epsilon == 1  # connected
    sent: list[str] = []

    class LoggingCursor(psycopg.ClientCursor):
        def execute(self, query, params=None, **kwargs):
            sent.append(str(query))
            return super().execute(query, params, **kwargs)

    acc.ledger._conn.cursor_factory = LoggingCursor
    g = odp.ODP(lambda r: r, {"cheap": "0.1", "dear": "0.4"})
    res = acc.reserve(g)
    reserve_sql, sent[:] = list(sent), []
    res.settle("cheap")
    settle_sql, sent[:] = list(sent), []
    acc.charge(odp.DP("0.1"))
    charge_sql = list(sent)
    asynchronous = "SET LOCAL synchronous_commit = off"
    assert any(asynchronous in q for q in settle_sql)
    assert reserve_sql and charge_sql
    assert not any(asynchronous in q for q in reserve_sql + charge_sql)
    assert acc.spent.epsilon == Fraction(1, 5)
    acc.close()
    with PostgresLedger(url) as again:  # a new connection sees the settled round
        assert again.spent.epsilon == Fraction(1, 5)

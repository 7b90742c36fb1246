"""A throwaway PostgreSQL server for the tests and the benchmark (no mocks).

:class:`PgServer` runs ``initdb`` into a fresh temporary directory and ``pg_ctl start`` on a
free loopback port with its Unix socket in that directory; ``stop()`` (also on a failed start)
stops the server and removes the directory.  Run as root, the server runs as the ``postgres``
user (``runuser -u postgres``), as PostgreSQL refuses to run as root.  The binaries are found on
``$ODP_PG_BINDIR``, else on ``PATH`` or in ``/usr/lib/postgresql/*/bin`` (Debian's
``postgresql`` package).

Connections over TCP need a password (SCRAM); the superuser is ``odp`` with a random password,
so the tests also exercise real credentials.  ``PgServer.url(db)`` is a ``postgresql://`` URL.
"""

from __future__ import annotations

import glob
import os
import secrets
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

REQUIRE_ENV = "ODP_REQUIRE_POSTGRES"


class PgUnavailable(RuntimeError):
    """The server could not be started here (binaries missing, no postgres user, …)."""


BINDIR_ENV = "ODP_PG_BINDIR"  # a directory with initdb and pg_ctl, to pick a PostgreSQL version


def _binary(name: str) -> str:
    bindir = os.environ.get(BINDIR_ENV)
    if bindir:
        path = Path(bindir) / name
        if not path.exists():
            raise PgUnavailable(f"${BINDIR_ENV}={bindir} has no {name}")
        return str(path)
    found = shutil.which(name)
    if found:
        return found
    for candidate in sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), reverse=True):
        return candidate
    raise PgUnavailable(f"the PostgreSQL binary {name!r} is not on PATH nor in "
                        "/usr/lib/postgresql/*/bin (apt-get install -y postgresql)")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PgServer:
    def __init__(self, settings: dict[str, str] | None = None):
        self.settings = dict(settings or {})
        self.user = "odp"
        self.password = "pw-" + secrets.token_hex(8)
        self.port = 0
        self.dir: Path | None = None
        self._as_postgres = os.geteuid() == 0
        self._dbs = 0
        self.databases: list[str] = []  # made by new_database and not dropped yet

    # ------------------------------------------------------------------ running commands
    def _run(self, *argv: str, timeout: float = 120.0, check: bool = True
             ) -> subprocess.CompletedProcess:
        cmd = list(argv)
        if self._as_postgres:
            cmd = ["runuser", "-u", "postgres", "--"] + cmd
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              timeout=timeout, env=dict(os.environ, LC_ALL="C.UTF-8"))
        if check and proc.returncode != 0:
            raise PgUnavailable(f"{' '.join(argv[:2])} failed ({proc.returncode}): "
                                f"{proc.stdout[-2000:]}")
        return proc

    @property
    def data(self) -> Path:
        return self.dir / "data"

    @property
    def socket_dir(self) -> Path:
        return self.dir / "sock"

    # ------------------------------------------------------------------ life cycle
    def start(self) -> "PgServer":
        initdb, self.pg_ctl = _binary("initdb"), _binary("pg_ctl")
        if self._as_postgres:
            try:
                import pwd

                pw = pwd.getpwnam("postgres")
            except KeyError:
                raise PgUnavailable("running as root but there is no 'postgres' user to run "
                                    "the server as") from None
        self.dir = Path(tempfile.mkdtemp(prefix="odp-pg-"))
        try:
            self.socket_dir.mkdir()
            pwfile = self.dir / "pw"
            pwfile.write_text(self.password + "\n")
            if self._as_postgres:
                for p in (self.dir, self.socket_dir, pwfile):
                    os.chown(p, pw.pw_uid, pw.pw_gid)
                self.dir.chmod(0o700)
            self._run(initdb, "-D", str(self.data), "-U", self.user, f"--pwfile={pwfile}",
                      "--auth-local=trust", "--auth-host=scram-sha-256", "-E", "UTF8",
                      "--no-instructions")
            pwfile.unlink()
            conf = {"listen_addresses": "'127.0.0.1'",
                    "unix_socket_directories": f"'{self.socket_dir}'",
                    "max_connections": "60", "shared_buffers": "'32MB'",
                    "logging_collector": "off", "log_min_messages": "'warning'",
                    **self.settings}
            with open(self.data / "postgresql.conf", "a") as fh:
                fh.write("\n# odp test server\n")
                for key, value in conf.items():
                    fh.write(f"{key} = {value}\n")
            for _attempt in range(5):
                self.port = _free_port()
                proc = self._run(self.pg_ctl, "-D", str(self.data), "-l",
                                 str(self.dir / "server.log"), "-o", f"-p {self.port}", "-w",
                                 "-t", "60", "start", check=False)
                if proc.returncode == 0:
                    break
                log = self.log_tail()
                if "could not bind" not in log and "already in use" not in log:
                    raise PgUnavailable(f"pg_ctl start failed: {proc.stdout[-1000:]} {log}")
            else:
                raise PgUnavailable("no free loopback port for PostgreSQL after 5 tries")
        except BaseException:
            self.stop()
            raise
        return self

    def log_tail(self, n: int = 3000) -> str:
        try:
            return (self.dir / "server.log").read_text()[-n:]
        except OSError:
            return ""

    def restart(self) -> None:
        """``pg_ctl restart`` (fast shutdown: every client connection is cut)."""
        self._run(self.pg_ctl, "-D", str(self.data), "-l", str(self.dir / "server.log"),
                  "-o", f"-p {self.port}", "-m", "fast", "-w", "-t", "60", "restart")

    def pause(self) -> None:
        """Stop the server (fast shutdown) but keep its data: :meth:`resume` starts it again."""
        self._run(self.pg_ctl, "-D", str(self.data), "-m", "fast", "-w", "-t", "60", "stop")

    def resume(self) -> None:
        self._run(self.pg_ctl, "-D", str(self.data), "-l", str(self.dir / "server.log"),
                  "-o", f"-p {self.port}", "-w", "-t", "60", "start")

    def stop(self) -> None:
        if self.dir is None:
            return
        if (self.data / "postmaster.pid").exists():
            self._run(self.pg_ctl, "-D", str(self.data), "-m", "immediate", "-w", "-t", "60",
                      "stop", check=False)
        shutil.rmtree(self.dir, ignore_errors=True)
        self.dir = None

    # ------------------------------------------------------------------ databases
    def url(self, dbname: str = "postgres", *, password: bool = True) -> str:
        auth = f"{self.user}:{self.password}" if password else self.user
        return f"postgresql://{auth}@127.0.0.1:{self.port}/{dbname}"

    def admin(self, sql: str, dbname: str = "postgres") -> None:
        import psycopg

        with psycopg.connect(self.url(dbname), autocommit=True) as conn:
            conn.execute(sql)

    def new_database(self, prefix: str = "t") -> str:
        """A fresh, empty database; returns its URL."""
        self._dbs += 1
        name = f"{prefix}_{os.getpid()}_{self._dbs}"
        self.admin(f'CREATE DATABASE "{name}"')
        self.databases.append(name)
        return self.url(name)

    def drop_databases(self) -> None:
        """Drop the databases :meth:`new_database` made (``WITH (FORCE)`` cuts a connection a
        test left open).  tests/conftest.py calls it after every test: each database is ~300
        files, which every checkpoint fsyncs (a :meth:`pause` or :meth:`restart` after a few
        hundred tests waited 10-30 s for it) and :meth:`stop` deletes."""
        while self.databases:
            self.admin(f'DROP DATABASE IF EXISTS "{self.databases[-1]}" WITH (FORCE)')
            self.databases.pop()

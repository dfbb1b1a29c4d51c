"""A real PostgreSQL server of the test's own: Debian's `postgresql` binaries, a new cluster on a free loopback port.

Nothing is assumed running. `initdb` refuses to run as root, so as root (CI, the dev machines) the cluster is made
and run by the `postgres` user the Debian package creates. Host connections need a password (scram-sha-256): the
instance under test reaches the server the way a production one would, its password from the environment.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.processes import free_port

POSTGRES_ROOT = Path("/usr/lib/postgresql")


@dataclass(frozen=True)
class Postgres:
    host: str
    port: int
    db: str
    user: str
    password: str

    def env(self) -> dict[str, str]:
        """The variables dagster-postgres.yaml reads (docs/operations.md 'Running it every day in production')."""
        return {
            "DAGSTER_PG_HOST": self.host,
            "DAGSTER_PG_PORT": str(self.port),
            "DAGSTER_PG_DB": self.db,
            "DAGSTER_PG_USER": self.user,
            "DAGSTER_PG_PASSWORD": self.password,
        }

    def query(self, sql: str, *params: object) -> list[tuple]:
        import psycopg2

        with (
            psycopg2.connect(
                host=self.host, port=self.port, dbname=self.db, user=self.user, password=self.password
            ) as con,
            con.cursor() as cursor,
        ):
            cursor.execute(sql, params)
            return cursor.fetchall()


def _server_bin() -> Path:
    found = sorted(POSTGRES_ROOT.glob("*/bin/initdb"), key=lambda path: int(path.parts[-3]))
    if not found:
        pytest.skip(f"no PostgreSQL server under {POSTGRES_ROOT}: apt-get install postgresql (.ci/run installs it)")
    return found[-1].parent


@contextmanager
def local_postgres(*, db: str = "dagster", user: str = "dagster") -> Iterator[Postgres]:
    """A started server with database `db` owned by `user`; stopped and deleted afterwards."""
    server_bin = _server_bin()
    as_postgres = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    # Not under pytest's tmp_path: as root that folder is private to root, and the server runs as `postgres`.
    root = Path(tempfile.mkdtemp(prefix="finops-postgres-"))
    data, sockets = root / "data", root / "sockets"
    sockets.mkdir()
    if as_postgres:
        shutil.chown(root, "postgres")
        shutil.chown(sockets, "postgres")
    port = free_port()
    password = os.urandom(12).hex()

    def run(*command: str, stdin: str | None = None) -> None:
        done = subprocess.run([*as_postgres, *command], input=stdin, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, f"{command[0]} failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}"

    run(str(server_bin / "initdb"), "-D", str(data), "-U", "postgres", "-E", "UTF8", "--auth-local=trust",
        "--auth-host=scram-sha-256")  # fmt: skip
    options = f"-p {port} -k {sockets} -c listen_addresses=127.0.0.1 -c fsync=off"
    run(str(server_bin / "pg_ctl"), "-D", str(data), "-o", options, "-l", str(root / "server.log"), "-w", "start")
    try:
        psql = [
            str(server_bin / "psql"),
            "-h",
            str(sockets),
            "-p",
            str(port),
            "-U",
            "postgres",
            "-v",
            "ON_ERROR_STOP=1",
        ]
        # On standard input, so the password never shows on a command line.
        run(*psql, stdin=f"CREATE ROLE {user} LOGIN PASSWORD '{password}';\nCREATE DATABASE {db} OWNER {user};\n")
        yield Postgres(host="127.0.0.1", port=port, db=db, user=user, password=password)
    finally:
        subprocess.run([*as_postgres, str(server_bin / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"],
                       capture_output=True, timeout=60)  # fmt: skip
        shutil.rmtree(root, ignore_errors=True)

"""A real PostgreSQL server for the class store's tests, started here from Debian's package.

``KLRL_CLASS_TEST_PG_URL`` names a server to use instead. Without either, the PostgreSQL tests
skip, unless KLRL_REQUIRE_DB=1 (CI), where a missing server is a failure.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import uuid

import pytest


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _bin() -> str | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if found:
        return os.path.dirname(found[-1])
    initdb = shutil.which("initdb")
    return os.path.dirname(initdb) if initdb else None


def _as_owner(cmd: list[str]) -> list[str]:
    """initdb refuses root: as root, run the server as the postgres user."""
    if os.geteuid() == 0:
        return ["runuser", "-u", "postgres", "--"] + cmd
    return cmd


class Server:
    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="klrl-pg-")
        self.port = _free_port()
        bindir = _bin()
        if bindir is None:
            raise RuntimeError("no PostgreSQL binaries (apt-get install postgresql)")
        if os.geteuid() == 0:
            shutil.chown(self.dir, "postgres", "postgres")
        data = os.path.join(self.dir, "data")
        subprocess.run(
            _as_owner(
                [
                    f"{bindir}/initdb",
                    "-D",
                    data,
                    "-A",
                    "trust",
                    "-U",
                    "klrl",
                    "-E",
                    "UTF8",
                    "--no-sync",
                ]
            ),
            check=True,
            capture_output=True,
            cwd=self.dir,
        )
        self.pg_ctl = [f"{bindir}/pg_ctl", "-D", data]
        subprocess.run(
            _as_owner(
                self.pg_ctl
                + [
                    "-o",
                    f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 -c fsync=off",
                    "-l",
                    os.path.join(self.dir, "log"),
                    "-w",
                    "start",
                ]
            ),
            check=True,
            capture_output=True,
            cwd=self.dir,
        )
        self.base = f"postgresql+psycopg://klrl@127.0.0.1:{self.port}"

    def new_database(self) -> str:
        import psycopg

        name = "t_" + uuid.uuid4().hex[:12]
        with psycopg.connect(
            f"host=127.0.0.1 port={self.port} user=klrl dbname=postgres", autocommit=True
        ) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return f"{self.base}/{name}"

    def stop(self) -> None:
        subprocess.run(
            _as_owner(self.pg_ctl + ["-m", "immediate", "stop"]), capture_output=True, cwd=self.dir
        )
        shutil.rmtree(self.dir, ignore_errors=True)


class Given:
    """A server named by KLRL_CLASS_TEST_PG_URL (postgresql+psycopg://user@host:port)."""

    def __init__(self, url: str):
        self.base = url.rstrip("/")

    def new_database(self) -> str:
        import psycopg

        name = "t_" + uuid.uuid4().hex[:12]
        plain = self.base.replace("postgresql+psycopg://", "postgresql://")
        with psycopg.connect(plain + "/postgres", autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return f"{self.base}/{name}"

    def stop(self) -> None:
        pass


@pytest.fixture(scope="session")
def pg_server():
    given = os.environ.get("KLRL_CLASS_TEST_PG_URL")
    try:
        server = Given(given) if given else Server()
    except Exception as exc:
        if os.environ.get("KLRL_REQUIRE_DB") == "1":
            raise
        pytest.skip(f"no PostgreSQL server: {exc}")
    yield server
    server.stop()

"""The store's databases for tests: a SQLite file, or a PostgreSQL database of its own.

This machine runs PostgreSQL at 127.0.0.1:5432 (trust auth); each test that asks gets a
fresh database there, dropped afterwards. Without PostgreSQL the test is skipped with a
reason that says how to run it, except under ``CI=true``, where a missing server fails.

    def test_something(store_url: str) -> None:   # runs once on SQLite, once on PostgreSQL
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

PG_HOST = os.environ.get("GITNEURAL_TEST_PG_HOST", "127.0.0.1")
PG_PORT = int(os.environ.get("GITNEURAL_TEST_PG_PORT", "5432"))
PG_USER = os.environ.get("GITNEURAL_TEST_PG_USER", "postgres")
PG_ADMIN_DB = os.environ.get("GITNEURAL_TEST_PG_DB", "test")


def _admin() -> psycopg.Connection[tuple[object, ...]]:
    return psycopg.connect(
        host=PG_HOST,
        port=PG_PORT,
        user=PG_USER,
        dbname=PG_ADMIN_DB,
        connect_timeout=3,
        autocommit=True,
    )


def require_postgres() -> None:
    """Skips (fails under ``CI=true``) when PostgreSQL cannot be reached."""
    try:
        with _admin():
            pass
    except psycopg.OperationalError as exc:
        message = (
            f"PostgreSQL is not reachable at {PG_HOST}:{PG_PORT} as {PG_USER} "
            f"({' '.join(str(exc).split())[:120]}); start one with trust auth and a database "
            "'test' (for instance `docker run -d -p 5432:5432 -e POSTGRES_HOST_AUTH_METHOD=trust "
            "-e POSTGRES_DB=test postgres:16`), or set GITNEURAL_TEST_PG_HOST/PORT/USER/DB"
        )
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)


@contextlib.contextmanager
def postgres_database() -> Iterator[str]:
    """A new, empty database; its SQLAlchemy URL. Dropped at the end, connections and all."""
    require_postgres()
    name = f"gn_test_{uuid.uuid4().hex[:16]}"
    with _admin() as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield f"postgresql+psycopg://{PG_USER}@{PG_HOST}:{PG_PORT}/{name}"
    finally:
        with _admin() as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def sqlite_url(directory: Path) -> str:
    return f"sqlite:///{directory / 'store' / 'gitneural.db'}"


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """An empty store's URL, once on SQLite and once on PostgreSQL."""
    if request.param == "sqlite":
        yield sqlite_url(tmp_path)
        return
    with postgres_database() as url:
        yield url


class PostgresServer:
    """A PostgreSQL server of the test's own (``initdb`` into a directory of its own, run
    as the ``postgres`` user when the test is root), for tests that restart it: the shared
    one must never be.

        with PostgresServer() as pg:
            pg.url          # its database
            pg.stop(); pg.start()
    """

    def __init__(self) -> None:
        # Not under pytest's tmp_path: the postgres user cannot enter root's directories.
        self.root, self.port = Path(tempfile.mkdtemp(prefix="gn-pg-")), _free_port()
        self.data = self.root / "pgdata"
        self.url = f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/postgres"

    def _pg(self, *args: str) -> None:
        binary = shutil.which(args[0])
        if binary is None:
            message = f"{args[0]} (PostgreSQL's server) is not installed here"
            if os.environ.get("CI") == "true":
                pytest.fail(message)
            pytest.skip(message)
        run = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        subprocess.run([*run, binary, *args[1:]], check=True, capture_output=True, timeout=120)

    def start(self) -> PostgresServer:
        options = f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off"
        self._pg(
            "pg_ctl",
            "-D",
            str(self.data),
            "-o",
            options,
            "-l",
            str(self.root / "pg.log"),
            "-w",
            "start",
        )
        return self

    def stop(self) -> None:
        self._pg("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")

    def __enter__(self) -> PostgresServer:
        if os.geteuid() == 0:
            shutil.chown(self.root, "postgres")
        self._pg("initdb", "-D", str(self.data), "-A", "trust", "-U", "postgres", "--no-sync")
        return self.start()

    def __exit__(self, *exc: object) -> None:
        with contextlib.suppress(subprocess.SubprocessError, OSError):
            self._pg("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(self.root, ignore_errors=True)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])

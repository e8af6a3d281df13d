"""The store's databases for tests: a SQLite file, or a PostgreSQL database of its own.

This machine runs PostgreSQL at 127.0.0.1:5432 (trust auth); each test that asks gets a
fresh database there, dropped afterwards. Without PostgreSQL the test is skipped with a
reason that says how to run it, except under ``CI=true``, where a missing server fails.

    def test_something(store_url: str) -> None:   # runs once on SQLite, once on PostgreSQL
"""

from __future__ import annotations

import contextlib
import os
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
        host=PG_HOST, port=PG_PORT, user=PG_USER, dbname=PG_ADMIN_DB, connect_timeout=3,
        autocommit=True,
    )  # fmt: skip


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

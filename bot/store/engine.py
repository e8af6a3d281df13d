"""Opening the store: the URL from the environment, engines tuned per database.

SQLite is shared by the web server's and the workers' processes on one machine: WAL (so
readers never wait for the writer), a busy timeout (so writers queue instead of failing)
and foreign keys on. PostgreSQL connections are checked before use, so a restarted
server costs one reconnect, not a failed job.
"""

from __future__ import annotations

import contextlib
import sqlite3
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError
from sqlalchemy.orm import Session, sessionmaker

from bot.errors import ConfigError
from bot.settings.environment import data_dir

DATABASE_ENV = "GITNEURAL_DATABASE_URL"
_BUSY_SECONDS = 30
_CONNECT_SECONDS = 5
_WAL_RETRY_SECONDS = 0.02
_SUPPORTED = ("sqlite", "postgresql")


def database_url(env: Mapping[str, str]) -> str:
    """``GITNEURAL_DATABASE_URL``, else a SQLite file in the data directory."""
    raw = env.get(DATABASE_ENV, "").strip()
    if raw:
        _parse(raw)
        return raw
    return f"sqlite:///{data_dir(env) / 'gitneural.db'}"


def redacted_url(url: str) -> str:
    """``url`` with its password hidden, for logs and errors."""
    try:
        return _parse(url).render_as_string(hide_password=True)
    except ConfigError:
        return "<unparsable database URL>"


def _parse(raw: str) -> URL:
    try:
        url = make_url(raw)
    except ArgumentError:
        raise ConfigError(
            f"{DATABASE_ENV} is not a database URL: use sqlite:///PATH or "
            "postgresql+psycopg://USER@HOST/DB"
        ) from None
    if url.get_backend_name() not in _SUPPORTED:
        raise ConfigError(
            f"{DATABASE_ENV} names {url.get_backend_name()!r}: GitNeural's store is SQLite "
            "or PostgreSQL (postgresql+psycopg://…)"
        )
    if url.get_backend_name() == "postgresql" and url.get_driver_name() not in ("psycopg", ""):
        raise ConfigError(f"{DATABASE_ENV}: use the psycopg driver (postgresql+psycopg://…)")
    return url


def _sqlite_pragmas(connection: Any, _record: Any) -> None:
    cursor = connection.cursor()
    _switch_to_wal(cursor)
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def _switch_to_wal(cursor: Any) -> None:
    """``PRAGMA journal_mode=WAL``, waiting its turn as a write would.

    A new database is in rollback mode until its first connection switches it. While
    another connection holds its write lock, as a second process starting at the same
    moment does, SQLite answers the switch "database is locked" at once: the busy timeout
    does not apply to it. Two workers started together on a new data directory lost one
    of them that way (issue 37's full run G), so the switch is retried until the timeout;
    once the database is in WAL mode the pragma changes nothing."""
    deadline = time.monotonic() + _BUSY_SECONDS
    while True:
        try:
            cursor.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() >= deadline:
                raise
            time.sleep(_WAL_RETRY_SECONDS)


def _sqlite_begin(connection: Any) -> None:
    # pysqlite defers BEGIN until the first write, so two writers can both read, then
    # one fails to upgrade its lock with "database is locked" and no busy wait. Taking
    # the write lock at BEGIN makes the second writer wait its turn instead.
    connection.exec_driver_sql("BEGIN IMMEDIATE")


def create_engine(url: str) -> sa.Engine:
    parsed = _parse(url)
    if parsed.get_backend_name() == "sqlite":
        if parsed.database:
            from pathlib import Path

            Path(parsed.database).expanduser().parent.mkdir(parents=True, exist_ok=True)
        engine = sa.create_engine(
            parsed,
            connect_args={"timeout": _BUSY_SECONDS, "isolation_level": None},
        )
        event.listen(engine, "connect", _sqlite_pragmas)
        event.listen(engine, "begin", _sqlite_begin)
        return engine
    if parsed.get_driver_name() == "":
        parsed = parsed.set(drivername="postgresql+psycopg")
    # A server that drops packets instead of refusing would hold a connect (and /readyz,
    # and a job) for minutes without a timeout.
    return sa.create_engine(
        parsed,
        pool_pre_ping=True,
        pool_size=5,
        max_overflow=5,
        connect_args={"connect_timeout": _CONNECT_SECONDS},
    )


@dataclass
class Store:
    """An engine and its sessions; one per process (engines do not survive a fork)."""

    url: str
    engine: sa.Engine

    def __post_init__(self) -> None:
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)

    @contextlib.contextmanager
    def session(self) -> Iterator[Session]:
        """A transaction: committed when the block ends, rolled back if it raises."""
        with self._sessions.begin() as session:
            yield session

    def ping(self) -> None:
        with self.engine.connect() as connection:
            connection.execute(sa.text("SELECT 1"))

    def close(self) -> None:
        self.engine.dispose()


def open_store(url: str) -> Store:
    return Store(url, create_engine(url))

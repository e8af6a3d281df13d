"""The store: migrations from empty and from the previous revision, on SQLite and
PostgreSQL, applied by ``gitneural db upgrade`` (also by many processes at once), kept
across restarts, and errors that name the database without its password."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory

from bot.errors import ConfigError, StoreError
from bot.store import (
    current_revision,
    database_url,
    head_revision,
    open_store,
    redacted_url,
    upgrade,
)
from bot.store.migrate import _config, downgrade
from bot.store.schema import Base, StoreInfo
from tests.support.store import (
    postgres_database,
    store_url,  # noqa: F401 - the fixture
)

GITNEURAL = [sys.executable, "-m", "bot.cli.main"]


def test_migrations_from_empty_reach_the_models_exactly(store_url: str) -> None:  # noqa: F811
    store = open_store(store_url)
    assert current_revision(store) is None
    assert upgrade(store) == head_revision()
    with store.engine.connect() as connection:
        context = MigrationContext.configure(connection)
        # What the revisions created is what the models declare, nothing more or less.
        assert compare_metadata(context, Base.metadata) == []
    store.close()


def test_every_revision_upgrades_from_the_one_before(store_url: str) -> None:  # noqa: F811
    store = open_store(store_url)
    scripts = ScriptDirectory.from_config(_config())
    chain = [s.revision for s in scripts.walk_revisions()][::-1]  # oldest first
    assert chain[-1] == head_revision()
    upgrade(store)
    for previous in reversed(["base", *chain[:-1]]):
        downgrade(store, previous)
        assert current_revision(store) == (None if previous == "base" else previous)
        assert upgrade(store) == head_revision()
    store.close()


def test_the_store_keeps_what_it_was_given_across_a_restart(
    store_url: str,  # noqa: F811
) -> None:
    store = open_store(store_url)
    upgrade(store)
    with store.session() as session:
        session.add(StoreInfo(key="created_by", value="a test"))
    store.close()
    again = open_store(store_url)
    upgrade(again)  # a second start changes nothing
    with again.session() as session:
        assert session.get(StoreInfo, "created_by").value == "a test"  # type: ignore[union-attr]
    again.close()


def _db(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*GITNEURAL, "db", *args], env=env, capture_output=True, text=True, timeout=120
    )


def test_many_processes_upgrading_at_once_all_succeed(
    store_url: str,  # noqa: F811
    tmp_path: Path,
) -> None:
    env = {"PATH": "/usr/bin:/bin", "GITNEURAL_DATABASE_URL": store_url, "HOME": str(tmp_path)}
    procs = [
        subprocess.Popen(
            [*GITNEURAL, "db", "upgrade"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        for _ in range(4)
    ]
    results = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0, 0], results
    assert all(f"at revision {head_revision()}".encode() in out for out, _ in results)
    current = _db(env, "current")
    assert current.returncode == 0 and "up to date" in current.stdout


def test_a_new_sqlite_store_waits_for_a_writer_that_came_first(tmp_path: Path) -> None:
    """A process that meets a new database while another holds its write lock, still in
    rollback mode, waits for it: SQLite answers the switch to WAL "database is locked" at
    once, busy timeout or not (two workers started together lost one that way)."""
    path = tmp_path / "gitneural.db"
    first = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    first.execute("BEGIN IMMEDIATE")  # the write lock, before anyone chose WAL
    release = threading.Timer(0.5, first.execute, ("COMMIT",))
    release.start()
    started = time.monotonic()
    try:
        store = open_store(f"sqlite:///{path}")
        assert upgrade(store) == head_revision()
    finally:
        release.join()
        first.close()
    assert time.monotonic() - started >= 0.4  # it waited its turn
    with sqlite3.connect(path) as check:
        assert check.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    store.close()


def test_the_default_store_is_sqlite_in_the_data_directory(tmp_path: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", "GITNEURAL_DATA_DIR": str(tmp_path / "data")}
    done = _db(env, "upgrade")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "data" / "gitneural.db").is_file()
    assert database_url(env) == f"sqlite:///{tmp_path / 'data' / 'gitneural.db'}"


def test_bad_and_unreachable_databases_are_one_clear_line(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="SQLite or PostgreSQL"):
        database_url({"GITNEURAL_DATABASE_URL": "mysql://root@localhost/x"})
    with pytest.raises(ConfigError, match="not a database URL"):
        database_url({"GITNEURAL_DATABASE_URL": "::nonsense::"})
    url = "postgresql+psycopg://gn:hunter2-secret@127.0.0.1:1/nowhere"
    assert "hunter2" not in redacted_url(url)
    with pytest.raises(StoreError) as caught:
        upgrade(open_store(url))
    assert "hunter2" not in str(caught.value) and "127.0.0.1:1" in str(caught.value)
    env = {"PATH": "/usr/bin:/bin", "GITNEURAL_DATABASE_URL": url}
    done = _db(env, "upgrade")
    assert done.returncode == 3
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("gitneural: error: cannot migrate the store") and "hunter2" not in line


def test_postgres_databases_are_each_tests_own() -> None:
    with postgres_database() as first, postgres_database() as second:
        assert first != second
        for url in (first, second):
            engine = sa.create_engine(url)
            with engine.connect() as connection:
                tables = connection.execute(
                    sa.text(
                        "select count(*) from information_schema.tables "
                        "where table_schema = 'public'"
                    )
                ).scalar_one()
            engine.dispose()
            assert tables == 0

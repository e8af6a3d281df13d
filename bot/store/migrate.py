"""Bringing the store's schema to the newest revision, safely from many processes.

``gitneural serve`` and every ``gitneural worker`` upgrade at start-up, so several may
try at once, on one machine or many: the upgrade runs inside one transaction that first
takes a lock (PostgreSQL: an advisory lock; SQLite: the database's write lock, taken at
``BEGIN IMMEDIATE``), and whoever comes second finds the work done.
"""

from __future__ import annotations

from typing import Final

import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory

from bot.store.engine import Store
from bot.store.errors import store_errors

#: Any fixed number: PostgreSQL advisory locks are named by integers.
_LOCK_KEY: Final = 0x6769746E  # "gitn"
_SCRIPTS: Final = "bot.store:migrations"


def _config() -> Config:
    config = Config()
    config.set_main_option("script_location", _SCRIPTS)
    return config


def head_revision() -> str:
    head = ScriptDirectory.from_config(_config()).get_current_head()
    assert head is not None  # the package always ships its revisions
    return head


def current_revision(store: Store) -> str | None:
    """The revision the database is at (None: never migrated)."""
    with store.engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision()


def upgrade(store: Store, revision: str = "head") -> str | None:
    """Migrate to ``revision`` (default: the newest); returns the revision reached."""
    config = _config()
    with store_errors(store.url, "migrate"), store.engine.begin() as connection:
        if connection.dialect.name == "postgresql":
            connection.execute(sa.text("SELECT pg_advisory_xact_lock(:key)"), {"key": _LOCK_KEY})
        config.attributes["connection"] = connection
        command.upgrade(config, revision)
        return MigrationContext.configure(connection).get_current_revision()


def downgrade(store: Store, revision: str) -> None:
    """Back to ``revision`` (tests use it to migrate from an earlier one)."""
    config = _config()
    with store.engine.begin() as connection:
        config.attributes["connection"] = connection
        command.downgrade(config, revision)

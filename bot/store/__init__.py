"""The store: what GitNeural remembers across reviews, processes and machines.

SQLAlchemy models, migrated by Alembic (:mod:`bot.store.migrate`), in SQLite under
``GITNEURAL_DATA_DIR`` by default or in PostgreSQL with ``GITNEURAL_DATABASE_URL`` when
several machines share it. ``gitneural serve``, ``gitneural worker`` and ``gitneural db
upgrade`` bring the schema to the newest revision before anything else uses it.
"""

from __future__ import annotations

from bot.store.engine import DATABASE_ENV, Store, database_url, open_store, redacted_url
from bot.store.migrate import current_revision, head_revision, upgrade

__all__ = [
    "DATABASE_ENV",
    "Store",
    "current_revision",
    "database_url",
    "head_revision",
    "open_store",
    "redacted_url",
    "upgrade",
]

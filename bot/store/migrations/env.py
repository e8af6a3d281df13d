"""Alembic's entry: migrations run on the connection :mod:`bot.store.migrate` opened
(inside its locked transaction), never on one of their own."""

from __future__ import annotations

from alembic import context

from bot.store.schema import Base

connection = context.config.attributes["connection"]
context.configure(
    connection=connection,
    target_metadata=Base.metadata,
    # SQLite alters a table by copying it: Alembic's batch mode does that.
    render_as_batch=connection.dialect.name == "sqlite",
)
with context.begin_transaction():
    context.run_migrations()

"""The store's tables, as SQLAlchemy models; Alembic's revisions create them.

Every model derives from :class:`~bot.store.base.Base`. The tables of one subject live
in a module of their own (``findings.py``: what GitNeural reported on pull requests and
what became of it), imported here so that Alembic and the model/migration comparison
see them all. Each revision in ``migrations/versions`` creates or changes exactly what
these models declare; a test compares the two.
"""

from __future__ import annotations

import datetime as dt

import sqlalchemy as sa
from sqlalchemy.orm import Mapped, mapped_column

from bot.store.base import NAMING, Base, utcnow
from bot.store.findings import StoredFinding

__all__ = ["NAMING", "Base", "StoreInfo", "StoredFinding", "utcnow"]


class StoreInfo(Base):
    """Facts about the store itself (when it was created, by which version)."""

    __tablename__ = "store_info"

    key: Mapped[str] = mapped_column(sa.String(64), primary_key=True)
    value: Mapped[str] = mapped_column(sa.Text)
    updated_at: Mapped[dt.datetime] = mapped_column(sa.DateTime(timezone=True), default=utcnow)


# The tables of each subject live in a module of their own; importing them here lets
# Alembic and the model/migration comparison see every table.
from bot.store import learnings as _learnings  # noqa: E402, F401
from bot.store import operations as _operations  # noqa: E402, F401

"""What people with write access taught GitNeural for a repository (``/learn``).

One row per rule, keyed by GitHub's repository id (stable across renames). The comment
that taught it is unique per repository, so a redelivered or retried ``/learn`` leaves
one rule. ``/forget`` does not delete the row: it marks it forgotten, with the comment
that did, so a ``/forget`` run twice answers the same both times; forgotten rules are
never shown again.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Final, Literal

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Mapped, mapped_column

from bot.domain.learnings import Learning
from bot.store.base import Base, utcnow
from bot.store.engine import Store
from bot.store.errors import store_errors

#: Rules a repository keeps at most (what the prompt shows is capped lower).
MAX_STORED: Final = 200


class StoredLearning(Base):
    __tablename__ = "learnings"
    __table_args__ = (
        sa.UniqueConstraint("repository_id", "comment_id"),
        sa.Index("ix_learnings_repository_forgotten", "repository_id", "forgotten_at"),
    )

    id: Mapped[int] = mapped_column(sa.Integer, primary_key=True, autoincrement=True)
    repository_id: Mapped[int] = mapped_column(sa.BigInteger)
    #: ``owner/name`` when it was taught, for people reading the table.
    repository: Mapped[str] = mapped_column(sa.String(200))
    text: Mapped[str] = mapped_column(sa.Text)
    #: The review thread's file it was taught in; None: the whole repository.
    path: Mapped[str | None] = mapped_column(sa.Text)
    author: Mapped[str] = mapped_column(sa.String(100))
    pr_number: Mapped[int] = mapped_column(sa.Integer)
    #: The ``/learn`` comment.
    comment_id: Mapped[int] = mapped_column(sa.BigInteger)
    created_at: Mapped[dt.datetime] = mapped_column(sa.DateTime(timezone=True), default=utcnow)
    forgotten_at: Mapped[dt.datetime | None] = mapped_column(sa.DateTime(timezone=True))
    forgotten_by: Mapped[str | None] = mapped_column(sa.String(100))
    #: The ``/forget`` comment.
    forgotten_comment_id: Mapped[int | None] = mapped_column(sa.BigInteger)


@dataclass(frozen=True)
class Taught:
    repository_id: int
    repository: str
    text: str
    path: str | None
    author: str
    pr_number: int
    comment_id: int


def _learning(row: StoredLearning) -> Learning:
    return Learning(row.id, row.text, row.path, row.author)


def _active(repository_id: int) -> sa.Select[StoredLearning]:
    return (
        sa.select(StoredLearning)
        .where(StoredLearning.repository_id == repository_id)
        .where(StoredLearning.forgotten_at.is_(None))
        .order_by(StoredLearning.id)
    )


def learn(store: Store, taught: Taught) -> Learning | None:
    """Store the rule (once per comment) and return it; None when the repository keeps
    :data:`MAX_STORED` rules already. A comment taught before returns its rule."""
    values = {**taught.__dict__, "created_at": utcnow()}
    module = postgresql if store.engine.dialect.name == "postgresql" else sqlite
    insert = module.insert(StoredLearning).values(**values)
    insert = insert.on_conflict_do_nothing(index_elements=["repository_id", "comment_id"])
    mine = sa.select(StoredLearning).where(
        StoredLearning.repository_id == taught.repository_id,
        StoredLearning.comment_id == taught.comment_id,
    )
    count = sa.select(sa.func.count()).select_from(_active(taught.repository_id).subquery())
    with store_errors(store.url, "write to"), store.session() as session:
        found = session.scalars(mine).first()
        if found is None:
            if (session.scalar(count) or 0) >= MAX_STORED:
                return None
            session.execute(insert)
            found = session.scalars(mine).one()
        return _learning(found)


def active_learnings(store: Store, repository_id: int) -> list[Learning]:
    """The repository's rules, oldest first."""
    with store_errors(store.url, "read"), store.session() as session:
        return [_learning(row) for row in session.scalars(_active(repository_id))]


Forgot = Literal["forgot", "forgotten-before", "unknown"]


def forget(
    store: Store, repository_id: int, learning_id: int, by: str, comment_id: int
) -> tuple[Forgot, Learning | None]:
    """Forget rule ``learning_id`` of the repository: ``forgot`` (by this comment, now
    or on an earlier run), ``forgotten-before`` (by another), or ``unknown``."""
    now = utcnow()
    update = (
        sa.update(StoredLearning)
        .where(StoredLearning.repository_id == repository_id)
        .where(StoredLearning.id == learning_id)
        .where(StoredLearning.forgotten_at.is_(None))
        .values(forgotten_at=now, forgotten_by=by, forgotten_comment_id=comment_id)
    )
    query = sa.select(StoredLearning).where(
        StoredLearning.repository_id == repository_id, StoredLearning.id == learning_id
    )
    with store_errors(store.url, "write to"), store.session() as session:
        session.execute(update)
        row = session.scalars(query).first()
        if row is None:
            return "unknown", None
        state: Forgot = "forgot" if row.forgotten_comment_id == comment_id else "forgotten-before"
        return state, _learning(row)

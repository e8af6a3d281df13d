"""What GitNeural reported on a pull request, and what became of it.

One row per finding of a pull request, keyed by the repository's id (stable across
renames), the PR's number and the finding's fingerprint (stable across reviews: the
same file, the same code at the anchor, the same title). A row says where the finding
was posted (GitNeural's inline comment, which is its thread's first comment, and the
thread's GraphQL id when known), the lines it points at, and its state:

- ``open``: reported and standing;
- ``fixed``: a later push changed its lines and the review after it no longer reported
  it (``fixed_in``: that head); reported again, it is open again;
- ``dismissed``: taken back, with why (``withdrawn``: K3 agreed in the thread that it
  was wrong or does not apply; ``resolved``: a human resolved its thread while its lines
  were unchanged; ``thumbs_down``: the PR's author or a user with write access reacted
  👎 to it), by whom and when, and for where (``dismissal_scope``): ``repository`` when
  the one who dismissed it may write to the repository (or K3 withdrew it, answering
  a writer), so it is held back on every PR of the repository; ``pull_request`` when
  the PR's author without write access did, so it is held back on that PR only (a
  drive-by contributor cannot silence a finding for everyone). Rows from before the
  scope existed are ``repository`` (migration 0006).

Writes are upserts, so a redelivered job or two workers recording the same finding
leave one row; a dismissal is never undone by a later "open" record.
"""

from __future__ import annotations

import datetime as dt
import enum
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Mapped, mapped_column

from bot.store.base import Base, utcnow
from bot.store.engine import Store
from bot.store.errors import store_errors


class FindingState(enum.StrEnum):
    OPEN = "open"
    FIXED = "fixed"
    DISMISSED = "dismissed"


class DismissalReason(enum.StrEnum):
    #: K3 agreed, answering in the finding's thread, that the finding was wrong.
    WITHDRAWN = "withdrawn"
    #: A human resolved the finding's thread while the lines it points to were unchanged.
    RESOLVED = "resolved"
    #: The PR's author or a user with write access reacted 👎 to GitNeural's comment.
    THUMBS_DOWN = "thumbs_down"


class DismissalScope(enum.StrEnum):
    #: Held back on every PR of the repository: dismissed by someone with write access.
    REPOSITORY = "repository"
    #: Held back on the PR it was dismissed on only: by its author without write access.
    PULL_REQUEST = "pull_request"


class StoredFinding(Base):
    """A finding GitNeural posted on a pull request."""

    __tablename__ = "findings"
    __table_args__ = (
        sa.UniqueConstraint("repository_id", "pr_number", "fingerprint"),
        sa.Index("ix_findings_repository_fingerprint", "repository_id", "fingerprint"),
        sa.Index("ix_findings_pull_state", "repository_id", "pr_number", "state"),
    )

    id: Mapped[int] = mapped_column(sa.Integer, primary_key=True, autoincrement=True)
    #: GitHub's numeric id of the repository: a rename keeps it.
    repository_id: Mapped[int] = mapped_column(sa.BigInteger)
    #: ``owner/name`` when the row was last written, for people reading the table.
    repository: Mapped[str] = mapped_column(sa.String(200))
    pr_number: Mapped[int] = mapped_column(sa.Integer)
    fingerprint: Mapped[str] = mapped_column(sa.String(64))
    #: The PR's head when the row was last written.
    head_sha: Mapped[str] = mapped_column(sa.String(64))
    #: GitNeural's inline comment: the first comment of the finding's thread.
    comment_id: Mapped[int | None] = mapped_column(sa.BigInteger)
    #: The thread's GraphQL node id (``PRRT_…``), for resolving it.
    thread_node_id: Mapped[str | None] = mapped_column(sa.String(100))
    path: Mapped[str] = mapped_column(sa.Text)
    side: Mapped[str] = mapped_column(sa.String(8))
    start_line: Mapped[int] = mapped_column(sa.Integer)
    end_line: Mapped[int] = mapped_column(sa.Integer)
    severity: Mapped[str | None] = mapped_column(sa.String(16))
    title: Mapped[str | None] = mapped_column(sa.Text)
    state: Mapped[str] = mapped_column(sa.String(16), default=FindingState.OPEN.value)
    dismissal_reason: Mapped[str | None] = mapped_column(sa.String(32))
    #: Who the dismissal came from: the login whose reply K3 agreed with.
    dismissed_by: Mapped[str | None] = mapped_column(sa.String(100))
    dismissed_at: Mapped[dt.datetime | None] = mapped_column(sa.DateTime(timezone=True))
    #: Where the dismissal holds (:class:`DismissalScope`); None when not dismissed.
    dismissal_scope: Mapped[str | None] = mapped_column(sa.String(16))
    #: The comment that led to the dismissal (the reply in the thread).
    dismissed_comment_id: Mapped[int | None] = mapped_column(sa.BigInteger)
    #: The head whose push fixed it (state ``fixed``), and when that was seen.
    fixed_in: Mapped[str | None] = mapped_column(sa.String(64))
    fixed_at: Mapped[dt.datetime | None] = mapped_column(sa.DateTime(timezone=True))
    #: When GitNeural resolved the finding's thread ("Addressed in …"): only ever once.
    auto_resolved_at: Mapped[dt.datetime | None] = mapped_column(sa.DateTime(timezone=True))
    created_at: Mapped[dt.datetime] = mapped_column(sa.DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(sa.DateTime(timezone=True), default=utcnow)


@dataclass(frozen=True)
class FindingFacts:
    """What is known about a posted finding when it is recorded."""

    repository_id: int
    repository: str
    pr_number: int
    fingerprint: str
    head_sha: str
    path: str
    side: str
    start_line: int
    end_line: int
    severity: str | None = None
    title: str | None = None
    comment_id: int | None = None
    thread_node_id: str | None = None


@dataclass(frozen=True)
class Dismissal:
    reason: DismissalReason
    by: str
    #: The comment it came from.
    comment_id: int | None = None
    scope: DismissalScope = DismissalScope.REPOSITORY


_KEY = ("repository_id", "pr_number", "fingerprint")
#: Columns a later record refreshes (where the finding is, as GitHub shows it now).
_REFRESHED = ("repository", "head_sha", "path", "side", "start_line", "end_line")
#: Columns a later record fills in only when they were unknown.
_FILLED = ("comment_id", "thread_node_id", "severity", "title")


def _insert(store: Store, values: dict[str, Any]) -> Any:
    module = postgresql if store.engine.dialect.name == "postgresql" else sqlite
    return module.insert(StoredFinding).values(**values)


def _upsert(store: Store, facts: FindingFacts, dismissal: Dismissal | None) -> None:
    now = utcnow()
    values: dict[str, Any] = {
        **{name: getattr(facts, name) for name in FindingFacts.__dataclass_fields__},
        "state": FindingState.OPEN.value,
        "created_at": now,
        "updated_at": now,
    }
    if dismissal is not None:
        values.update(
            state=FindingState.DISMISSED.value,
            dismissal_reason=dismissal.reason.value,
            dismissed_by=dismissal.by,
            dismissed_at=now,
            dismissed_comment_id=dismissal.comment_id,
            dismissal_scope=dismissal.scope.value,
        )
    insert = _insert(store, values)
    table = StoredFinding.__table__.c
    update: dict[str, Any] = {name: insert.excluded[name] for name in _REFRESHED}
    update.update({name: sa.func.coalesce(table[name], insert.excluded[name]) for name in _FILLED})
    update["updated_at"] = now
    if dismissal is None:
        # Reported again after a push had fixed it: it stands again.
        fixed = table.state == FindingState.FIXED.value
        update["state"] = sa.case((fixed, FindingState.OPEN.value), else_=table.state)
        update["fixed_in"] = sa.case((fixed, None), else_=table.fixed_in)
    else:
        # The first dismissal stands: a retried job does not move its time or author.
        # Only a writer's dismissal of one that held for its PR alone widens it.
        widened = sa.and_(
            table.dismissal_scope == DismissalScope.PULL_REQUEST.value,
            insert.excluded.dismissal_scope == DismissalScope.REPOSITORY.value,
        )
        kept = sa.and_(table.state == FindingState.DISMISSED.value, sa.not_(widened))
        for name in (
            "state",
            "dismissal_reason",
            "dismissed_by",
            "dismissed_at",
            "dismissed_comment_id",
            "dismissal_scope",
        ):
            update[name] = sa.case((kept, table[name]), else_=insert.excluded[name])
    statement = insert.on_conflict_do_update(index_elements=list(_KEY), set_=update)
    with store_errors(store.url, "write to"), store.session() as session:
        session.execute(statement)


def record_finding(store: Store, facts: FindingFacts) -> None:
    """Record a reported finding (or refresh where it is): open again if it was fixed, a
    dismissal left as it was."""
    _upsert(store, facts, None)


def dismiss_finding(store: Store, facts: FindingFacts, dismissal: Dismissal) -> None:
    """Record the finding as dismissed (idempotent: the first dismissal stands, unless a
    repository-wide one follows one that held for the PR only)."""
    _upsert(store, facts, dismissal)


def stored_finding(
    store: Store, repository_id: int, pr_number: int, fingerprint: str
) -> StoredFinding | None:
    query = sa.select(StoredFinding).where(
        StoredFinding.repository_id == repository_id,
        StoredFinding.pr_number == pr_number,
        StoredFinding.fingerprint == fingerprint,
    )
    with store_errors(store.url, "read"), store.session() as session:
        return session.scalars(query).first()


def dismissed_fingerprints(
    store: Store, repository_id: int, pr_number: int | None = None
) -> set[str]:
    """Fingerprints dismissed in the repository (on one PR, when ``pr_number`` is given)."""
    query = sa.select(StoredFinding.fingerprint).where(
        StoredFinding.repository_id == repository_id,
        StoredFinding.state == FindingState.DISMISSED.value,
    )
    if pr_number is not None:
        query = query.where(StoredFinding.pr_number == pr_number)
    with store_errors(store.url, "read"), store.session() as session:
        return set(session.scalars(query))


def held_back(store: Store, repository_id: int, pr_number: int) -> dict[str, DismissalScope]:
    """The fingerprints a review of the PR holds back, and why: dismissed for the whole
    repository (on any PR), or on this PR only."""
    scope = sa.func.coalesce(StoredFinding.dismissal_scope, DismissalScope.REPOSITORY.value)
    query = sa.select(StoredFinding.fingerprint, scope).where(
        StoredFinding.repository_id == repository_id,
        StoredFinding.state == FindingState.DISMISSED.value,
        sa.or_(scope == DismissalScope.REPOSITORY.value, StoredFinding.pr_number == pr_number),
    )
    found: dict[str, DismissalScope] = {}
    with store_errors(store.url, "read"), store.session() as session:
        for fingerprint, where in session.execute(query):
            if found.get(fingerprint) != DismissalScope.REPOSITORY:
                found[fingerprint] = DismissalScope(where)
    return found

"""What becomes of a PR's findings between reviews: their threads found, lines followed
through a push, fixed, resolved by GitNeural once.

Each change is one ``UPDATE`` guarded by the state it expects (a fixed finding is one
that was open; a thread is marked resolved only once), so two workers, or a redelivered
job, applying the same change leave the row as one of them would.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, cast

import sqlalchemy as sa

from bot.store.base import utcnow
from bot.store.engine import Store
from bot.store.errors import store_errors
from bot.store.findings import FindingState, StoredFinding


def _pull(repository_id: int, pr_number: int) -> list[sa.ColumnElement[bool]]:
    return [StoredFinding.repository_id == repository_id, StoredFinding.pr_number == pr_number]


def pull_findings(store: Store, repository_id: int, pr_number: int) -> list[StoredFinding]:
    """Every finding recorded on the PR, whatever its state, oldest first."""
    query = (
        sa.select(StoredFinding).where(*_pull(repository_id, pr_number)).order_by(StoredFinding.id)
    )
    with store_errors(store.url, "read"), store.session() as session:
        return list(session.scalars(query))


def attach_thread(
    store: Store,
    repository_id: int,
    pr_number: int,
    fingerprint: str,
    comment_id: int,
    node_id: str,
) -> None:
    """Where the finding's thread is, once known (an inline comment's id is learnt when
    the threads are read after the review was posted)."""
    statement = (
        sa.update(StoredFinding)
        .where(
            *_pull(repository_id, pr_number),
            StoredFinding.fingerprint == fingerprint,
            sa.or_(StoredFinding.comment_id.is_(None), StoredFinding.thread_node_id.is_(None)),
        )
        .values(comment_id=comment_id, thread_node_id=node_id or None, updated_at=utcnow())
    )
    with store_errors(store.url, "write to"), store.session() as session:
        session.execute(statement)


def follow(store: Store, finding_id: int, head_sha: str, start_line: int, end_line: int) -> None:
    """The finding's lines are untouched by the push to ``head_sha``: where they are now."""
    statement = (
        sa.update(StoredFinding)
        .where(StoredFinding.id == finding_id, StoredFinding.state == FindingState.OPEN.value)
        .values(head_sha=head_sha, start_line=start_line, end_line=end_line, updated_at=utcnow())
    )
    with store_errors(store.url, "write to"), store.session() as session:
        session.execute(statement)


def mark_fixed(store: Store, finding_ids: Iterable[int], head_sha: str) -> None:
    """The push to ``head_sha`` changed these open findings' lines, and the review of it
    no longer reports them."""
    ids = list(finding_ids)
    if not ids:
        return
    now = utcnow()
    statement = (
        sa.update(StoredFinding)
        .where(StoredFinding.id.in_(ids), StoredFinding.state == FindingState.OPEN.value)
        .values(state=FindingState.FIXED.value, fixed_in=head_sha, fixed_at=now, updated_at=now)
    )
    with store_errors(store.url, "write to"), store.session() as session:
        session.execute(statement)


def mark_auto_resolved(store: Store, finding_id: int) -> bool:
    """Claim the resolving of the finding's thread, before GitNeural resolves it (only
    ever once: a thread a person reopens stays open); False if it was claimed before."""
    now = utcnow()
    statement = (
        sa.update(StoredFinding)
        .where(StoredFinding.id == finding_id, StoredFinding.auto_resolved_at.is_(None))
        .values(auto_resolved_at=now, updated_at=now)
    )
    with store_errors(store.url, "write to"), store.session() as session:
        result = cast("sa.CursorResult[Any]", session.execute(statement))
        return result.rowcount > 0


def release_auto_resolved(store: Store, finding_ids: Iterable[int]) -> None:
    """Give up the claims of threads GitHub did not resolve: the next review tries again
    (and, finding GitNeural's reply there by its marker if it was posted, only resolves)."""
    ids = list(finding_ids)
    if not ids:
        return
    statement = (
        sa.update(StoredFinding)
        .where(StoredFinding.id.in_(ids), StoredFinding.auto_resolved_at.is_not(None))
        .values(auto_resolved_at=None, updated_at=utcnow())
    )
    with store_errors(store.url, "write to"), store.session() as session:
        session.execute(statement)

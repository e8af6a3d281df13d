"""Finished jobs in the store, for the status page: what ended how in the last day, the
slowest, and the failed ones with their reasons. Old rows are pruned as new ones come."""

from __future__ import annotations

import datetime as dt
import itertools
from collections import Counter
from dataclasses import dataclass, field
from typing import Final

import sqlalchemy as sa

from bot.store.base import utcnow
from bot.store.engine import Store
from bot.store.errors import store_errors
from bot.store.operations import JobRecord

#: How long rows are kept, and how often (in rows written by a process) old ones go.
KEEP: Final = dt.timedelta(days=30)
PRUNE_EVERY: Final = 500
DETAIL_CHARS: Final = 500
_written = itertools.count(1)


@dataclass(frozen=True)
class JobEnd:
    kind: str
    outcome: str
    status: str
    installation_id: int | None = None
    repo: str | None = None
    pr_number: int | None = None
    head_sha: str | None = None
    delivery_id: str | None = None
    job_id: str | None = None
    seconds: float | None = None
    detail: str = ""


@dataclass
class RecentJobs:
    #: ``(kind, outcome) -> count``.
    counts: Counter[tuple[str, str]] = field(default_factory=Counter)
    slowest: list[JobRecord] = field(default_factory=list)
    failed: list[JobRecord] = field(default_factory=list)


def record_job(store: Store, end: JobEnd, *, now: dt.datetime | None = None) -> None:
    row = JobRecord(
        kind=end.kind,
        outcome=end.outcome,
        status=end.status[:32],
        installation_id=end.installation_id,
        repo=end.repo,
        pr_number=end.pr_number,
        head_sha=end.head_sha,
        delivery_id=(end.delivery_id or None) and end.delivery_id[:200],
        job_id=(end.job_id or None) and end.job_id[:64],
        seconds=end.seconds,
        detail=end.detail[:DETAIL_CHARS],
        finished_at=now or utcnow(),
    )
    with store_errors(store.url, "record a job in"), store.session() as session:
        session.add(row)
        if next(_written) % PRUNE_EVERY == 0:
            cutoff = (now or utcnow()) - KEEP
            session.execute(sa.delete(JobRecord).where(JobRecord.finished_at < cutoff))


def recent_jobs(store: Store, since: dt.datetime, *, top: int = 10) -> RecentJobs:
    """Jobs since ``since``: counts by kind and outcome, the ``top`` slowest that ended,
    and the latest ``top`` failures."""
    recent = RecentJobs()
    after = JobRecord.finished_at >= since
    with store_errors(store.url, "read jobs from"), store.session() as session:
        grouped = session.execute(
            sa.select(JobRecord.kind, JobRecord.outcome, sa.func.count())
            .where(after)
            .group_by(JobRecord.kind, JobRecord.outcome)
        ).all()
        for kind, outcome, count in grouped:
            recent.counts[(str(kind), str(outcome))] = int(count)
        recent.slowest = list(
            session.scalars(
                sa.select(JobRecord)
                .where(after, JobRecord.seconds.is_not(None), JobRecord.outcome != "retried")
                .order_by(JobRecord.seconds.desc())
                .limit(top)
            )
        )
        recent.failed = list(
            session.scalars(
                sa.select(JobRecord)
                .where(after, JobRecord.outcome == "failed")
                .order_by(JobRecord.finished_at.desc())
                .limit(top)
            )
        )
    return recent

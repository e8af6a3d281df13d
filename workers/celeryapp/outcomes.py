"""How a job's end is told: one log line ``review job … outcome=<status>`` (or
``conversation job …``) per job, which tests, benchmarks and operators read, counted in the
ledger; and the review task's small result."""

from __future__ import annotations

import logging
from typing import Any

from bot.jobs import ConversationJob, ReviewJob
from bot.text import loggable
from workers.celeryapp import ledger as job_ledger

log = logging.getLogger("gitneural.worker")

Result = dict[str, Any]


def describe(job: ReviewJob) -> str:
    head = job.head_sha[:12] if job.head_sha else "-"
    return (
        f"delivery={loggable(job.delivery_id)} repo={loggable(job.repo)} pr={job.pr_number} "
        f"head={loggable(head)} trigger={job.trigger}"
    )


def tell_end(
    line: str,
    kind: str,
    job: ReviewJob | ConversationJob | None,
    where: str,
    status: str,
    posted: tuple[str, int | None],
    detail: str,
) -> None:
    """The one outcome line of a job (``line``: ``review`` or ``conversation``), and its
    count under ``kind``; ``posted`` names what it posted (``review``, ``answer``) and its id."""
    level = logging.ERROR if status == "failed" else logging.INFO
    label, posted_id = posted
    log.log(
        level,
        "%s job %s outcome=%s %s=%s detail=%r",
        line,
        where,
        status,
        label,
        posted_id or "-",
        detail[:300],
    )
    job_ledger.job_ended(kind, job, status, detail)


def report(job: ReviewJob | None, status: str, review_id: int | None, detail: str) -> Result:
    where = describe(job) if job is not None else "job=invalid"
    tell_end("review", "review", job, where, status, ("review", review_id), detail)
    return {"status": status, "review_id": review_id, "detail": detail}

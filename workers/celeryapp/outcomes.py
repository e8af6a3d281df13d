"""How a review job's end is told: one log line ``review job … outcome=<status>`` per job
(tests, benchmarks and operators read it), and the task's small result."""

from __future__ import annotations

import logging
from typing import Any

from bot.jobs import ReviewJob
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


def report(job: ReviewJob | None, status: str, review_id: int | None, detail: str) -> Result:
    level = logging.ERROR if status == "failed" else logging.INFO
    where = describe(job) if job is not None else "job=invalid"
    log.log(
        level,
        "review job %s outcome=%s review=%s detail=%r",
        where,
        status,
        review_id or "-",
        detail[:300],
    )
    job_ledger.job_ended("review", job, status, detail)
    return {"status": status, "review_id": review_id, "detail": detail}

"""Where each job's end goes besides its log line: the Prometheus counters and, in a
worker started by the command line, the store's job records the status page reads.

A job's own statuses map onto the outcomes the metrics name: ``nothing-new``, ``gone``
(closed) and ``budget`` are ``skipped``; an eyes reaction added is ``posted``. The
log context (:func:`job_scope`) gives every line of the job its delivery, repository,
PR, head and task id, and gives the record its task id.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Iterator
from typing import Any, Final

from bot import metrics
from bot.errors import StoreError
from bot.jobs import ConversationJob, ReviewJob
from bot.logs import current_context, log_context
from bot.store import Store, open_store
from bot.store.job_records import JobEnd, record_job

log = logging.getLogger("gitneural.worker")

OUTCOMES: Final = {
    "posted": "posted",
    "reacted": "posted",
    "nothing-new": "skipped",
    "skipped": "skipped",
    "budget": "skipped",
    "gone": "skipped",
    "superseded": "superseded",
    "failed": "failed",
    "retried": "retried",
    # A conversation job's statuses.
    "answered": "posted",
    "already-answered": "skipped",
    "ignored": "skipped",
    # A resolved thread's finding recorded as dismissed: nothing was posted.
    "dismissed": "skipped",
}

_lock = threading.Lock()
_url: list[str] = []
_stores: dict[int, Store] = {}


def record_jobs_in(url: str) -> None:
    """Record job ends in the store at ``url`` from now on (``gitneural worker`` calls
    it once the store is migrated); each process opens its own engine."""
    with _lock:
        _url[:] = [url]


def _store() -> Store | None:
    with _lock:
        if not _url:
            return None
        pid = os.getpid()
        if pid not in _stores:  # engines do not survive a fork (prefork children)
            _stores.clear()
            _stores[pid] = open_store(_url[0])
        return _stores[pid]


@contextlib.contextmanager
def job_scope(raw: Any, job_id: str | None) -> Iterator[None]:
    """The log context of one job, read from its message (even a malformed one)."""
    data = raw if isinstance(raw, dict) else {}

    def field(name: str, kind: type) -> Any:
        value = data.get(name)
        return value if isinstance(value, kind) and not isinstance(value, bool) else None

    head = field("head_sha", str)
    with log_context(
        delivery=field("delivery_id", str),
        installation=field("installation_id", int),
        repository=field("repo", str),
        pr=field("pr_number", int),
        head=head[:12] if head else None,
        job=job_id,
    ):
        yield


def job_ended(kind: str, job: ReviewJob | ConversationJob | None, status: str, detail: str) -> None:
    """Count and record a job that ended with ``status`` (or was ``retried``)."""
    outcome = OUTCOMES.get(status, "failed")
    seconds = None
    if job is not None and job.queued_at is not None:
        seconds = max(0.0, time.time() - job.queued_at)
    metrics.job_finished(kind, outcome, seconds)
    store = _store()
    if store is None:
        return
    job_id = current_context().get("job")
    end = JobEnd(
        kind=kind,
        outcome=outcome,
        status=status,
        installation_id=job.installation_id if job else None,
        repo=job.repo if job else None,
        pr_number=job.pr_number if job else None,
        head_sha=job.head_sha if isinstance(job, ReviewJob) else None,
        delivery_id=job.delivery_id if job else None,
        job_id=str(job_id) if job_id else None,
        seconds=seconds if outcome != "retried" else None,
        detail=detail,
    )
    try:
        record_job(store, end)
    except StoreError as exc:
        log.warning("job record not written: %s", exc)

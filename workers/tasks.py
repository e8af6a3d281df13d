"""The Celery tasks: one review job per message, and the ``eyes`` reaction on the fast queue
(the conversation task, a reply or ``/ask`` per message, is in :mod:`workers.conversation_task`).

A review message carries ``job`` (:meth:`ReviewJob.to_dict`: plain ids), ``seq`` (its
number among the PR's submissions, see :mod:`workers.locks`) and ``faults`` (transient
failures so far). The task:

1. exits ``superseded`` if a newer head of the PR was queued after it;
2. takes the PR's lock, or tries again in ``lock_retry_delay`` (not counted as a fault);
3. runs :func:`workers.jobrun.run_review_job` with ``still_current`` (the lock is still
   held and no newer head was queued), under the soft and hard time limits; a
   ``/review`` makes sure of its ``eyes`` reaction first, so it always precedes the
   review even when the fast queue's task is late;
4. on a transient fault, retries with exponential backoff and jitter, waiting at least
   the ``retry_after`` GitHub or the model asked for; after ``max_retries`` faults, or at
   the soft time limit, the outcome is ``failed`` (the runner completes the check run).

Every job ends in one log line ``review job … outcome=<status>``.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING, Any, Final

from celery.exceptions import Reject, SoftTimeLimitExceeded

from bot.errors import GitNeuralError
from bot.jobs import JobError, ReviewJob
from bot.text import loggable
from workers import job_ledger, jobrun, limits
from workers.backoff import backoff_delay, retry_after_of
from workers.context import WorkerContext
from workers.conversation_task import register_conversation_task
from workers.limits import ShutdownInterrupt, SoftLimitInterrupt, TaskGuard
from workers.locks import PRLock, PRState, PRStateError, is_current, pr_key
from workers.runtime import Runtime
from workers.settings import WorkerSettings
from workers.task_names import EYES_TASK, REVIEW_TASK

if TYPE_CHECKING:
    from celery import Celery, Task

log = logging.getLogger("gitneural.worker")

#: The reaction is one request: short limits, a few quick retries.
EYES_SOFT_LIMIT: Final = 60.0
EYES_HARD_LIMIT: Final = 90.0
EYES_MAX_RETRIES: Final = 3
Result = dict[str, Any]


def describe(job: ReviewJob) -> str:
    head = job.head_sha[:12] if job.head_sha else "-"
    return (
        f"delivery={loggable(job.delivery_id)} repo={loggable(job.repo)} pr={job.pr_number} "
        f"head={loggable(head)} trigger={job.trigger}"
    )


def _report(job: ReviewJob | None, status: str, review_id: int | None, detail: str) -> Result:
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


def register_tasks(app: Celery, settings: WorkerSettings) -> Runtime:
    """Define the tasks on ``app``; returns the runtime they share."""
    runtime = Runtime(settings)
    # Celery takes float limits; its type stubs say int.
    review_limits: dict[str, Any] = {
        "soft_time_limit": settings.soft_time_limit,
        "time_limit": settings.hard_time_limit,
    }
    eyes_limits: dict[str, Any] = {
        "soft_time_limit": EYES_SOFT_LIMIT,
        "time_limit": EYES_HARD_LIMIT,
    }

    @app.task(
        name=REVIEW_TASK,
        bind=True,
        shared=False,  # bound to this app's settings, not to every app made later
        max_retries=None,  # faults are counted in the message (``faults``), not by Celery
        acks_late=True,
        reject_on_worker_lost=True,
        ignore_result=True,
        **review_limits,
    )
    def review(
        self: Task[Any, Any], job: dict[str, Any], seq: int | None = None, faults: int = 0
    ) -> Result:
        with job_ledger.job_scope(job, self.request.id):
            return _run_review(self, runtime, job, seq, faults)

    @app.task(
        name=EYES_TASK,
        bind=True,
        shared=False,
        max_retries=None,
        acks_late=True,
        reject_on_worker_lost=True,
        ignore_result=True,
        **eyes_limits,
    )
    def eyes(self: Task[Any, Any], job: dict[str, Any], faults: int = 0) -> Result:
        with job_ledger.job_scope(job, self.request.id):
            return _run_eyes(self, runtime, job, faults)

    # Replies in GitNeural's threads and /ask, on their own queue.
    register_conversation_task(app, runtime)
    return runtime


def _retry(
    task: Task[Any, Any],
    runtime: Runtime,
    raw: dict[str, Any],
    seq: int | None,
    faults: int,
    exc: GitNeuralError,
) -> Result:
    """Retry after a transient fault, or report ``failed`` when the retries are spent."""
    s = runtime.settings
    job = ReviewJob.from_dict(raw)
    if faults >= s.max_retries:
        return _report(job, "failed", None, f"gave up after {faults + 1} attempts: {exc}")
    delay = backoff_delay(faults, s.retry_backoff, s.retry_backoff_max, retry_after_of(exc))
    log.warning(
        "review job %s fault=%d retry_in=%.0fs reason=%s", describe(job), faults + 1, delay, exc
    )
    job_ledger.job_ended("review", job, "retried", str(exc))
    raise task.retry(kwargs={"job": raw, "seq": seq, "faults": faults + 1}, countdown=delay)


def _run_review(
    task: Task[Any, Any], runtime: Runtime, raw: dict[str, Any], seq: int | None, faults: int
) -> Result:
    if limits.stopping():
        # Received while the worker stops (its consumer drains for up to a poll longer):
        # a review takes minutes, so leave it to the next worker.
        raise Reject("worker shutting down", requeue=True)
    try:
        job = ReviewJob.from_dict(raw)
    except JobError as exc:
        # A malformed message never gets better: acknowledge it and say why.
        return _report(None, "failed", None, str(exc))
    s = runtime.settings
    key = pr_key(job.repo, job.pr_number)
    try:
        state = runtime.state()
        if _superseded(state, key, job, seq):
            return _report(job, "superseded", None, "a newer head of the PR was queued")
        lock = PRLock(state, key, s.lock_lease)
        if not lock.acquire():
            # Another job of this PR runs: come back later, without counting a fault.
            delay = backoff_delay(0, s.lock_retry_delay, s.lock_retry_delay)
            log.info("review job %s waits for the PR lock retry_in=%.1fs", describe(job), delay)
            raise task.retry(kwargs={"job": raw, "seq": seq, "faults": faults}, countdown=delay)
    except PRStateError as exc:
        return _retry(task, runtime, raw, seq, faults, exc)
    try:
        # A newer head may have been queued while this job waited for the lock.
        if _superseded(state, key, job, seq):
            return _report(job, "superseded", None, "a newer head of the PR was queued")
        return _run_locked(task, runtime, job, raw, seq, faults, state, lock)
    except PRStateError as exc:
        return _retry(task, runtime, raw, seq, faults, exc)
    finally:
        lock.release()


def _superseded(state: PRState, key: str, job: ReviewJob, seq: int | None) -> bool:
    # A /review (no head) reviews the head current when it runs: never stale in the queue.
    return job.head_sha is not None and not is_current(state.latest(key), job.head_sha, seq)


def _run_locked(
    task: Task[Any, Any],
    runtime: Runtime,
    job: ReviewJob,
    raw: dict[str, Any],
    seq: int | None,
    faults: int,
    state: PRState,
    lock: PRLock,
) -> Result:
    s = runtime.settings
    key = pr_key(job.repo, job.pr_number)
    abandoned = threading.Event()

    def still_current(head_sha: str) -> bool:
        if abandoned.is_set():
            return False
        if lock.lost:
            # The lease ran out while the lock store was unreachable: the PR may be
            # another job's by now, so this run must not post, but nothing newer
            # replaced it either. Retried, the job finds the review done, or does it.
            raise PRStateError(
                "the PR lock's lease ran out while its store was unreachable: "
                "the review will run again"
            )
        try:
            return is_current(state.latest(key), head_sha, seq)
        except PRStateError as exc:
            # Holding the lock, no other job of this PR runs; the runner still checks
            # GitHub's own head before posting.
            log.warning("review job %s: head record unreadable (%s)", describe(job), exc)
            return True

    def on_hard_limit() -> None:
        abandoned.set()
        lock.abandon()

    ctx = runtime.context()
    # Celery enforces the limits itself only where tasks run in a process's main thread
    # (prefork); in pool threads the guard does.
    in_pool_thread = threading.current_thread() is not threading.main_thread()
    guard = TaskGuard(
        s.soft_time_limit if in_pool_thread else None,
        s.hard_time_limit if in_pool_thread else None,
        on_hard_limit,
    )
    try:
        with guard:
            if job.comment_id is not None:
                _ensure_eyes(job, ctx)
            redelivered = bool((task.request.delivery_info or {}).get("redelivered"))
            outcome = jobrun.run_review_job(
                job, ctx, still_current=still_current, redelivered=redelivered
            )
    except (GitNeuralError, SoftTimeLimitExceeded, ShutdownInterrupt) as exc:
        if guard.fired is ShutdownInterrupt or isinstance(exc, ShutdownInterrupt):
            log.warning("review job %s interrupted by shutdown: requeued", describe(job))
            raise Reject("worker shutting down", requeue=True) from None
        if guard.fired is SoftLimitInterrupt or isinstance(exc, SoftTimeLimitExceeded):
            limit = f"{s.soft_time_limit:.0f} s"
            return _report(job, "failed", None, f"stopped at the soft time limit of {limit}")
        if isinstance(exc, GitNeuralError) and getattr(exc, "transient", False):
            return _retry(task, runtime, raw, seq, faults, exc)
        if isinstance(exc, GitNeuralError):
            return _report(job, "failed", None, str(exc))
        raise
    if abandoned.is_set() or guard.hard_limit_passed:
        return _report(
            job, "failed", None, f"passed the hard time limit of {s.hard_time_limit:.0f} s"
        )
    return _report(job, outcome.status, outcome.review_id, outcome.detail)


def _ensure_eyes(job: ReviewJob, ctx: WorkerContext) -> None:
    """The fast queue's task reacts at once; this makes sure the reaction also comes
    before the review when that task is late (a cold worker) or was lost. GitHub keeps
    one reaction per user, so the second request changes nothing."""
    try:
        jobrun.add_eyes_reaction(job, ctx)
    except GitNeuralError as exc:
        log.warning("eyes reaction %s failed: %s", describe(job), exc)


def _run_eyes(task: Task[Any, Any], runtime: Runtime, raw: dict[str, Any], faults: int) -> Result:
    try:
        job = ReviewJob.from_dict(raw)
    except JobError as exc:
        log.warning("eyes reaction job=invalid failed: %s", exc)
        job_ledger.job_ended("eyes", None, "failed", str(exc))
        return {"status": "failed", "detail": str(exc)}
    try:
        jobrun.add_eyes_reaction(job, runtime.context())
    except GitNeuralError as exc:
        if not getattr(exc, "transient", False) or faults >= EYES_MAX_RETRIES:
            log.warning("eyes reaction %s failed: %s", describe(job), exc)
            job_ledger.job_ended("eyes", job, "failed", str(exc))
            return {"status": "failed", "detail": str(exc)}
        delay = backoff_delay(faults, 2.0, 60.0, retry_after_of(exc))
        job_ledger.job_ended("eyes", job, "retried", str(exc))
        raise task.retry(kwargs={"job": raw, "faults": faults + 1}, countdown=delay) from None
    log.info("eyes reaction %s added", describe(job))
    job_ledger.job_ended("eyes", job, "reacted", "")
    return {"status": "reacted"}

"""The conversation task: one reply or ``/ask`` per message, on its own queue.

A message carries ``job`` (:meth:`ConversationJob.to_dict`) and ``faults`` (transient
failures so far). The task:

1. takes the lock of the comment it answers (:attr:`ConversationJob.key`), or tries again
   in ``lock_retry_delay`` (not counted as a fault): a redelivery that arrives while the
   first delivery runs waits, then finds the answer posted;
2. runs the handler of the job's kind (:func:`bot.commands.dispatch.run_conversation`)
   under the soft and hard time limits, as reviews do (threads:
   :class:`~workers.celeryapp.time_limits.TaskGuard`); a kind nothing registered fails
   the job at once, logged as an error, before any lock, request or answer;
3. on a transient fault, retries with exponential backoff and jitter, no sooner than
   GitHub or the model asked; after ``max_retries`` faults it posts one notice where the
   answer would be, and reports ``failed``.

Acknowledged late: a worker killed mid-answer leaves the message to another, which reads
the thread first and never answers twice. Every job ends in one log line
``conversation job … outcome=<status>``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from celery.exceptions import Reject, SoftTimeLimitExceeded

from bot.commands.dispatch import UnknownJobKindError, handler_for, job_kind, run_conversation
from bot.errors import GitNeuralError
from bot.jobs import ConversationJob, JobError
from bot.text import loggable
from bot.usecases.conversation.dispatch import give_up
from workers.celeryapp import ledger as job_ledger
from workers.celeryapp import time_limits as limits
from workers.celeryapp.backoff import backoff_delay
from workers.celeryapp.outcomes import tell_end
from workers.celeryapp.runtime import Runtime
from workers.celeryapp.task_names import CONVERSATION_TASK
from workers.celeryapp.time_limits import ShutdownInterrupt, SoftLimitInterrupt, TaskGuard
from workers.state import fencing
from workers.state.pr_lock import PRLock, PRStateError

if TYPE_CHECKING:
    from celery import Celery, Task

log = logging.getLogger("gitneural.worker")
Result = dict[str, Any]


def describe(job: ConversationJob) -> str:
    return (
        f"delivery={loggable(job.delivery_id)} repo={loggable(job.repo)} pr={job.pr_number} "
        f"trigger={job.trigger} comment={job.comment_id}"
    )


def _report(job: ConversationJob | None, status: str, answer: int | None, detail: str) -> Result:
    where = describe(job) if job is not None else "job=invalid"
    tell_end("conversation", _kind(job), job, where, status, ("answer", answer), detail)
    return {"status": status, "answer": answer, "detail": detail}


def _kind(job: ConversationJob | None) -> str:
    return job_kind(job)


def register_conversation_task(app: Celery, runtime: Runtime) -> None:
    s = runtime.settings
    # Celery takes float limits; its type stubs say int.
    time_limits: dict[str, Any] = {
        "soft_time_limit": s.soft_time_limit,
        "time_limit": s.hard_time_limit,
    }

    @app.task(
        name=CONVERSATION_TASK,
        bind=True,
        shared=False,
        max_retries=None,  # faults are counted in the message, as for reviews
        acks_late=True,
        reject_on_worker_lost=True,
        ignore_result=True,
        **time_limits,
    )
    def conversation(self: Task[Any, Any], job: dict[str, Any], faults: int = 0) -> Result:
        with job_ledger.job_scope(job, self.request.id):
            return _run(self, runtime, job, faults)


def _retry(
    task: Task[Any, Any],
    runtime: Runtime,
    job: ConversationJob,
    faults: int,
    exc: GitNeuralError,
    fence: Callable[[], None],
) -> Result:
    """``fence``: the comment's lock, which the notice after the last retry is posted
    under (a run that never took it posts nothing)."""
    s = runtime.settings
    if faults >= s.max_retries:
        posted = give_up(job, runtime.context(), str(exc), fence=fence)
        return _report(job, "failed", posted, f"gave up after {faults + 1} attempts: {exc}")
    delay = backoff_delay(faults, s.retry_backoff, s.retry_backoff_max, exc.retry_after)
    log.warning(
        "conversation job %s fault=%d retry_in=%.0fs reason=%s",
        describe(job),
        faults + 1,
        delay,
        exc,
    )
    job_ledger.job_ended(_kind(job), job, "retried", str(exc))
    raise task.retry(kwargs={"job": job.to_dict(), "faults": faults + 1}, countdown=delay)


def _run(task: Task[Any, Any], runtime: Runtime, raw: dict[str, Any], faults: int) -> Result:
    if limits.stopping():
        raise Reject("worker shutting down", requeue=True)
    try:
        job = ConversationJob.from_dict(raw)
    except JobError as exc:
        return _report(None, "failed", None, str(exc))
    try:
        handler_for(job.trigger)
    except UnknownJobKindError as exc:
        return _report(job, "failed", None, str(exc))
    s = runtime.settings
    try:
        lock = PRLock(runtime.state(), f"conversation:{job.key}", s.lock_lease)
        if not lock.acquire():
            delay = backoff_delay(0, s.lock_retry_delay, s.lock_retry_delay)
            log.info("conversation job %s waits for its lock retry_in=%.1fs", describe(job), delay)
            raise task.retry(kwargs={"job": raw, "faults": faults}, countdown=delay)
    except PRStateError as exc:
        # The lock was not taken: after the last retry, no notice (another run may hold it).
        return _retry(task, runtime, job, faults, exc, fencing.refused("the comment's lock"))
    try:
        return _run_locked(task, runtime, job, faults, lock)
    finally:
        lock.release()


def _run_locked(
    task: Task[Any, Any], runtime: Runtime, job: ConversationJob, faults: int, lock: PRLock
) -> Result:
    s = runtime.settings
    in_pool_thread = threading.current_thread() is not threading.main_thread()
    guard = TaskGuard(
        s.soft_time_limit if in_pool_thread else None,
        s.hard_time_limit if in_pool_thread else None,
        lock.abandon,
    )
    # The comment's lock, asked of the store before each post (workers.state.fencing).
    fence = fencing.fence({"the comment's lock": lock})
    try:
        with guard:
            outcome = run_conversation(job, runtime.context(), fence)
    except (GitNeuralError, SoftTimeLimitExceeded, ShutdownInterrupt) as exc:
        if guard.fired is ShutdownInterrupt or isinstance(exc, ShutdownInterrupt):
            log.warning("conversation job %s interrupted by shutdown: requeued", describe(job))
            raise Reject("worker shutting down", requeue=True) from None
        if guard.fired is SoftLimitInterrupt or isinstance(exc, SoftTimeLimitExceeded):
            limit = f"{s.soft_time_limit:.0f} s"
            return _report(job, "failed", None, f"stopped at the soft time limit of {limit}")
        if isinstance(exc, GitNeuralError) and exc.transient:
            return _retry(task, runtime, job, faults, exc, fence)
        if isinstance(exc, GitNeuralError):
            return _report(job, "failed", None, str(exc))
        raise
    if guard.hard_limit_passed:
        return _report(
            job, "failed", None, f"passed the hard time limit of {s.hard_time_limit:.0f} s"
        )
    return _report(job, outcome.status, outcome.comment_id, outcome.detail)

"""The Celery tasks: the review queue's turns, and the ``eyes`` reaction on the fast queue
(the conversation task, a reply or ``/ask`` per message, is in
:mod:`workers.celeryapp.conversation_task`).

A review message is a **turn** (``turn``: a label for the logs): the thread that runs it
claims the next review job from the schedule and runs it
(:mod:`workers.celeryapp.take_turn`).
A message of the older format (``job``, ``seq``, ``faults``: sent before the schedule
existed) first puts its job in the schedule. Turns are acknowledged when a thread starts
them: the job is held by its lease in the schedule from then on, so a worker that dies
gives it back within the lease, and no message waits unacknowledged for a whole review.

Every job ends in one log line ``review job … outcome=<status>``.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Final

from bot.errors import GitNeuralError
from bot.jobs import JobError, ReviewJob
from bot.usecases.review import run as jobrun
from workers.celeryapp import ledger as job_ledger
from workers.celeryapp.backoff import backoff_delay
from workers.celeryapp.conversation_task import register_conversation_task
from workers.celeryapp.outcomes import Result, describe
from workers.celeryapp.runtime import Runtime
from workers.celeryapp.sweeper import watch_review_workers
from workers.celeryapp.take_turn import take_turn
from workers.celeryapp.task_names import EYES_TASK, REVIEW_TASK
from workers.settings import WorkerSettings

if TYPE_CHECKING:
    from celery import Celery, Task

log = logging.getLogger("gitneural.worker")

#: The reaction is one request: short limits, a few quick retries.
EYES_SOFT_LIMIT: Final = 60.0
EYES_HARD_LIMIT: Final = 90.0
EYES_MAX_RETRIES: Final = 3


def register_tasks(app: Celery, settings: WorkerSettings) -> Runtime:
    """Define the tasks on ``app``; returns the runtime they share."""
    runtime = Runtime(settings, app)
    watch_review_workers(app, runtime)
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
        max_retries=None,  # faults are counted in the schedule, not by Celery
        acks_late=False,  # a turn; the job it runs is held by its lease (see above)
        ignore_result=True,
        **review_limits,
    )
    def review(
        self: Task[Any, Any],
        job: dict[str, Any] | None = None,
        seq: int | None = None,
        faults: int = 0,
        turn: str | None = None,
    ) -> Result:
        return take_turn(self, runtime, job, seq, faults)

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
        if not exc.transient or faults >= EYES_MAX_RETRIES:
            log.warning("eyes reaction %s failed: %s", describe(job), exc)
            job_ledger.job_ended("eyes", job, "failed", str(exc))
            return {"status": "failed", "detail": str(exc)}
        delay = backoff_delay(faults, 2.0, 60.0, exc.retry_after)
        job_ledger.job_ended("eyes", job, "retried", str(exc))
        raise task.retry(kwargs={"job": raw, "faults": faults + 1}, countdown=delay) from None
    log.info("eyes reaction %s added", describe(job))
    job_ledger.job_ended("eyes", job, "reacted", "")
    return {"status": "reacted"}

"""One turn of the review queue: claim the next job and run it (see
:mod:`workers.celeryapp.turn_messages`).

The job comes from the schedule, held by a renewed lease (:mod:`workers.schedule.leases`). Then,
as before the schedule existed:

1. it ends ``superseded`` if a newer head of the PR was queued after it;
2. it takes the PR's lock, or waits ``lock_retry_delay`` in the schedule (not a fault);
3. it runs :func:`bot.usecases.review.run.run_review_job` with ``still_current`` (no newer
   head queued; a job it calls current whose head GitHub has moved past reviews the PR's
   head: deliveries come out of order) and its ``fence`` (claim and lock still this
   run's, asked of the store at the moment of each write to GitHub:
   :mod:`workers.state.fencing`), under the soft and hard time limits; a ``/review``
   makes sure of its ``eyes`` reaction first; a job put back in line after its worker
   stopped (``resume``) carries on the check run that worker left;
4. a transient fault waits in the schedule with exponential backoff and jitter, at
   least the ``retry_after`` GitHub or the model asked for; after ``max_retries`` faults,
   or at the soft time limit, the outcome is ``failed`` (the runner completes the check).

A worker that stops (SIGTERM) puts its unfinished jobs back at the front of their lines.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

from celery.exceptions import SoftTimeLimitExceeded

from bot.errors import GitNeuralError
from bot.jobs import JobError, ReviewJob
from bot.usecases.context import JobContext
from bot.usecases.errors import FencedError
from bot.usecases.review import run as jobrun
from workers.celeryapp import ledger as job_ledger
from workers.celeryapp import time_limits as limits
from workers.celeryapp.backoff import backoff_delay
from workers.celeryapp.outcomes import Result, describe, report
from workers.celeryapp.runtime import Runtime
from workers.celeryapp.time_limits import ShutdownInterrupt, SoftLimitInterrupt, TaskGuard
from workers.schedule.leases import ClaimLease
from workers.schedule.protocol import MAX_RECOVERIES, Claim, ScheduleError, entry_for
from workers.state import fencing
from workers.state.pr_lock import PRLock, PRState, PRStateError, is_current, pr_key

if TYPE_CHECKING:
    from celery import Task

log = logging.getLogger("gitneural.worker")

#: Seconds a turn waits for a free review thread before it is handed on.
HAND_ON_AFTER: Final = 1.0


def take_turn(
    task: Task[Any, Any], rt: Runtime, raw: dict[str, Any] | None, seq: int | None, faults: int
) -> Result:
    if raw is not None:
        # A message from before the schedule (a rolling upgrade): put its job in line.
        try:
            job = ReviewJob.from_dict(raw)
        except JobError as exc:
            return report(None, "failed", None, str(exc))  # never gets better: drop it
        try:
            entry = entry_for(job, seq, rt.settings, None).with_changes(faults=faults)
            rt.schedule().enqueue(entry)
        except ScheduleError as exc:
            raise task.retry(countdown=rt.settings.lock_retry_delay, exc=exc) from None
    if limits.stopping():
        # Received while the worker stops: leave the turn to a worker that stays.
        _give_turn(rt, None, "a turn handed on by a stopping worker")
        return {"status": "handed-on"}
    # Every review thread busy: this turn must not wait here, unacknowledged in the
    # broker, for a review to end (RabbitMQ would cut the channel after its
    # consumer_timeout): wait a moment for a thread, else hand the turn on.
    slots = rt.slots  # the one acquired is the one released, even if resized meanwhile
    if not slots.acquire(timeout=HAND_ON_AFTER):
        _give_turn(rt, None, "a turn handed on: every review thread was busy")
        return {"status": "handed-on"}
    try:
        return _claim_and_run(rt)
    finally:
        slots.release()


def _claim_and_run(rt: Runtime) -> Result:
    s = rt.settings
    try:
        claim = rt.schedule().claim(
            rt.worker_id, s.worker_host, s.lock_lease, s.installation_concurrency
        )
    except ScheduleError as exc:
        log.warning("review turn: no job taken (%s); a sweep gives the turn out again", exc)
        return {"status": "no-schedule"}
    if claim is None:
        log.debug("review turn: nothing may run now")
        return {"status": "idle"}
    return run_claim(rt, claim)


def run_claim(rt: Runtime, claim: Claim) -> Result:
    # Every line of the job, and its record, carry its delivery, PR, head and id.
    with job_ledger.job_scope(claim.entry.job, claim.entry.id):
        return _run_claimed(rt, claim)


def _run_claimed(rt: Runtime, claim: Claim) -> Result:
    try:
        job = ReviewJob.from_dict(claim.entry.job)
    except JobError as exc:
        return _end(rt, claim, None, "failed", None, str(exc))
    if claim.entry.recoveries > MAX_RECOVERIES:
        detail = f"its worker stopped {claim.entry.recoveries} times while reviewing it"
        return _end(rt, claim, job, "failed", None, detail)
    lease = ClaimLease(rt.schedule(), claim, rt.settings.lock_lease).start()
    resumed = " resuming a stopped run" if claim.entry.resume else ""
    log.info("review job %s started by %s%s", describe(job), rt.worker_id, resumed)
    try:
        return _run(rt, claim, job, lease)
    finally:
        lease.stop()


def _give_turn(rt: Runtime, home: str | None, label: str) -> None:
    try:
        rt.turns().give(home, label)
    except rt.turns().errors as exc:
        log.warning("a turn was not published (%s); a sweep gives it out", type(exc).__name__)


def _end(
    rt: Runtime, claim: Claim, job: ReviewJob | None, status: str, review: int | None, detail: str
) -> Result:
    result = report(job, status, review, detail)
    try:
        if rt.schedule().finish(claim):
            _give_turn(rt, None, "a turn given out again")
    except ScheduleError as exc:
        # The lease runs out and the job comes back; it then finds its review by its marker.
        log.warning("job %s not marked done: %s", claim.entry.id, exc)
    return result


def _defer(rt: Runtime, claim: Claim, delay: float, faults: int) -> None:
    try:
        if rt.schedule().defer(claim, delay, faults=faults):
            _give_turn(rt, None, "a turn given out again")
    except ScheduleError as exc:
        log.warning("job %s not put back: %s (its lease runs out instead)", claim.entry.id, exc)


def _retry(rt: Runtime, claim: Claim, job: ReviewJob, exc: GitNeuralError) -> Result:
    """Wait in the schedule after a transient fault, or fail when the retries are spent."""
    s, faults = rt.settings, claim.entry.faults
    if faults >= s.max_retries:
        return _end(rt, claim, job, "failed", None, f"gave up after {faults + 1} attempts: {exc}")
    delay = backoff_delay(faults, s.retry_backoff, s.retry_backoff_max, exc.retry_after)
    log.warning(
        "review job %s fault=%d retry_in=%.0fs reason=%s", describe(job), faults + 1, delay, exc
    )
    job_ledger.job_ended("review", job, "retried", str(exc))
    _defer(rt, claim, delay, faults + 1)
    return {"status": "retrying", "review_id": None, "detail": str(exc)}


def _superseded(state: PRState, key: str, job: ReviewJob, seq: int | None) -> bool:
    # A /review (no head) reviews the head current when it runs: never stale in the queue.
    return job.head_sha is not None and not is_current(state.latest(key), job.head_sha, seq)


def _run(rt: Runtime, claim: Claim, job: ReviewJob, lease: ClaimLease) -> Result:
    s, seq = rt.settings, claim.entry.seq
    key = pr_key(job.repo, job.pr_number)
    try:
        state = rt.state()
        if _superseded(state, key, job, seq):
            return _end(rt, claim, job, "superseded", None, "a newer head of the PR was queued")
        lock = PRLock(state, key, s.lock_lease, owner=claim.owner)
        if not lock.acquire():
            # Another job of this PR runs: come back later, without counting a fault.
            delay = backoff_delay(0, s.lock_retry_delay, s.lock_retry_delay)
            log.info("review job %s waits for the PR lock retry_in=%.1fs", describe(job), delay)
            _defer(rt, claim, delay, claim.entry.faults)
            return {"status": "waiting", "review_id": None, "detail": "the PR is busy"}
    except PRStateError as exc:
        return _retry(rt, claim, job, exc)
    try:
        # A newer head may have been queued while this job waited for the lock.
        if _superseded(state, key, job, seq):
            return _end(rt, claim, job, "superseded", None, "a newer head of the PR was queued")
        return _run_locked(rt, claim, job, state, lock, lease)
    except PRStateError as exc:
        return _retry(rt, claim, job, exc)
    finally:
        lock.release()


def _run_locked(
    rt: Runtime, claim: Claim, job: ReviewJob, state: PRState, lock: PRLock, lease: ClaimLease
) -> Result:
    s, seq = rt.settings, claim.entry.seq
    key = pr_key(job.repo, job.pr_number)
    abandoned = threading.Event()

    # Asked at the moment of each write to GitHub (workers.state.fencing): a run whose
    # claim or lock was taken over, or whose store cannot be reached, posts nothing.
    fence = fencing.fence({"the claim on the job": lease, "the PR's lock": lock}, abandoned.is_set)

    def still_current(head_sha: str) -> bool:
        fence()
        try:
            return is_current(state.latest(key), head_sha, seq)
        except PRStateError as exc:
            raise FencedError(f"the PR's head record cannot be read ({exc})") from None

    def on_hard_limit() -> None:
        abandoned.set()
        lock.abandon()
        lease.stop()
        try:
            rt.schedule().finish(claim)  # the job is over, whatever the stuck thread does
        except ScheduleError as exc:
            log.warning("job %s not marked done at its hard limit: %s", claim.entry.id, exc)

    ctx = rt.context()
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
                _ensure_eyes(job, ctx, fence)
            outcome = jobrun.run_review_job(
                job,
                ctx,
                still_current=still_current,
                # A retry carries on the check run too: its first attempt may have been
                # cut off from GitHub before it could pause it.
                redelivered=claim.entry.resume or claim.entry.faults > 0,
                fence=fence,
                # The PR's head record sees every submission: a job it calls current
                # whose head GitHub moved past reviews the PR's head.
                adopt_moved_head=True,
            )
    except (GitNeuralError, SoftTimeLimitExceeded, ShutdownInterrupt) as exc:
        if guard.fired is ShutdownInterrupt or isinstance(exc, ShutdownInterrupt):
            log.warning("review job %s interrupted by shutdown: requeued", describe(job))
            _release(rt, claim)
            return {"status": "requeued", "review_id": None, "detail": "worker shutting down"}
        if guard.fired is SoftLimitInterrupt or isinstance(exc, SoftTimeLimitExceeded):
            detail = f"stopped at the soft time limit of {s.soft_time_limit:.0f} s"
            return _end(rt, claim, job, "failed", None, detail)
        if isinstance(exc, GitNeuralError) and exc.transient:
            return _retry(rt, claim, job, exc)
        if isinstance(exc, GitNeuralError):
            return _end(rt, claim, job, "failed", None, str(exc))
        raise
    if abandoned.is_set() or guard.hard_limit_passed:
        detail = f"passed the hard time limit of {s.hard_time_limit:.0f} s"
        return _end(rt, claim, job, "failed", None, detail)
    return _end(rt, claim, job, outcome.status, outcome.review_id, outcome.detail)


def _release(rt: Runtime, claim: Claim) -> None:
    try:
        if rt.schedule().release(claim):
            _give_turn(rt, claim.entry.home, "a job put back by a stopping worker")
    except ScheduleError as exc:
        log.warning("job %s not put back: %s (its lease runs out instead)", claim.entry.id, exc)


def _ensure_eyes(job: ReviewJob, ctx: JobContext, fence: Callable[[], None]) -> None:
    """The fast queue's task reacts at once; this makes sure the reaction also comes
    before the review when that task is late (a cold worker) or was lost. GitHub keeps
    one reaction per user, so the second request changes nothing."""
    try:
        jobrun.add_eyes_reaction(job, ctx, fence)
    except GitNeuralError as exc:
        log.warning("eyes reaction %s failed: %s", describe(job), exc)

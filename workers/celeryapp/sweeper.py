"""The sweep every review worker runs, about once a second, next to its review threads.

1. **Heartbeat**: the worker says it is alive, on which host, with how many review
   threads (the default per-installation limit and routing by repository use that).
2. **Recovery**: jobs whose lease ran out (their worker stopped renewing: killed, its
   host gone) go back to the front of their installation's line, marked to carry on the
   check run their worker left; their PR lock is released (it has the claim's owner) so
   the new run can start at once; each gets a turn. A worker never recovers its own.
3. **Due again**: jobs whose delay is over (a busy PR, a backoff) get a turn.
4. **Nobody claiming**: if jobs could run, threads are free and no worker asked for a job
   for a few seconds (a turn lost with a dead worker, or held by a busy one), turns are
   given out.

So a dead worker's review resumes within ``GITNEURAL_LOCK_LEASE`` (60 s) and a second or
two, on every broker; the broker's visibility timeout is only a last resort for turns.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING, Any, Final

from celery.signals import worker_ready, worker_shutting_down

from bot.jobs import JobError, ReviewJob
from workers.celeryapp.runtime import Runtime
from workers.schedule.protocol import Returned, ScheduleError
from workers.state.pr_lock import PRStateError, pr_key

if TYPE_CHECKING:
    from celery import Celery

log = logging.getLogger("gitneural.worker")

#: Seconds without a claim, while jobs wait and threads are free, before turns are given out.
PATIENCE: Final = 5.0


class Sweeper:
    def __init__(self, runtime: Runtime, slots: int) -> None:
        self.rt, self.slots = runtime, slots
        self.interval = min(1.0, runtime.settings.lock_lease / 4)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="gitneural-sweep", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        try:
            self.rt.schedule().leave(self.rt.worker_id)
        except ScheduleError as exc:
            log.warning("could not leave the worker registry (it expires): %s", exc)

    def _loop(self) -> None:
        errors: tuple[type[BaseException], ...] = (ScheduleError, *self.rt.turns().errors)
        while not self._stop.is_set():
            try:
                self.sweep()
            except errors as exc:
                # A broker error's text may carry its URL (and password): name the kind.
                said = exc if isinstance(exc, ScheduleError) else type(exc).__name__
                log.warning("sweep failed, trying again: %s", said)
            self._stop.wait(self.interval)

    def sweep(self) -> None:
        rt, s = self.rt, self.rt.settings
        schedule = rt.schedule()
        schedule.heartbeat(rt.worker_id, s.worker_host, self.slots, ttl=10 * self.interval + 5)
        for back in schedule.recover(skip_worker=rt.worker_id):
            self._free_pr(back)
            rt.turns().give(back.entry.home, f"job {back.entry.id} put back")
        for due in schedule.promote():
            rt.turns().give(due.entry.home, f"job {due.entry.id} due again")
        missing = schedule.stalled(PATIENCE, s.installation_concurrency)
        if missing:
            log.info("sweep: %d job(s) waited without a turn; turns given out", missing)
            rt.turns().give(None, "a turn for a job nobody claimed", count=missing)

    def _free_pr(self, back: Returned) -> None:
        try:
            job = ReviewJob.from_dict(back.entry.job)
        except JobError:
            return  # its run reports it
        log.warning(
            "review job delivery=%s repo=%s pr=%d put back in line: its worker stopped "
            "renewing the lease",
            job.delivery_id,
            job.repo,
            job.pr_number,
        )
        if back.owner is None:
            return
        try:
            self.rt.state().release(pr_key(job.repo, job.pr_number), back.owner)
        except PRStateError as exc:
            log.warning("the PR lock of a stopped run was not released (it expires): %s", exc)


def watch_review_workers(app: Celery, runtime: Runtime) -> None:
    """Run a :class:`Sweeper` in every worker of ``app`` that consumes the review queue."""
    sweepers: list[Sweeper] = []
    review_queue = runtime.settings.review_queue

    def on_ready(sender: Any = None, **_: Any) -> None:
        if sender is None or getattr(sender, "app", None) is not app or sweepers:
            return
        queues = {q.name for q in sender.task_consumer.queues}
        if review_queue not in queues:
            return  # a fast-queue worker runs no reviews
        threads = int(sender.pool.num_processes or 1)
        if runtime.settings.pool == "threads":
            runtime.size_slots(threads)
        sweeper = Sweeper(runtime, runtime.slot_count)
        sweeper.start()
        sweepers.append(sweeper)

    def on_shutting_down(**_: Any) -> None:
        while sweepers:
            sweepers.pop().stop()

    worker_ready.connect(on_ready, weak=False)
    worker_shutting_down.connect(on_shutting_down, weak=False)

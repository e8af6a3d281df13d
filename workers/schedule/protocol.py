"""The review schedule: which queued review runs next, on which worker, and who holds it.

Review jobs live here, in Redis (shared by every host) or SQLite (one machine), from the
moment the webhook accepts them until they end. The broker carries only **turns**: a
message that wakes one worker thread to run whatever job is next
(:mod:`workers.celeryapp.turn_messages`).
That split is what makes three promises possible at once:

- **fair turns**: the next job is chosen when a thread is free, not when the job was
  published. Installations take turns (the one served least recently goes first); while
  another installation is active each runs at most ``limit`` reviews at once (alone, it
  may use every thread: no thread idles while work waits), and within an installation a
  ``/review`` by a person goes ahead of automatic reviews. A FIFO broker queue cannot do that; one
  atomic "claim" in the store can, for every worker on every host.
- **leases, not visibility timeouts**: a claimed job is held by a lease its worker renews
  while the review runs. A worker that dies stops renewing; any other worker's sweep puts
  the job back at the front of its installation's line, marked ``resume`` (carry on the
  check run), within the lease. The broker's own visibility timeout never matters for a
  running review, and no broker message stays unacknowledged while a review runs (so
  RabbitMQ's ``consumer_timeout`` never cuts one short).
- **locality**: a job remembers the worker host its repository prefers (its mirror
  cache, :mod:`workers.schedule.routing`); a worker on that host takes it before the others do.

Lanes: ``command`` (``/review``) before ``auto``. Positions within a lane are numbers: new
jobs go to the back, jobs put back (recovered, released, due again) to the front.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from workers.schedule.types import (
    ACTIVE_WINDOW,
    FIFO_KEY,
    LANES,
    LOCALITY_WINDOW,
    MAX_RECOVERIES,
    Claim,
    HostLoad,
    Lane,
    QueuedJob,
    Returned,
    ScheduleError,
    default_limit,
    limit_applies,
    new_owner,
    worker_of,
)

if TYPE_CHECKING:
    from bot.jobs import ReviewJob
    from workers.settings import WorkerSettings

__all__ = [
    "ACTIVE_WINDOW",
    "FIFO_KEY",
    "LANES",
    "LOCALITY_WINDOW",
    "MAX_RECOVERIES",
    "Claim",
    "HostLoad",
    "Lane",
    "QueuedJob",
    "Returned",
    "Schedule",
    "ScheduleError",
    "default_limit",
    "entry_for",
    "limit_applies",
    "new_owner",
    "open_schedule",
    "worker_of",
]


class Schedule(Protocol):
    """Every operation is atomic in the store (a Lua script, an SQLite transaction)."""

    def enqueue(self, entry: QueuedJob) -> None: ...

    def withdraw(self, entry: QueuedJob) -> bool:
        """Take a job back that is still waiting (its turn could not be published)."""
        ...

    def claim(self, worker: str, host: str, lease: float, limit: int) -> Claim | None:
        """The next job by the rules above, held for ``lease`` seconds by a new owner of
        ``worker``; ``None`` when nothing may run now. ``limit``: reviews at once per
        installation, always; ``0`` for the default: :func:`default_limit` of the live
        slots, only while another installation has jobs here or had a review end within
        :data:`ACTIVE_WINDOW` (:func:`limit_applies`)."""
        ...

    def renew(self, claim: Claim, lease: float) -> bool:
        """Extend the lease; ``False`` if the job is no longer this claim's."""
        ...

    def finish(self, claim: Claim) -> bool:
        """The job ended: forget it. ``True`` when a turn dropped earlier (every job left
        was waiting for a free place) must be given out again now."""
        ...

    def defer(self, claim: Claim, delay: float, *, faults: int) -> bool:
        """Run it again in ``delay`` seconds (a busy PR, a transient fault); like
        :meth:`finish`, ``True`` when a dropped turn must be given out again."""
        ...

    def release(self, claim: Claim) -> bool:
        """Put it back at the front at once, to resume (a worker shutting down); ``False``
        if it was no longer this claim's."""
        ...

    def recover(self, skip_worker: str) -> list[Returned]:
        """Put back every job whose lease ran out (except ``skip_worker``'s own: it is
        alive, it is asking)."""
        ...

    def promote(self) -> list[Returned]:
        """Jobs whose delay is over, back in line."""
        ...

    def stalled(self, patience: float, limit: int) -> int:
        """Turns to give out when jobs could run, threads are free and no claim came for
        ``patience`` seconds (a turn lost with a worker, or held by a busy one)."""
        ...

    def heartbeat(self, worker: str, host: str, slots: int, ttl: float) -> None:
        """A worker and its review threads, alive for ``ttl`` more seconds."""
        ...

    def leave(self, worker: str) -> None: ...

    def hosts(self) -> dict[str, HostLoad]:
        """Live worker hosts and their load."""
        ...

    def pending(self) -> int:
        """Jobs waiting (not running, not delayed)."""
        ...


def entry_for(
    job: ReviewJob, seq: int | None, settings: WorkerSettings, home: str | None
) -> QueuedJob:
    """``job`` as the schedule keeps it: whose turn it uses, its lane, its home host."""
    fifo = settings.schedule == "fifo"
    return QueuedJob(
        job.to_dict(),
        seq,
        turn_key=FIFO_KEY if fifo else str(job.installation_id),
        lane="command" if job.trigger == "command" else "auto",
        home=home,
    )


def open_schedule(settings: WorkerSettings) -> Schedule:
    if settings.state_url is not None:
        from workers.schedule.redis_store import RedisSchedule

        return RedisSchedule(settings.state_url, prefix=f"{settings.prefix}:fq:")
    from workers.schedule.sqlite_store import SQLiteSchedule

    return SQLiteSchedule(settings.data_dir / "schedule.sqlite3")

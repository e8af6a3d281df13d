"""What the review schedule holds (:mod:`workers.schedule.protocol` says how it is used): a queued
job, a claim on one, a worker host's load, a job put back in line, and the rules its stores
share (the default per-installation limit and when it applies, owner tokens)."""

from __future__ import annotations

import json
import math
import uuid
from dataclasses import dataclass, field, replace
from typing import Any, Final, Literal

from bot.errors import GitNeuralError

Lane = Literal["command", "auto"]
LANES: Final[tuple[Lane, ...]] = ("command", "auto")
#: The turn key of every job under ``GITNEURAL_SCHEDULE=fifo``: one line, arrival order.
FIFO_KEY: Final = "*"
#: How many jobs at the front of a lane a claim looks through for one of its own host.
LOCALITY_WINDOW: Final = 16
#: A job put back this many times because its worker stopped is reported failed.
MAX_RECOVERIES: Final = 3
#: Seconds an installation still counts as active after one of its reviews ended: while
#: another installation is active, the default limit keeps threads free for it (its next
#: review starts at once, not after one of a backlog's).
ACTIVE_WINDOW: Final = 300.0
#: "No limit": more than any worker pool has threads.
UNLIMITED: Final = 1 << 30


class ScheduleError(GitNeuralError):
    """The schedule's store cannot be read or written (retried; nothing is lost)."""

    transient = True
    retry_after: float | None = None


@dataclass(frozen=True)
class QueuedJob:
    """One review job in the schedule: the webhook's job and what the schedule adds."""

    #: Job dictionary (:meth:`bot.jobs.ReviewJob.to_dict`) and its submission number.
    job: dict[str, Any]
    seq: int | None
    #: Whose turn it uses: the installation id, or :data:`FIFO_KEY`.
    turn_key: str
    lane: Lane
    #: The worker host whose mirror cache should serve it; ``None``: any.
    home: str | None = None
    id: str = field(default_factory=lambda: uuid.uuid4().hex)
    #: Transient failures so far (the backoff's exponent).
    faults: int = 0
    #: A run of it started before and stopped (worker died, shutdown): carry on its check run.
    resume: bool = False
    #: Times it was put back because its worker stopped renewing the lease.
    recoveries: int = 0

    def blob(self) -> str:
        """What never changes while it is queued: stored once, as JSON."""
        return json.dumps({"job": self.job, "seq": self.seq}, separators=(",", ":"))

    @classmethod
    def from_parts(cls, id: str, blob: str, fields: dict[str, str]) -> QueuedJob:
        data = json.loads(blob)
        lane = fields.get("lane", "auto")
        return cls(
            job=data["job"],
            seq=data.get("seq"),
            turn_key=fields.get("inst", FIFO_KEY),
            lane="command" if lane == "command" else "auto",
            home=fields.get("home") or None,
            id=id,
            faults=int(fields.get("faults") or 0),
            resume=fields.get("resume") in ("1", "true"),
            recoveries=int(fields.get("recoveries") or 0),
        )

    def with_changes(self, **changes: Any) -> QueuedJob:
        return replace(self, **changes)


@dataclass(frozen=True)
class Claim:
    """A job taken by one worker thread; ``owner`` also owns the job's PR lock."""

    entry: QueuedJob
    owner: str


@dataclass(frozen=True)
class HostLoad:
    """A worker host as its live workers reported it: review threads and those busy."""

    slots: int
    running: int

    @property
    def free(self) -> int:
        return max(0, self.slots - self.running)


@dataclass(frozen=True)
class Returned:
    """A job put back in line (recovered or due again): it needs a turn of its own."""

    entry: QueuedJob
    #: The owner whose run stopped (recovery), to release that run's PR lock.
    owner: str | None = None


def default_limit(slots: int) -> int:
    """Reviews one installation may run at once by default **while another installation
    is active** (has jobs in the schedule, or had a review end within
    :data:`ACTIVE_WINDOW`): three quarters of the review threads of all live workers (at
    least 1), so the other's next review finds a free thread at once even when one
    installation has hundreds queued. An installation alone is not limited: the stores
    apply this only when :func:`limit_applies` (work conserving: no thread idles while
    the only installation with work waits)."""
    if slots <= 0:
        return UNLIMITED  # no worker has reported in yet: nothing to size against
    return max(1, slots - math.ceil(slots / 4))


def limit_applies(limit: int, others_active: bool) -> bool:
    """The rule both stores implement (SQLite in a transaction, Redis in Lua): an explicit
    ``GITNEURAL_INSTALLATION_CONCURRENCY`` always holds; the default (``0``) only while
    another installation is active."""
    return limit > 0 or others_active


def new_owner(worker: str) -> str:
    """A claim's owner token: the worker's id, so a sweep can tell its own claims."""
    return f"{worker}/{uuid.uuid4().hex}"


def worker_of(owner: str) -> str:
    return owner.rpartition("/")[0]

"""One run per pull request at a time, and a newer head supersedes an older queued job.

Two records per PR, kept in Redis (shared by every host) or SQLite (one machine):

- the **latest head**: written by the webhook when it queues a job (before publishing,
  so no job can start before its own record exists). Every submission bumps ``seq``; one
  that names a head also sets ``head`` and ``head_seq``. A job compares it with its own
  head and ``seq`` (:func:`is_current`): a queued job for an older head exits as
  superseded, and a running one is refused the post.
- the **lock**: an owner token with a lease, taken by the job that runs and renewed by a
  heartbeat while it runs (:class:`PRLock`); a second job for the PR tries again later.
  If a worker dies, the lease runs out and the PR is free again.
"""

from __future__ import annotations

import logging
import uuid
from typing import Protocol

from workers.settings import WorkerSettings
from workers.state.heartbeat import Heartbeat
from workers.state.pr_records import HeadRecord, PRStateError, RedisPRState, SQLitePRState

__all__ = [
    "HeadRecord",
    "PRLock",
    "PRState",
    "PRStateError",
    "RedisPRState",
    "SQLitePRState",
    "is_current",
    "open_pr_state",
    "pr_key",
]

log = logging.getLogger("gitneural.worker")


def pr_key(repo: str, pr_number: int) -> str:
    # GitHub treats owner and repository names case-insensitively.
    return f"{repo.lower()}#{pr_number}"


def is_current(record: HeadRecord | None, head_sha: str, seq: int | None) -> bool:
    """May a job submitted as number ``seq`` post a review of ``head_sha``?

    Yes when nothing newer is known: no record, the record's head is this head, or no
    submission naming a head came after this job's (a ``/review`` reviews whatever head
    is current when it runs).
    """
    if record is None or record.head_sha is None or record.head_sha == head_sha:
        return True
    return seq is not None and record.head_seq <= seq


class PRState(Protocol):
    def note_submitted(self, key: str, head_sha: str | None) -> int:
        """Record a submission; returns its ``seq``."""
        ...

    def latest(self, key: str) -> HeadRecord | None: ...

    def acquire(self, key: str, owner: str, lease: float) -> bool:
        """Take the lock if free, expired or already ``owner``'s."""
        ...

    def renew(self, key: str, owner: str, lease: float) -> bool:
        """Extend ``owner``'s lease; ``False`` if the lock is no longer ``owner``'s."""
        ...

    def release(self, key: str, owner: str) -> None: ...


def open_pr_state(settings: WorkerSettings) -> PRState:
    if settings.state_url is not None:
        return RedisPRState(settings.state_url, prefix=f"{settings.prefix}:pr:")
    return SQLitePRState(settings.data_dir / "pr-state.sqlite3")


class PRLock:
    """The lock of one PR, held by one job, with a heartbeat renewing its lease.

    ``lost`` turns true when a renewal finds the lock taken over (the lease ran out while
    the store was unreachable) or after :meth:`abandon`: the job must then not post.
    """

    def __init__(self, state: PRState, key: str, lease: float, owner: str | None = None) -> None:
        self._state, self.key, self._lease = state, key, lease
        #: The job's claim owner, so a sweep that puts the job of a dead worker back in
        #: line can also free its PR (:mod:`workers.celeryapp.sweeper`).
        self.owner = owner or uuid.uuid4().hex
        self._heartbeat = Heartbeat(
            lambda: state.renew(key, self.owner, lease),
            lease,
            name=f"gitneural-lease-{key}",
            what=f"the lock on {key}",
            unreachable=PRStateError,
        )

    @property
    def lost(self) -> bool:
        return self._heartbeat.lost

    def held(self) -> bool:
        """Renewed now: is the PR still this lock's? Raises :class:`PRStateError` when the
        store cannot say."""
        return self._heartbeat.held()

    def acquire(self) -> bool:
        if not self._state.acquire(self.key, self.owner, self._lease):
            return False
        self._heartbeat.start()
        return True

    def release(self) -> None:
        self._heartbeat.stop()
        try:
            self._state.release(self.key, self.owner)
        except PRStateError as exc:
            # The lease runs out on its own.
            log.warning("lock on %s not released: %s", self.key, exc)

    def abandon(self) -> None:
        """Give the PR up while the job may still be running (hard time limit)."""
        self._heartbeat.mark_lost()
        self.release()

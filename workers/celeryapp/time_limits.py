"""Time limits and shutdown for reviews running in pool threads.

Celery enforces ``soft_time_limit``/``time_limit`` only in the prefork pool (a signal in
the child, then a kill). Reviews are I/O-bound, so GitNeural's default pool is threads,
and there Celery enforces nothing. :class:`TaskGuard` fills the gap the way the prefork
pool's soft limit works: it raises an exception inside the task's thread (CPython's
``PyThreadState_SetAsyncExc``), at the next bytecode the thread runs.

- at the soft limit, :class:`SoftLimitInterrupt`: the task reports a failed review;
- at the hard limit, ``on_hard_limit`` runs (the task gives its PR lock up and refuses to
  post): a thread cannot be killed, but a stuck one can no longer do harm;
- when the worker shuts down and a review is still running after the grace period,
  :class:`ShutdownInterrupt`: the task puts its message back for another worker.

The soft-limit interrupt is Celery's own ``SoftTimeLimitExceeded`` (as in prefork), so
the job runner's outer boundary completes the check run as failed. A library that
catches ``Exception`` (a retrying HTTP client) may turn an interrupt into another error:
the task therefore asks :attr:`TaskGuard.fired` which interrupt was raised, whatever
exception reached it.
"""

from __future__ import annotations

import ctypes
import logging
import threading
from collections.abc import Callable
from types import TracebackType

from celery.exceptions import SoftTimeLimitExceeded

log = logging.getLogger("gitneural.worker")


class Interrupt(Exception):
    """Raised into a task thread from outside."""


class SoftLimitInterrupt(Interrupt, SoftTimeLimitExceeded):
    """The review ran past its soft time limit."""


class ShutdownInterrupt(Interrupt):
    """The worker is stopping and the review did not finish within the grace period."""


_guards: set[TaskGuard] = set()
_guards_lock = threading.Lock()


def _set_async_exc(thread_id: int, exc: type[BaseException] | None) -> int:
    # None clears an exception set but not yet raised.
    arg = ctypes.py_object(exc) if exc is not None else None
    return int(ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread_id), arg))


class TaskGuard:
    """Arms the limits for the calling thread; use as a context manager around the work.

    ``fired`` tells which interrupt was raised, if any (check it also when the task
    caught something else: the interrupt may have arrived inside a library's handler).
    """

    def __init__(
        self,
        soft_limit: float | None,
        hard_limit: float | None,
        on_hard_limit: Callable[[], None] = lambda: None,
    ) -> None:
        self._soft, self._hard, self._on_hard = soft_limit, hard_limit, on_hard_limit
        self._lock = threading.Lock()
        self._thread_id = threading.get_ident()
        self._done = False
        self.fired: type[Interrupt] | None = None
        self.hard_limit_passed = False
        self._timers: list[threading.Timer] = []

    def __enter__(self) -> TaskGuard:
        if self._soft is not None:
            self._timers.append(threading.Timer(self._soft, self.interrupt, (SoftLimitInterrupt,)))
        if self._hard is not None:
            self._timers.append(threading.Timer(self._hard, self._hard_limit))
        for timer in self._timers:
            timer.daemon = True
            timer.start()
        with _guards_lock:
            _guards.add(self)
        return self

    def interrupt(self, kind: type[Interrupt]) -> bool:
        """Raise ``kind`` in the task thread, once, and never after the work ended."""
        with self._lock:
            if self._done or self.fired is not None:
                return False
            self.fired = kind
            _set_async_exc(self._thread_id, kind)
            return True

    def _hard_limit(self) -> None:
        with self._lock:
            if self._done:
                return
            self.hard_limit_passed = True
        log.error("a review passed its hard time limit: its PR is released and it will not post")
        self._on_hard()

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        # The interrupt may be pending (set, not yet raised) or be raised right here; keep
        # trying until the guard is disarmed, then clear anything left over.
        while True:
            try:
                with self._lock:
                    self._done = True
                    if self.fired is not None:
                        _set_async_exc(self._thread_id, None)
                break
            except Interrupt:
                continue
        for timer in self._timers:
            timer.cancel()
        with _guards_lock:
            _guards.discard(self)


_stopping = threading.Event()


def mark_stopping() -> None:
    """The worker is shutting down: jobs it still receives must not start."""
    _stopping.set()


def stopping() -> bool:
    return _stopping.is_set()


def interrupt_all(kind: type[Interrupt]) -> int:
    """Interrupt every running guarded task (worker shutdown); returns how many."""
    with _guards_lock:
        guards = list(_guards)
    return sum(guard.interrupt(kind) for guard in guards)


def running() -> int:
    with _guards_lock:
        return len(_guards)

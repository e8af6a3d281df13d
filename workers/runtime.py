"""What a worker process builds once and its task threads share: the job runner's
context (credentials, token cache, mirror cache, model settings) and the PR state."""

from __future__ import annotations

import os
import threading

from workers.context import WorkerContext
from workers.locks import PRState, open_pr_state
from workers.settings import WorkerSettings


class Runtime:
    """What a worker process builds once and its task threads share: the job runner's
    context and the PR state. Rebuilt after a fork (prefork children)."""

    def __init__(self, settings: WorkerSettings) -> None:
        self.settings = settings
        self._lock = threading.Lock()
        self._pid: int | None = None
        self._context: WorkerContext | None = None
        self._state: PRState | None = None

    def _reset_after_fork(self) -> None:
        if self._pid != os.getpid():
            self._pid, self._context, self._state = os.getpid(), None, None

    def state(self) -> PRState:
        with self._lock:
            self._reset_after_fork()
            if self._state is None:
                self._state = open_pr_state(self.settings)
            return self._state

    def context(self) -> WorkerContext:
        with self._lock:
            self._reset_after_fork()
            if self._context is None:
                ctx = WorkerContext.from_env()
                if ctx.review_seconds is None:
                    # The model's part stops on its own before the soft limit interrupts.
                    ctx.review_seconds = 0.9 * self.settings.soft_time_limit
                self._context = ctx
            return self._context

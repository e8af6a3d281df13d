"""What a worker process builds once and its task threads share: the job runner's
context (credentials, token cache, mirror cache, model settings and the deployment's
model budget), the PR state, the review schedule and the publisher of turns."""

from __future__ import annotations

import dataclasses
import os
import threading
import uuid
from typing import TYPE_CHECKING

from bot.usecases.context import JobContext
from workers.celeryapp.turn_messages import TurnPublisher
from workers.schedule.protocol import Schedule, open_schedule
from workers.settings import WorkerSettings
from workers.state.model_rate_limit import open_model_budget
from workers.state.pr_lock import PRState, open_pr_state

if TYPE_CHECKING:
    from celery import Celery


class Runtime:
    """Rebuilt after a fork (prefork children): connections never cross one."""

    def __init__(self, settings: WorkerSettings, app: Celery | None = None) -> None:
        self.settings = settings
        self._app = app
        self._lock = threading.Lock()
        self._pid: int | None = None
        self._context: JobContext | None = None
        self._state: PRState | None = None
        self._schedule: Schedule | None = None
        self._turns: TurnPublisher | None = None
        self.worker_id = ""
        #: Reviews this process runs at once (its pool has one thread more, to hand on
        #: the turns that arrive while every review thread is busy).
        self.slots = threading.BoundedSemaphore(settings.concurrency)
        self.slot_count = settings.concurrency
        with self._lock:
            self._reset_after_fork()

    def _reset_after_fork(self) -> None:
        if self._pid != os.getpid():
            self._pid, self._context, self._state = os.getpid(), None, None
            self._schedule, self._turns = None, None
            #: This process among the workers: its claims carry it (workers.schedule.protocol).
            self.worker_id = f"{self.settings.worker_host}:{os.getpid()}:{uuid.uuid4().hex[:8]}"

    def size_slots(self, pool_threads: int) -> None:
        """Review slots for a pool of ``pool_threads``: all but the one that hands turns on
        (a pool of one thread runs one review)."""
        count = max(1, pool_threads - 1)
        if count != self.slot_count:
            self.slots, self.slot_count = threading.BoundedSemaphore(count), count

    def state(self) -> PRState:
        with self._lock:
            self._reset_after_fork()
            if self._state is None:
                self._state = open_pr_state(self.settings)
            return self._state

    def schedule(self) -> Schedule:
        with self._lock:
            self._reset_after_fork()
            if self._schedule is None:
                self._schedule = open_schedule(self.settings)
            return self._schedule

    def turns(self) -> TurnPublisher:
        schedule = self.schedule()
        with self._lock:
            if self._turns is None:
                assert self._app is not None, "a runtime without its Celery app publishes nothing"
                self._turns = TurnPublisher(self._app, self.settings, schedule)
            return self._turns

    def context(self) -> JobContext:
        with self._lock:
            self._reset_after_fork()
            if self._context is None:
                ctx = JobContext.from_env()
                if ctx.review_seconds is None:
                    # The model's part stops on its own before the soft limit interrupts.
                    ctx.review_seconds = 0.9 * self.settings.soft_time_limit
                budget = open_model_budget(self.settings)
                if budget is not None:
                    # Every model request of every worker takes from one shared budget.
                    ctx.llm = dataclasses.replace(ctx.llm, budget=budget)
                self._context = ctx
            return self._context

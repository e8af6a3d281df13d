"""Turns: the broker messages that wake a worker thread to run the next review.

A turn names no job (the worker claims whichever job :mod:`workers.schedule.protocol` says is
next); its label is only for the logs. One turn is published per job accepted, per job put
back in line, and per dropped turn given out again, so every waiting job has a turn on its
way, and the sweep gives out more if a turn was lost with a worker. A spare turn costs
one claim that finds nothing to do.

Turns go to the review queue, or to the home host's queue (:mod:`workers.schedule.routing`) when
that host is alive and has a free review thread. They are acknowledged when a thread
starts them, before the review: the review itself is held by its lease in the schedule.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import TYPE_CHECKING, Any, Final

import kombu.exceptions

from workers.celeryapp.task_names import REVIEW_TASK
from workers.schedule.protocol import HostLoad, Schedule, ScheduleError
from workers.schedule.routing import home_host, host_queue
from workers.settings import WorkerSettings

if TYPE_CHECKING:
    from celery import Celery

log = logging.getLogger("gitneural.turns")

#: How long the live hosts are remembered by a publisher (the webhook asks per job).
HOSTS_TTL: Final = 5.0
#: How old a remembered load may be when it says a home host is busy.
FRESH_ENOUGH: Final = 0.25


class TurnPublisher:
    def __init__(self, app: Celery, settings: WorkerSettings, schedule: Schedule) -> None:
        self._app, self._settings, self._schedule = app, settings, schedule
        self._hosts: dict[str, HostLoad] = {}
        self._hosts_at = float("-inf")
        self._lock = threading.Lock()
        # Creating a Connection object connects nothing; it names the transport's errors.
        conn = app.connection_for_write()
        try:
            #: What a refused publish raises, on this broker.
            self.errors: tuple[type[BaseException], ...] = (
                kombu.exceptions.KombuError,
                OSError,
                *conn.connection_errors,
                *conn.channel_errors,
            )
        finally:
            conn.release()

    def hosts(self, *, newer_than: float = HOSTS_TTL) -> dict[str, HostLoad]:
        """Live worker hosts, remembered for a few seconds (read again when what is
        remembered is older than ``newer_than``); ``{}`` when routing is off."""
        if self._settings.embedded_broker:
            return {}  # one machine: one mirror cache
        with self._lock:
            if time.monotonic() - self._hosts_at > newer_than:
                try:
                    self._hosts = self._schedule.hosts()
                except ScheduleError as exc:
                    log.warning("worker hosts unknown, turns go to the shared queue: %s", exc)
                    self._hosts = {}
                self._hosts_at = time.monotonic()
            return dict(self._hosts)

    def home(self, repo: str) -> str | None:
        hosts = self.hosts()
        return home_host(repo, hosts) if len(hosts) > 1 else None

    def _free(self, home: str) -> int:
        load = self.hosts().get(home)
        if load is not None and load.free == 0:
            # What is remembered may be seconds old, and the home may have finished since:
            # sending its turn to the shared queue then hands the review (and a clone of
            # its repository) to another host. One more read, only when that is at stake.
            load = self.hosts(newer_than=FRESH_ENOUGH).get(home)
        return load.free if load is not None else 0

    def give(self, home: str | None, label: str, count: int = 1, **options: Any) -> None:
        """Publish ``count`` turns, to ``home``'s queue if it can start one now. Errors
        are the broker's (the caller decides what a refused publish means)."""
        queue: Any = self._settings.review_queue
        if home is not None and self._free(home) > 0:
            queue = host_queue(self._settings, home)
        for _ in range(count):
            self._app.send_task(
                REVIEW_TASK,
                kwargs={"turn": label},
                queue=queue,
                argsrepr="",
                kwargsrepr=label,
                **options,
            )

"""The webhook app as the benchmark serves it: ``gunicorn 'benchmarks.webhook_app:create()'``.

It is the production app (``bot.web.app.create_app``, settings from the environment, the
SQLite or Redis delivery log) with one difference: the job queue only records the jobs in
memory, because the broker's cost is measured with the workers, not here. Each delivery's
log line goes to ``GITNEURAL_BENCH_LOG`` when set, as a deployment would keep them.
"""

from __future__ import annotations

import logging
import os
import threading

import flask

from bot.jobs import ReviewJob
from bot.web.app import create_app
from bot.web.settings import WebSettings


class RecordingQueue:
    """A :class:`bot.jobs.JobQueue` that keeps the delivery id of every job it accepts."""

    def __init__(self) -> None:
        self.delivery_ids: list[str] = []
        self._lock = threading.Lock()

    def submit(self, job: ReviewJob) -> None:
        with self._lock:
            self.delivery_ids.append(job.delivery_id)


def create() -> flask.Flask:
    log_file = os.environ.get("GITNEURAL_BENCH_LOG")
    if log_file:
        handler = logging.FileHandler(log_file)
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        web_log = logging.getLogger("gitneural.web")
        web_log.addHandler(handler)
        web_log.setLevel(logging.INFO)
    return create_app(WebSettings.from_env(), RecordingQueue())

"""Operating the App from the command line: the metrics directory and port, the web
app's readiness probes and status page, JSON logs in Celery and gunicorn, and the
operator's files checked at start-up.

Metrics: the top process of a command (``gitneural serve``, or a ``gitneural worker``
started by hand) takes ``<data dir>/metrics/<name>``, empties it and hands it to its
children through ``PROMETHEUS_MULTIPROC_DIR``; a child (the embedded web server and
workers of ``serve``) uses the one it inherited, so one scrape sums them all.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from bot.gh.mirrors.lru import max_bytes_from_env
from bot.logs import JsonFormatter, log_format, reformat_handlers
from bot.metrics.exposition import (
    inherit_or_prepare,
    multiprocess_dir,
    queue_depth_collector,
    scrape_registry,
    serve_metrics,
)
from bot.settings.budgets import load_budgets
from bot.settings.environment import data_dir
from bot.store import Store, database_url, open_store
from bot.store.errors import store_errors
from bot.web.operations import Operations
from bot.web.status_data import StatusInputs
from workers.celeryapp import health
from workers.celeryapp.ledger import record_jobs_in
from workers.settings import WorkerSettings

if TYPE_CHECKING:
    from celery import Celery

    from bot.usecases.context import JobContext
    from bot.web.settings import WebSettings

log = logging.getLogger("gitneural.serve")

ADMIN_TOKEN_ENV: Final = "GITNEURAL_ADMIN_TOKEN"  # noqa: S105 - the variable's name


def operate_serve(port: int) -> None:
    """``gitneural serve``'s start: the operator's files, and one metrics directory for
    the web server and the embedded workers (its ``/metrics`` sums them all)."""
    check_operator_files()
    prepare_metrics(f"serve-{port}")


def operate_worker(
    app: Celery, settings: WorkerSettings, ctx: JobContext, host: str, port: int | None
) -> list[str]:
    """``gitneural worker``'s start, once the store is migrated: metrics (served on
    ``port`` if given), the mirror cap from the start, job records, JSON logs; returns
    Celery's options to put before ``worker``."""
    if port is not None or multiprocess_dir() is not None:
        prepare_metrics(f"worker-{port}")
    ctx.mirrors.enforce_cap()
    record_jobs_in(database_url(os.environ))
    if port is not None:
        serve_worker_metrics(host, port, app, settings)
    return json_logs_in_celery()


def check_operator_files(env: Mapping[str, str] | None = None) -> None:
    """At start-up, not on the first job: the budgets file, the log format and the mirror
    cap, each a one-line error naming what to fix."""
    env = os.environ if env is None else env
    load_budgets(env)
    log_format(env)
    max_bytes_from_env(env)


def prepare_metrics(name: str) -> Path:
    """This command's multi-process metrics directory (see the module's docstring)."""
    return inherit_or_prepare(data_dir(os.environ) / "metrics" / name)


def web_operations(web: WebSettings, settings: WorkerSettings, publisher: Celery) -> Operations:
    """The web app's probes, queue depths and status page, from the environment."""
    env = os.environ
    store = open_store(database_url(env))

    def depths() -> dict[str, int]:
        return health.queue_depths(publisher, settings)

    probes = {
        "broker": lambda: health.check_broker(publisher, settings),
        "state store": lambda: health.check_state_store(settings),
        "database": lambda: _ping(store),
    }
    if web.dedupe_url and web.dedupe_url != settings.state_url:
        url = web.dedupe_url
        probes["delivery log"] = lambda: health.check_redis(url, "delivery log")
    token = env.get(ADMIN_TOKEN_ENV, "").strip() or None
    status = StatusInputs(
        store=store,
        budgets=load_budgets(env),
        mirror_root=data_dir(env) / "mirrors",
        mirror_max_bytes=max_bytes_from_env(env),
    )
    return Operations(probes=probes, queue_depths=depths, admin_token=token, status=status)


def _ping(store: Store) -> None:
    with store_errors(store.url):
        store.ping()


def serve_worker_metrics(host: str, port: int, app: Celery, settings: WorkerSettings) -> None:
    """``gitneural worker --metrics-port``: this worker's processes and its queues."""
    collector = queue_depth_collector(lambda: health.queue_depths(app, settings))
    serve_metrics(host, port, scrape_registry([collector]))


def json_logs_in_celery() -> list[str]:
    """A Celery worker sets up logging itself: give its handlers the JSON format, and
    leave out its start-up banner (printed, not logged); Celery's options for that."""
    if log_format() != "json":
        return []
    from celery.signals import after_setup_logger, after_setup_task_logger

    def reformat(logger: logging.Logger, **_: Any) -> None:
        reformat_handlers(logger, "json")

    after_setup_logger.connect(reformat, weak=False)
    after_setup_task_logger.connect(reformat, weak=False)
    return ["--quiet"]


def gunicorn_log_config(level: str) -> dict[str, Any] | None:
    """gunicorn's own lines in JSON too, when asked for (else its defaults)."""
    if log_format() != "json":
        return None
    handler = {"class": "logging.StreamHandler", "formatter": "json", "stream": "ext://sys.stderr"}
    logger = {"level": level.upper(), "handlers": ["console"], "propagate": False}
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"json": {"()": JsonFormatter}},
        "handlers": {"console": handler},
        "loggers": {"gunicorn.error": logger, "gunicorn.access": logger},
        "root": {"level": level.upper(), "handlers": ["console"]},
    }


def quiet_celery(celery_args: list[str]) -> list[str]:
    """Without ``-v``: no Celery banner, none of Celery's own lines but "ready.", no
    ``SecurityWarning`` about root (a container's or a test's choice, said once in the
    docs); GitNeural's job lines still show. Returns Celery's options."""
    import warnings

    from celery.exceptions import SecurityWarning
    from celery.signals import after_setup_logger

    warnings.filterwarnings("ignore", category=SecurityWarning)

    def quiet(**_: Any) -> None:
        logging.getLogger("celery").setLevel(logging.WARNING)
        # Its one line that says something: "celery@host ready." (what scripts wait for).
        logging.getLogger("celery.apps.worker").setLevel(logging.INFO)

    after_setup_logger.connect(quiet, weak=False)
    return celery_args if "--quiet" in celery_args else [*celery_args, "--quiet"]

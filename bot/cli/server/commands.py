"""``gitneural serve`` and ``gitneural worker``: the GitHub App's processes.

``serve`` runs the webhook app under gunicorn and, with the embedded broker (no
``GITNEURAL_BROKER_URL``), the Celery workers too, so one command runs the whole App on
one machine. It is then a small supervisor of three child processes:

    gitneural serve
    ├── gitneural serve --no-worker    gunicorn: webhook → CeleryJobQueue → broker
    ├── gitneural worker -Q reviews    reviews, N threads
    └── gitneural worker -Q fast,conversations
                                       eyes reactions, replies and /ask, never queued
                                       behind reviews

SIGTERM or SIGINT stops all three (workers finish or requeue running reviews within
``GITNEURAL_SHUTDOWN_GRACE``); a child that dies is started again
(:mod:`bot.cli.server.supervisor`), and its reviews come back through their leases. With a
shared broker (Redis, RabbitMQ), ``serve`` runs the web server only and workers run as
``gitneural worker``.
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from bot.cli.server.db_cmd import upgrade_store
from bot.cli.server.supervisor import supervise
from bot.cli.server.web_server import gunicorn_options, run_gunicorn, wsgi_app
from bot.errors import ConfigError

if TYPE_CHECKING:
    from bot.settings.server import Role
    from bot.usecases.context import JobContext

__all__ = ["add_parser", "run_serve", "run_worker", "supervise", "wsgi_app"]

log = logging.getLogger("gitneural.serve")

QUEUES: Final = ("reviews", "fast", "conversations")
#: ``gitneural serve``'s second worker: eyes reactions (quick) and conversations (a reply
#: in a thread, /ask: minutes at most), never queued behind reviews.
FAST_QUEUES: Final = "fast,conversations"
FAST_CONCURRENCY: Final = 6
#: Beyond the workers' grace: time to requeue, close connections and exit.
_EXIT_MARGIN: Final = 15.0


def add_parser(commands: Any) -> None:
    serve: argparse.ArgumentParser = commands.add_parser(
        "serve",
        help="run the GitHub App: webhook server (gunicorn) and, by default, its workers",
        description="Run the webhook server under gunicorn. With the embedded broker "
        "(GITNEURAL_BROKER_URL unset) the Celery workers run too, so this one command "
        "runs the whole App on one machine. Needs GITHUB_WEBHOOK_SECRET, GITHUB_APP_ID, "
        "GITHUB_PRIVATE_KEY (or _PATH) and KIMI_API_KEY, from the environment or the "
        "settings file (gitneural.env, written by `gitneural setup`); every missing or "
        "bad setting is listed at once. `gitneural doctor` checks them against GitHub "
        "and the model.",
    )
    serve.add_argument(
        "--host", help="address to listen on (default GITNEURAL_HOST, else 127.0.0.1)"
    )
    serve.add_argument(
        "--port", type=int, help="port to listen on (default GITNEURAL_PORT, else 8000)"
    )
    serve.add_argument(
        "--workers", type=_positive, default=2, help="gunicorn worker processes (default 2)"
    )
    serve.add_argument(
        "--threads", type=_positive, default=4, help="threads per gunicorn worker (default 4)"
    )
    # A child of serve's supervisor: its parent checked the settings and printed the line.
    serve.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    serve.add_argument(
        "--worker",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="also run Celery workers (default: only with the embedded broker)",
    )
    serve.add_argument(
        "--concurrency", type=_positive, help="review threads of the embedded worker"
    )
    serve.add_argument(
        "--settings-file",
        type=Path,
        metavar="FILE",
        help="the settings file to read (default GITNEURAL_SETTINGS_FILE, else ./gitneural.env)",
    )
    serve.set_defaults(run=run_serve)

    worker: argparse.ArgumentParser = commands.add_parser(
        "worker",
        help="run a Celery worker for review jobs",
        description="Run a Celery worker. Reviews wait minutes on the model, so the "
        "default pool is threads (GITNEURAL_WORKER_POOL, GITNEURAL_WORKER_CONCURRENCY).",
    )
    worker.add_argument("-c", "--concurrency", type=_positive, help="jobs run at once")
    worker.add_argument(
        "-Q",
        "--queues",
        type=_queues,
        default=QUEUES,
        help="comma-separated: reviews, fast, conversations (default all)",
    )
    worker.add_argument(
        "--pool", choices=("threads", "prefork", "solo"), help="Celery pool (default threads)"
    )
    worker.add_argument("--metrics-port", type=_positive, help="serve /metrics on this port")
    worker.add_argument("--metrics-host", default="127.0.0.1", help="its address (127.0.0.1)")
    # A child of serve's supervisor: its parent checked the settings and the services.
    worker.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    worker.add_argument(
        "--settings-file",
        type=Path,
        metavar="FILE",
        help="the settings file to read (default GITNEURAL_SETTINGS_FILE, else ./gitneural.env)",
    )
    worker.set_defaults(run=run_worker)


def _positive(raw: str) -> int:
    value = int(raw)
    if value < 1:
        raise argparse.ArgumentTypeError("must be a whole number >= 1")
    return value


def _queues(raw: str) -> tuple[str, ...]:
    names = tuple(part.strip() for part in raw.split(",") if part.strip())
    if not names or set(names) - set(QUEUES):
        raise argparse.ArgumentTypeError(f"queues are {', '.join(QUEUES)}")
    return names


# -- the web app -------------------------------------------------------------------------


# -- commands ----------------------------------------------------------------------------


def run_serve(args: argparse.Namespace) -> int:
    from bot.cli.server.ops_wiring import operate_serve
    from bot.cli.server.serve_line import as_printed, serve_line
    from bot.cli.server.settings_check import check_settings, warn_unknown_names
    from bot.settings.broker import broker_of
    from bot.settings.env_file import load_settings_file
    from bot.settings.environment import env_int
    from workers.settings import WorkerSettings

    original = dict(os.environ)
    source = load_settings_file(given=args.settings_file)
    try:
        embedded = broker_of(os.environ.get("GITNEURAL_BROKER_URL", "").strip()).embedded
    except ConfigError:
        embedded = False  # the settings check below names the bad URL
    with_worker = embedded if args.worker is None else args.worker
    if not args.child:
        roles: tuple[Role, ...] = ("web", "worker") if with_worker else ("web",)
        warn_unknown_names(original, source)
        check_settings("serve", roles, str(source or "gitneural.env"), reach=True)
    args.host = args.host or os.environ.get("GITNEURAL_HOST", "").strip() or "127.0.0.1"
    args.port = args.port if args.port is not None else env_int(os.environ, "GITNEURAL_PORT", 8000)
    settings = WorkerSettings.from_env()
    operate_serve(args.port)
    log.info("%s", upgrade_store())
    concurrency = args.concurrency or settings.concurrency
    if not args.child:
        workers = (concurrency, FAST_CONCURRENCY) if with_worker else None
        line = serve_line(args.host, args.port, settings, workers, source)
        print(as_printed(line), flush=True)
    if not with_worker:
        return run_gunicorn(gunicorn_options(args))
    _check_worker_env()
    base = [
        sys.executable,
        "-m",
        "bot.cli.main",
        *(["-" + "v" * args.verbose] if args.verbose else []),
    ]
    children = {
        "web": [
            *base,
            "serve",
            "--no-worker",
            "--child",
            "--host",
            args.host,
            "--port",
            str(args.port),
            "--workers",
            str(args.workers),
            "--threads",
            str(args.threads),
        ],
        "reviews worker": [*base, "worker", "--child", "-Q", "reviews", "-c", str(concurrency)],
        "fast worker": [
            *base,
            "worker",
            "--child",
            "-Q",
            FAST_QUEUES,
            "-c",
            str(FAST_CONCURRENCY),
        ],
    }
    return supervise(children, settings.shutdown_grace + _EXIT_MARGIN)


def run_worker(args: argparse.Namespace) -> int:
    from bot.cli.server.ops_wiring import operate_worker, quiet_celery
    from bot.cli.server.settings_check import check_settings, warn_unknown_names
    from bot.settings.env_file import load_settings_file
    from workers.celeryapp.app import create_celery
    from workers.schedule.routing import review_queues
    from workers.settings import WorkerSettings

    original = dict(os.environ)
    source = load_settings_file(given=args.settings_file)
    if not args.child:
        warn_unknown_names(original, source)
    check_settings("worker", ("worker",), str(source or "gitneural.env"), reach=not args.child)
    settings = WorkerSettings.from_env()
    overrides = {"pool": args.pool, "concurrency": args.concurrency}
    settings = dataclasses.replace(settings, **{k: v for k, v in overrides.items() if v})
    ctx = _check_worker_env()
    log.info("%s", upgrade_store())
    app = create_celery(settings)
    celery_args = operate_worker(app, settings, ctx, args.metrics_host, args.metrics_port)
    if not args.verbose:
        celery_args = quiet_celery(celery_args)
    # Reviews: the shared queue and this host's own (routing by repository).
    reviews = ",".join(q.name for q in review_queues(settings, settings.worker_host))
    names = {
        "reviews": reviews,
        "fast": settings.fast_queue,
        "conversations": settings.conversation_queue,
    }
    label = "-".join(args.queues)
    argv = [
        *celery_args,
        "worker",
        f"--pool={settings.pool}",
        f"--concurrency={pool_size(settings, args.queues)}",
        f"--queues={','.join(names[q] for q in args.queues)}",
        f"--loglevel={'DEBUG' if args.verbose else 'INFO'}",
        # One name per process: RabbitMQ refuses two workers the same remote-control queue.
        f"--hostname=gitneural-{label}-{os.getpid()}@%h",
        # Monitoring aids that need a fanout exchange (the embedded broker has none).
        "--without-gossip",
        "--without-mingle",
        "--without-heartbeat",
    ]
    app.worker_main(argv)
    return 0


def pool_size(settings: Any, queues: tuple[str, ...]) -> int:
    """Threads of a worker's pool: its review threads, and one more that hands on a turn
    arriving while every review thread is busy (``workers.celeryapp.take_turn``), so no turn waits
    unacknowledged in the broker for the length of a review."""
    extra = settings.pool == "threads" and "reviews" in queues
    return int(settings.concurrency) + (1 if extra else 0)


def _check_worker_env() -> JobContext:
    # Fail at start, with the variable to fix, rather than on every job; and import the
    # job runner now, so a broken install stops the worker instead of failing each job.
    # Every job sends requests, too: the model SDK is loaded now (about half a second),
    # not while the first reply of a worker's life waits for its answer.
    import openai  # noqa: F401

    import bot.usecases.review.run  # noqa: F401
    from bot.usecases.context import JobContext

    return JobContext.from_env()

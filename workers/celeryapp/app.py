"""The Celery app factory: ``create_celery(settings)``.

Nothing is configured at import time. ``celery -A workers.celeryapp.app worker`` finds ``app``
through the module ``__getattr__`` below, which builds it from the environment on first
use; ``gitneural worker`` and ``gitneural serve`` call :func:`create_celery` themselves.

Choices, and why:

- reviews are scheduled in the store, not in the broker (:mod:`workers.schedule.protocol`): a
  review message is a turn, acknowledged when a thread starts it; the job it runs is
  held by a renewed lease, so a dead worker's job is back in line within the lease on
  every broker. Other tasks (the fast queue) use ``acks_late`` with
  ``reject_on_worker_lost``: acknowledged only when done, so a worker that dies leaves
  them to another. A failure that is not worth retrying is acknowledged
  (``task_acks_on_failure_or_timeout``): a poison message must not loop forever.
- ``worker_prefetch_multiplier = 1``: a worker reserves little beyond what it runs;
  spare turns only cost a claim that finds nothing.
- RabbitMQ: durable queues, persistent messages (Celery's defaults, declared explicitly)
  and publisher confirms, so the webhook answers 202 only once the broker has the turn.
  No review holds a message while it runs, so RabbitMQ's ``consumer_timeout`` (30 min by
  default) needs no raising for long reviews, and nothing depends on the per-queue
  ``x-consumer-timeout`` that only RabbitMQ 3.11.15 and 3.12 brought (3.10 has none).
- results are ignored: nothing reads them (outcomes are logged, and posted to GitHub).
- the embedded broker is SQLite through :mod:`workers.celeryapp.embedded_broker`; it has no fanout,
  so remote control, gossip and mingle are off (they are monitoring aids only).
"""

from __future__ import annotations

import logging
import threading
from typing import Any, Final

from celery import Celery
from celery.signals import worker_shutting_down
from kombu.transport import TRANSPORT_ALIASES

from workers.celeryapp import time_limits as limits
from workers.celeryapp.task_names import CONVERSATION_TASK, EYES_TASK, REVIEW_TASK
from workers.schedule.routing import named_queue, review_queues
from workers.settings import WorkerSettings

log = logging.getLogger("gitneural.worker")

EMBEDDED_TRANSPORT: Final = "workers.celeryapp.embedded_broker:Transport"
# Celery also parses the broker URL without the configured transport (to mask it in
# reports): make ``sqlite://`` name the embedded broker there too.
TRANSPORT_ALIASES.setdefault("sqlite", EMBEDDED_TRANSPORT)


def celery_config(settings: WorkerSettings) -> dict[str, Any]:
    """The Celery configuration for ``settings`` (plain values; no connection is made)."""
    conf: dict[str, Any] = {
        "task_serializer": "json",
        "accept_content": ["json"],
        "task_ignore_result": True,
        "result_backend": None,
        "task_acks_late": True,
        "task_reject_on_worker_lost": True,
        "task_acks_on_failure_or_timeout": True,
        "worker_prefetch_multiplier": 1,
        "task_default_queue": settings.review_queue,
        "task_routes": {
            REVIEW_TASK: {"queue": settings.review_queue},
            EYES_TASK: {"queue": settings.fast_queue},
            CONVERSATION_TASK: {"queue": settings.conversation_queue},
        },
        "task_soft_time_limit": settings.soft_time_limit,
        "task_time_limit": settings.hard_time_limit,
        # The webhook publishes inside a request GitHub abandons after 10 s: fail fast
        # (the webhook answers 503 and GitHub can redeliver) rather than hang.
        "broker_connection_timeout": 2.0,
        "task_publish_retry_policy": {
            "max_retries": 1,
            "interval_start": 0.0,
            "interval_step": 0.5,
            "interval_max": 0.5,
        },
        "broker_connection_retry_on_startup": True,
        "worker_send_task_events": False,
        # After a reconnect Celery would lower the prefetch and restore it step by step,
        # sending basic.qos from the thread that acknowledged a task while the consumer
        # reads the same connection: a hang. Spare turns cost a claim, not a review.
        "worker_enable_prefetch_count_reduction": False,
        "worker_hijack_root_logger": True,
    }
    if settings.embedded_broker:
        path = settings.broker_path
        assert path is not None
        path.parent.mkdir(parents=True, exist_ok=True)
        conf.update(
            broker_url=f"sqlite:///{path}",
            broker_transport=EMBEDDED_TRANSPORT,
            broker_transport_options={
                "polling_interval": settings.poll_interval,
                "visibility_timeout": settings.visibility_timeout,
            },
            worker_enable_remote_control=False,
        )
    else:
        options: dict[str, Any] = {"visibility_timeout": settings.visibility_timeout}
        if settings.broker.key_prefix:
            # Keeps this deployment's queues, bindings and unacked set apart from
            # others on the same Redis.
            options["global_keyprefix"] = f"{settings.prefix}:"
            # kombu sweeps messages of dead workers back into the queue only every
            # 10 s x 10 polls: sweep as the embedded broker does, so a killed worker's
            # review returns soon after the visibility timeout, not up to 100 s later.
            options["unacked_restore_interval"] = restore_interval(settings)
            options["unacked_restore_throttle"] = 1
        if settings.amqp_broker:
            conf.update(amqp_config(settings))
            options.update(conf.pop("broker_transport_options"))
        conf.update(broker_url=settings.broker_url, broker_transport_options=options)
    return conf


def amqp_config(settings: WorkerSettings) -> dict[str, Any]:
    """RabbitMQ: nothing accepted that the broker could still lose."""
    # Durable (kombu's default, said here): the queues and their messages survive a restart.
    queues = [
        *review_queues(settings, settings.worker_host),
        named_queue(settings.fast_queue),
        named_queue(settings.conversation_queue),
    ]
    return {
        "task_queues": queues,
        "task_default_delivery_mode": "persistent",
        # Each publish waits for the broker's confirm (the webhook answers 202 after it).
        "broker_transport_options": {"confirm_publish": True},
        # Dead connections (a host gone, a NAT dropped) are noticed within a minute.
        "broker_heartbeat": 30,
    }


def restore_interval(settings: WorkerSettings) -> float:
    """How often a worker puts messages held past the visibility timeout back in the
    queue (their worker died): a quarter of the timeout, at most a minute, as the
    embedded broker does (:mod:`workers.celeryapp.embedded_broker`)."""
    return min(60.0, settings.visibility_timeout / 4)


def create_publisher(settings: WorkerSettings) -> Celery:
    """A Celery app that only publishes (the webhook's): configured as the workers' app is,
    without the tasks; nothing connects until used."""
    app = Celery("gitneural", set_as_current=False)
    app.conf.update(celery_config(settings))
    return app


def create_celery(settings: WorkerSettings) -> Celery:
    """A Celery app with GitNeural's tasks registered; nothing connects until used."""
    # The tasks bring the job runner (GitHub, git, the review core): only an app that runs
    # them loads it, not ``import workers.celeryapp.app`` nor the webhook's publishing app.
    from workers.celeryapp.tasks import register_tasks

    app = create_publisher(settings)
    register_tasks(app, settings)
    _install_shutdown_hook(settings.shutdown_grace)
    return app


_hook_lock = threading.Lock()
_hook_grace: list[float] = []


def _install_shutdown_hook(grace: float) -> None:
    with _hook_lock:
        if _hook_grace:
            _hook_grace[0] = grace
            return
        _hook_grace.append(grace)
    worker_shutting_down.connect(_on_worker_shutting_down, weak=False)


def _on_worker_shutting_down(**_: Any) -> None:
    # Celery's warm shutdown waits for running tasks, and a thread pool cannot be made to
    # stop: after the grace period, interrupt running reviews so they requeue themselves.
    limits.mark_stopping()
    grace = _hook_grace[0]
    running = limits.running()
    if running:
        log.warning("shutting down: %d running job(s) get %.0f s to finish", running, grace)
    timer = threading.Timer(grace, _interrupt_running)
    timer.daemon = True
    timer.start()


def _interrupt_running() -> None:
    count = limits.interrupt_all(limits.ShutdownInterrupt)
    if count:
        log.warning("shutting down: %d job(s) interrupted and requeued", count)


_app: Celery | None = None
_app_lock = threading.Lock()


def __getattr__(name: str) -> Celery:
    # ``celery -A workers.celeryapp.app`` looks up ``app`` (or ``celery``): build it from the
    # environment then, not at import.
    global _app
    if name not in ("app", "celery"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    with _app_lock:
        if _app is None:
            _app = create_celery(WorkerSettings.from_env())
        return _app

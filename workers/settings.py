"""Deployment-wide settings of the Celery side, read from the environment once.

Defaults are sized for Kimi K3 at ``max`` effort: a review can think for many minutes, so
the time limits are long, the broker's visibility timeout outlives them (else a running
review would be handed to a second worker), and retries back off for minutes.
"""

from __future__ import annotations

import os
import re
import socket
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Final, Literal

from bot.errors import ConfigError
from bot.settings.broker import EMBEDDED_PREFIX, REDIS_SCHEMES, Broker, broker_of
from bot.settings.environment import data_dir, default_data_dir, env_float, env_int

Pool = Literal["threads", "prefork", "solo"]
POOLS: Final[tuple[str, ...]] = ("threads", "prefork", "solo")
ScheduleMode = Literal["fair", "fifo"]
SCHEDULES: Final[tuple[str, ...]] = ("fair", "fifo")

_PREFIX_RE: Final = re.compile(r"[A-Za-z0-9_.-]{1,64}")


def worker_host(env: Mapping[str, str]) -> str:
    """``GITNEURAL_WORKER_HOST``, else this machine's host name (made queue-safe): one
    name per mirror cache, shared by the worker processes on the host."""
    raw = env.get("GITNEURAL_WORKER_HOST", "").strip()
    if raw:
        if not _PREFIX_RE.fullmatch(raw):
            raise ConfigError("GITNEURAL_WORKER_HOST must be 1-64 letters, digits, '_.-'")
        return raw
    name = re.sub(r"[^A-Za-z0-9_.-]", "-", socket.gethostname())[:64]
    return name or "localhost"


@dataclass(frozen=True)
class WorkerSettings:
    #: ``GITNEURAL_BROKER_URL``; the embedded default is SQLite under ``data_dir``.
    #: Kept out of ``repr``: a broker URL may carry a password.
    broker_url: str = field(repr=False)
    data_dir: Path = field(default_factory=default_data_dir)
    #: Where the per-PR locks and "latest head" records live: a Redis URL shared by every
    #: web and worker host, or ``None`` for SQLite under ``data_dir`` (one machine only).
    state_url: str | None = field(default=None, repr=False)
    #: Names the queues (``<prefix>.reviews``, ``<prefix>.fast``) and the state keys, so
    #: several deployments (or tests) can share one Redis.
    prefix: str = "gitneural"
    pool: Pool = "threads"
    concurrency: int = 8
    #: Seconds: at the soft limit the review is interrupted and reported as failed; at the
    #: hard limit the worker gives up on it (prefork kills the child).
    soft_time_limit: float = 30 * 60.0
    hard_time_limit: float = 35 * 60.0
    max_retries: int = 6
    #: Backoff of transient faults: base * 2**attempt, capped, with jitter.
    retry_backoff: float = 30.0
    retry_backoff_max: float = 15 * 60.0
    #: The per-PR lock's lease, renewed while a review runs; after a crash the PR is free
    #: again within this time.
    lock_lease: float = 60.0
    #: How long a job for a busy PR waits before it tries again.
    lock_retry_delay: float = 15.0
    #: A message taken but not acknowledged within this time is given to another worker
    #: (a worker killed mid-review). Must exceed the hard limit and the longest backoff.
    visibility_timeout: float = 45 * 60.0
    #: How often an idle worker polls the embedded broker.
    poll_interval: float = 1.0
    #: On SIGTERM a worker stops taking jobs and lets running reviews finish for this
    #: long; reviews still running then are interrupted and put back in the queue.
    shutdown_grace: float = 20.0
    #: Reviews one installation may run at once, always; 0: three quarters of the review
    #: threads of all live workers while another installation is active, else every
    #: thread (``workers.schedule.protocol.default_limit``).
    installation_concurrency: int = 0
    #: ``fair``: installations take turns; ``fifo``: one line in arrival order.
    schedule: ScheduleMode = "fair"
    #: This worker host's name (``GITNEURAL_WORKER_HOST``), for routing by repository.
    worker_host: str = "localhost"

    def __post_init__(self) -> None:
        broker_of(self.broker_url)  # a URL of no broker we know is refused here
        if self.state_url is not None and not self.state_url.startswith(REDIS_SCHEMES):
            raise ConfigError(
                "GITNEURAL_STATE_URL must be a redis://, rediss:// or unix:// URL "
                "(leave it unset to keep PR locks in SQLite under GITNEURAL_DATA_DIR)"
            )
        if not _PREFIX_RE.fullmatch(self.prefix):
            raise ConfigError("GITNEURAL_QUEUE_PREFIX must be 1-64 letters, digits, '_.-'")
        if self.pool not in POOLS:
            raise ConfigError(f"GITNEURAL_WORKER_POOL must be one of {', '.join(POOLS)}")
        if self.concurrency < 1:
            raise ConfigError("GITNEURAL_WORKER_CONCURRENCY must be a whole number >= 1")
        if not 0 < self.soft_time_limit < self.hard_time_limit:
            raise ConfigError(
                "GITNEURAL_TASK_SOFT_TIME_LIMIT must be > 0 and below GITNEURAL_TASK_TIME_LIMIT"
            )
        if self.visibility_timeout <= max(self.hard_time_limit, self.retry_backoff_max):
            raise ConfigError(
                "GITNEURAL_VISIBILITY_TIMEOUT must exceed GITNEURAL_TASK_TIME_LIMIT and "
                "GITNEURAL_RETRY_BACKOFF_MAX, or running reviews are handed out twice"
            )
        for name, value in (
            ("GITNEURAL_RETRY_BACKOFF", self.retry_backoff),
            ("GITNEURAL_LOCK_LEASE", self.lock_lease),
            ("GITNEURAL_LOCK_RETRY_DELAY", self.lock_retry_delay),
            ("GITNEURAL_BROKER_POLL_INTERVAL", self.poll_interval),
            ("GITNEURAL_SHUTDOWN_GRACE", self.shutdown_grace),
        ):
            if value <= 0:
                raise ConfigError(f"{name} must be a number > 0")
        if self.max_retries < 0:
            raise ConfigError("GITNEURAL_TASK_MAX_RETRIES must be a whole number >= 0")
        if self.installation_concurrency < 0:
            raise ConfigError(
                "GITNEURAL_INSTALLATION_CONCURRENCY must be a whole number >= 1 "
                "(or 0 for three quarters of the live review threads)"
            )
        if self.schedule not in SCHEDULES:
            raise ConfigError(f"GITNEURAL_SCHEDULE must be one of {', '.join(SCHEDULES)}")

    @cached_property
    def broker(self) -> Broker:
        """What the broker is and supports (:mod:`bot.settings.broker`), built once."""
        return broker_of(self.broker_url)

    @property
    def embedded_broker(self) -> bool:
        """The broker is SQLite on this machine (``gitneural serve`` runs its own worker)."""
        return self.broker.embedded

    @property
    def amqp_broker(self) -> bool:
        """The broker is RabbitMQ (AMQP 0-9-1)."""
        return self.broker.kind == "amqp"

    @property
    def broker_path(self) -> Path | None:
        return self.broker.path

    @property
    def review_queue(self) -> str:
        return f"{self.prefix}.reviews"

    @property
    def fast_queue(self) -> str:
        """Eyes reactions: served by their own worker so they never wait behind reviews."""
        return f"{self.prefix}.fast"

    @property
    def conversation_queue(self) -> str:
        """Replies in GitNeural's threads and ``/ask``: a queue of their own, so an answer
        never waits behind queued reviews (``gitneural serve``'s fast worker serves it)."""
        return f"{self.prefix}.conversations"

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> WorkerSettings:
        """Read the settings; raises :class:`ConfigError` naming the variable to fix.

        Locks and head records use ``GITNEURAL_STATE_URL``, else ``GITNEURAL_DEDUPE_URL``,
        else the broker's Redis, else SQLite under ``GITNEURAL_DATA_DIR``.
        """
        env = os.environ if env is None else env
        data = data_dir(env)
        broker = env.get("GITNEURAL_BROKER_URL", "").strip()
        if not broker:
            broker = EMBEDDED_PREFIX + str((data / "broker.sqlite3").resolve())
        state = (
            env.get("GITNEURAL_STATE_URL")
            or env.get("GITNEURAL_DEDUPE_URL")
            or broker_of(broker).state_store
        )
        hard = env_float(env, "GITNEURAL_TASK_TIME_LIMIT", cls.hard_time_limit)
        backoff_max = env_float(env, "GITNEURAL_RETRY_BACKOFF_MAX", cls.retry_backoff_max)
        return cls(
            broker_url=broker,
            data_dir=data,
            state_url=state or None,
            prefix=env.get("GITNEURAL_QUEUE_PREFIX", "").strip() or cls.prefix,
            pool=env.get("GITNEURAL_WORKER_POOL", "").strip() or cls.pool,  # type: ignore[arg-type]
            concurrency=env_int(env, "GITNEURAL_WORKER_CONCURRENCY", cls.concurrency),
            soft_time_limit=env_float(env, "GITNEURAL_TASK_SOFT_TIME_LIMIT", cls.soft_time_limit),
            hard_time_limit=hard,
            max_retries=env_int(env, "GITNEURAL_TASK_MAX_RETRIES", cls.max_retries),
            retry_backoff=env_float(env, "GITNEURAL_RETRY_BACKOFF", cls.retry_backoff),
            retry_backoff_max=backoff_max,
            lock_lease=env_float(env, "GITNEURAL_LOCK_LEASE", cls.lock_lease),
            lock_retry_delay=env_float(env, "GITNEURAL_LOCK_RETRY_DELAY", cls.lock_retry_delay),
            # Follows the limits it must outlive unless set explicitly.
            visibility_timeout=env_float(
                env, "GITNEURAL_VISIBILITY_TIMEOUT", max(hard, backoff_max) + 10 * 60.0
            ),
            poll_interval=env_float(env, "GITNEURAL_BROKER_POLL_INTERVAL", cls.poll_interval),
            shutdown_grace=env_float(env, "GITNEURAL_SHUTDOWN_GRACE", cls.shutdown_grace),
            installation_concurrency=env_int(env, "GITNEURAL_INSTALLATION_CONCURRENCY", 0),
            schedule=env.get("GITNEURAL_SCHEDULE", "").strip() or cls.schedule,  # type: ignore[arg-type]
            worker_host=worker_host(env),
        )

"""The App's three deployments for tests that run on each: the embedded SQLite broker
(one machine), Redis (broker and state), RabbitMQ (broker, with the state in Redis as on
several hosts). Each gets queues, keys and a vhost of its own, removed afterwards.

    with deployment("rabbitmq", world, tmp_path) as d:
        d.env          # for GitNeuralProcess(["worker"], d.env, ...)
        d.queue.submit(job)
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.rabbit import rabbit_vhost, require_rabbitmq
from tests.support.services import (
    REDIS_URL,
    AppWorld,
    drop_redis_keys,
    require_redis,
    unique_prefix,
)
from workers.celeryapp.app import create_celery
from workers.celeryapp.publisher import CeleryJobQueue
from workers.settings import WorkerSettings

BROKERS = (
    "sqlite",
    pytest.param("redis", marks=pytest.mark.redis),
    pytest.param("rabbitmq", marks=[pytest.mark.redis, pytest.mark.rabbitmq]),
)


@dataclass
class Deployment:
    kind: str
    env: dict[str, str]
    queue: CeleryJobQueue
    settings: WorkerSettings

    @property
    def prefix(self) -> str:
        return self.env["GITNEURAL_QUEUE_PREFIX"]


def broker_env(kind: str, url: str | None = None) -> dict[str, str]:
    """The variables that pick the broker ``kind`` (``url``: RabbitMQ's vhost)."""
    if kind == "redis":
        return {"GITNEURAL_BROKER_URL": REDIS_URL}
    if kind == "rabbitmq":
        assert url is not None
        return {"GITNEURAL_BROKER_URL": url, "GITNEURAL_STATE_URL": REDIS_URL}
    return {}


@contextlib.contextmanager
def deployment(
    kind: str, world: AppWorld, root: Path, *, publish_url: str | None = None, **extra: str
) -> Iterator[Deployment]:
    """``kind``'s environment, and a queue publishing to it as the webhook does (straight
    to the broker, or to ``publish_url`` when the workers' link goes through a proxy)."""
    client = require_redis() if kind in ("redis", "rabbitmq") else None
    with contextlib.ExitStack() as stack:
        url = None
        if kind == "rabbitmq":
            require_rabbitmq()
            url = stack.enter_context(rabbit_vhost())
        prefix = unique_prefix()
        env = world.env(root / "data", GITNEURAL_QUEUE_PREFIX=prefix, **broker_env(kind, url))
        env.update(extra)
        direct = dict(env)
        if publish_url is not None:
            direct["GITNEURAL_BROKER_URL"] = publish_url
        settings = WorkerSettings.from_env(direct)
        try:
            yield Deployment(kind, env, CeleryJobQueue(create_celery(settings), settings), settings)
        finally:
            if client is not None:
                drop_redis_keys(client, prefix)

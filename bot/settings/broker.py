"""The broker a deployment runs on, as one record built once from its URL: its kind and what
it supports, read by every part that would otherwise guess from the URL's prefix.

A new broker is one more kind here and its answers to these questions; the Celery app, the
publisher, the routing and ``serve`` ask the record, never the URL.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, Literal

from bot.errors import ConfigError

BrokerKind = Literal["embedded", "redis", "amqp"]

REDIS_SCHEMES: Final = ("redis://", "rediss://", "unix://")
AMQP_SCHEMES: Final = ("amqp://", "amqps://", "pyamqp://")
EMBEDDED_PREFIX: Final = "sqla+sqlite:///"


@dataclass(frozen=True)
class Broker:
    kind: BrokerKind
    #: Kept out of ``repr``: a broker URL may carry a password.
    url: str = field(repr=False)

    @property
    def embedded(self) -> bool:
        """SQLite on this machine: ``gitneural serve`` runs its own worker beside it."""
        return self.kind == "embedded"

    @property
    def host_queues(self) -> bool:
        """Each worker host has a turn queue of its own (a shared broker reaches them all)."""
        return self.kind != "embedded"

    @property
    def key_prefix(self) -> bool:
        """kombu's Redis transport keeps this deployment's keys under a prefix of its own
        and restores unacknowledged messages on a timer we set."""
        return self.kind == "redis"

    @property
    def queue_expiry(self) -> bool:
        """Queues can expire when unused (RabbitMQ's ``x-expires``)."""
        return self.kind == "amqp"

    @property
    def state_store(self) -> str | None:
        """The PR state store this broker can also be when none is set: its own Redis."""
        return self.url if self.kind == "redis" else None

    @property
    def path(self) -> Path | None:
        """The embedded broker's file."""
        return Path(self.url[len(EMBEDDED_PREFIX) :]) if self.embedded else None


def broker_of(url: str) -> Broker:
    """The record for ``url`` ("" is the embedded broker, wherever its file will be)."""
    if not url or url.startswith(EMBEDDED_PREFIX):
        return Broker("embedded", url)
    if url.startswith(REDIS_SCHEMES):
        return Broker("redis", url)
    if url.startswith(AMQP_SCHEMES):
        return Broker("amqp", url)
    raise ConfigError(
        "GITNEURAL_BROKER_URL must be a redis://, rediss://, amqp:// or "
        "sqla+sqlite:/// URL (leave it unset for the embedded SQLite broker)"
    )

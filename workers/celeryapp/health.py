"""What readiness and the queue-depth gauge ask of the broker and the state store.

Queue depths come from the broker itself (a passive declare, which every kombu
transport answers with the number of messages waiting): the same call tells whether
the broker is reachable. The state store (PR locks and heads) is Redis when configured,
else a SQLite file. Every failure is a :class:`DependencyError` with a one-line reason
that names no URL (a broker URL may carry a password).
"""

from __future__ import annotations

import contextlib
import sqlite3
from typing import TYPE_CHECKING, Any, Final

import kombu.exceptions

from bot.errors import GitNeuralError
from workers.settings import WorkerSettings

if TYPE_CHECKING:
    from celery import Celery

PROBE_TIMEOUT: Final = 2.0


class DependencyError(GitNeuralError):
    """A service the App needs does not answer (``/readyz`` says 503 with this)."""


def queue_depths(app: Celery, settings: WorkerSettings) -> dict[str, int]:
    """Messages waiting in the ``reviews`` and ``fast`` queues."""
    names = {"reviews": settings.review_queue, "fast": settings.fast_queue}
    depths: dict[str, int] = {}
    try:
        conn = app.connection_for_read()
    except (ValueError, TypeError):
        # kombu's URL parser fails on a password holding '#', '/' or '?', or one given
        # twice (userinfo and ?password=); its message quotes the URL: name the kind only.
        raise DependencyError(
            "GITNEURAL_BROKER_URL does not parse as a broker URL: percent-encode the "
            "password's '#', '/', '?' and '@' (%23, %2F, %3F, %40), and give it once"
        ) from None
    errors: tuple[type[BaseException], ...] = (
        kombu.exceptions.KombuError,
        OSError,
        *conn.connection_errors,
    )
    try:
        conn.ensure_connection(max_retries=1, interval_start=0, interval_step=0, timeout=2)
        for short, name in names.items():
            # A channel per queue: AMQP closes a channel whose passive declare failed.
            channel: Any = conn.channel()
            try:
                depths[short] = int(channel.queue_declare(queue=name, passive=True)[1])
            except conn.channel_errors:
                depths[short] = 0  # never declared yet (Redis: empty), so nothing waits
            finally:
                channel.close()
    except errors as exc:
        raise DependencyError(
            f"the broker does not answer ({type(exc).__name__}): check that it is running "
            "and that GITNEURAL_BROKER_URL is right"
        ) from None
    finally:
        conn.release()
    return depths


def check_broker(app: Celery, settings: WorkerSettings) -> None:
    queue_depths(app, settings)


def check_redis(url: str, what: str) -> None:
    import redis  # only deployments with Redis pay for the import

    try:
        client = redis.Redis.from_url(
            url, socket_timeout=PROBE_TIMEOUT, socket_connect_timeout=PROBE_TIMEOUT
        )
    except (ValueError, TypeError):
        # redis-py's message quotes the URL's pieces (a password's first characters).
        raise DependencyError(
            f"the {what}'s URL does not parse: percent-encode the password's '#', '/', '?' "
            "and '@' (%23, %2F, %3F, %40)"
        ) from None
    try:
        client.ping()
    except redis.RedisError as exc:
        raise DependencyError(
            f"the {what} on Redis does not answer ({type(exc).__name__}): check that Redis is up"
        ) from None
    finally:
        client.close()


def check_state_store(settings: WorkerSettings) -> None:
    """The PR locks and head records: Redis when configured, else SQLite."""
    if settings.state_url is not None:
        check_redis(settings.state_url, "state store (GITNEURAL_STATE_URL)")
        return
    path = settings.data_dir / "pr-state.sqlite3"
    try:
        with contextlib.closing(sqlite3.connect(path, timeout=PROBE_TIMEOUT)) as conn:
            conn.execute("SELECT 1")
    except sqlite3.Error as exc:
        raise DependencyError(f"the state store {path} cannot be opened ({exc})") from None

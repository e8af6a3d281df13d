"""Which worker host should review a repository: the one whose mirror cache holds it.

Every worker host keeps bare mirrors of the repositories it reviewed
(``GITNEURAL_DATA_DIR/mirrors``): a review on another host clones the repository again.
So each repository has a **home** among the live worker hosts, chosen by rendezvous
(highest-random-weight) hashing: the host with the highest ``sha256(host, repository)``.
When a host joins, it takes over only the repositories it now wins (about 1/N of them);
when it leaves, only its own move, each to the host that wins next. No table to keep.

How the home is used (see :mod:`workers.celeryapp.turn_messages` and the claim in
:mod:`workers.schedule.protocol`):

- the turn of a new job goes to the home host's own queue (``<prefix>.reviews.<host>``)
  when that host is alive and has a free review thread, else to the shared queue;
- a worker that claims a job prefers one whose home is its own host, among the first jobs
  of the installation whose turn it is: fairness first, then locality;
- nothing waits for a home that is gone or busy: any free worker takes the job (work
  conserving), and a sweep gives out a turn for a job nobody claimed within seconds.

Why not one broker queue per host with the jobs in it: a host queue cannot be fair across
installations, and the jobs of a host that died would wait in its queue. Here a host queue
only carries turns, and a lost turn is given out again by the sweep.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from kombu import Queue

    from workers.settings import WorkerSettings

#: RabbitMQ deletes a host's queue this long after its last consumer left (a host that
#: never comes back); the turns in it are given out again by the sweep.
HOST_QUEUE_EXPIRES_MS: Final = 6 * 3600 * 1000


def home_host(repo: str, hosts: Iterable[str]) -> str | None:
    """The live host that wins ``repo`` (case-insensitive, as GitHub names are)."""
    key = repo.lower().encode()
    best: tuple[bytes, str] | None = None
    for host in hosts:
        weight = hashlib.sha256(host.encode() + b"\0" + key).digest()
        if best is None or (weight, host) > best:
            best = (weight, host)
    return best[1] if best else None


def host_queue_name(settings: WorkerSettings, host: str) -> str:
    return f"{settings.review_queue}.{host}"


def review_queues(settings: WorkerSettings, host: str | None) -> list[Queue]:
    """The review queues a worker on ``host`` consumes (the shared one, and its host's
    unless the broker is embedded), as kombu declares them on every broker."""
    queues = [named_queue(settings.review_queue)]
    if host is not None and not settings.embedded_broker:
        queues.append(host_queue(settings, host))
    return queues


def host_queue(settings: WorkerSettings, host: str) -> Queue:
    """A host's turn queue: declared the same way by the webhook and the worker (RabbitMQ
    refuses a queue declared twice with other arguments)."""
    arguments: dict[str, Any] = {}
    if settings.amqp_broker:
        arguments["x-expires"] = HOST_QUEUE_EXPIRES_MS
    return named_queue(host_queue_name(settings, host), arguments or None)


def named_queue(name: str, arguments: dict[str, Any] | None = None) -> Queue:
    """A durable queue behind a direct exchange of its own name, as Celery makes the queues
    it is only named (so no two queues ever share a binding)."""
    from kombu import Exchange, Queue

    return Queue(
        name,
        Exchange(name, type="direct"),
        routing_key=name,
        queue_arguments=arguments,
        durable=True,
    )

"""A worker host cut off mid-review, on RabbitMQ and on Redis with PostgreSQL as the store
(issue 23): seconds from the cut to the one review posted, and the duplicates (0).

``tests/support/partitions.py`` (the same code as the slow test
``tests/system/test_partitions.py``): two worker hosts, each a network namespace of its
own (``tests/support/netns.py``, root and iproute2), one review thread each, a 3 s lease.
The K3 stub holds the first run's answer until its host is healed, so the cut lands
mid-review:

(a) cut from the broker and the store (GitHub still reachable): the other host's sweep
    puts the job back after the lease, and it posts; the cut host, healed, posts nothing;
(b) cut from GitHub only, its answer arriving during the cut: its posting step fails
    (a stalled connection gives up after GitHub's client timeout) and is retried;
(c) cut from everything (its cable pulled) for three leases, then healed;
(d) the store (a PostgreSQL server of the run's own) stopped while the review waits on
    the model, the answer arriving while it is down, then started again.

Quick mode: scenario (a) on Redis only. Without namespaces (not root, no iproute2) the
rows say "not run".
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from benchmarks.common import TIMER, Row, redis_up, row
from benchmarks.standalone import main
from tests.support.partitions import (
    LEASE,
    Partition,
    partition_mid_review,
    restart_store_mid_review,
    worker_hosts,
)
from tests.support.services import REDIS_URL
from tests.support.store import PostgresServer

BROKERS = (("rabbitmq", "RabbitMQ"), ("redis", "Redis"))
SCENARIOS = (
    ("a", "cut from broker and store", "services", "heal"),
    ("b", "cut from GitHub only", "github", "cut"),
    ("c", "cut from everything past its lease", "everything", "heal"),
)
WITHIN_S = LEASE + 60


def _rows(label: str, what: str, r: Partition) -> list[Row]:
    final = [c for c in r.checks if c["output"]["title"] != "GitNeural will try again"]
    duplicates = max(0, len(r.reviews) - 1) + max(0, len(final) - 1)
    return [
        row(
            f"partition, {label}, {what}: cut → review posted",
            r.seconds,
            "s",
            f"< {WITHIN_S:g} s ({TIMER} the {LEASE:g} s lease + 60 s)",
            r.seconds < WITHIN_S,
        ),
        row(
            f"partition, {label}, {what}: duplicate reviews and conclusions",
            duplicates,
            "",
            "0",
            duplicates == 0 and len(r.reviews) == 1,
        ),
    ]


def run(quick: bool = False) -> list[Row]:
    rows: list[Row] = []
    brokers = BROKERS[1:] if quick else BROKERS
    scenarios = SCENARIOS[:1] if quick else SCENARIOS
    with tempfile.TemporaryDirectory(prefix="gitneural-bench-partitions-") as tmp:
        for kind, label in brokers:
            if not redis_up(REDIS_URL):
                rows.append(row(f"partitions, {label}", "not run: Redis down"))
                continue
            try:
                with worker_hosts(kind, Path(tmp) / kind) as (cluster, world):
                    for key, what, cut, answer in scenarios:
                        r = partition_mid_review(cluster, world, cut, answer=answer)  # type: ignore[arg-type]
                        rows += _rows(label, f"({key}) {what}", r)
                if quick:
                    continue
                with (
                    PostgresServer() as pg,
                    worker_hosts(kind, Path(tmp) / f"{kind}-d", database=pg.url) as (
                        cluster,
                        world,
                    ),
                ):
                    r = restart_store_mid_review(cluster, world, pg)
                    rows += _rows(label, "(d) store restarted mid-review", r)
            except pytest.skip.Exception as exc:
                rows.append(row(f"partitions, {label}", f"not run: {str(exc)[:80]}"))
    return rows


if __name__ == "__main__":
    raise SystemExit(main(run))

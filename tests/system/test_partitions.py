"""Worker hosts in network namespaces of their own, one cut off mid-review
(:mod:`tests.support.partitions`), on RabbitMQ and on Redis with PostgreSQL as the store:
exactly one review and one check run conclusion per head, whatever the cut host does.

``benchmarks/bench_partitions.py`` measures the same seconds per scenario.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.hosts import Cluster
from tests.support.partitions import LEASE, Partition, partition_mid_review, worker_hosts
from tests.support.services import AppWorld

pytestmark = [pytest.mark.slow, pytest.mark.redis]

KINDS = ("rabbitmq", "redis")


@pytest.fixture(params=[pytest.param("rabbitmq", marks=pytest.mark.rabbitmq), "redis"])
def hosts(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Cluster, AppWorld]]:
    with worker_hosts(request.param, tmp_path) as found:
        yield found


def _exactly_once(result: Partition) -> None:
    assert len(result.reviews) == 1, result.logs[-6000:]
    [check] = result.checks
    assert check["status"] == "completed"
    # One conclusion, the posted review's: no late "paused" or "cancelled" over it.
    assert result.conclusions == [f"conclusion {check['conclusion']}"], result.conclusions
    assert result.reviews[0]["commit_id"] == check["head_sha"]


def test_a_host_cut_from_broker_and_store_loses_the_review_to_another(
    hosts: tuple[Cluster, AppWorld],
) -> None:
    result = partition_mid_review(*hosts, "services")
    _exactly_once(result)
    assert result.seconds < LEASE + 60, f"posted {result.seconds:.0f} s after the cut"
    assert result.posted_after_heal == 0, result.logs[-6000:]

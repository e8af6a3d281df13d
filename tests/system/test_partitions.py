"""Worker hosts in network namespaces of their own, one cut off mid-review
(:mod:`tests.support.partitions`), on RabbitMQ and on Redis with PostgreSQL as the store:
exactly one review and one check run conclusion per head, whatever the cut host does.

``benchmarks/bench_partitions.py`` measures the same seconds per scenario.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.gh.checks import PAUSED_TITLE
from tests.support.hosts import Cluster
from tests.support.partitions import (
    LEASE,
    Partition,
    partition_mid_review,
    restart_store_mid_review,
    worker_hosts,
)
from tests.support.services import AppWorld
from tests.support.store import PostgresServer

pytestmark = [pytest.mark.slow, pytest.mark.redis]


@pytest.fixture(params=[pytest.param("rabbitmq", marks=pytest.mark.rabbitmq), "redis"])
def hosts(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Cluster, AppWorld]]:
    with worker_hosts(request.param, tmp_path) as found:
        yield found


def _exactly_once(result: Partition) -> None:
    """One review, one check run, one conclusion: no late "paused" or "cancelled" over it."""
    assert len(result.reviews) == 1, result.logs[-6000:]
    [check] = result.checks
    assert check["status"] == "completed"
    assert result.conclusions == [f"conclusion {check['conclusion']}"], result.conclusions
    assert result.reviews[0]["commit_id"] == check["head_sha"]


def _once_after_a_retry(result: Partition) -> None:
    """One review; a retry may have left its first check run paused (saying it will try
    again), and nothing is left in progress."""
    assert len(result.reviews) == 1, result.logs[-6000:]
    assert {c["status"] for c in result.checks} == {"completed"}, result.checks
    final = [c for c in result.checks if c["output"]["title"] != PAUSED_TITLE]
    assert len(final) == 1, result.checks
    assert len(result.conclusions) == len(result.checks), result.conclusions


#: The longest another host may take to post a cut host's review. The cut host is healed
#: only once that review is in (or this has passed), so that whatever GitHub accepts after
#: the heal can only be the cut host's: a fixed hold of three leases let a slow takeover
#: on a loaded machine post just after the heal, counted as the cut host's duplicate.
TAKEOVER = LEASE + 60


def test_a_host_cut_from_broker_and_store_loses_the_review_to_another(
    hosts: tuple[Cluster, AppWorld],
) -> None:
    result = partition_mid_review(*hosts, "services", hold=TAKEOVER)
    _exactly_once(result)
    assert result.seconds < TAKEOVER, f"posted {result.seconds:.0f} s after the cut"
    assert result.posted_after_heal == 0, result.logs[-6000:]


def test_b_a_host_cut_from_github_only_retries_and_posts_once(
    hosts: tuple[Cluster, AppWorld],
) -> None:
    # Its model answer comes while it is cut: its posting step fails, and is retried.
    result = partition_mid_review(*hosts, "github", answer="cut")
    _once_after_a_retry(result)
    assert result.cut_outcome.startswith("retrying"), result.cut_outcome


def test_c_a_host_cut_from_everything_past_its_lease_loses_nothing(
    hosts: tuple[Cluster, AppWorld],
) -> None:
    result = partition_mid_review(*hosts, "everything", hold=TAKEOVER)
    _exactly_once(result)  # not lost, not doubled
    assert result.seconds < TAKEOVER, f"posted {result.seconds:.0f} s after the cut"
    assert result.posted_after_heal == 0, result.logs[-6000:]


@pytest.mark.parametrize("kind", [pytest.param("rabbitmq", marks=pytest.mark.rabbitmq), "redis"])
def test_d_the_store_restarted_mid_review_gives_one_review(kind: str, tmp_path: Path) -> None:
    with PostgresServer() as pg, worker_hosts(kind, tmp_path, database=pg.url) as (cluster, world):
        result = restart_store_mid_review(cluster, world, pg)
    _once_after_a_retry(result)
    assert "retrying" in result.cut_outcome, result.cut_outcome

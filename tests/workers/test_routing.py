"""Routing by repository: each repository's home among the live worker hosts (rendezvous
hashing: stable, and only a leaving host's repositories move), the turn sent to the home
host's own queue when it has a free thread, the settings that name hosts and schedules,
and the queues a worker consumes. Real Redis and SQLite stores, real Celery config."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from bot.errors import ConfigError
from bot.jobs import ReviewJob
from tests.support.services import REDIS_URL, drop_redis_keys, require_redis, unique_prefix
from workers.celeryapp.app import celery_config, create_publisher
from workers.celeryapp.turn_messages import TurnPublisher
from workers.schedule.protocol import FIFO_KEY, entry_for
from workers.schedule.routing import HOST_QUEUE_EXPIRES_MS, home_host, review_queues
from workers.schedule.sqlite_store import SQLiteSchedule
from workers.settings import WorkerSettings, worker_host

REPOS = [f"org{i % 7}/repo-{i}" for i in range(600)]


def test_every_repository_has_one_stable_home_and_the_load_spreads() -> None:
    hosts = ["w1", "w2", "w3"]
    homes = {repo: home_host(repo, hosts) for repo in REPOS}
    assert homes == {repo: home_host(repo, list(reversed(hosts))) for repo in REPOS}
    assert home_host("Org0/Repo-0", hosts) == home_host("org0/repo-0", hosts)  # GitHub's case
    spread = Counter(homes.values())
    assert set(spread) == set(hosts) and min(spread.values()) > 150  # about 200 each
    assert home_host("o/r", []) is None


def test_a_host_leaving_or_joining_moves_only_its_share() -> None:
    before = {repo: home_host(repo, ["w1", "w2", "w3"]) for repo in REPOS}
    after_leave = {repo: home_host(repo, ["w1", "w3"]) for repo in REPOS}
    moved = [r for r in REPOS if before[r] != after_leave[r]]
    assert moved and all(before[r] == "w2" for r in moved)  # only w2's repositories move
    after_join = {repo: home_host(repo, ["w1", "w2", "w3", "w4"]) for repo in REPOS}
    moved = [r for r in REPOS if before[r] != after_join[r]]
    assert all(after_join[r] == "w4" for r in moved)  # the newcomer takes, nobody swaps
    assert 90 < len(moved) < 220  # about a quarter


def test_worker_host_and_schedule_settings() -> None:
    assert worker_host({"GITNEURAL_WORKER_HOST": "spot-7"}) == "spot-7"
    assert worker_host({})  # the host name, made queue-safe
    with pytest.raises(ConfigError, match="GITNEURAL_WORKER_HOST"):
        worker_host({"GITNEURAL_WORKER_HOST": "a b"})
    s = WorkerSettings.from_env({"GITNEURAL_INSTALLATION_CONCURRENCY": "4"})
    assert (s.installation_concurrency, s.schedule) == (4, "fair")
    for env, name in (
        ({"GITNEURAL_INSTALLATION_CONCURRENCY": "-1"}, "GITNEURAL_INSTALLATION_CONCURRENCY"),
        ({"GITNEURAL_SCHEDULE": "lottery"}, "GITNEURAL_SCHEDULE"),
    ):
        with pytest.raises(ConfigError, match=name):
            WorkerSettings.from_env(env)


def job(trigger: str = "opened", installation: int = 7) -> ReviewJob:
    head = None if trigger == "command" else "a" * 40
    return ReviewJob(installation, "octo/app", 1, head, trigger, "d-1")


def test_a_job_s_place_in_the_schedule() -> None:
    fair = WorkerSettings.from_env({})
    auto, command = entry_for(job(), 3, fair, "w2"), entry_for(job("command"), 4, fair, None)
    assert (auto.turn_key, auto.lane, auto.home, auto.seq) == ("7", "auto", "w2", 3)
    assert (command.lane, command.home) == ("command", None)
    fifo = WorkerSettings.from_env({"GITNEURAL_SCHEDULE": "fifo"})
    assert entry_for(job(), 3, fifo, None).turn_key == FIFO_KEY


def test_workers_consume_the_shared_queue_and_their_host_s_own() -> None:
    redis = WorkerSettings.from_env(
        {"GITNEURAL_BROKER_URL": REDIS_URL, "GITNEURAL_QUEUE_PREFIX": "t"}
    )
    assert [q.name for q in review_queues(redis, "w1")] == ["t.reviews", "t.reviews.w1"]
    embedded = WorkerSettings.from_env({})
    assert [q.name for q in review_queues(embedded, "w1")] == ["gitneural.reviews"]  # one host
    amqp = WorkerSettings.from_env(
        {"GITNEURAL_BROKER_URL": "amqp://u:p@rabbit//", "GITNEURAL_WORKER_HOST": "w1"}
    )
    conf: dict[str, Any] = celery_config(amqp)
    queues = {q.name: q for q in conf["task_queues"]}
    assert set(queues) == {
        "gitneural.reviews",
        "gitneural.reviews.w1",
        "gitneural.fast",
        "gitneural.conversations",
    }
    assert all(q.durable and q.exchange.name == q.name for q in queues.values())
    assert queues["gitneural.reviews.w1"].queue_arguments == {"x-expires": HOST_QUEUE_EXPIRES_MS}
    assert conf["broker_transport_options"]["confirm_publish"] is True
    assert conf["task_default_delivery_mode"] == "persistent"


@pytest.mark.redis
def test_a_turn_goes_to_its_home_host_s_queue_only_when_that_host_has_a_free_thread(
    tmp_path: Path,
) -> None:
    client = require_redis()
    prefix = unique_prefix()
    settings = WorkerSettings.from_env(
        {"GITNEURAL_BROKER_URL": REDIS_URL, "GITNEURAL_QUEUE_PREFIX": prefix}
    )
    schedule = SQLiteSchedule(tmp_path / "schedule.sqlite3")

    def queued(name: str) -> int:
        return int(client.llen(f"{prefix}:{name}"))  # kombu's Redis lists, under the prefix

    try:
        turns = TurnPublisher(create_publisher(settings), settings, schedule)
        schedule.heartbeat("a", "w1", 1, ttl=60)
        schedule.heartbeat("b", "w2", 1, ttl=60)
        home = turns.home("octo/app")
        assert home in ("w1", "w2")
        own, shared = f"{prefix}.reviews.{home}", f"{prefix}.reviews"
        turns.give(home, "its home has a free thread")
        assert (queued(own), queued(shared)) == (1, 0)
        # Its home host's only thread is busy: the turn goes to every worker instead.
        schedule.enqueue(entry_for(job(), 1, settings, home))
        assert schedule.claim("x", home, 60, 0) is not None
        turns._hosts_at = float("-inf")  # forget the hosts remembered a moment ago
        turns.give(home, "its home is busy")
        turns.give(None, "no home")
        assert (queued(own), queued(shared)) == (1, 2)
    finally:
        drop_redis_keys(client, prefix)

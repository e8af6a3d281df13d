"""RabbitMQ as the broker, with real ``gitneural worker`` processes:

- the workers' connection cut (a TCP proxy between them and the machine's RabbitMQ, in a
  vhost of the test's own) while reviews run and others are queued: nothing lost,
  nothing posted twice; a publish the broker cannot confirm is refused (503) and taken
  back out of the schedule, and the next one goes through once the link is back;
- a RabbitMQ node of the test's own restarted with reviews queued (durable queues and
  persistent turns survive it, as ``rabbitmqctl list_queues`` shows) and again while a
  worker reviews: every review posted once;
- on that node, with ``consumer_timeout`` at 5 s: a review of 12 s, and another queued
  behind it, each posted exactly once (no review holds a message while it runs).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from pathlib import Path

import amqp
import kombu
import pytest

from bot.jobs import QueueError, ReviewJob
from tests.support.deployments import Deployment, deployment
from tests.support.rabbit import RabbitNode, queue_depths
from tests.support.services import (
    REDIS_URL,
    AppWorld,
    GitNeuralProcess,
    drop_redis_keys,
    make_job,
    outcomes,
    require_redis,
    unique_prefix,
    wait_for,
    worker_ready,
)
from tests.support.tcpproxy import CuttableProxy
from workers.celeryapp.app import create_celery
from workers.celeryapp.publisher import CeleryJobQueue
from workers.settings import WorkerSettings

pytestmark = [pytest.mark.slow, pytest.mark.rabbitmq, pytest.mark.redis]


@pytest.fixture(autouse=True)
def calm_model(world: AppWorld) -> Iterator[None]:
    yield
    world.think = world.stream = 0.0


def proxied(url: str, proxy: CuttableProxy) -> str:
    vhost = url.rsplit("/", 1)[1]
    return f"amqp://guest:guest@127.0.0.1:{proxy.port}/{vhost}"


def posted_once(world: AppWorld, jobs: list[ReviewJob]) -> None:
    for job in jobs:
        [review] = world.reviews(job.pr_number)
        assert review["commit_id"] == job.head_sha


# ---- the connection cut ---------------------------------------------------------------


def test_workers_cut_from_rabbitmq_lose_no_review_and_post_none_twice(
    world: AppWorld, tmp_path: Path
) -> None:
    proxy = CuttableProxy(("127.0.0.1", 5672))
    try:
        with deployment("rabbitmq", world, tmp_path) as d:
            d.env["GITNEURAL_BROKER_URL"] = proxied(d.env["GITNEURAL_BROKER_URL"], proxy)
            with GitNeuralProcess(["worker", "-c", "2"], d.env, tmp_path / "w.log") as worker:
                worker_ready(worker)
                running = make_job(world, world.new_pull())
                title = world.title(running.pr_number)
                world.think = 8.0  # still thinking when the link is back
                d.queue.submit(running)
                wait_for(lambda: world.active.get(title), "the review to reach the model", 30)
                proxy.cut()
                # Accepted by the webhook (its own link is up) while the workers are cut off.
                queued = [make_job(world, world.new_pull()) for _ in range(3)]
                for job in queued:
                    d.queue.submit(job)
                worker.wait_log("Connection to broker lost", timeout=60)
                world.think = 0.0
                proxy.restore()
                for job in [running, *queued]:
                    [(status, _, _)] = outcomes(worker, job.delivery_id)
                    assert status == "posted"
            assert "review job" in worker.log()
    finally:
        proxy.close()
    posted_once(world, [running, *queued])
    assert world.calls[title] == 1  # the running review went on through the outage


def test_a_publish_rabbitmq_does_not_confirm_is_refused_and_taken_back(
    world: AppWorld, tmp_path: Path
) -> None:
    proxy = CuttableProxy(("127.0.0.1", 5672))
    try:
        with deployment("rabbitmq", world, tmp_path) as d:
            via = proxied(d.env["GITNEURAL_BROKER_URL"], proxy)
            settings = WorkerSettings.from_env({**d.env, "GITNEURAL_BROKER_URL": via})
            webhook = CeleryJobQueue(create_celery(settings), settings)
            first = make_job(world, world.new_pull())
            webhook.submit(first)  # connects
            proxy.cut()
            refused = make_job(world, world.new_pull())
            with pytest.raises(QueueError, match="the broker did not accept the job"):
                webhook.submit(refused)
            assert webhook.schedule.pending() == 1  # only the first: the refused one is out
            proxy.restore()
            accepted = make_job(world, world.new_pull())
            webhook.submit(accepted)  # a fresh connection
            with GitNeuralProcess(["worker"], d.env, tmp_path / "w.log") as worker:
                worker_ready(worker)
                for job in (first, accepted):
                    [(status, _, _)] = outcomes(worker, job.delivery_id)
                    assert status == "posted"
                assert refused.delivery_id not in worker.log()
    finally:
        proxy.close()
    posted_once(world, [first, accepted])
    assert world.reviews(refused.pr_number) == []  # GitHub's redelivery would queue it


# ---- a node of the test's own: restarts and the consumer timeout ----------------------


@contextlib.contextmanager
def on_node(world: AppWorld, root: Path, node: RabbitNode) -> Iterator[Deployment]:
    client = require_redis()
    prefix = unique_prefix()
    env = world.env(
        root / "data",
        GITNEURAL_QUEUE_PREFIX=prefix,
        GITNEURAL_BROKER_URL=node.url,
        GITNEURAL_STATE_URL=REDIS_URL,
    )
    settings = WorkerSettings.from_env(env)
    try:
        yield Deployment(
            "rabbitmq", env, CeleryJobQueue(create_celery(settings), settings), settings
        )
    finally:
        drop_redis_keys(client, prefix)


def test_rabbitmq_restarted_with_reviews_queued_and_running_loses_none(
    world: AppWorld, tmp_path: Path
) -> None:
    with RabbitNode(tmp_path / "rabbit") as node, on_node(world, tmp_path, node) as d:
        queue_name = d.settings.review_queue
        waiting = [make_job(world, world.new_pull()) for _ in range(3)]
        for job in waiting:
            d.queue.submit(job)
        assert node.queue_depths()[queue_name] == (3, 0, True)  # durable, 3 turns ready
        node.stop()
        node.start()
        assert node.queue_depths()[queue_name] == (3, 0, True)  # persistent: still there
        with GitNeuralProcess(["worker", "-c", "1"], d.env, tmp_path / "w.log") as worker:
            worker_ready(worker)
            for job in waiting:
                [(status, _, _)] = outcomes(worker, job.delivery_id)
                assert status == "posted"
            # Now restart it under a worker reviewing one PR with two more queued.
            running = make_job(world, world.new_pull())
            title = world.title(running.pr_number)
            world.think = 6.0
            d.queue.submit(running)
            wait_for(lambda: world.active.get(title), "the review to reach the model", 30)
            queued = [make_job(world, world.new_pull()) for _ in range(2)]
            for job in queued:
                d.queue.submit(job)
            node.stop()
            world.think = 0.0
            node.start()
            for job in [running, *queued]:
                [(status, _, _)] = outcomes(worker, job.delivery_id)
                assert status == "posted"
            assert "Connection to broker lost" in worker.log()
    posted_once(world, [*waiting, running, *queued])
    assert world.calls[title] == 1


def test_a_review_longer_than_the_consumer_timeout_is_posted_exactly_once(
    world: AppWorld, tmp_path: Path
) -> None:
    with RabbitNode(tmp_path / "rabbit", consumer_timeout_ms=5000) as node:
        assert "5000" in node.ctl("eval", "application:get_env(rabbit, consumer_timeout).")
        # Control: a delivery held unacknowledged for 5 s costs its consumer the channel.
        with kombu.Connection(node.url) as conn:
            probe = conn.SimpleQueue("probe")
            probe.put("held")
            probe.get(timeout=10)
            held_since = time.monotonic()
            with pytest.raises(amqp.exceptions.PreconditionFailed, match="timed out"):
                while time.monotonic() - held_since < 30:
                    with contextlib.suppress(TimeoutError):
                        conn.drain_events(timeout=1)
        with on_node(world, tmp_path, node) as d:
            long_one, behind = (make_job(world, world.new_pull()) for _ in range(2))
            world.think = 12.0  # each review thinks longer than RabbitMQ waits for an ack
            with GitNeuralProcess(["worker", "-c", "1"], d.env, tmp_path / "w.log") as worker:
                worker_ready(worker)
                d.queue.submit(long_one)
                d.queue.submit(behind)
                for job in (long_one, behind):
                    [(status, _, _)] = outcomes(worker, job.delivery_id)
                    assert status == "posted"
                assert node.queue_depths()[d.settings.review_queue][:2] == (0, 0)
                log = worker.log()
            # The turn that arrived behind the long review was handed on, never held.
            assert "a turn handed on: every review thread was busy" in log
            assert "PRECONDITION_FAILED" not in log
    posted_once(world, [long_one, behind])
    for job in (long_one, behind):
        assert world.calls[world.title(job.pr_number)] == 1


def test_queue_depths_reads_the_vhost(world: AppWorld, tmp_path: Path) -> None:
    with deployment("rabbitmq", world, tmp_path) as d:
        d.queue.submit(make_job(world, world.new_pull()))
        depths = queue_depths(d.env["GITNEURAL_BROKER_URL"])
        assert depths[d.settings.review_queue] == (1, 0, True)

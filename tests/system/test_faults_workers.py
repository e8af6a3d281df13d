"""Worker and broker faults with real processes (issue 7, item 3).

Real ``gitneural worker`` and ``gitneural serve`` processes on the real Redis and on the
embedded SQLite broker, the fake GitHub and the K3 stub in threads (reached by URL):

- a worker killed with SIGKILL mid-review: the message is redelivered after the
  visibility timeout and exactly one review is posted (Redis; the embedded broker's case
  is in ``test_workers_e2e.py``);
- a worker killed right after GitHub accepted its review: the redelivered job finds the
  review by its marker, posts nothing and completes the check run left in progress;
- the worker's connections to Redis cut and restored (a TCP proxy between the worker and
  Redis; the shared server is never stopped): queued work continues, a review running
  through the outage is posted once;
- ``gitneural serve`` on the embedded broker stopped (SIGTERM) or killed outright
  (SIGKILL to every process) and started again: deliveries accepted while the worker
  was busy or down are reviewed after the restart, each exactly once.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from tests.support.services import (
    REDIS_URL,
    REPO,
    AppWorld,
    GitNeuralProcess,
    children_of,
    drop_redis_keys,
    make_job,
    outcomes,
    require_redis,
    start_serve,
    unique_prefix,
    wait_for,
    worker_ready,
)
from tests.support.tcpproxy import CuttableProxy
from tests.support.webhooks import encode, headers_for, http_post
from workers.celeryapp.app import create_celery
from workers.celeryapp.publisher import CeleryJobQueue
from workers.settings import WorkerSettings
from workers.state.pr_lock import pr_key

# Each waits out a visibility timeout or restarts processes: seconds each, not milliseconds.
pytestmark = pytest.mark.slow

#: Short limits so a message held by a dead worker is redelivered within seconds.
FAST_REDELIVERY = {
    "GITNEURAL_TASK_SOFT_TIME_LIMIT": "8",
    "GITNEURAL_TASK_TIME_LIMIT": "9",
    "GITNEURAL_VISIBILITY_TIMEOUT": "10",
}
#: Room for a review that thinks through a broker outage (the model gets 90% of the soft
#: limit), with a redelivery still within the test's patience.
LONGER_REVIEWS = {
    "GITNEURAL_TASK_SOFT_TIME_LIMIT": "20",
    "GITNEURAL_TASK_TIME_LIMIT": "25",
    "GITNEURAL_VISIBILITY_TIMEOUT": "30",
}


@pytest.fixture(autouse=True)
def calm_model(world: AppWorld) -> Iterator[None]:
    yield
    world.think = world.stream = 0.0
    world.gh.clear_faults()


@contextlib.contextmanager
def deployment(
    kind: str, world: AppWorld, root: Path, broker_url: str = REDIS_URL, **extra: str
) -> Iterator[tuple[dict[str, str], CeleryJobQueue]]:
    """The environment of workers on ``kind`` ("redis"/"sqlite") and a queue publishing
    to it directly (as the webhook does); Redis keys are dropped afterwards."""
    client = require_redis() if kind == "redis" else None
    prefix = unique_prefix()
    env = world.env(root / "data", GITNEURAL_QUEUE_PREFIX=prefix, **extra)
    if kind == "redis":
        env["GITNEURAL_BROKER_URL"] = broker_url
    # The test publishes straight to Redis, never through a proxy it cuts.
    settings = WorkerSettings.from_env(
        {**env, "GITNEURAL_BROKER_URL": REDIS_URL} if client else env
    )
    try:
        yield env, CeleryJobQueue(create_celery(settings), settings)
    finally:
        if client is not None:
            drop_redis_keys(client, prefix)


# ---- SIGKILL mid-review --------------------------------------------------------------


@pytest.mark.redis
def test_sigkill_mid_review_on_redis_is_redelivered_and_posted_once(
    world: AppWorld, tmp_path: Path
) -> None:
    with deployment("redis", world, tmp_path, **FAST_REDELIVERY) as (env, queue):
        number = world.new_pull()
        title = world.title(number)
        job = make_job(world, number)
        world.think = 3.0
        with GitNeuralProcess(["worker"], env, tmp_path / "first.log") as first:
            worker_ready(first)
            queue.submit(job)
            wait_for(lambda: world.active.get(title), "the review to reach the model", 30)
            assert first.stop(signal.SIGKILL) == -signal.SIGKILL
        world.think = 0.0
        assert world.reviews(number) == []
        # The process manager restarts the worker at once; the message comes back when
        # the visibility timeout has passed.
        with GitNeuralProcess(["worker"], env, tmp_path / "second.log") as second:
            [(status, review_id, _)] = outcomes(second, job.delivery_id)
        assert status == "posted"
        [review] = world.reviews(number)
        assert str(review["id"]) == review_id and review["commit_id"] == job.head_sha
        # The killed worker's check run was carried on, not left "in progress".
        [check] = world.gh.check_runs(REPO, job.head_sha)
        assert check["status"] == "completed" and check["conclusion"] is not None


# ---- SIGKILL right after posting -----------------------------------------------------


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("redis", marks=pytest.mark.redis)])
def test_a_worker_killed_right_after_posting_posts_no_second_review(
    kind: str, world: AppWorld, tmp_path: Path
) -> None:
    with deployment(kind, world, tmp_path, **FAST_REDELIVERY) as (env, queue):
        number = world.new_pull()
        title = world.title(number)
        job = make_job(world, number)
        checks = f"/repos/{REPO}/check-runs/*"
        # Once GitHub has accepted the review, the check run's completion hangs: the
        # worker is caught between posting and acknowledging its message.
        world.gh.when(
            "POST",
            f"/repos/{REPO}/pulls/{number}/reviews",
            "fail",
            "PATCH",
            checks,
            status=502,
            delay=20,
        )
        patches = len(world.gh.requests(method="PATCH", path=checks))
        with GitNeuralProcess(["worker"], env, tmp_path / "first.log") as first:
            worker_ready(first)
            queue.submit(job)
            wait_for(
                lambda: len(world.gh.requests(method="PATCH", path=checks)) > patches,
                "the check run's completion after the review was posted",
            )
            assert first.stop(signal.SIGKILL) == -signal.SIGKILL
        [posted] = world.reviews(number)
        [left] = world.gh.check_runs(REPO, job.head_sha)
        assert left["status"] == "in_progress"
        with GitNeuralProcess(["worker"], env, tmp_path / "second.log") as second:
            [(status, review_id, detail)] = outcomes(second, job.delivery_id)
        assert (status, review_id, detail) == ("posted", str(posted["id"]), "'already posted'")
        assert world.reviews(number) == [posted]
        assert world.calls[title] == 1  # the model was not asked again
        [run] = world.gh.check_runs(REPO, job.head_sha)
        assert (run["status"], run["conclusion"]) == ("completed", "neutral")


# ---- the broker connection cut and restored ------------------------------------------


def settled(client: redis.Redis, prefix: str) -> bool:
    """Nothing left in the review queue nor held unacknowledged by any worker."""
    queue, unacked = f"{prefix}:{prefix}.reviews", f"{prefix}:unacked"
    return client.llen(queue) == 0 and client.hlen(unacked) == 0


@pytest.mark.redis
def test_redis_cut_longer_than_the_lock_lease_loses_no_review(
    world: AppWorld, tmp_path: Path
) -> None:
    client = require_redis()
    proxy = CuttableProxy(("127.0.0.1", 6379))
    via_proxy = f"redis://127.0.0.1:{proxy.port}/0"
    try:
        # Broker, PR locks and head records all reach Redis through the proxy.
        with deployment("redis", world, tmp_path, via_proxy, **LONGER_REVIEWS) as (env, queue):
            prefix = env["GITNEURAL_QUEUE_PREFIX"]
            with GitNeuralProcess(["worker"], env, tmp_path / "worker.log") as worker:
                worker_ready(worker)
                running = make_job(world, world.new_pull())
                title = world.title(running.pr_number)
                world.think = 8.0  # the model is still thinking when the link is back
                queue.submit(running)
                wait_for(lambda: world.active.get(title), "the review to reach the model", 30)
                proxy.cut()
                # Published while the worker cannot reach Redis (the webhook still can).
                queued = [make_job(world, world.new_pull()) for _ in range(2)]
                for job in queued:
                    queue.submit(job)
                worker.wait_log("Connection to broker lost", timeout=30)
                worker.wait_log(f"lock on {REPO}#{running.pr_number} not renewed", timeout=30)
                # The outage outlasts the PR lock's 3 s lease: Redis dropped the lock.
                lock = f"{prefix}:pr:lock:{pr_key(REPO, running.pr_number)}"
                wait_for(lambda: not client.exists(lock), "the PR lock's lease to run out", 30)
                world.think = 0.0
                proxy.restore()
                for job in [running, *queued]:
                    [(status, _, _)] = outcomes(worker, job.delivery_id)
                    assert status == "posted"
                wait_for(lambda: settled(client, prefix), "the queue to settle", 60)
            log = worker.log()
    finally:
        proxy.close()
    # The lock lost in the outage: the run that held it did not post, and was retried
    # (not reported "superseded" and dropped), and the retry posted.
    lost = r"the (claim on the job|PR.s lock) (is no longer this run.s|cannot be confirmed)"
    retried = rf"delivery={running.delivery_id} .* fault=1 retry_in=\S+ reason={lost}"
    assert re.search(retried, log)
    assert world.calls[title] == 2
    for job in [running, *queued]:
        [review] = world.reviews(job.pr_number)
        assert review["commit_id"] == job.head_sha


# ---- gitneural serve restarted (embedded broker) ------------------------------------


def deliver(address: str, payload: dict[str, Any], delivery: str) -> int:
    body = encode(payload)
    return http_post(
        address, "/webhook", body, headers_for("pull_request", body, delivery=delivery)
    ).status


def family(pid: int) -> list[int]:
    """``pid``'s descendants, deepest first."""
    found = []
    for child in children_of(pid):
        found += [*family(child), child]
    return found


def test_serve_restarted_reviews_what_was_queued_while_busy_or_down(
    world: AppWorld, tmp_path: Path
) -> None:
    env = world.env(tmp_path / "data", GITNEURAL_SHUTDOWN_GRACE="1")
    log = tmp_path / "serve.log"
    pulls = [world.new_pull() for _ in range(4)]
    delivery = {n: f"restart-{n}-{uuid.uuid4().hex[:8]}" for n in pulls}
    # One review thread, busy with a review the model streams for longer than anyone waits.
    world.stream = 30.0
    proc, address = start_serve(env, log, "--concurrency", "1")
    proc.wait_log("ready.", count=2, timeout=60)
    busy, *waiting, late = pulls
    assert deliver(address, world.opened(busy), delivery[busy]) == 202
    wait_for(lambda: world.calls.get(world.title(busy)), "the review to reach the model")
    for n in waiting:
        assert deliver(address, world.opened(n), delivery[n]) == 202
    assert proc.stop(signal.SIGTERM) == 0
    assert "interrupted by shutdown: requeued" in proc.log()
    world.stream = 0.0
    # The web server alone (the workers down): the delivery is accepted and queued.
    web, address = start_serve(env, log, "--no-worker")
    assert deliver(address, world.opened(late), delivery[late]) == 202
    assert web.stop() == 0
    assert all(world.reviews(n) == [] for n in pulls)

    proc, address = start_serve(env, log, "--concurrency", "1")
    try:
        for n in pulls:
            wait_for(lambda n=n: world.reviews(n), f"the review of PR {n}", 60)
        # The delivery log survived the restarts too: a redelivery is not queued again.
        again = encode(world.opened(late))
        reply = http_post(
            address, "/webhook", again, headers_for("pull_request", again, delivery=delivery[late])
        )
        assert (reply.status, reply.json["status"]) == (200, "duplicate")
    finally:
        assert proc.stop() == 0
    for n in pulls:
        [review] = world.reviews(n)
        assert review["commit_id"] == world.gh.head_sha(REPO, n)
    # Each job ran to "posted" once after the restart; the interrupted one only then.
    text = proc.log()
    for n in pulls:
        assert re.findall(rf"delivery={delivery[n]} .* outcome=(\S+)", text) == ["posted"]


def test_serve_killed_outright_and_restarted_loses_no_review(
    world: AppWorld, tmp_path: Path
) -> None:
    env = world.env(tmp_path / "data", **FAST_REDELIVERY)
    log = tmp_path / "serve.log"
    held, queued = world.new_pull(), world.new_pull()
    delivery = {n: f"crash-{n}-{uuid.uuid4().hex[:8]}" for n in (held, queued)}
    world.think = 5.0
    proc, address = start_serve(env, log, "--concurrency", "1")
    proc.wait_log("ready.", count=2, timeout=60)
    assert deliver(address, world.opened(held), delivery[held]) == 202
    wait_for(lambda: world.active.get(world.title(held)), "the review to reach the model")
    assert deliver(address, world.opened(queued), delivery[queued]) == 202
    # Power cut: every process of the App dies at once, none cleans up.
    for pid in [*family(proc.pid), proc.pid]:
        os.kill(pid, signal.SIGKILL)
    assert proc.stop() == -signal.SIGKILL
    world.think = 0.0
    assert world.reviews(held) == world.reviews(queued) == []

    proc, _ = start_serve(env, log, "--concurrency", "1")
    try:
        for n in (held, queued):
            wait_for(lambda n=n: world.reviews(n), f"the review of PR {n}", 60)
    finally:
        assert proc.stop() == 0
    for n in (held, queued):
        [review] = world.reviews(n)
        assert review["commit_id"] == world.gh.head_sha(REPO, n)

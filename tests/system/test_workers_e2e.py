"""Real ``gitneural worker`` processes on the real Redis, the real RabbitMQ (a vhost of its
own) and the embedded SQLite broker, running the real job runner against the fake GitHub
and the K3 stub (threads, by URL).
Jobs are submitted with ``CeleryJobQueue``, as the webhook does."""

from __future__ import annotations

import contextlib
import signal
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from bot.jobs import ReviewJob
from tests.support.deployments import BROKERS, broker_env
from tests.support.fairness import claimed_at, ended_at
from tests.support.rabbit import rabbit_vhost
from tests.support.services import (
    REPO,
    SUGGESTION,
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
from workers.celeryapp.app import create_celery
from workers.celeryapp.publisher import CeleryJobQueue
from workers.settings import WorkerSettings
from workers.state.pr_lock import PRState, open_pr_state, pr_key


@dataclass
class Deployment:
    kind: str
    world: AppWorld
    env: dict[str, str]
    queue: CeleryJobQueue
    state: PRState
    worker: GitNeuralProcess

    def job(self, number: int, trigger: str = "opened", **kwargs: Any) -> ReviewJob:
        return make_job(self.world, number, trigger, **kwargs)

    def outcomes(self, delivery: str, count: int = 1) -> list[tuple[str, str, str]]:
        return outcomes(self.worker, delivery, count)


def make_deployment(
    kind: str, world: AppWorld, root: Path, vhost_url: str | None = None, **extra: str
) -> tuple[dict[str, str], CeleryJobQueue, PRState]:
    prefix = unique_prefix()
    env = world.env(root / "data", GITNEURAL_QUEUE_PREFIX=prefix, **extra)
    env.update(broker_env(kind, vhost_url))
    settings = WorkerSettings.from_env(env)
    state = open_pr_state(settings)
    return env, CeleryJobQueue(create_celery(settings), settings, state=state), state


@pytest.fixture(scope="module", params=BROKERS)
def deployment(
    request: pytest.FixtureRequest, world: AppWorld, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Deployment]:
    kind = request.param
    client = require_redis() if kind != "sqlite" else None
    root = tmp_path_factory.mktemp(kind)
    with contextlib.ExitStack() as stack:
        url = stack.enter_context(rabbit_vhost()) if kind == "rabbitmq" else None
        env, queue, state = make_deployment(kind, world, root, url)
        with GitNeuralProcess(["worker", "-c", "4"], env, root / "worker.log") as worker:
            worker_ready(worker)
            yield Deployment(kind, world, env, queue, state, worker)
        if client is not None:
            drop_redis_keys(client, env["GITNEURAL_QUEUE_PREFIX"])


def test_a_job_run_twice_posts_one_review(deployment: Deployment) -> None:
    w = deployment.world
    number = w.new_pull()
    job = deployment.job(number)
    deployment.queue.submit(job)
    deployment.queue.submit(job)  # a redelivery that got past the webhook, or a retry
    outcomes = deployment.outcomes(job.delivery_id, count=2)
    [review] = w.reviews(number)
    assert [(s, r) for s, r, _ in outcomes] == [("posted", str(review["id"]))] * 2
    assert review["commit_id"] == job.head_sha and review["event"] == "COMMENT"
    [comment] = review["comments"]
    assert (comment["path"], comment["line"], comment["side"]) == ("people.py", 2, "RIGHT")
    assert SUGGESTION in comment["body"]
    assert w.calls[w.title(number)] == 1  # the model was asked once


def test_review_command_gets_eyes_first_then_a_review(deployment: Deployment) -> None:
    w = deployment.world
    number = w.new_pull()
    comment = w.gh.add_issue_comment(REPO, number, "/review", association="COLLABORATOR")
    job = deployment.job(
        number,
        "command",
        comment_id=comment["id"],
        requested_by="alice",
        author_association="COLLABORATOR",
    )
    deployment.queue.submit(job)
    [(status, _, _)] = deployment.outcomes(job.delivery_id)
    assert status == "posted"
    assert [r["content"] for r in w.gh.reactions(REPO, comment["id"])] == ["eyes"]
    posts = [
        r.path
        for r in w.gh.requests(method="POST", kind="api")
        if r.path.endswith("/reactions") or r.path == f"/repos/{REPO}/pulls/{number}/reviews"
    ]
    eyes = f"/repos/{REPO}/issues/comments/{comment['id']}/reactions"
    assert posts.index(eyes) < posts.index(f"/repos/{REPO}/pulls/{number}/reviews")
    assert len(w.reviews(number)) == 1


def _two_heads_queued(
    deployment: Deployment, first: str, *order: str
) -> tuple[int, ReviewJob, ReviewJob]:
    """A new PR, held by the test so that no job of it runs before both are queued: a job
    of its first head (``first`` its trigger) and, after a push, one of the second,
    submitted in ``order`` ("old", "new"); the worker has taken the last one when the
    hold ends."""
    w = deployment.world
    number = w.new_pull()
    key = pr_key(REPO, number)
    assert deployment.state.acquire(key, "test-holds-the-pr", 60)
    try:
        old = deployment.job(number, first)
        new_head = w.push(number, {"calc.py": "def half(n):\n    return n / 2\n"})
        new = deployment.job(number, "synchronize")
        assert new.head_sha == new_head != old.head_sha
        jobs = {"old": old, "new": new}
        for name in order:
            deployment.queue.submit(jobs[name])
        deployment.worker.wait_log(f"delivery={jobs[order[-1]].delivery_id} ", timeout=30)
    finally:
        deployment.state.release(key, "test-holds-the-pr")
    return number, old, new


def test_a_newer_head_supersedes_the_queued_older_job(deployment: Deployment) -> None:
    number, old, new = _two_heads_queued(deployment, "opened", "old", "new")
    [(old_status, _, old_detail)] = deployment.outcomes(old.delivery_id)
    assert (old_status, old_detail) == ("superseded", "'a newer head of the PR was queued'")
    [(new_status, _, _)] = deployment.outcomes(new.delivery_id)
    assert new_status == "posted"
    [review] = deployment.world.reviews(number)
    assert review["commit_id"] == new.head_sha


def test_deliveries_out_of_order_still_review_the_newest_head(deployment: Deployment) -> None:
    """GitHub does not deliver in order: the newer head's ``synchronize`` can be queued
    before the older head's. The older head's job, the last submitted, reviews the PR's
    head; the newer head's job, superseded by that submission, posts nothing. (A burst
    run met this: a PR whose newest head was never reviewed.)"""
    number, old, new = _two_heads_queued(deployment, "synchronize", "new", "old")
    [(new_status, _, new_detail)] = deployment.outcomes(new.delivery_id)
    assert (new_status, new_detail) == ("superseded", "'a newer head of the PR was queued'")
    [(old_status, _, _)] = deployment.outcomes(old.delivery_id)
    assert old_status == "posted"
    [review] = deployment.world.reviews(number)
    assert review["commit_id"] == new.head_sha
    # The newest head's event sent again (a new delivery id) finds that review: no second.
    again = deployment.job(number, "synchronize", delivery_id=f"{deployment.kind}-again")
    assert again.head_sha == new.head_sha
    deployment.queue.submit(again)
    [(again_status, _, again_detail)] = deployment.outcomes(again.delivery_id)
    assert (again_status, again_detail) == ("posted", "'already posted'")
    assert len(deployment.world.reviews(number)) == 1


def test_two_jobs_for_one_pr_never_run_at_once(deployment: Deployment) -> None:
    w = deployment.world
    w.think = 1.5
    try:
        # Control: two PRs do run at once (the worker has 4 threads).
        first, second = w.new_pull(), w.new_pull()
        jobs = [deployment.job(first), deployment.job(second)]
        for job in jobs:
            deployment.queue.submit(job)
        for job in jobs:
            deployment.outcomes(job.delivery_id)
        # Each was claimed before the other ended: they ran at once (whether both were
        # with the model at one moment depends on how long each prepared, that is load).
        log = [deployment.worker.log()]
        claimed, ended = claimed_at(log), ended_at(log)
        a, b = (job.delivery_id for job in jobs)
        assert claimed[a] < ended[b] and claimed[b] < ended[a], (claimed, ended)
        # One PR, two /review full jobs at once: one after the other.
        number = w.new_pull()
        jobs = [
            deployment.job(number, "command", full=True, delivery_id=f"{deployment.kind}-lock-{i}")
            for i in range(2)
        ]
        for job in jobs:
            deployment.queue.submit(job)
        for job in jobs:
            deployment.outcomes(job.delivery_id)
        title = w.title(number)
        assert w.calls[title] == 2
        assert w.most_active[title] == 1
    finally:
        w.think = 0.0


@pytest.mark.slow
def test_a_review_held_by_a_killed_worker_is_redelivered_and_posted_once(
    world: AppWorld, tmp_path: Path
) -> None:
    env, queue, _state = make_deployment(
        "sqlite",
        world,
        tmp_path,
        GITNEURAL_TASK_SOFT_TIME_LIMIT="8",
        GITNEURAL_TASK_TIME_LIMIT="9",
        GITNEURAL_VISIBILITY_TIMEOUT="10",
    )
    number = world.new_pull()
    title = world.title(number)
    job = make_job(world, number)
    world.think = 2.5
    try:
        with GitNeuralProcess(["worker"], env, tmp_path / "first.log") as first:
            worker_ready(first)
            queue.submit(job)
            wait_for(lambda: world.active.get(title), "the review to reach the model", 30)
            assert first.stop(signal.SIGKILL) == -signal.SIGKILL
        assert world.reviews(number) == []
        world.think = 0.0
        with GitNeuralProcess(["worker"], env, tmp_path / "second.log") as second:
            [(status, _, _)] = outcomes(second, job.delivery_id)
    finally:
        world.think = 0.0
    assert status == "posted"
    assert len(world.reviews(number)) == 1
    # The redelivered job carried on the killed worker's check run: one, completed.
    [check] = world.gh.check_runs(REPO, job.head_sha)
    assert check["status"] == "completed" and check["conclusion"] is not None


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("redis", marks=pytest.mark.redis)])
def test_sigterm_requeues_a_running_review_after_the_grace_period(
    kind: str, world: AppWorld, tmp_path: Path
) -> None:
    client = require_redis() if kind == "redis" else None
    env, queue, _state = make_deployment(kind, world, tmp_path, GITNEURAL_SHUTDOWN_GRACE="1")
    number = world.new_pull()
    title = world.title(number)
    world.stream = 20.0  # the model streams its reasoning for longer than anyone waits
    try:
        with GitNeuralProcess(["worker"], env, tmp_path / "first.log") as first:
            worker_ready(first)
            job = make_job(world, number)
            queue.submit(job)
            wait_for(lambda: world.calls.get(title), "the review to reach the model", 30)
            started = time.monotonic()
            assert first.stop(signal.SIGTERM, timeout=30) == 0
            # It waited out the grace period (1 s) before interrupting; that it did not
            # wait for the review (20 s of streaming) is what these lines show.
            assert time.monotonic() - started >= 1.0
            assert "interrupted by shutdown: requeued" in first.log()
        assert world.reviews(number) == []
        world.stream = 0.0
        with GitNeuralProcess(["worker"], env, tmp_path / "second.log") as second:
            [(status, _, _)] = outcomes(second, job.delivery_id)
        assert status == "posted"
        assert len(world.reviews(number)) == 1
    finally:
        world.stream = 0.0
        if client is not None:
            drop_redis_keys(client, env["GITNEURAL_QUEUE_PREFIX"])

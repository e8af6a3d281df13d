"""A worker killed with SIGKILL mid-review, on each broker, with the default lease, lock
retry, poll interval and visibility timeout: the review is posted exactly once, within
two minutes of the kill, and the check run the dead worker started is the one completed.

- embedded SQLite broker: ``gitneural serve``'s review worker is killed; serve starts it
  again, and the new worker's sweep puts the job back when its lease runs out;
- Redis and RabbitMQ: two ``gitneural worker`` processes; the one running the review is
  killed, the other's sweep puts the job back.

``benchmarks/bench_recovery.py`` measures the same seconds per broker.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.deployments import BROKERS, Deployment, deployment
from tests.support.services import (
    REPO,
    AppWorld,
    GitNeuralProcess,
    children_of,
    make_job,
    start_serve,
    wait_for,
    worker_ready,
)

pytestmark = pytest.mark.slow

#: The recovery promise of issue 16.
WITHIN = 120.0
#: The test environment's shortcuts that recovery depends on, back to their defaults.
SHORTCUTS = ("GITNEURAL_LOCK_LEASE", "GITNEURAL_LOCK_RETRY_DELAY", "GITNEURAL_BROKER_POLL_INTERVAL")


def default_env(env: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if k not in SHORTCUTS}


@contextlib.contextmanager
def review_workers(d: Deployment, root: Path) -> Iterator[list[GitNeuralProcess]]:
    """The processes that review: serve (embedded) or two workers (shared brokers)."""
    env = default_env(d.env)
    if d.kind == "sqlite":
        serve, _ = start_serve(env, root / "serve.log", "--concurrency", "2")
        try:
            serve.wait_log("ready.", count=2, timeout=90)
            yield [serve]
        finally:
            serve.stop()
        return
    with contextlib.ExitStack() as stack:
        command = ["worker", "-Q", "reviews"]
        workers = [
            stack.enter_context(GitNeuralProcess(command, env, root / f"w{i}.log"))
            for i in range(2)
        ]
        for worker in workers:
            worker_ready(worker)
        yield workers


def started_by(proc: GitNeuralProcess, delivery: str) -> bool:
    return bool(re.search(rf"review job delivery={re.escape(delivery)} .* started by", proc.log()))


@pytest.mark.parametrize("kind", BROKERS)
def test_a_worker_killed_mid_review_is_replaced_within_two_minutes(
    kind: str, world: AppWorld, tmp_path: Path
) -> None:
    with deployment(kind, world, tmp_path) as d, review_workers(d, tmp_path) as procs:
        number = world.new_pull()
        title = world.title(number)
        job = make_job(world, number)
        world.think = 600.0  # the first run waits on the model until it is killed
        try:
            d.queue.submit(job)
            wait_for(lambda: world.active.get(title), "the review to reach the model", 60)
            [check] = world.gh.check_runs(REPO, job.head_sha)
            assert check["status"] == "in_progress"
            if kind == "sqlite":
                victim = children_of(procs[0].pid)[1]  # serve: web, reviews worker, fast worker
            else:
                [runner] = [p for p in procs if started_by(p, job.delivery_id)]
                victim = runner.pid
            killed_at = time.time()
            os.kill(victim, signal.SIGKILL)  # no clean-up of any kind
            world.think = 0.0
            wait_for(lambda: world.reviews(number), "the review after the kill", WITHIN + 30, 0.5)
        finally:
            world.think = 0.0
        [review] = world.reviews(number)
        posted = world.gh.requests("POST", f"/repos/{REPO}/pulls/{number}/reviews")
        [post] = [r for r in posted if r.status == 200]
        assert post.time - killed_at < WITHIN, f"posted {post.time - killed_at:.0f} s after"
        assert review["commit_id"] == job.head_sha
        assert world.calls[title] == 2  # the killed run and the one that carried on
        # The check run the dead worker started is the one completed: one, not two.
        [done] = world.gh.check_runs(REPO, job.head_sha)
        assert (done["id"], done["status"]) == (check["id"], "completed")
        logs = "".join(p.log() for p in procs)
        assert "put back in line: its worker stopped renewing the lease" in logs
        assert re.search(rf"delivery={job.delivery_id} .* resuming a stopped run", logs)

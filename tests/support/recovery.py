"""A worker killed with SIGKILL mid-review, on one broker, and what came of it: shared by
``tests/system/test_recovery.py`` (the promises) and ``benchmarks/bench_recovery.py``
(the seconds).

    with app_world(root) as world:
        result = kill_mid_review("redis", world, root)   # default lease etc.
        result.seconds                                   # kill → review posted

Embedded broker: ``gitneural serve``'s review worker is killed (serve starts it again).
Redis, RabbitMQ: two ``gitneural worker`` processes, and the one running the review is
killed (the other carries on).
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support.deployments import Deployment, deployment
from tests.support.services import (
    REPO,
    AppWorld,
    GitNeuralProcess,
    children_of,
    make_job,
    start_serve,
    stop_together,
    wait_for,
    worker_ready,
)

#: The test environment's shortcuts that recovery depends on, back to their defaults.
SHORTCUTS = ("GITNEURAL_LOCK_LEASE", "GITNEURAL_LOCK_RETRY_DELAY", "GITNEURAL_BROKER_POLL_INTERVAL")


@dataclass
class Recovery:
    seconds: float
    reviews: list[dict[str, Any]]
    #: The check run before the kill, and every check run of the head afterwards.
    check_before: dict[str, Any]
    checks_after: list[dict[str, Any]]
    model_calls: int
    logs: str


@contextlib.contextmanager
def review_workers(
    d: Deployment, root: Path, env: dict[str, str]
) -> Iterator[list[GitNeuralProcess]]:
    """The processes that review: serve (embedded) or two workers (shared brokers)."""
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
        stack.callback(stop_together, workers)
        for worker in workers:
            worker_ready(worker)
        yield workers


def _started_by(proc: GitNeuralProcess, delivery: str) -> bool:
    return bool(re.search(rf"review job delivery={re.escape(delivery)} .* started by", proc.log()))


def kill_mid_review(
    kind: str, world: AppWorld, root: Path, patience: float = 180.0, **extra: str
) -> Recovery:
    """Kill the worker running a review (the default settings unless ``extra``)."""
    root.mkdir(parents=True, exist_ok=True)
    with deployment(kind, world, root) as d:
        env = {k: v for k, v in d.env.items() if k not in SHORTCUTS} | extra
        with review_workers(d, root, env) as procs:
            number = world.new_pull()
            title = world.title(number)
            job = make_job(world, number)
            world.think = 600.0  # the first run waits on the model until it is killed
            try:
                d.queue.submit(job)
                wait_for(lambda: world.active.get(title), "the review to reach the model", 60)
                [check] = world.gh.check_runs(REPO, job.head_sha)
                if kind == "sqlite":
                    victim = children_of(procs[0].pid)[1]  # serve: web, reviews, fast worker
                else:
                    [runner] = [p for p in procs if _started_by(p, job.delivery_id)]
                    victim = runner.pid
                killed_at = time.time()
                os.kill(victim, signal.SIGKILL)  # no clean-up of any kind
                world.think = 0.0
                wait_for(lambda: world.reviews(number), "the review after the kill", patience, 0.5)
            finally:
                world.think = 0.0
            logs = "".join(p.log() for p in procs)
    posts = world.gh.requests("POST", f"/repos/{REPO}/pulls/{number}/reviews")
    accepted = [r.time for r in posts if r.status == 200]
    return Recovery(
        seconds=min(accepted) - killed_at,
        reviews=world.reviews(number),
        check_before=check,
        checks_after=world.gh.check_runs(REPO, job.head_sha),
        model_calls=world.calls[title],
        logs=logs,
    )

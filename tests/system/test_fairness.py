"""Fair turns across installations, with real worker processes: installation A queues
many reviews, then installation B's one review arrives while A's run. B's review starts
at the next free thread (the order the K3 stub saw the requests in shows it), where
the arrival order (``GITNEURAL_SCHEDULE=fifo``, the control) has B wait behind all of A.
The time B waits, in review-times, is measured by ``benchmarks/bench_fairness.py``."""

from __future__ import annotations

import contextlib
import time
from pathlib import Path

import pytest

from bot.jobs import ReviewJob
from tests.support.deployments import deployment
from tests.support.planted import ORIGINAL, PLANTED
from tests.support.services import (
    CONFIG,
    AppWorld,
    GitNeuralProcess,
    make_job,
    wait_for,
    worker_ready,
)

pytestmark = pytest.mark.slow

OTHER = "other/lib"
A_REVIEWS = 16


def b_pull(world: AppWorld) -> ReviewJob:
    """A PR of installation 2 (its own repository), titled for the stub's brain."""
    if OTHER not in world.gh.store.repos:
        files = {"people.py": ORIGINAL, ".gitneural.toml": CONFIG}
        world.gh.create_repo(OTHER, installation_id=2, files=files)
    branch = f"b-{time.monotonic_ns()}"
    world.gh.push(OTHER, branch, {"people.py": PLANTED}, "Tighten is_adult")
    title = f"Pull {branch} ok"
    number = world.gh.create_pull(OTHER, head=branch, title=title, body="Please")
    world.active.setdefault(title, 0)
    head = world.gh.head_sha(OTHER, number)
    return ReviewJob(2, OTHER, number, head, "opened", f"b-{number}-{time.monotonic_ns()}")


def a_started_before_b(world: AppWorld, since: int, b_title: str) -> int:
    """Reviews of A that reached the model after request number ``since`` and before B's."""
    for count, request in enumerate(world.stub.chat_requests[since:]):
        if b_title in str((request.body or {}).get("messages")):
            return count
    raise AssertionError("B's review never reached the model")


def run(kind: str, world: AppWorld, root: Path, schedule: str) -> int:
    root.mkdir(parents=True)
    with (
        deployment(kind, world, root, GITNEURAL_SCHEDULE=schedule) as d,
        contextlib.ExitStack() as stack,
    ):
        command = ["worker", "-Q", "reviews", "-c", "2"]
        workers = [
            stack.enter_context(GitNeuralProcess(command, d.env, root / f"w{i}.log"))
            for i in range(2)
        ]
        for worker in workers:
            worker_ready(worker)
        world.think = 2.0
        a_jobs = [make_job(world, world.new_pull()) for _ in range(A_REVIEWS)]
        for job in a_jobs:
            d.queue.submit(job)
        wait_for(lambda: world.active.get("*", 0) >= 3, "A's reviews to run", 60)
        since = len(world.stub.chat_requests)
        b = b_pull(world)
        d.queue.submit(b)
        b_title = str(world.gh.pull(OTHER, b.pr_number)["title"])
        wait_for(lambda: world.gh.reviews(OTHER, b.pr_number), "B's review", 120, 0.2)
        ahead = a_started_before_b(world, since, b_title)
        world.think = 0.0
        for job in a_jobs:
            wait_for(lambda job=job: world.reviews(job.pr_number), "A's reviews", 120, 0.2)
    assert len(world.gh.reviews(OTHER, b.pr_number)) == 1
    return ahead


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("redis", marks=pytest.mark.redis)])
def test_an_installation_s_one_review_goes_ahead_of_another_s_backlog(
    kind: str, world: AppWorld, tmp_path: Path
) -> None:
    try:
        fair = run(kind, world, tmp_path / "fair", "fair")
        fifo = run(kind, world, tmp_path / "fifo", "fifo")
    finally:
        world.think = 0.0
    # Fair: B takes the thread A leaves free (A runs 3 at once of 4 threads by default).
    assert fair == 0, f"{fair} of A's reviews started before B's"
    # The control: in arrival order B waits for nearly all of A's queued reviews.
    assert fifo >= A_REVIEWS - 4 - 1, fifo

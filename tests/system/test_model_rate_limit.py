"""One model rate limit for the whole deployment, with real worker processes: two workers
(6 review threads each) take 12 reviews at once from a K3 stub that answers 429 above 5
requests per 10 s; with ``GITNEURAL_MODEL_RPM=5`` counted over the same window, every
review is posted and the stub sees at most a handful of requests over its limit.
``benchmarks/bench_ratelimit.py`` measures the issue's case (40 reviews, 30 per minute)
with and without the limit."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.deployments import deployment
from tests.support.services import (
    AppWorld,
    GitNeuralProcess,
    make_job,
    wait_for,
    worker_ready,
)

pytestmark = pytest.mark.slow

LIMIT, WINDOW = 5, 10.0


@pytest.fixture
def limited_stub(world: AppWorld) -> Iterator[None]:
    stub = world.stub
    stub.rate_limit, stub.rate_window, stub.rate_limited = LIMIT, WINDOW, 0
    stub.arrivals.clear()
    yield
    stub.rate_limit = None


def most_in_any_window(times: list[float], window: float) -> int:
    times = sorted(times)
    return max((sum(1 for t in times[i:] if t - start < window) for i, start in
                enumerate(times)), default=0)  # fmt: skip


@pytest.mark.usefixtures("limited_stub")
@pytest.mark.parametrize("kind", ["sqlite", pytest.param("redis", marks=pytest.mark.redis)])
def test_every_worker_takes_from_one_budget(kind: str, world: AppWorld, tmp_path: Path) -> None:
    extra = {"GITNEURAL_MODEL_RPM": str(LIMIT), "GITNEURAL_MODEL_RATE_WINDOW": str(WINDOW)}
    with deployment(kind, world, tmp_path, **extra) as d, contextlib.ExitStack() as stack:
        command = ["worker", "-Q", "reviews", "-c", "6"]
        workers = [
            stack.enter_context(GitNeuralProcess(command, d.env, tmp_path / f"w{i}.log"))
            for i in range(2)
        ]
        for worker in workers:
            worker_ready(worker)
        jobs = [make_job(world, world.new_pull()) for _ in range(12)]
        for job in jobs:
            d.queue.submit(job)
        for job in jobs:
            wait_for(lambda job=job: world.reviews(job.pr_number), f"PR {job.pr_number}", 120)
        logs = "".join(w.log() for w in workers)
    for job in jobs:
        assert len(world.reviews(job.pr_number)) == 1
    assert world.stub.rate_limited <= 2, world.stub.rate_limited
    # Both workers reviewed, and their requests together kept to the limit.
    assert all("outcome=posted" in w.log() for w in workers)
    assert most_in_any_window(world.stub.arrivals, WINDOW) <= LIMIT + world.stub.rate_limited
    assert "outcome=failed" not in logs

"""Many reviews at once against a K3 stub that answers 429 above its rate limit, with or
without the deployment's shared limit: shared by ``tests/system/test_model_rate_limit.py``
(the promises) and ``benchmarks/bench_ratelimit.py`` (the counts).

    with app_world(root) as world:
        storm = review_storm("redis", world, root, reviews=40, limit=30, window=60, shared=True)
        storm.refused           # 429s the stub sent

Two ``gitneural worker -Q reviews`` processes with enough threads for every review at once.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass
from pathlib import Path

from tests.support.deployments import deployment
from tests.support.services import (
    OUTCOME,
    AppWorld,
    GitNeuralProcess,
    make_job,
    stop_together,
    wait_for,
    worker_ready,
)


@dataclass
class Storm:
    reviews: int
    posted: int
    #: 429s the stub sent, and the chat requests it received (every attempt).
    refused: int
    requests: int
    #: The most requests the stub received within any one window.
    most_in_a_window: int
    seconds: float
    failed: int


def most_in_any_window(times: list[float], window: float) -> int:
    times = sorted(times)
    return max(
        (sum(1 for t in times[i:] if t - start < window) for i, start in enumerate(times)),
        default=0,
    )


def review_storm(
    kind: str,
    world: AppWorld,
    root: Path,
    *,
    reviews: int,
    limit: int,
    window: float,
    shared: bool,
    patience: float = 600.0,
    **extra: str,
) -> Storm:
    """``reviews`` at once; ``shared``: ``GITNEURAL_MODEL_RPM=limit`` over ``window``."""
    root.mkdir(parents=True, exist_ok=True)
    stub = world.stub
    stub.rate_limit, stub.rate_window, stub.rate_limited = limit, window, 0
    stub.arrivals.clear()
    if shared:
        extra = {
            "GITNEURAL_MODEL_RPM": str(limit),
            "GITNEURAL_MODEL_RATE_WINDOW": str(window),
            **extra,
        }
    threads = -(-reviews // 2)
    try:
        with deployment(kind, world, root, **extra) as d, contextlib.ExitStack() as stack:
            command = ["worker", "-Q", "reviews", "-c", str(threads)]
            workers = [
                stack.enter_context(GitNeuralProcess(command, d.env, root / f"w{i}.log"))
                for i in range(2)
            ]
            stack.callback(stop_together, workers)
            for worker in workers:
                worker_ready(worker)
            jobs = [make_job(world, world.new_pull()) for _ in range(reviews)]
            started = time.monotonic()
            for job in jobs:
                d.queue.submit(job)

            deliveries = {job.delivery_id for job in jobs}

            def ended() -> bool:
                logs = "".join(w.log() for w in workers)
                return deliveries <= {m.group(1) for m in OUTCOME.finditer(logs)}

            wait_for(ended, f"{reviews} reviews to end", patience, 0.5)
            seconds = time.monotonic() - started
            logs = "".join(w.log() for w in workers)
        posted = sum(1 for job in jobs if world.reviews(job.pr_number))
        return Storm(
            reviews=reviews,
            posted=posted,
            refused=stub.rate_limited,
            requests=len(stub.arrivals),
            most_in_a_window=most_in_any_window(stub.arrivals, window),
            seconds=seconds,
            failed=logs.count("outcome=failed"),
        )
    finally:
        stub.rate_limit = None

"""The review task under faults, with a real worker on the embedded broker: a transient
GitHub fault is retried no sooner than GitHub asked; a review stuck past the soft time
limit ends as a clear failure; a malformed message is dropped with a reason."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from tests.support.services import (
    REPO,
    AppWorld,
    GitNeuralProcess,
    app_world,
    make_job,
    outcomes,
    worker_ready,
)
from workers.celeryapp.app import create_celery
from workers.celeryapp.publisher import CeleryJobQueue
from workers.celeryapp.task_names import REVIEW_TASK
from workers.settings import WorkerSettings


@dataclass
class Faulty:
    world: AppWorld
    queue: CeleryJobQueue
    worker: GitNeuralProcess


@pytest.fixture(scope="module")
def faulty(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Faulty]:
    root = tmp_path_factory.mktemp("faults")
    with app_world(root) as world:
        env = world.env(
            root / "data",
            GITNEURAL_TASK_SOFT_TIME_LIMIT="4",
            GITNEURAL_TASK_TIME_LIMIT="6",
            GITNEURAL_RETRY_BACKOFF="0.2",
            GITNEURAL_RETRY_BACKOFF_MAX="5",
        )
        settings = WorkerSettings.from_env(env)
        queue = CeleryJobQueue(create_celery(settings), settings)
        with GitNeuralProcess(["worker"], env, root / "worker.log") as worker:
            worker_ready(worker)
            yield Faulty(world, queue, worker)


def test_a_rate_limited_post_is_retried_after_github_s_retry_after(faulty: Faulty) -> None:
    w = faulty.world
    number = w.new_pull()
    w.gh.fail_secondary_rate_limit("POST", f"/repos/{REPO}/check-runs", retry_after=2)
    job = make_job(w, number)
    faulty.queue.submit(job)
    [(status, _, _)] = outcomes(faulty.worker, job.delivery_id)
    assert status == "posted"
    assert len(w.reviews(number)) == 1
    log = faulty.worker.log()
    assert re.search(rf"delivery={job.delivery_id} .* fault=1 retry_in=\d+s", log)
    posts = w.gh.requests(method="POST", path=f"/repos/{REPO}/check-runs")
    refused, accepted = posts[-2], posts[-1]
    assert (refused.status, accepted.status) == (403, 201)
    assert accepted.time - refused.done_at >= 2.0  # never sooner than GitHub asked


def test_a_review_stuck_past_the_soft_limit_fails_clearly(faulty: Faulty) -> None:
    w = faulty.world
    number = w.new_pull()
    # GitHub hangs on the check run for longer than the soft limit, then fails.
    w.gh.fail("POST", f"/repos/{REPO}/check-runs", status=502, delay=6)
    job = make_job(w, number)
    started = time.monotonic()
    faulty.queue.submit(job)
    [(status, _, detail)] = outcomes(faulty.worker, job.delivery_id)
    assert (status, detail) == ("failed", "'stopped at the soft time limit of 4 s'")
    assert time.monotonic() - started >= 4.0  # not before its soft limit
    assert w.reviews(number) == []
    assert "fault=1" not in faulty.worker.log().split(job.delivery_id, 1)[1]  # not retried


def test_a_malformed_message_is_dropped_with_its_reason(faulty: Faulty) -> None:
    faulty.queue._app.send_task(REVIEW_TASK, kwargs={"job": {"repo": "no-slash", "pr_number": 1}})
    log = faulty.worker.wait_log("review job job=invalid outcome=failed", timeout=30)
    assert "invalid review job" in log.split("job=invalid", 1)[1].splitlines()[0]
    assert faulty.worker.alive()

"""The App's metrics agree with what happened, read back with prometheus_client's parser.

``gitneural serve --worker`` on the real Redis (two gunicorn workers and the embedded
Celery workers, each a process writing its own metrics file) takes deliveries signed
like GitHub's; reviews are posted, a ``/review`` gets its eyes, the model fails one
review, GitHub fails another for a while (retried), a reply in GitNeural's thread and an
``/ask`` are answered, and deliveries are duplicated, unsigned or of no interest.
``/metrics`` then says exactly what the fake GitHub and the K3 stub saw: reviews and
answers posted, requests by status, tokens by kind. A prefork worker with
``--metrics-port`` sums its children the same way.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from bot.gh.mirrors.lru import tree_bytes
from tests.fakes.k3 import Reply
from tests.support.conversation import (
    answers_in_thread,
    ask_payload,
    gitneural_thread,
    reply_payload,
)
from tests.support.ops import deliver, model_totals, served
from tests.support.scrape import Scrape, scrape, statuses
from tests.support.services import (
    REDIS_URL,
    REPO,
    AppWorld,
    GitNeuralProcess,
    app_world,
    drop_redis_keys,
    free_port,
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


def check_model_and_github(m: Scrape, w: AppWorld) -> None:
    assert m.by_label("gitneural_model_requests_total", "status") == statuses(
        r.status for r in w.stub.chat_requests
    )
    for kind, tokens in model_totals(w.stub).items():
        assert m.value("gitneural_model_tokens_total", kind=kind) == tokens, kind
    assert m.value("gitneural_model_tokens_total", kind="prompt") > 0
    assert m.by_label("gitneural_github_requests_total", "status") == statuses(
        r.status for r in w.gh.requests(kind="api")
    )


@pytest.mark.redis
def test_serve_metrics_agree_with_the_fakes(tmp_path: Path) -> None:
    client = require_redis()
    prefix = unique_prefix()
    with app_world(tmp_path) as w:
        env = w.env(
            tmp_path / "data", GITNEURAL_BROKER_URL=REDIS_URL, GITNEURAL_QUEUE_PREFIX=prefix
        )
        try:
            serve = served(env, tmp_path / "serve.log", "--worker", "--workers", "2")
            with serve as (proc, address):
                worker_ready(proc)
                # Three pull requests reviewed; the first delivery comes twice.
                first = [w.new_pull() for _ in range(3)]
                ids = {n: str(uuid.uuid4()) for n in first}
                for number in first:
                    assert deliver(address, "pull_request", w.opened(number), ids[number]) == 202
                dup = deliver(address, "pull_request", w.opened(first[0]), ids[first[0]])
                assert dup == 200
                for number in first:
                    [(status, _, _)] = outcomes(proc, ids[number])
                    assert status == "posted"
                # Refused, and of no interest.
                bad = deliver(address, "pull_request", w.opened(first[1]), "u1", secret="wrong")
                assert bad == 401
                assert deliver(address, "issues", {"action": "opened"}, "i1") == 200
                # /review: eyes, then a review.
                ask = str(uuid.uuid4())
                payload = w.comment(first[0], "/review full", "COLLABORATOR")
                assert deliver(address, "issue_comment", payload, ask) == 202
                [(status, _, _)] = outcomes(proc, ask)
                assert status == "posted"
                proc.wait_log("eyes reaction", timeout=60)
                # A pull request closed before its job runs: skipped.
                closed = w.new_pull()
                w.gh.close_pull(REPO, closed)
                closed_id = str(uuid.uuid4())
                assert deliver(address, "pull_request", w.opened(closed), closed_id) == 202
                [(status, _, _)] = outcomes(proc, closed_id)
                assert status == "gone"
                # The model fails a review: one 500 (retried by the client), then a 400.
                w.stub.push(
                    Reply.http_error(500),
                    Reply.http_error(400, "invalid_request_error", "the stub refuses"),
                )
                failing = w.new_pull()
                fail_id = str(uuid.uuid4())
                assert deliver(address, "pull_request", w.opened(failing), fail_id) == 202
                [(status, _, _)] = outcomes(proc, fail_id)
                assert status == "failed"
                # GitHub fails a PR read past PyGithub's retries: the job is retried.
                flaky = w.new_pull()
                w.gh.fail("GET", f"/repos/{REPO}/pulls/{flaky}", status=502, times=4)
                flaky_id = str(uuid.uuid4())
                assert deliver(address, "pull_request", w.opened(flaky), flaky_id) == 202
                [(status, _, _)] = outcomes(proc, flaky_id)
                assert status == "posted"
                assert "fault=1" in proc.log()
                reviewed = [*first, closed, failing, flaky]
                posted = sum(len(w.reviews(n)) for n in reviewed)
                # A reply in GitNeural's thread, and /ask: each answered once (GitHub
                # makes a review of every review comment: counted above, not after).
                top = gitneural_thread(w.gh, REPO, first[1])
                reply = w.gh.add_thread_reply(REPO, first[1], top["id"], "Why is this wrong?")
                payload = reply_payload(w.gh, REPO, first[1], reply)
                assert deliver(address, "pull_request_review_comment", payload, "r1") == 202
                asked = w.gh.add_issue_comment(REPO, first[2], "/ask What does this change do?")
                payload = ask_payload(w.gh, REPO, first[2], asked)
                assert deliver(address, "issue_comment", payload, "a1") == 202
                for comment in (reply, asked):
                    proc.wait_log(f"comment={comment['id']} outcome=answered", timeout=90)
                assert len(answers_in_thread(w.gh, REPO, first[1], top["id"])) == 1

                m = scrape(address)
        finally:
            drop_redis_keys(client, prefix)

        assert posted == 5
        assert m.types["gitneural_jobs"] == "counter"
        assert m.types["gitneural_job_seconds"] == "histogram"
        assert m.types["gitneural_queue_depth"] == "gauge"
        assert m.types["gitneural_mirror_bytes"] == "gauge"
        assert m.value("gitneural_jobs_total", kind="review", outcome="posted") == posted
        assert m.value("gitneural_jobs_total", kind="review", outcome="failed") == 1
        assert m.value("gitneural_jobs_total", kind="review", outcome="skipped") == 1
        assert m.value("gitneural_jobs_total", kind="review", outcome="retried") == 1
        assert m.value("gitneural_jobs_total", kind="review", outcome="superseded") == 0
        assert m.value("gitneural_jobs_total", kind="eyes", outcome="posted") == 1
        for kind in ("reply", "ask"):  # one answered each, from delivery to answer
            assert m.value("gitneural_jobs_total", kind=kind, outcome="posted") == 1
            assert m.value("gitneural_jobs_total", kind=kind, outcome="failed") == 0
            assert m.value("gitneural_job_seconds_count", kind=kind) == 1
        assert m.value("gitneural_job_seconds_count", kind="review") == posted + 2
        assert m.value("gitneural_job_seconds_sum", kind="review") > 0
        deliveries = "gitneural_webhook_deliveries_total"
        assert m.value(deliveries, event="pull_request", outcome="queued") == 6
        assert m.value(deliveries, event="issue_comment", outcome="queued") == 2
        assert m.value(deliveries, event="pull_request_review_comment", outcome="queued") == 1
        assert m.value(deliveries, event="pull_request", outcome="duplicate") == 1
        assert m.value(deliveries, event="pull_request", outcome="rejected") == 1
        assert m.value(deliveries, event="other", outcome="ignored") == 1
        check_model_and_github(m, w)
        assert m.value("gitneural_model_requests_total", status="400") == 1
        assert m.value("gitneural_github_requests_total", status="502") == 4
        assert m.value("gitneural_queue_depth", queue="reviews") == 0
        assert ("gitneural_queue_depth", (("queue", "fast"),)) in m.samples
        mirrors = tree_bytes(tmp_path / "data" / "mirrors")
        assert mirrors > 0 and m.value("gitneural_mirror_bytes") == mirrors
        assert m.value("gitneural_mirror_evictions_total") == 0


def test_a_prefork_worker_serves_the_sum_of_its_children(tmp_path: Path) -> None:
    with app_world(tmp_path) as w:
        env = w.env(tmp_path / "data", GITNEURAL_QUEUE_PREFIX=unique_prefix())
        settings = WorkerSettings.from_env(env)
        queue = CeleryJobQueue(create_celery(settings), settings)
        port = free_port()
        args = ["worker", "--pool", "prefork", "-c", "2", "--metrics-port", str(port)]
        with GitNeuralProcess(args, env, tmp_path / "worker.log") as worker:
            worker_ready(worker)
            jobs = [make_job(w, w.new_pull()) for _ in range(4)]
            for job in jobs:
                queue.submit(job)
            for job in jobs:
                [(status, _, _)] = outcomes(worker, job.delivery_id)
                assert status == "posted"
            address = f"127.0.0.1:{port}"
            m = wait_for(
                lambda: (
                    (s := scrape(address)).value(
                        "gitneural_jobs_total", kind="review", outcome="posted"
                    )
                    == 4
                    and s
                ),
                "the worker's metrics to count 4 reviews",
            )
            # The jobs ran in prefork children (Celery names them in each line).
            children = {
                part.split("]")[0]
                for line in worker.log().splitlines()
                if "outcome=posted" in line
                for part in line.split("/")[1:2]
            }
        assert children and all(c.startswith("ForkPoolWorker") for c in children), children
        assert m.value("gitneural_job_seconds_count", kind="review") == 4
        check_model_and_github(m, w)
        assert m.value("gitneural_queue_depth", queue="reviews") == 0

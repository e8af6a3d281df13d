"""Commands and the trigger policy end to end: the real Flask app under ``serve
--no-worker`` (gunicorn) and a real ``worker``, on the embedded broker and on Redis, the
fake GitHub (REST, GraphQL, git) and the K3 stub. Deliveries are GitHub's own example
payloads, pointed at the fake's pull requests and comments, and signed.

Both processes start from :mod:`tests.support.ping_command`, which registers one
throwaway command, ``/ping``, and nothing else: that it is answered shows the webhook and
the worker route whatever the registry holds. The default branch's settings cap
automatic reviews at :data:`MAX_LINES` changed lines.
"""

from __future__ import annotations

import re
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from bot.commands import commands
from bot.jobs import ConversationJob
from bot.render.conversation import answered_comment
from tests.support.conversation import DESCRIPTION, ask_payload
from tests.support.ping_command import PONG
from tests.support.planted import PLANTED
from tests.support.services import (
    CONFIG,
    REDIS_URL,
    REPO,
    AppWorld,
    GitNeuralProcess,
    app_world,
    drop_redis_keys,
    outcomes,
    require_redis,
    start_serve,
    unique_prefix,
    wait_for,
    worker_ready,
)
from tests.support.webhooks import Reply as Answer
from tests.support.webhooks import encode, headers_for, http_post
from workers.celeryapp.app import create_celery
from workers.celeryapp.publisher import CeleryJobQueue
from workers.settings import WorkerSettings

PROGRAM = [sys.executable, "-m", "tests.support.ping_command"]
MAX_LINES = 40
CONVERSATION = re.compile(
    r"conversation job delivery=(\S+) .* comment=(\d+) outcome=(\S+) answer=(\S+) detail=(.*)"
)


@dataclass
class Deployment:
    kind: str
    world: AppWorld
    address: str
    worker: GitNeuralProcess
    queue: CeleryJobQueue

    def deliver(self, event: str, payload: dict[str, Any], delivery: str | None = None) -> Answer:
        body = encode(payload)
        headers = headers_for(event, body, delivery=delivery or str(uuid.uuid4()))
        return http_post(self.address, "/webhook", body, headers)

    def command(self, number: int, text: str) -> tuple[dict[str, Any], Answer, str]:
        """``text`` commented on the PR by a maintainer, its delivery's answer and id."""
        comment = self.world.gh.add_issue_comment(REPO, number, text)
        delivery = f"command-{uuid.uuid4().hex[:12]}"
        payload = ask_payload(self.world.gh, REPO, number, comment)
        return comment, self.deliver("issue_comment", payload, delivery), delivery

    def answered(self, comment_id: int) -> tuple[str, str, str]:
        """``(status, answer, detail)`` of the conversation job of ``comment_id``."""

        def ended() -> list[tuple[str, str, str]]:
            found = [m.groups() for m in CONVERSATION.finditer(self.worker.log())]
            mine = [(s, a, d) for _, c, s, a, d in found if int(c) == comment_id]
            if not mine and not self.worker.alive():
                raise AssertionError(f"the worker exited:\n{self.worker.log()[-3000:]}")
            return mine

        return wait_for(ended, f"the conversation outcome of {comment_id}", 60)[0]

    def answer_to(self, number: int, comment_id: int) -> dict[str, Any]:
        gh = self.world.gh
        [answer] = [
            c
            for c in gh.issue_comments(REPO, number)
            if c["user"]["login"] == gh.bot_login
            and answered_comment(c["body"], "answer") == comment_id
        ]
        return answer

    def model_requests(self) -> int:
        return len(self.world.stub.chat_requests)


@pytest.fixture(scope="module", params=["embedded", pytest.param("redis", marks=pytest.mark.redis)])
def deployment(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Deployment]:
    kind = request.param
    client = require_redis() if kind == "redis" else None
    root = tmp_path_factory.mktemp(f"commands-{kind}")
    prefix = unique_prefix()
    with app_world(root) as world:
        settings_file = CONFIG + f"[github]\nmax_review_lines = {MAX_LINES}\n"
        world.gh.push(REPO, "main", {".gitneural.toml": settings_file}, "Cap automatic reviews")
        env = world.env(root / "data", GITNEURAL_QUEUE_PREFIX=prefix)
        if kind == "redis":
            env["GITNEURAL_BROKER_URL"] = REDIS_URL
        settings = WorkerSettings.from_env(env)
        queue = CeleryJobQueue(create_celery(settings), settings)
        web, address = start_serve(env, root / "serve.log", "--no-worker", program=PROGRAM)
        try:
            with GitNeuralProcess(
                ["worker", "-c", "4"], env, root / "worker.log", PROGRAM
            ) as worker:
                worker_ready(worker)
                yield Deployment(kind, world, address, worker, queue)
        finally:
            assert web.stop() == 0
        # Nothing edits a pull request: no PATCH of one, and no other write (app_world).
        assert world.gh.requests(method="PATCH", path=f"/repos/{REPO}/pulls/*") == []
        assert world.stub.brain_errors == []
    if client is not None:
        drop_redis_keys(client, prefix)


def test_describe_posts_one_suggestion_and_edits_nothing(deployment: Deployment) -> None:
    d, w = deployment, deployment.world
    number = w.new_pull()
    pull_before = w.gh.pull(REPO, number)
    before = d.model_requests()
    comment, queued, _ = d.command(number, "/describe")
    assert (queued.status, queued.json["trigger"]) == (202, "describe")
    status, answer_id, _ = d.answered(comment["id"])
    answer = d.answer_to(number, comment["id"])
    assert (status, answer_id) == ("answered", str(answer["id"]))
    body = answer["body"]
    assert f"**Title:** {DESCRIPTION['title']}" in body
    for heading, key in (
        ("What", "what"),
        ("Why", "why"),
        ("How to test", "how_to_test"),
        ("Risk", "risk"),
    ):
        assert f"### {heading}\n\n{DESCRIPTION[key]}" in body
    assert d.model_requests() > before
    # The model read the PR's title and description as fenced, untrusted text.
    [request] = [
        r for r in w.stub.chat_requests[before:] if "submit_description" in str(r.body.get("tools"))
    ][-1:]
    user = next(m["content"] for m in request.body["messages"] if m["role"] == "user")
    title = pull_before["title"]
    fenced = re.search(r"<untrusted-(\w+)>\n" + re.escape(title) + r"\n</untrusted-\1>", user)
    assert fenced is not None
    # One comment; the pull request as it was; no PATCH of it (the fixture checks all).
    ours = [c for c in w.gh.issue_comments(REPO, number) if c["user"]["login"] == w.gh.bot_login]
    assert ours == [answer]
    after = w.gh.pull(REPO, number)
    assert (after["title"], after["body"]) == (pull_before["title"], pull_before["body"])
    assert w.gh.requests(method="PATCH", path=f"/repos/{REPO}/pulls/{number}") == []


def test_help_lists_the_registry_and_the_settings_without_the_model(
    deployment: Deployment,
) -> None:
    d, w = deployment, deployment.world
    number = w.new_pull()
    before = d.model_requests()
    comment, queued, _ = d.command(number, "/help")
    assert (queued.status, queued.json["trigger"]) == (202, "help")
    assert d.answered(comment["id"])[0] == "answered"
    body = d.answer_to(number, comment["id"])["body"]
    assert d.model_requests() == before  # no request reached the K3 stub
    for command in commands().values():
        assert f"`{command.usage.replace('|', chr(92) + '|')}`" in body
    assert "`/ping`" in body  # the throwaway command, from the registry it was added to
    assert 'github.auto_review = "always"' in body
    assert f"Larger than {MAX_LINES} changed lines" in body
    assert "Review effort: `low`" in body


def test_a_throwaway_command_added_through_the_registry_is_routed(deployment: Deployment) -> None:
    d, w = deployment, deployment.world
    number = w.new_pull()
    comment, queued, _ = d.command(number, "/ping")
    assert (queued.status, queued.json["trigger"]) == (202, "ping")
    assert d.answered(comment["id"])[:1] == ("answered",)
    assert d.answer_to(number, comment["id"])["body"].startswith(PONG)


def test_an_unknown_job_kind_fails_loudly(deployment: Deployment) -> None:
    d, w = deployment, deployment.world
    number = w.new_pull()
    comment = w.gh.add_issue_comment(REPO, number, "/nonsense")
    posted_before = len(w.gh.issue_comments(REPO, number))
    job = ConversationJob(
        installation_id=1,
        repo=REPO,
        pr_number=number,
        trigger="nonsense",
        comment_id=comment["id"],
        delivery_id=f"unknown-{d.kind}",
        requested_by="alice",
        author_association="MEMBER",
    )
    d.queue.submit(job)
    status, answer, detail = d.answered(comment["id"])
    assert (status, answer) == ("failed", "-")
    assert "unknown job kind 'nonsense'" in detail
    line = next(x for x in d.worker.log().splitlines() if f"delivery=unknown-{d.kind}" in x)
    assert "ERROR" in line
    assert len(w.gh.issue_comments(REPO, number)) == posted_before  # nothing answered it


def _skipped(d: Deployment, number: int, reason: str) -> None:
    """An automatic review the policy stops: a ``skipped`` check run, no model call; then
    ``/review`` reviews it all the same."""
    w = d.world
    before = d.model_requests()
    delivery = f"opened-{uuid.uuid4().hex[:8]}"
    assert d.deliver("pull_request", w.opened(number), delivery).status == 202
    [(status, _, detail)] = outcomes(d.worker, delivery)
    assert status == "skipped" and reason in detail
    [check] = w.gh.check_runs(REPO, w.gh.head_sha(REPO, number))
    assert (check["status"], check["conclusion"]) == ("completed", "skipped")
    assert reason in check["output"]["summary"]
    assert "Comment `/review` to review anyway" in check["output"]["summary"]
    assert d.model_requests() == before and w.reviews(number) == []
    _comment, queued, delivery = d.command(number, "/review")
    assert (queued.status, queued.json["trigger"]) == (202, "command")
    [(status, review_id, _)] = outcomes(d.worker, delivery)
    assert status == "posted" and d.model_requests() > before
    assert [str(r["id"]) for r in w.reviews(number)] == [review_id]


def test_a_pull_request_labelled_skip_gets_a_skipped_check_and_review_still_reviews(
    deployment: Deployment,
) -> None:
    w = deployment.world
    number = w.new_pull()
    w.gh.set_labels(REPO, number, ["gitneural:skip"])
    _skipped(deployment, number, "labelled `gitneural:skip`")


def test_an_oversized_pull_request_gets_a_skipped_check_and_review_still_reviews(
    deployment: Deployment,
) -> None:
    w = deployment.world
    big = "".join(f"VALUE_{i} = {i}\n" for i in range(MAX_LINES + 10))
    number = w.new_pull({"people.py": PLANTED, "values.py": big})
    _skipped(deployment, number, f"more than github.max_review_lines = {MAX_LINES}")

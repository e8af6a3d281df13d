"""Conversations end to end: the real Flask app under ``gitneural serve --no-worker``
(gunicorn), a real ``gitneural worker`` on the embedded broker and on Redis, the fake
GitHub (REST, GraphQL, git) and the K3 stub checking preserved thinking on every request.
Deliveries are GitHub's ``pull_request_review_comment.created`` and PR-comment examples,
pointed at the fake's comments and signed.

``GITNEURAL_BOT_LOGIN`` is unset: the worker learns GitNeural's account from ``GET
/app``. The store is SQLite beside the embedded broker, and PostgreSQL beside Redis.
"""

from __future__ import annotations

import contextlib
import re
import signal
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from bot.jobs import ConversationJob
from bot.render.conversation import WITHDRAWN, answered_comment
from bot.render.github import Marker, parse_marker
from bot.store import open_store
from bot.store.findings import stored_finding
from bot.usecases.conversation.dispatch import QUOTA_NOTICE
from tests.fakes.k3 import Reply
from tests.support.conversation import (
    ASK_ANSWER,
    REPLY_ANSWER,
    WITHDRAW_ANSWER,
    answers_in_thread,
    ask_payload,
    gitneural_thread,
    reply_payload,
)
from tests.support.planted import PLANTED_BUG
from tests.support.services import (
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
from tests.support.store import postgres_database
from tests.support.webhooks import Reply as Answer
from tests.support.webhooks import encode, headers_for, http_post
from workers.celeryapp.app import create_celery
from workers.celeryapp.publisher import CeleryJobQueue
from workers.settings import WorkerSettings

CONVERSATION = re.compile(
    r"conversation job delivery=(\S+) .* comment=(\d+) outcome=(\S+) answer=(\S+) detail=(.*)"
)


@dataclass
class Deployment:
    kind: str
    world: AppWorld
    env: dict[str, str]
    address: str
    worker: GitNeuralProcess
    queue: CeleryJobQueue

    def deliver(self, event: str, payload: dict[str, Any], delivery: str | None = None) -> Answer:
        body = encode(payload)
        headers = headers_for(event, body, delivery=delivery or str(uuid.uuid4()))
        return http_post(self.address, "/webhook", body, headers)

    def answered(self, comment_id: int, count: int = 1) -> list[tuple[str, str, str]]:
        """``[(status, answer, detail)]`` of the conversation jobs of ``comment_id``."""

        def ended() -> list[tuple[str, str, str]]:
            found = [m.groups() for m in CONVERSATION.finditer(self.worker.log())]
            mine = [(s, a, d) for _, c, s, a, d in found if int(c) == comment_id]
            if len(mine) < count and not self.worker.alive():
                raise AssertionError(f"the worker exited:\n{self.worker.log()[-3000:]}")
            return mine if len(mine) >= count else []

        return wait_for(ended, f"{count} conversation outcome(s) of {comment_id}", 60)

    def reviewed(self, number: int) -> dict[str, Any]:
        """Deliver ``opened`` and wait for GitNeural's review: its inline comment."""
        delivery = f"opened-{uuid.uuid4().hex[:8]}"
        assert self.deliver("pull_request", self.world.opened(number), delivery).status == 202
        [(status, _, _)] = outcomes(self.worker, delivery)
        assert status == "posted"
        gh = self.world.gh
        [review] = [r for r in self.world.reviews(number) if r["user"]["login"] == gh.bot_login]
        [comment] = review["comments"]
        return comment

    def conversation_calls(self) -> int:
        return self.world.calls.get("conversation", 0)


@contextlib.contextmanager
def _store_url(kind: str, root: Path) -> Iterator[str]:
    if kind == "sqlite":
        yield f"sqlite:///{root / 'data' / 'gitneural.db'}"
        return
    with postgres_database() as url:
        yield url


@pytest.fixture(scope="module", params=["sqlite", pytest.param("redis", marks=pytest.mark.redis)])
def deployment(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Deployment]:
    kind = request.param
    client = require_redis() if kind == "redis" else None
    root = tmp_path_factory.mktemp(f"conversation-{kind}")
    prefix = unique_prefix()
    with app_world(root, check_history=True) as world, _store_url(kind, root) as store:
        env = world.env(root / "data", GITNEURAL_QUEUE_PREFIX=prefix, GITNEURAL_DATABASE_URL=store)
        del env["GITNEURAL_BOT_LOGIN"]  # learnt from GET /app
        if kind == "redis":
            env["GITNEURAL_BROKER_URL"] = REDIS_URL
        settings = WorkerSettings.from_env(env)
        queue = CeleryJobQueue(create_celery(settings), settings)
        web, address = start_serve(env, root / "serve.log", "--no-worker")
        try:
            with GitNeuralProcess(["worker", "-c", "4"], env, root / "worker.log") as worker:
                worker_ready(worker)
                yield Deployment(kind, world, env, address, worker, queue)
        finally:
            assert web.stop() == 0
        assert world.stub.brain_errors == []
    if client is not None:
        drop_redis_keys(client, prefix)


def _job(payload: dict[str, Any], delivery: str) -> ConversationJob:
    comment = payload["comment"]
    return ConversationJob(
        installation_id=1,
        repo=REPO,
        pr_number=payload["pull_request"]["number"],
        trigger="reply",
        comment_id=comment["id"],
        delivery_id=delivery,
        in_reply_to=comment["in_reply_to_id"],
        requested_by=comment["user"]["login"],
        author_association=comment["author_association"],
        created_at=comment["created_at"],
    )


def test_a_collaborator_s_reply_in_gitneural_s_thread_gets_exactly_one_answer(
    deployment: Deployment,
) -> None:
    d, w = deployment, deployment.world
    number = w.new_pull()
    top = d.reviewed(number)
    reply = w.gh.add_thread_reply(REPO, number, top["id"], "Why is `>` wrong here?")
    payload = reply_payload(w.gh, REPO, number, reply)
    before = d.conversation_calls()
    first = d.deliver("pull_request_review_comment", payload, "reply-1-" + d.kind)
    assert (first.status, first.json["trigger"]) == (202, "reply")
    [(status, answer_id, _)] = d.answered(reply["id"])
    [answer] = answers_in_thread(w.gh, REPO, number, top["id"])
    assert (status, answer_id) == ("answered", str(answer["id"]))
    assert answer["body"].startswith(REPLY_ANSWER)
    assert answered_comment(answer["body"], "reply") == reply["id"]
    # The same delivery again: a duplicate; the job run twice more: found, not answered.
    again = d.deliver("pull_request_review_comment", payload, "reply-1-" + d.kind)
    assert (again.status, again.json["status"]) == (200, "duplicate")
    job = _job(payload, "reply-1-" + d.kind)
    d.queue.submit(job)
    d.queue.submit(job)
    later = d.answered(reply["id"], count=3)
    assert [s for s, _, _ in later] == ["answered", "already-answered", "already-answered"]
    assert len(answers_in_thread(w.gh, REPO, number, top["id"])) == 1
    assert d.conversation_calls() - before == 2  # read_file, then submit_reply; once
    assert w.stub.thinking_checks > 0


def test_replies_from_no_write_access_a_bot_or_in_someone_else_s_thread_get_nothing(
    deployment: Deployment,
) -> None:
    d, w = deployment, deployment.world
    number = w.new_pull()
    mine = gitneural_thread(w.gh, REPO, number)
    theirs = w.gh.add_review_comment(REPO, number, "people.py", 2, "Rename it?", user="carol")
    before = d.conversation_calls()
    none = w.gh.add_thread_reply(REPO, number, mine["id"], "Nope", user="eve", association="NONE")
    refused = d.deliver("pull_request_review_comment", reply_payload(w.gh, REPO, number, none))
    assert (refused.status, refused.json["status"]) == (200, "ignored")
    assert "NONE is not answered" in refused.json["reason"]
    bot = w.gh.add_thread_reply(REPO, number, mine["id"], "Bump", user="dependabot[bot]")
    from_bot = d.deliver("pull_request_review_comment", reply_payload(w.gh, REPO, number, bot))
    assert (from_bot.status, from_bot.json["reason"]) == (200, "sent by a bot")
    other = w.gh.add_thread_reply(REPO, number, theirs["id"], "Yes, please")
    queued = d.deliver("pull_request_review_comment", reply_payload(w.gh, REPO, number, other))
    assert queued.status == 202  # only GitHub knows whose thread it is: the worker asks
    [(status, _, detail)] = d.answered(other["id"])
    assert status == "ignored" and "not GitNeural's (it was started by carol)" in detail
    assert d.conversation_calls() == before
    assert answers_in_thread(w.gh, REPO, number, mine["id"]) == []
    assert answers_in_thread(w.gh, REPO, number, theirs["id"]) == []


def test_a_withdrawn_finding_is_recorded_as_dismissed(deployment: Deployment) -> None:
    d, w = deployment, deployment.world
    number = w.new_pull()
    top = d.reviewed(number)
    reply = w.gh.add_thread_reply(REPO, number, top["id"], "This is intended: 18 is a minor here")
    payload = reply_payload(w.gh, REPO, number, reply)
    assert d.deliver("pull_request_review_comment", payload).status == 202
    [(status, _, detail)] = d.answered(reply["id"])
    assert status == "answered" and "withdrawn" in detail
    [answer] = answers_in_thread(w.gh, REPO, number, top["id"])
    assert answer["body"].startswith(f"{WITHDRAWN}\n\n{WITHDRAW_ANSWER}")
    # The fingerprint the finding was posted under (replies are reviews of their own too).
    [posted] = [m for m in (parse_marker(r["body"]) for r in w.reviews(number)) if m]
    [fingerprint] = posted.fingerprints
    store = open_store(d.env["GITNEURAL_DATABASE_URL"])
    try:
        row = stored_finding(store, w.gh.repo_json(REPO)["id"], number, fingerprint)
    finally:
        store.close()
    assert row is not None and (row.state, row.dismissed_by) == ("dismissed", "alice")
    assert (row.comment_id, row.dismissed_comment_id) == (top["id"], reply["id"])


def test_ask_gets_eyes_then_one_answer(deployment: Deployment) -> None:
    d, w = deployment, deployment.world
    number = w.new_pull()
    comment = w.gh.add_issue_comment(REPO, number, "/ask What does this change do?")
    queued = d.deliver("issue_comment", ask_payload(w.gh, REPO, number, comment))
    assert (queued.status, queued.json["trigger"]) == (202, "ask")
    [(status, answer_id, _)] = d.answered(comment["id"])
    [answer] = [c for c in w.gh.issue_comments(REPO, number) if c["id"] != comment["id"]]
    assert (status, answer_id) == ("answered", str(answer["id"]))
    assert answer["body"].startswith(f"> What does this change do?\n\n{ASK_ANSWER}")
    assert [r["content"] for r in w.gh.reactions(REPO, comment["id"])] == ["eyes"]
    posts = [r.path for r in w.gh.requests(method="POST", kind="api")]
    eyes = f"/repos/{REPO}/issues/comments/{comment['id']}/reactions"
    assert posts.index(eyes) < posts.index(f"/repos/{REPO}/issues/{number}/comments")


def test_a_model_quota_error_is_one_clear_message_and_no_retry_loop(
    deployment: Deployment,
) -> None:
    d, w = deployment, deployment.world
    number = w.new_pull()
    top = gitneural_thread(w.gh, REPO, number)
    reply = w.gh.add_thread_reply(REPO, number, top["id"], "Why?")
    requests_before = len(w.stub.chat_requests)
    w.stub.push(Reply.http_error(429, "exceeded_current_quota_error", "Out of credit"))
    payload = reply_payload(w.gh, REPO, number, reply)
    assert d.deliver("pull_request_review_comment", payload).status == 202
    [(status, notice_id, detail)] = d.answered(reply["id"])
    assert status == "failed" and "quota" in detail
    [notice] = answers_in_thread(w.gh, REPO, number, top["id"])
    assert str(notice["id"]) == notice_id and notice["body"].startswith(QUOTA_NOTICE)
    time.sleep(2)  # what a retry loop would need (backoff 0.2 s): none comes
    assert len(d.answered(reply["id"])) == 1
    assert len(w.stub.chat_requests) - requests_before == 1
    assert "retry_in" not in "".join(
        line for line in d.worker.log().splitlines() if f"comment={reply['id']}" in line
    )


def test_another_bot_s_review_with_gitneural_s_marker_is_not_gitneural_s(
    deployment: Deployment,
) -> None:
    d, w = deployment, deployment.world
    number = w.new_pull()
    # A finding of its own: the planted one was withdrawn (dismissed) by an earlier test.
    w.answers[w.title(number)] = [{**PLANTED_BUG, "title": "18 is no longer adult here"}]
    head = w.gh.head_sha(REPO, number)
    imitation = Marker(head=head, trigger="opened", delivery="imitated").render()
    w.gh.add_review(REPO, number, f"LGTM\n\n{imitation}", user="mimic[bot]")
    d.reviewed(number)  # posted: the imitation did not pass for GitNeural's review
    mine = [r for r in w.reviews(number) if r["user"]["login"] == w.gh.bot_login]
    assert len(mine) == 1
    # The worker asked GitHub who GitNeural is once, not per job.
    assert len(w.gh.requests(method="GET", path="/app")) == 1


@pytest.mark.slow
def test_a_reply_held_by_a_killed_worker_is_answered_once_by_the_next(tmp_path: Path) -> None:
    with app_world(tmp_path, check_history=True) as world:
        env = world.env(
            tmp_path / "data",
            GITNEURAL_QUEUE_PREFIX=unique_prefix(),
            GITNEURAL_TASK_SOFT_TIME_LIMIT="8",
            GITNEURAL_TASK_TIME_LIMIT="9",
            GITNEURAL_VISIBILITY_TIMEOUT="10",
        )
        settings = WorkerSettings.from_env(env)
        queue = CeleryJobQueue(create_celery(settings), settings)
        number = world.new_pull()
        top = gitneural_thread(world.gh, REPO, number)
        reply = world.gh.add_thread_reply(REPO, number, top["id"], "Why?")
        job = _job(reply_payload(world.gh, REPO, number, reply), "killed-1")
        # The model takes its time with the first turn: the worker dies meanwhile.
        world.stub.push(Reply(tool_calls=[("read_file", {"path": "people.py"})], delay=6.0))
        with GitNeuralProcess(["worker"], env, tmp_path / "first.log") as first:
            worker_ready(first)
            queue.submit(job)
            wait_for(lambda: world.stub.chat_requests, "the reply to reach the model", 30)
            assert first.stop(signal.SIGKILL) == -signal.SIGKILL
        assert answers_in_thread(world.gh, REPO, number, top["id"]) == []
        with GitNeuralProcess(["worker"], env, tmp_path / "second.log") as second:
            deployment = Deployment("sqlite", world, env, "", second, queue)
            [(status, _, _)] = deployment.answered(reply["id"])
        assert status == "answered"
        assert len(answers_in_thread(world.gh, REPO, number, top["id"])) == 1

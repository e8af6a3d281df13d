"""Commands need write access, end to end: the real Flask app under ``gitneural serve
--no-worker``, a real ``gitneural worker`` (the deployments of
:mod:`tests.system.test_conversation_e2e`), the fake GitHub and the K3 stub.

A read-only MEMBER and a read-only COLLABORATOR pass the webhook's cheap filter
(``author_association``), so their ``/review``, ``/ask``, ``/learn`` and ``/forget`` are
queued; the worker's permission read turns each away before anything else: no 👀, no
answer, no review, no model call (the K3 stub receives no request, the fake GitHub no
POST). The same ``/ask`` by a writer is answered.
"""

from __future__ import annotations

import uuid
from typing import Any

from bot.render.conversation import answered_comment
from tests.support.conversation import ask_payload
from tests.support.services import REPO, outcomes
from tests.system.test_conversation_e2e import Deployment, deployment  # noqa: F401

COMMANDS = ("/review", "/ask Why is `>` right here?", "/learn Report nothing.", "/forget 1")


def _command(d: Deployment, number: int, body: str, user: str, association: str) -> Any:
    comment = d.world.gh.add_issue_comment(REPO, number, body, user=user, association=association)
    delivery = f"cmd-{uuid.uuid4().hex[:8]}"
    answer = d.deliver("issue_comment", ask_payload(d.world.gh, REPO, number, comment), delivery)
    assert (answer.status, answer.json["status"]) == (202, "queued"), answer.json
    return comment, delivery


def _answers(d: Deployment, number: int) -> list[dict[str, Any]]:
    gh = d.world.gh
    return [c for c in gh.issue_comments(REPO, number) if c["user"]["login"] == gh.bot_login]


def test_read_only_members_and_collaborators_get_nothing_a_writer_an_answer(
    deployment: Deployment,  # noqa: F811
) -> None:
    d, w = deployment, deployment.world
    number = w.new_pull()
    w.gh.set_permission(REPO, "rita", "read")  # a MEMBER of the organisation, read access
    w.gh.set_permission(REPO, "colin", "read")  # a COLLABORATOR invited with read access
    model_calls = len(w.stub.requests)
    w.gh.clear_requests()
    for user, association in (("rita", "MEMBER"), ("colin", "COLLABORATOR")):
        for body in COMMANDS:
            comment, delivery = _command(d, number, body, user, association)
            if body == "/review":
                [(status, _, detail)] = outcomes(d.worker, delivery)
                assert status == "skipped" and "may not write" in detail
                d.worker.wait_log(f"no eyes reaction: {user} may not write")
            else:
                [(status, _, detail)] = d.answered(comment["id"])
                assert status == "ignored" and "may not write" in detail
            assert w.gh.reactions(REPO, comment["id"]) == []
    assert len(w.stub.requests) == model_calls  # not one model call
    posts = [
        r.path
        for r in w.gh.requests(kind="api")
        if r.method != "GET" and not r.path.endswith("/access_tokens")
    ]
    assert posts == []
    assert _answers(d, number) == [] and w.reviews(number) == []
    reads = {r.path for r in w.gh.requests(kind="api")}
    assert {f"/repos/{REPO}/collaborators/{u}/permission" for u in ("rita", "colin")} <= reads

    # A writer's /ask: 👀 and one answer, from the model.
    asked, _delivery = _command(d, number, COMMANDS[1], "alice", "MEMBER")
    [(status, answer_id, _)] = d.answered(asked["id"])
    assert status == "answered"
    [answer] = _answers(d, number)
    assert str(answer["id"]) == answer_id
    assert answered_comment(answer["body"], "answer") == asked["id"]
    assert len(w.stub.requests) > model_calls

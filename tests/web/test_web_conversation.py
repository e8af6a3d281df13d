"""The webhook's decisions about conversations, through the real Flask app: replies in
review threads (GitHub's ``pull_request_review_comment`` example, made a reply) and
``/ask`` (the PR-comment example)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bot.jobs import ConversationJob
from tests.support.webhooks import DELETE, comment, variant
from tests.web.test_web_app import Hook

FIXTURE = "pull_request_review_comment.created.payload.json"
TOP = 284312629  # the comment the reply answers (the example's own id, minus one)


def reply(association: str = "COLLABORATOR", **changes: Any) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "comment.in_reply_to_id": TOP,
        "comment.author_association": association,
    }
    fields.update(changes)
    return variant(FIXTURE, **fields)


@pytest.fixture
def hook(tmp_path: Path) -> Hook:
    return Hook(tmp_path)


def test_a_collaborator_s_reply_is_queued_as_a_conversation(hook: Hook) -> None:
    resp = hook.post("pull_request_review_comment", reply(), delivery="d-reply")
    assert resp.status_code == 202
    assert resp.json == {
        "status": "queued",
        "repo": "Codertocat/Hello-World",
        "pr": 2,
        "trigger": "reply",
    }
    [job] = hook.queue.conversations
    assert job == ConversationJob(
        installation_id=1,
        repo="Codertocat/Hello-World",
        pr_number=2,
        trigger="reply",
        comment_id=284312630,
        delivery_id="d-reply",
        in_reply_to=TOP,
        requested_by="Codertocat",
        author_association="COLLABORATOR",
        created_at="2019-05-15T15:20:37Z",
    )
    assert hook.queue.jobs == []
    again = hook.post("pull_request_review_comment", reply(), delivery="d-reply")
    assert (again.status_code, again.json["status"]) == (200, "duplicate")


ONLY_NEW = "pull_request_review_comment {}: only new replies are answered"
NEW_THREAD = "a new review comment, not a reply in a thread"


@pytest.mark.parametrize(
    ("payload", "reason"),
    [
        (reply(action="edited"), ONLY_NEW.format("edited")),
        (reply(action="deleted"), ONLY_NEW.format("deleted")),
        (variant(FIXTURE, **{"comment.author_association": "OWNER"}), NEW_THREAD),
        (reply(**{"comment.in_reply_to_id": None}), NEW_THREAD),
        (reply("NONE"), "a reply by NONE is not answered"),
        (reply("CONTRIBUTOR"), "a reply by CONTRIBUTOR is not answered"),
        (reply(**{"sender.type": "Bot", "sender.login": "ci[bot]"}), "sent by a bot"),
        (reply(**{"sender.login": "gitneural[bot]"}), "sent by GitNeural itself"),
        (reply(**{"pull_request.state": "closed"}), "pull request is closed"),
        (reply(**{"comment.body": "   "}), "an empty reply"),
        (
            reply(**{"installation": DELETE}),
            "no installation: deliveries must come from the GitHub App",
        ),
    ],
)
def test_replies_not_to_answer_get_200_with_the_reason(
    hook: Hook, payload: dict[str, Any], reason: str
) -> None:
    resp = hook.post("pull_request_review_comment", payload)
    assert (resp.status_code, resp.json) == (200, {"status": "ignored", "reason": reason})
    assert hook.queue.conversations == [] and hook.queue.jobs == []


@pytest.mark.parametrize(
    "change",
    [
        {"comment.in_reply_to_id": "284312629"},
        {"comment.in_reply_to_id": -1},
        {"comment.id": True},
        {"comment.created_at": "yesterday"},
    ],
)
def test_a_malformed_reply_is_400(hook: Hook, change: dict[str, Any]) -> None:
    assert hook.post("pull_request_review_comment", reply(**change)).status_code == 400
    assert hook.queue.conversations == []


def test_the_repository_s_gate_is_the_deployment_s(tmp_path: Path) -> None:
    hook = Hook(tmp_path, allowed_associations=("OWNER",))
    assert hook.post("pull_request_review_comment", reply("MEMBER")).status_code == 200
    assert hook.post("pull_request_review_comment", reply("OWNER")).status_code == 202


@pytest.mark.parametrize("body", ["/ask Why is this async?", "/ASK why\nmore lines", "  /ask"])
def test_ask_is_queued_as_a_conversation(hook: Hook, body: str) -> None:
    resp = hook.post("issue_comment", comment(body, "MEMBER"), delivery="d-ask")
    assert (resp.status_code, resp.json["trigger"]) == (202, "ask")
    [job] = hook.queue.conversations
    assert (job.trigger, job.comment_id, job.in_reply_to) == ("ask", 492700400, None)
    assert job.author_association == "MEMBER" and job.created_at == "2019-05-15T15:20:21Z"
    assert hook.queue.jobs == []  # not a review


@pytest.mark.parametrize(
    ("payload", "reason"),
    [
        (comment("/ask why?", "NONE"), "/ask by NONE is not allowed"),
        (comment("/ask why?", "OWNER", **{"issue.state": "closed"}), "pull request is closed"),
        (comment("/ask why?", "OWNER", action="edited"), "issue_comment edited is not a command"),
        (comment("/asking why?", "OWNER"), "not a command"),
        (comment("/ask why?", "OWNER", **{"sender.type": "Bot"}), "sent by a bot"),
    ],
)
def test_asks_not_to_answer_get_200_with_the_reason(
    hook: Hook, payload: dict[str, Any], reason: str
) -> None:
    resp = hook.post("issue_comment", payload)
    assert (resp.status_code, resp.json) == (200, {"status": "ignored", "reason": reason})
    assert hook.queue.conversations == []


THREAD_FIXTURE = "pull_request_review_thread.{}.payload.json"


def test_a_thread_resolved_by_a_person_is_queued_for_its_finding(hook: Hook) -> None:
    payload = variant(THREAD_FIXTURE.format("resolved"))
    resp = hook.post("pull_request_review_thread", payload, delivery="d-resolved")
    assert (resp.status_code, resp.json["trigger"]) == (202, "resolved")
    [job] = hook.queue.conversations
    assert job == ConversationJob(
        installation_id=payload["installation"]["id"],
        repo="Codertocat/Hello-World",
        pr_number=payload["pull_request"]["number"],
        trigger="resolved",
        comment_id=payload["thread"]["comments"][0]["id"],
        delivery_id="d-resolved",
        requested_by="Codertocat",
    )


@pytest.mark.parametrize(
    ("name", "changes", "reason"),
    [
        ("unresolved", {}, "pull_request_review_thread unresolved: only a resolution"),
        ("resolved", {"sender.type": "Bot", "sender.login": "ci[bot]"}, "sent by a bot"),
        ("resolved", {"thread.comments": []}, "a resolved thread without comments"),
    ],
)
def test_other_thread_events_are_ignored(
    hook: Hook, name: str, changes: dict[str, Any], reason: str
) -> None:
    payload = variant(THREAD_FIXTURE.format(name), **changes)
    resp = hook.post("pull_request_review_thread", payload)
    assert (resp.status_code, resp.json["status"]) == (200, "ignored")
    assert resp.json["reason"].startswith(reason)
    assert hook.queue.conversations == []

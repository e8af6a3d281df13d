"""The webhook's decisions about ``/learn``, ``/learnings`` and ``/forget``, through the
real Flask app, from GitHub's PR-comment and review-comment examples: queued as
conversation jobs for users with write access (in a review thread, naming the thread's
first comment), answered 200 with the reason for everyone else, and never taken for a
reply to answer with the model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.webhooks import comment, variant
from tests.web.test_web_app import Hook
from tests.web.test_web_conversation import FIXTURE, TOP, reply

OWN_ID = 284312630  # the review-comment example's own id


@pytest.fixture
def hook(tmp_path: Path) -> Hook:
    return Hook(tmp_path)


@pytest.mark.parametrize(
    ("body", "trigger"),
    [
        ("/learn We use tabs in Makefiles", "learn"),
        ("/LEARN\nTwo lines\nof rule", "learn"),
        ("/learnings", "learnings"),
        ("  /forget #3", "forget"),
        ("/learn", "learn"),  # nothing taught: the worker answers with the usage
    ],
)
def test_commands_on_the_pr_are_queued(hook: Hook, body: str, trigger: str) -> None:
    resp = hook.post("issue_comment", comment(body, "MEMBER"), delivery=f"d-{trigger}")
    assert (resp.status_code, resp.json["trigger"]) == (202, trigger)
    [job] = hook.queue.conversations
    assert (job.trigger, job.comment_id, job.in_reply_to) == (trigger, 492700400, None)
    assert (job.requested_by, job.author_association) == ("Codertocat", "MEMBER")
    assert hook.queue.jobs == []  # neither a review nor /ask
    again = hook.post("issue_comment", comment(body, "MEMBER"), delivery=f"d-{trigger}")
    assert (again.status_code, again.json["status"]) == (200, "duplicate")
    assert len(hook.queue.conversations) == 1


def test_a_command_in_a_review_thread_is_answered_there(hook: Hook) -> None:
    as_reply = reply(**{"comment.body": "/learn 18 is an adult here"})
    assert hook.post("pull_request_review_comment", as_reply).status_code == 202
    opening = variant(
        FIXTURE, **{"comment.body": "/learnings", "comment.author_association": "OWNER"}
    )
    assert hook.post("pull_request_review_comment", opening).status_code == 202
    first, second = hook.queue.conversations
    assert (first.trigger, first.comment_id, first.in_reply_to) == ("learn", OWN_ID, TOP)
    # A command that starts a thread is answered in that thread: its own.
    assert (second.trigger, second.in_reply_to) == ("learnings", OWN_ID)


def test_a_closed_pull_request_can_still_be_taught(hook: Hook) -> None:
    closed = comment("/learn Keep it", "OWNER", **{"issue.state": "closed"})
    assert hook.post("issue_comment", closed).status_code == 202


@pytest.mark.parametrize(
    ("event", "payload", "reason"),
    [
        ("issue_comment", comment("/learn trust me", "NONE"), "/learn by NONE is not allowed"),
        (
            "issue_comment",
            comment("/forget 1", "CONTRIBUTOR"),
            "/forget by CONTRIBUTOR is not allowed",
        ),
        (
            "issue_comment",
            comment("/learnings", "FIRST_TIMER"),
            "/learnings by FIRST_TIMER is not allowed",
        ),
        ("issue_comment", comment("/learn x", "OWNER", **{"sender.type": "Bot"}), "sent by a bot"),
        (
            "issue_comment",
            comment("/learn x", "OWNER", action="edited"),
            "issue_comment edited is not a command",
        ),
        ("issue_comment", comment("/learned x", "OWNER"), "not a command"),
        (
            "pull_request_review_comment",
            reply("NONE", **{"comment.body": "/learn trust me"}),
            "/learn by NONE is not allowed",
        ),
    ],
)
def test_commands_not_to_answer_get_200_with_the_reason(
    hook: Hook, event: str, payload: dict[str, Any], reason: str
) -> None:
    resp = hook.post(event, payload)
    assert (resp.status_code, resp.json) == (200, {"status": "ignored", "reason": reason})
    assert hook.queue.conversations == [] and hook.queue.jobs == []

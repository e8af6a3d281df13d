"""Conversations in the tests: the K3 stub's brain for replies and ``/ask``, GitNeural
threads on the fake GitHub, and deliveries derived from GitHub's example payloads.

The brain answers like a model that reads before it answers: at ``high`` and ``max``
effort (tools offered) it first calls ``read_file`` on the file the conversation is
about, then submits; so every conversation crosses a tool turn, and the stub checks
that its reasoning came back exactly (preserved thinking). A reply saying the code is
"intended" is agreed with (``withdraw: true``); anything else is answered and the
finding stands.
"""

from __future__ import annotations

import json
import re
from typing import Any

from bot.domain.results import Finding, Severity
from bot.render.github import comment_body
from tests.fakes.github import FakeGitHub
from tests.fakes.k3 import Reply
from tests.support.planted import PLANTED_BUG
from tests.support.webhooks import variant

REVIEW_COMMENT_FIXTURE = "pull_request_review_comment.created.payload.json"
ASK_FIXTURE = "issue_comment.created.on-pull-request.payload.json"
REPLY_ANSWER = "It stays: 18 is an adult here, and `age > 18` refuses them."
WITHDRAW_ANSWER = "You are right: the rule is intended, so this finding does not apply."
ASK_ANSWER = "The change makes `is_adult` refuse 18-year-olds (`people.py` line 2)."
#: What the brain submits for ``/describe``.
DESCRIPTION = {
    "title": "Make is_adult strict about the age of majority",
    "what": "`is_adult` in `people.py` now compares with `>`.",
    "why": "The description does not say; the code suggests a stricter rule.",
    "how_to_test": "Call `is_adult(18)` and `is_adult(19)`.",
    "risk": "18-year-olds are refused from now on.",
}
AGREE = "intended"


def tool_names(body: dict[str, Any]) -> set[str]:
    return {t["function"]["name"] for t in body.get("tools") or []}


def is_conversation(body: dict[str, Any]) -> bool:
    return bool(tool_names(body) & {"submit_reply", "submit_answer", "submit_description"})


def _user_text(body: dict[str, Any]) -> str:
    return str(next(m["content"] for m in body["messages"] if m["role"] == "user"))


def _path_of(body: dict[str, Any]) -> str:
    found = re.search(r'File "([^"]+)"', _user_text(body))
    return found.group(1) if found else "people.py"


def conversation_reply(body: dict[str, Any]) -> Reply:
    """The brain's next answer to a conversation request."""
    names = tool_names(body)
    answered = [m for m in body["messages"] if m["role"] == "tool"]
    if "read_file" in names and not answered:
        return Reply(
            reasoning="Let me read the file before I answer.",
            tool_calls=[("read_file", {"path": _path_of(body)})],
        )
    if "submit_description" in names:
        return Reply(
            reasoning="I have read the change; describing it.",
            tool_calls=[("submit_description", dict(DESCRIPTION))],
        )
    if "submit_answer" in names:
        return Reply(
            reasoning="I have read the change; answering.",
            tool_calls=[("submit_answer", {"body": ASK_ANSWER})],
        )
    last = _user_text(body).rsplit("## Comment ", 1)[-1]
    agree = AGREE in last.lower()
    return Reply(
        reasoning="Checking the thread against the code.",
        tool_calls=[
            (
                "submit_reply",
                {"body": WITHDRAW_ANSWER if agree else REPLY_ANSWER, "withdraw": agree},
            )
        ],
    )


def planted_finding(fingerprint: str = "fp-planted-0001") -> Finding:
    bug = PLANTED_BUG
    return Finding(
        path=bug["path"],
        start_line=bug["start_line"],
        end_line=bug["end_line"],
        side=bug["side"],
        severity=Severity(bug["severity"]),
        category=bug["category"],
        title=bug["title"],
        body=bug["body"],
        suggestion=bug["suggestion"],
        fingerprint=fingerprint,
    )


def gitneural_thread(
    gh: FakeGitHub, repo: str, number: int, *, user: str | None = None, fingerprint: str = ""
) -> dict[str, Any]:
    """A thread on the planted bug started the way GitNeural starts one (its rendering,
    its finding marker), by GitNeural's bot account or by ``user`` (an imitator)."""
    finding = planted_finding(fingerprint or f"fp-{number}-planted")
    return gh.add_review_comment(
        repo,
        number,
        finding.path,
        finding.end_line,
        comment_body(finding),
        user=user or gh.bot_login,
        association="NONE",
    )


def reply_payload(
    gh: FakeGitHub, repo: str, number: int, reply: dict[str, Any], **changes: Any
) -> dict[str, Any]:
    """GitHub's ``pull_request_review_comment.created`` example, pointed at ``reply`` (a
    comment of the fake, answering ``reply["in_reply_to_id"]``)."""
    pull = gh.pull(repo, number)
    fields: dict[str, Any] = {
        "comment.id": reply["id"],
        "comment.node_id": reply["node_id"],
        "comment.body": reply["body"],
        "comment.in_reply_to_id": reply["in_reply_to_id"],
        "comment.path": reply["path"],
        "comment.line": reply["line"],
        "comment.commit_id": reply["commit_id"],
        "comment.user.login": reply["user"]["login"],
        "comment.user.type": reply["user"]["type"],
        "comment.author_association": reply["author_association"],
        "comment.created_at": reply["created_at"],
        "pull_request.number": number,
        "pull_request.state": "open",
        "pull_request.head.sha": pull["head"]["sha"],
        "repository.full_name": repo,
        "sender.login": reply["user"]["login"],
        "sender.type": reply["user"]["type"],
        "installation.id": 1,
    }
    fields.update(changes)
    return variant(REVIEW_COMMENT_FIXTURE, **fields)


def ask_payload(gh: FakeGitHub, repo: str, number: int, comment: dict[str, Any]) -> dict[str, Any]:
    """GitHub's PR comment example, pointed at ``comment`` (an ``/ask`` of the fake)."""
    return variant(
        ASK_FIXTURE,
        **{
            "issue.number": number,
            "issue.state": "open",
            "comment.id": comment["id"],
            "comment.body": comment["body"],
            "comment.author_association": comment["author_association"],
            "comment.created_at": comment["created_at"],
            "comment.user.login": comment["user"]["login"],
            "repository.full_name": repo,
            "installation.id": 1,
        },
    )


def answers_in_thread(gh: FakeGitHub, repo: str, number: int, top_id: int) -> list[dict[str, Any]]:
    """GitNeural's comments in the thread of ``top_id``, after the first."""
    return [
        c
        for c in gh.review_comments(repo, number)
        if c.get("in_reply_to_id") == top_id and c["user"]["login"] == gh.bot_login
    ]


def conversation_requests(requests: list[Any]) -> list[dict[str, Any]]:
    """The bodies of the stub's chat requests that were conversations."""
    bodies = [json.loads(r.raw) for r in requests if r.raw]
    return [b for b in bodies if isinstance(b, dict) and is_conversation(b)]

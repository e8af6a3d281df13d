"""The real Flask app through its test client: every decision the webhook makes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bot.web.app import create_app
from bot.web.deliveries import SQLiteDeliveryLog
from bot.web.settings import WebSettings
from tests.support.webhooks import (
    DELETE,
    EVENTS,
    SECRET,
    RecordingQueue,
    comment,
    encode,
    failing_queue,
    headers_for,
    load,
    variant,
)

OPENED = "pull_request.opened.payload.json"
SYNC = "pull_request.synchronize.payload.json"
HEAD = "ec26c3e57ca3a959ca5aad62de7213c562f8c821"


def make_settings(tmp_path: Path, **overrides: Any) -> WebSettings:
    values: dict[str, Any] = {
        "webhook_secret": SECRET,
        "bot_login": "gitneural[bot]",
        "data_dir": tmp_path,
    }
    values.update(overrides)
    return WebSettings(**values)


class Hook:
    """A test client posting signed deliveries to one app."""

    def __init__(self, tmp_path: Path, queue: RecordingQueue | None = None, **settings: Any):
        self.queue = queue if queue is not None else RecordingQueue()
        self.log = SQLiteDeliveryLog(tmp_path / "deliveries.sqlite3")
        app = create_app(make_settings(tmp_path, **settings), self.queue, deliveries=self.log)
        self.client = app.test_client()

    def post(self, event: str, payload: Any, **kwargs: Any) -> Any:
        body = encode(payload)
        return self.client.post("/webhook", data=body, headers=headers_for(event, body, **kwargs))


@pytest.fixture
def hook(tmp_path: Path) -> Hook:
    return Hook(tmp_path)


EXPECTED = {
    "installation.created.payload.json": (200, "installation created logged"),
    "issue_comment.created.on-pull-request.payload.json": (200, "not a command"),
    "issue_comment.created.payload.json": (200, "comment on an issue, not on a pull request"),
    "ping.with-app_id.payload.json": (200, "pong"),
    OPENED: (202, None),
    SYNC: (202, None),
    # The example is a thread's first comment (no in_reply_to_id): not a reply to answer.
    "pull_request_review_comment.created.payload.json": (
        200,
        "a new review comment, not a reply in a thread",
    ),
    "pull_request_review_comment.edited.payload.json": (
        200,
        "pull_request_review_comment edited: only new replies are answered",
    ),
    # A person resolved a thread: the worker tells whether it dismisses a finding.
    "pull_request_review_thread.resolved.payload.json": (202, None),
    "pull_request_review_thread.unresolved.payload.json": (
        200,
        "pull_request_review_thread unresolved: only a resolution dismisses",
    ),
}


@pytest.mark.parametrize("name", sorted(EVENTS))
def test_every_fixture_gets_its_decision(hook: Hook, name: str) -> None:
    status, reason = EXPECTED[name]
    resp = hook.post(EVENTS[name], load(name))
    assert resp.status_code == status
    if reason is None:
        assert resp.json["status"] == "queued"
        assert len(hook.queue.jobs) + len(hook.queue.conversations) == 1
    else:
        assert resp.json == {"status": "ignored", "reason": reason}
        assert hook.queue.jobs == [] and hook.queue.conversations == []


def test_opened_queues_plain_ids(hook: Hook) -> None:
    resp = hook.post("pull_request", load(OPENED), delivery="d-opened")
    assert resp.status_code == 202
    assert resp.json == {
        "status": "queued",
        "repo": "Codertocat/Hello-World",
        "pr": 2,
        "trigger": "opened",
    }
    [job] = hook.queue.jobs
    assert job.to_dict() == {
        "installation_id": 1,
        "repo": "Codertocat/Hello-World",
        "pr_number": 2,
        "head_sha": HEAD,
        "trigger": "opened",
        "delivery_id": "d-opened",
        "effort": None,
        "full": False,
        "comment_id": None,
        "requested_by": "Codertocat",
        "author_association": None,
    }


@pytest.mark.parametrize("action", ["reopened", "ready_for_review", "synchronize"])
def test_other_review_actions_queue_with_their_trigger(hook: Hook, action: str) -> None:
    assert hook.post("pull_request", variant(OPENED, action=action)).status_code == 202
    assert [j.trigger for j in hook.queue.jobs] == [action]


@pytest.mark.parametrize("action", ["closed", "edited", "unlabeled", "assigned"])
def test_other_pull_request_actions_are_ignored(hook: Hook, action: str) -> None:
    resp = hook.post("pull_request", variant(OPENED, action=action))
    assert resp.status_code == 200
    assert resp.json["reason"] == f"pull_request {action} does not trigger a review"
    assert hook.queue.jobs == []


def test_docs_signature_vector_is_accepted(tmp_path: Path) -> None:
    # GitHub's documented vector: the body is not JSON, so passing the signature check
    # shows as a 400 (malformed), where a wrong signature would be 401.
    queue = RecordingQueue()
    app = create_app(
        WebSettings(webhook_secret="It's a Secret to Everybody", data_dir=tmp_path), queue
    )
    sig = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
    headers = headers_for("ping", b"Hello, World!", signature=sig)
    resp = app.test_client().post("/webhook", data=b"Hello, World!", headers=headers)
    assert resp.status_code == 400
    headers["X-Hub-Signature-256"] = sig[:-1] + "f"
    resp = app.test_client().post("/webhook", data=b"Hello, World!", headers=headers)
    assert resp.status_code == 401


@pytest.mark.parametrize(
    "signature",
    [
        None,
        "",
        "sha256=",
        "sha1=0000",
        "sha256=" + "0" * 64,
        "sha256=ünïcödé",
        "sign-with-other-secret",
    ],
)
def test_missing_or_wrong_signature_is_401_and_nothing_queued(
    hook: Hook, signature: str | None
) -> None:
    kwargs: dict[str, Any] = {"signature": signature}
    if signature == "sign-with-other-secret":
        kwargs = {"secret": "not-the-secret"}
    resp = hook.post("pull_request", load(OPENED), **kwargs)
    assert resp.status_code == 401
    assert resp.json["status"] == "refused"
    assert hook.queue.jobs == []


def test_body_changed_after_signing_is_401(hook: Hook) -> None:
    body = encode(load(OPENED))
    headers = headers_for("pull_request", body)
    resp = hook.client.post(
        "/webhook", data=body.replace(b'"opened"', b'"reopened"'), headers=headers
    )
    assert resp.status_code == 401
    assert hook.queue.jobs == []


def test_redelivery_queues_once(hook: Hook) -> None:
    first = hook.post("pull_request", load(OPENED), delivery="same-id")
    again = hook.post("pull_request", load(OPENED), delivery="same-id")
    # The same bytes under another id are a replay, not an event (test_web_deliveries).
    other = hook.post("pull_request", load(OPENED), delivery="other-id")
    assert (first.status_code, again.status_code, other.status_code) == (202, 200, 202)
    assert again.json == {"status": "duplicate"}
    assert other.json == {"status": "ignored", "reason": "duplicate body"}
    assert [j.delivery_id for j in hook.queue.jobs] == ["same-id"]


def test_queue_failure_is_503_and_a_redelivery_is_queued(tmp_path: Path) -> None:
    hook = Hook(tmp_path, queue=failing_queue())
    resp = hook.post("pull_request", load(OPENED), delivery="d-1")
    assert resp.status_code == 503
    assert "GITNEURAL_BROKER_URL" in resp.json["reason"]
    # The claim was released: the same delivery, once the broker is back, is queued.
    hook.queue.fail_with = None
    assert hook.post("pull_request", load(OPENED), delivery="d-1").status_code == 202
    assert len(hook.queue.jobs) == 1


def test_unreachable_delivery_log_is_503_not_500(tmp_path: Path) -> None:
    # A Redis URL on a port nobody listens on: the log fails for real.
    queue = RecordingQueue()
    settings = make_settings(tmp_path, dedupe_url="redis://127.0.0.1:1/0")
    client = create_app(settings, queue).test_client()
    body = encode(load(OPENED))
    resp = client.post("/webhook", data=body, headers=headers_for("pull_request", body))
    assert resp.status_code == 503
    assert resp.json["reason"].startswith("delivery log on Redis failed (ConnectionError)")
    assert queue.jobs == []


# ---- /review ---------------------------------------------------------------------------

PR_COMMENT = "issue_comment.created.on-pull-request.payload.json"


def test_review_by_none_queues_nothing(hook: Hook) -> None:
    resp = hook.post("issue_comment", comment("/review", "NONE"))
    assert resp.status_code == 200
    assert resp.json["reason"] == "/review by NONE is not allowed"
    assert hook.queue.jobs == []


@pytest.mark.parametrize("association", ["CONTRIBUTOR", "FIRST_TIME_CONTRIBUTOR", "MANNEQUIN"])
def test_review_by_other_outsiders_queues_nothing(hook: Hook, association: str) -> None:
    assert hook.post("issue_comment", comment("/review", association)).status_code == 200
    assert hook.queue.jobs == []


def test_review_by_collaborator_queues_one_job_with_the_comment(hook: Hook) -> None:
    resp = hook.post("issue_comment", comment("/review", "COLLABORATOR"), delivery="d-c")
    assert resp.status_code == 202
    [job] = hook.queue.jobs
    assert job.comment_id == 492700400
    assert job.trigger == "command"
    assert job.head_sha is None
    assert (job.repo, job.pr_number, job.installation_id) == ("Codertocat/Hello-World", 1, 1)
    assert (job.effort, job.full) == (None, False)
    assert (job.requested_by, job.author_association) == ("Codertocat", "COLLABORATOR")


def test_review_options_are_parsed(hook: Hook) -> None:
    body = "  /review effort=low full\r\nplease look at the parser"
    assert hook.post("issue_comment", comment(body, "OWNER")).status_code == 202
    [job] = hook.queue.jobs
    assert (job.effort, job.full) == ("low", True)


def test_review_with_unknown_option_is_ignored_with_reason(hook: Hook) -> None:
    resp = hook.post("issue_comment", comment("/review efort=low", "OWNER"))
    assert resp.status_code == 200
    assert resp.json["reason"].startswith("/review refused: unknown option 'efort=…'")
    assert hook.queue.jobs == []


def test_allowed_associations_are_configurable(tmp_path: Path) -> None:
    hook = Hook(tmp_path, allowed_associations=("OWNER",))
    assert hook.post("issue_comment", comment("/review", "MEMBER")).status_code == 200
    assert hook.post("issue_comment", comment("/review", "OWNER")).status_code == 202
    assert len(hook.queue.jobs) == 1


@pytest.mark.parametrize("action", ["edited", "deleted"])
def test_edited_or_deleted_review_comment_is_ignored(hook: Hook, action: str) -> None:
    resp = hook.post("issue_comment", comment("/review", "OWNER", action=action))
    assert resp.status_code == 200
    assert resp.json["reason"] == f"issue_comment {action} is not a command"
    assert hook.queue.jobs == []


def test_review_on_a_plain_issue_is_ignored(hook: Hook) -> None:
    payload = comment("/review", "OWNER", **{"issue.pull_request": DELETE})
    assert hook.post("issue_comment", payload).json["reason"].startswith("comment on an issue")
    assert hook.queue.jobs == []


def test_review_on_a_closed_pull_request_is_ignored(hook: Hook) -> None:
    payload = comment("/review", "OWNER", **{"issue.state": "closed"})
    assert hook.post("issue_comment", payload).json["reason"] == "pull request is closed"


@pytest.mark.parametrize("body", ["/reviewer", "please /review", "", None, "/review-now"])
def test_non_commands_are_ignored(hook: Hook, body: str | None) -> None:
    resp = hook.post("issue_comment", comment(body, "OWNER"))
    assert resp.json["reason"] == "not a command"


# ---- bots, drafts, switches ------------------------------------------------------------


def bot_sender(name: str, login: str, kind: str) -> dict[str, Any]:
    return variant(name, **{"sender.login": login, "sender.type": kind})


@pytest.mark.parametrize("event,name", [("pull_request", OPENED), ("issue_comment", PR_COMMENT)])
def test_bot_sender_is_ignored(hook: Hook, event: str, name: str) -> None:
    payload = bot_sender(name, "dependabot[bot]", "Bot")
    if event == "issue_comment":
        set_review(payload)
    resp = hook.post(event, payload)
    assert resp.status_code == 200
    assert resp.json["reason"] == "sent by a bot"
    assert hook.queue.jobs == []


@pytest.mark.parametrize("event,name", [("pull_request", OPENED), ("issue_comment", PR_COMMENT)])
def test_own_login_is_ignored_even_as_a_user(hook: Hook, event: str, name: str) -> None:
    payload = bot_sender(name, "GitNeural[bot]", "User")
    if event == "issue_comment":
        set_review(payload)
    resp = hook.post(event, payload)
    assert resp.json["reason"] == "sent by GitNeural itself"
    assert hook.queue.jobs == []


def set_review(payload: dict[str, Any]) -> None:
    payload["comment"]["body"] = "/review"
    payload["comment"]["author_association"] = "OWNER"


def test_drafts_are_skipped_by_default(hook: Hook) -> None:
    resp = hook.post("pull_request", variant(OPENED, **{"pull_request.draft": True}))
    assert resp.status_code == 200
    assert resp.json["reason"].startswith("draft pull request")
    assert hook.queue.jobs == []


def test_drafts_are_reviewed_when_configured(tmp_path: Path) -> None:
    hook = Hook(tmp_path, review_drafts=True)
    resp = hook.post("pull_request", variant(OPENED, **{"pull_request.draft": True}))
    assert resp.status_code == 202


def test_ready_for_review_of_a_former_draft_is_queued(hook: Hook) -> None:
    payload = variant(OPENED, action="ready_for_review", **{"pull_request.draft": False})
    assert hook.post("pull_request", payload).status_code == 202


def test_auto_review_off_ignores_pull_requests_but_not_commands(tmp_path: Path) -> None:
    hook = Hook(tmp_path, auto_review=False)
    assert hook.post("pull_request", load(OPENED)).json["reason"].startswith("automatic")
    assert hook.post("issue_comment", comment("/review", "OWNER")).status_code == 202
    assert [j.trigger for j in hook.queue.jobs] == ["command"]


def test_delivery_without_installation_is_ignored(hook: Hook) -> None:
    resp = hook.post("pull_request", variant(OPENED, installation=DELETE))
    assert resp.status_code == 200
    assert resp.json["reason"].startswith("no installation")


def test_unhandled_event_is_ignored(hook: Hook) -> None:
    resp = hook.post("push", load(OPENED))
    assert resp.json == {"status": "ignored", "reason": "event 'push' is not handled"}


# ---- malformed deliveries --------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [b"", b"not json", b"[1, 2]", b'"text"', b"\xff\xfe\x00garbage", b"[" * 100_000, b"null"],
)
def test_malformed_json_is_400(hook: Hook, body: bytes) -> None:
    resp = hook.post("pull_request", body)
    assert resp.status_code == 400
    assert resp.json["status"] == "refused"
    assert hook.queue.jobs == []


@pytest.mark.parametrize(
    "change",
    [
        {"action": 1},
        {"action": DELETE},
        {"pull_request": "x"},
        {"pull_request.number": "2"},
        {"pull_request.number": True},
        {"pull_request.number": -2},
        {"pull_request.head.sha": None},
        {"pull_request.head.sha": "not-a-sha"},
        {"pull_request.draft": "yes"},
        {"installation.id": "1"},
        {"repository.full_name": ["a"]},
        {"repository.full_name": "no-slash"},
        {"sender": DELETE},
        {"sender.type": None},
    ],
)
def test_wrong_types_or_missing_keys_are_400(hook: Hook, change: dict[str, Any]) -> None:
    resp = hook.post("pull_request", variant(OPENED, **change))
    assert resp.status_code == 400, resp.json
    assert hook.queue.jobs == []


@pytest.mark.parametrize(
    "change",
    [
        {"comment.body": 5},
        {"comment.id": "492700400"},
        {"comment.author_association": None},
        {"issue.number": DELETE},
        {"comment.user": DELETE},
    ],
)
def test_malformed_review_comments_are_400(hook: Hook, change: dict[str, Any]) -> None:
    resp = hook.post("issue_comment", comment("/review", "OWNER", **change))
    assert resp.status_code == 400, resp.json
    assert hook.queue.jobs == []


def test_missing_event_or_delivery_header_is_400(hook: Hook) -> None:
    body = encode(load(OPENED))
    for header in ("X-GitHub-Event", "X-GitHub-Delivery"):
        headers = headers_for("pull_request", body)
        del headers[header]
        assert hook.client.post("/webhook", data=body, headers=headers).status_code == 400
    assert hook.queue.jobs == []


def test_oversized_body_is_413(tmp_path: Path) -> None:
    cap = len(encode(load(OPENED)))
    hook = Hook(tmp_path, max_body_bytes=cap)
    payload = load(OPENED)
    payload["pull_request"]["body"] += "x"
    resp = hook.post("pull_request", payload)
    assert resp.status_code == 413
    assert resp.json["status"] == "error"
    assert hook.queue.jobs == []
    assert hook.post("pull_request", load(OPENED)).status_code == 202


def test_healthz(hook: Hook) -> None:
    resp = hook.client.get("/healthz")
    assert (resp.status_code, resp.json) == (200, {"status": "ok"})


def test_get_on_webhook_is_405_json(hook: Hook) -> None:
    resp = hook.client.get("/webhook")
    assert resp.status_code == 405
    assert json.loads(resp.data)["status"] == "error"

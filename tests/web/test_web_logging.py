"""Logging: one decision line per delivery, and never the secret, signature or body."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from bot.web.app import create_app
from bot.web.settings import WebSettings
from tests.support.webhooks import (
    RecordingQueue,
    comment,
    encode,
    headers_for,
    http_post,
    load,
    serve,
)

SECRET = "whsec-5d1e7a2c-never-log-me"
MARKER = "UNTRUSTED-PR-BODY-9f3b"


def test_debug_logs_hold_decisions_but_no_secret_signature_or_body(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    app = create_app(WebSettings(webhook_secret=SECRET, data_dir=tmp_path), RecordingQueue())
    opened = load("pull_request.opened.payload.json")
    opened["pull_request"]["body"] = MARKER
    deliveries = [
        ("pull_request", opened, {}),
        ("pull_request", opened, {"secret": "wrong"}),
        ("pull_request", b"{not json " + MARKER.encode(), {}),
        ("issue_comment", comment(f"/review full {MARKER}", "OWNER"), {}),
        ("issue_comment", comment(f"/review\n{MARKER}", "NONE"), {}),
        ("installation", load("installation.created.payload.json"), {}),
        ("ping", load("ping.with-app_id.payload.json"), {}),
    ]
    signatures = []
    ids = []
    with serve(app) as address:
        for number, (event, payload, kwargs) in enumerate(deliveries):
            body = encode(payload)
            options = {"secret": SECRET, **kwargs}
            headers = headers_for(event, body, delivery=f"log-{number}", **options)
            signatures.append(headers["X-Hub-Signature-256"].removeprefix("sha256="))
            ids.append(f"log-{number}")
            assert http_post(address, "/webhook", body, headers).status < 500
    text = "\n".join(r.getMessage() for r in caplog.records) + caplog.text
    assert SECRET not in text
    assert MARKER not in text
    for signature in signatures:
        assert signature not in text
    decisions = [r.getMessage() for r in caplog.records if "decision=" in r.getMessage()]
    for delivery in ids:
        assert len([line for line in decisions if f"delivery={delivery} " in line]) == 1
    queued = next(line for line in decisions if "delivery=log-0 " in line)
    for part in ("event=pull_request", "action=opened", "repo=Codertocat/Hello-World", "pr=2"):
        assert part in queued
    assert "decision=queued" in queued
    assert any(
        "installation created: id=957387 account=Codertocat" in r.getMessage()
        for r in caplog.records
    )


def test_log_lines_cannot_be_forged_through_headers(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="gitneural.web")
    app = create_app(WebSettings(webhook_secret=SECRET, data_dir=tmp_path), RecordingQueue())
    body = encode(load("ping.with-app_id.payload.json"))
    headers = headers_for("ping", body, secret=SECRET, delivery="x decision=queued\x1b[2J")
    app.test_client().post("/webhook", data=body, headers=headers)
    [line] = [r.getMessage() for r in caplog.records if "delivery=" in r.getMessage()]
    assert "delivery=x?decision=queued?[2J " in line
    assert "\x1b" not in line

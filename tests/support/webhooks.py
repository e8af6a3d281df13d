"""Helpers for the webhook tests: real payloads, signing, a recording queue, a real server.

The signature is computed here with hmac directly, not with bot.web.signature, so the
tests do not check the code against itself.
"""

from __future__ import annotations

import copy
import hashlib
import hmac
import http.client
import json
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from werkzeug.serving import make_server

from bot.errors import GitNeuralError
from bot.jobs import ConversationJob, QueueError, ReviewJob
from tests.support.paths import FIXTURES

WEBHOOKS = FIXTURES / "github-webhooks"
SECRET = "test-webhook-secret-4f1c"

#: fixture file -> X-GitHub-Event
EVENTS = {
    "installation.created.payload.json": "installation",
    "issue_comment.created.on-pull-request.payload.json": "issue_comment",
    "issue_comment.created.payload.json": "issue_comment",
    "ping.with-app_id.payload.json": "ping",
    "pull_request.opened.payload.json": "pull_request",
    "pull_request.synchronize.payload.json": "pull_request",
    "pull_request_review_comment.created.payload.json": "pull_request_review_comment",
    "pull_request_review_comment.edited.payload.json": "pull_request_review_comment",
    "pull_request_review_thread.resolved.payload.json": "pull_request_review_thread",
    "pull_request_review_thread.unresolved.payload.json": "pull_request_review_thread",
}


def load(name: str) -> dict[str, Any]:
    """A fresh copy of a fixture payload (callers may mutate it)."""
    payload: dict[str, Any] = json.loads((WEBHOOKS / name).read_text(encoding="utf-8"))
    return payload


def variant(name: str, **changes: Any) -> dict[str, Any]:
    """A fixture with fields replaced: ``variant(f, **{"sender.type": "Bot"})``;
    a value of ``DELETE`` removes the key."""
    payload = load(name)
    for path, value in changes.items():
        set_path(payload, path, value)
    return payload


DELETE = object()


def set_path(payload: dict[str, Any], path: str, value: Any) -> None:
    *parents, last = path.split(".")
    target = payload
    for key in parents:
        target = target[key]
    if value is DELETE:
        del target[last]
    else:
        target[last] = copy.deepcopy(value)


def comment(body: str | None, association: str = "COLLABORATOR", **changes: Any) -> dict[str, Any]:
    """The on-pull-request comment fixture saying ``body`` as ``association``."""
    fields: dict[str, Any] = {"comment.body": body, "comment.author_association": association}
    fields.update(changes)
    return variant("issue_comment.created.on-pull-request.payload.json", **fields)


def sign(body: bytes, secret: str = SECRET) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def encode(payload: Any) -> bytes:
    return payload if isinstance(payload, bytes) else json.dumps(payload).encode()


def headers_for(
    event: str,
    body: bytes,
    *,
    delivery: str | None = None,
    signature: str | None = "sign",
    secret: str = SECRET,
) -> dict[str, str]:
    """GitHub's headers; ``signature="sign"`` signs ``body``, ``None`` omits the header."""
    headers = {
        "Content-Type": "application/json",
        "User-Agent": "GitHub-Hookshot/test",
        "X-GitHub-Event": event,
        "X-GitHub-Delivery": delivery or str(uuid.uuid4()),
    }
    if signature == "sign":
        headers["X-Hub-Signature-256"] = sign(body, secret)
    elif signature is not None:
        headers["X-Hub-Signature-256"] = signature
    return headers


class RecordingQueue:
    """The JobQueue boundary to Celery: records jobs (as their JSON form round-trips)."""

    def __init__(self, fail_with: GitNeuralError | None = None) -> None:
        self.jobs: list[ReviewJob] = []
        self.conversations: list[ConversationJob] = []
        self.fail_with = fail_with
        self._lock = threading.Lock()

    def submit(self, job: ReviewJob | ConversationJob) -> None:
        if self.fail_with is not None:
            raise self.fail_with
        # What Celery would carry: JSON, and back.
        wire = json.loads(json.dumps(job.to_dict()))
        with self._lock:
            if isinstance(job, ConversationJob):
                self.conversations.append(ConversationJob.from_dict(wire))
            else:
                self.jobs.append(ReviewJob.from_dict(wire))


def failing_queue() -> RecordingQueue:
    return RecordingQueue(QueueError("broker unreachable: check GITNEURAL_BROKER_URL"))


@dataclass
class Reply:
    status: int
    json: Any


@contextmanager
def serve(app: Any) -> Iterator[str]:
    """``app`` on a real threaded werkzeug server on 127.0.0.1; yields ``host:port``."""
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def http_post(address: str, path: str, body: bytes, headers: dict[str, str]) -> Reply:
    """One POST over a real socket."""
    conn = http.client.HTTPConnection(address, timeout=10)
    try:
        conn.request("POST", path, body=body, headers=headers)
        resp = conn.getresponse()
        data = resp.read()
    finally:
        conn.close()
    return Reply(resp.status, json.loads(data) if data else None)


def http_get(address: str, path: str) -> Reply:
    conn = http.client.HTTPConnection(address, timeout=10)
    try:
        conn.request("GET", path)
        resp = conn.getresponse()
        data = resp.read()
    finally:
        conn.close()
    return Reply(resp.status, json.loads(data) if data else None)

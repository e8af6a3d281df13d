"""End to end over a real socket: the app on a threaded werkzeug server on 127.0.0.1."""

from __future__ import annotations

import http.client
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from bot.web.app import create_app
from bot.web.settings import WebSettings
from tests.support.webhooks import (
    SECRET,
    RecordingQueue,
    Reply,
    comment,
    encode,
    headers_for,
    http_get,
    http_post,
    load,
    serve,
)

OPENED = "pull_request.opened.payload.json"


class Server:
    def __init__(self, address: str, queue: RecordingQueue) -> None:
        self.address = address
        self.queue = queue

    def deliver(self, event: str, payload: Any, **kwargs: Any) -> Reply:
        body = encode(payload)
        return http_post(self.address, "/webhook", body, headers_for(event, body, **kwargs))


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    queue = RecordingQueue()
    settings = WebSettings(webhook_secret=SECRET, data_dir=tmp_path, bot_login="gitneural[bot]")
    with serve(create_app(settings, queue)) as address:
        yield Server(address, queue)


def test_healthz_over_http(server: Server) -> None:
    reply = http_get(server.address, "/healthz")
    assert (reply.status, reply.json) == (200, {"status": "ok"})


def test_opened_is_queued_once_even_when_redelivered(server: Server) -> None:
    first = server.deliver("pull_request", load(OPENED), delivery="e2e-1")
    again = server.deliver("pull_request", load(OPENED), delivery="e2e-1")
    assert (first.status, again.status) == (202, 200)
    assert again.json == {"status": "duplicate"}
    [job] = server.queue.jobs
    assert (job.repo, job.pr_number, job.trigger) == ("Codertocat/Hello-World", 2, "opened")


def test_concurrent_copies_of_one_delivery_queue_one_job(server: Server) -> None:
    delivery = str(uuid.uuid4())
    with ThreadPoolExecutor(max_workers=8) as pool:
        replies = list(
            pool.map(
                lambda _: server.deliver("pull_request", load(OPENED), delivery=delivery),
                range(16),
            )
        )
    assert sorted(r.status for r in replies) == [200] * 15 + [202]
    assert len(server.queue.jobs) == 1


def test_bad_signature_over_http_is_401_and_nothing_queued(server: Server) -> None:
    assert server.deliver("pull_request", load(OPENED), signature=None).status == 401
    assert server.deliver("pull_request", load(OPENED), secret="wrong").status == 401
    assert server.queue.jobs == []


def test_review_command_over_http(server: Server) -> None:
    assert server.deliver("issue_comment", comment("/review", "NONE")).status == 200
    reply = server.deliver("issue_comment", comment("/review effort=high", "COLLABORATOR"))
    assert reply.status == 202
    [job] = server.queue.jobs
    assert (job.comment_id, job.effort, job.trigger) == (492700400, "high", "command")


def test_oversized_and_malformed_bodies_over_http(tmp_path: Path) -> None:
    queue = RecordingQueue()
    settings = WebSettings(webhook_secret=SECRET, data_dir=tmp_path, max_body_bytes=1024)
    with serve(create_app(settings, queue)) as address:
        big = b"{" + b" " * 2048 + b"}"
        assert http_post(address, "/webhook", big, headers_for("ping", big)).status == 413
        bad = b'{"action": '
        assert http_post(address, "/webhook", bad, headers_for("ping", bad)).status == 400
        # The server still answers after both refusals.
        assert http_get(address, "/healthz").status == 200
    assert queue.jobs == []


def test_chunked_bodies_are_capped_too(tmp_path: Path) -> None:
    # Without Content-Length the cap must still hold while the body streams in.
    queue = RecordingQueue()
    cap = len(encode(load(OPENED)))
    settings = WebSettings(webhook_secret=SECRET, data_dir=tmp_path, max_body_bytes=cap)
    with serve(create_app(settings, queue)) as address:
        ok = encode(load(OPENED))
        assert chunked_post(address, ok, headers_for("pull_request", ok)) == 202
        big = ok[:-1] + b" " * 4096 + b"}"
        assert chunked_post(address, big, headers_for("pull_request", big)) == 413
    assert len(queue.jobs) == 1


def chunked_post(address: str, body: bytes, headers: dict[str, str]) -> int:
    conn = http.client.HTTPConnection(address, timeout=10)
    try:
        chunks = (body[i : i + 1000] for i in range(0, len(body), 1000))
        conn.request("POST", "/webhook", body=chunks, headers=headers, encode_chunked=True)
        resp = conn.getresponse()
        resp.read()
        return resp.status
    finally:
        conn.close()

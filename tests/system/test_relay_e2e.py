"""``gitneural relay``: deliveries read from a server-sent-events channel, as smee.io sends
them, reach a real ``gitneural serve`` with their signature intact and are reviewed; the
channel's own events and headers are not passed on, and a dropped stream is opened again."""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.support.services import (
    AppWorld,
    GitNeuralProcess,
    app_world,
    start_serve,
    wait_for,
)
from tests.support.webhooks import sign

pytestmark = pytest.mark.slow


class Channel:
    """A relay channel: each connection gets the events queued for it, then the stream ends."""

    def __init__(self) -> None:
        self.streams: list[list[bytes]] = []
        self.connections = 0
        channel = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                index = channel.connections
                channel.connections += 1
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                for chunk in channel.streams[index] if index < len(channel.streams) else []:
                    self.wfile.write(chunk)
                    self.wfile.flush()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/abc"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def smee_message(
    event: str, delivery: str, payload: dict[str, Any], *, signed: bool = True
) -> bytes:
    body = json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode()
    data: dict[str, Any] = {
        "host": "smee.io",
        "x-forwarded-for": "203.0.113.9",
        "x-github-event": event,
        "x-github-delivery": delivery,
        "x-hub-signature-256": sign(body) if signed else "sha256=" + "0" * 64,
        "content-type": "application/json",
        "body": payload,
        "query": {},
        "timestamp": 1765000000000,
    }
    return f"id: {delivery}\ndata: {json.dumps(data)}\n\n".encode()


@pytest.fixture
def world(tmp_path: Path) -> Iterator[tuple[AppWorld, GitNeuralProcess, str]]:
    with app_world(tmp_path) as w:
        (tmp_path / "serve").mkdir()
        proc, address = start_serve(w.env(tmp_path / "data"), tmp_path / "serve" / "log")
        proc.wait_log("ready.", count=2, timeout=60)
        yield w, proc, address
        assert proc.stop() == 0


def test_a_delivery_through_the_relay_is_reviewed_and_a_forged_one_refused(
    world: tuple[AppWorld, GitNeuralProcess, str], tmp_path: Path
) -> None:
    w, serve, address = world
    number = w.new_pull()
    channel = Channel()
    try:
        channel.streams = [
            [b"event: ready\ndata: {}\n\n", b": keep-alive\n\n"],  # the channel's own
            [
                b"retry: 50\n\n",
                smee_message("pull_request", "relayed-1", w.opened(number)),
                smee_message("pull_request", "forged-1", w.opened(number), signed=False),
            ],
        ]
        relay = GitNeuralProcess(
            ["relay", channel.url, "--to", f"http://{address}/webhook"],
            w.env(tmp_path / "data"),
            tmp_path / "relay.log",
        ).start()
        try:
            wait_for(lambda: "forged-1 -> " in relay.log(), "both deliveries relayed", 60)
            log = relay.log()
            assert "pull_request relayed-1 -> 202" in log
            assert re.search(r"pull_request forged-1 -> 40[13]", log)
            assert channel.connections >= 2  # the first stream ended: opened again
            outcome = wait_for(
                lambda: re.findall(r"delivery=relayed-1 .* outcome=(\S+)", serve.log()),
                "the relayed delivery's review",
                90,
            )
            assert outcome[-1] == "posted"
            assert len(w.reviews(number)) == 1
            assert "review job delivery=forged-1" not in serve.log()  # refused, never queued
            assert "203.0.113.9" not in serve.log()  # the channel's headers stay behind
        finally:
            relay.stop()
    finally:
        channel.close()


def test_a_channel_url_that_is_no_url_is_one_line(tmp_path: Path) -> None:
    relay = GitNeuralProcess(["relay", "smee.io/abc"], dict(os.environ), tmp_path / "log")
    started = relay.start().proc
    assert started is not None and started.wait(timeout=30) == 2
    assert relay.log().strip().splitlines()[-1] == (
        "gitneural: error: CHANNEL_URL must be an http(s):// URL"
    )

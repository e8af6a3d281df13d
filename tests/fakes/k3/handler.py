"""The K3 stub's HTTP side: one handler per request, the recorded requests, the prompt.

Kept apart from ``stub`` (the stub's state and its API) so each stays readable. The
handler reaches the stub through ``self.server.stub``.
"""

from __future__ import annotations

import hashlib
import json
import socket
import struct
import sys
import time
from dataclasses import asdict, dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

from tests.fakes.k3.checks import StubError, check_fields, check_messages
from tests.fakes.k3.reply import ErrorReply, Reply, estimate_tokens, reply_from_json
from tests.fakes.k3.wire import Answer, completion_body, render, sse, stream_events, usage_fields

if TYPE_CHECKING:
    from tests.fakes.k3.stub import K3Stub


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]  # lower-case names, without Authorization
    raw: str
    body: Any = None
    status: int = 0
    #: Earlier assistant messages found exactly as the stub sent them.
    assistant_checked: int = 0
    usage: dict[str, Any] | None = None
    #: ``time.monotonic()`` when the request's body was read and when the last byte of
    #: the answer was written: the model's own time, as a benchmark's ideal needs it.
    received: float = 0.0
    answered: float | None = None


def prompt_text(body: dict[str, Any]) -> str:
    """The serialised prompt, stable part first, as a prefix cache would see it; an
    image as a short stand-in of its hash (its cost is :func:`image_tokens`', not its
    data URI's length)."""
    head = f"{body.get('model')}|{body.get('reasoning_effort', 'max')}|"
    messages = [_without_image_data(m) for m in body["messages"]]
    return head + _dumps(body.get("tools") or []) + "".join(map(_dumps, messages))


def _without_image_data(message: Any) -> Any:
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        return message
    parts = [
        {"type": "image_url", "image": hashlib.sha256(_dumps(p).encode()).hexdigest()[:16]}
        if isinstance(p, dict) and p.get("type") == "image_url"
        else p
        for p in content
    ]
    return {**message, "content": parts}


def image_tokens(body: dict[str, Any]) -> int:
    """What the images of a request cost: the flat 1,024 tokens Moonshot bills each at."""
    return 1024 * len(image_urls(body))


def image_urls(body: dict[str, Any]) -> list[str]:
    """The data URIs of every image part of the request, in order."""
    return [
        str(part["image_url"]["url"])
        for m in body.get("messages") or []
        if isinstance(m, dict) and isinstance(m.get("content"), list)
        for part in m["content"]
        if isinstance(part, dict) and part.get("type") == "image_url"
    ]


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


class StubServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 512  # parallel review groups and load tests connect in bursts
    #: The stub whose replies this server sends (set by the stub).
    stub: K3Stub

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that goes away (timeout, reset test, end of test) is not a stub failure.
        if not isinstance(sys.exc_info()[1], ConnectionError | TimeoutError):
            super().handle_error(request, client_address)


class StubHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "k3stub/1.0"
    timeout = 60  # idle keep-alive connections end by themselves

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep test output clean

    @property
    def stub(self) -> K3Stub:
        server = self.server
        assert isinstance(server, StubServer)
        return server.stub

    # -- plumbing ------------------------------------------------------------------

    def _send_bytes(self, status: int, ctype: str, data: bytes, headers: dict[str, str]) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        self._send_bytes(status, "application/json", json.dumps(payload).encode(), headers or {})

    def _error(self, rec: RecordedRequest, error: ErrorReply) -> None:
        rec.status = error.status
        ctype, data = error.body()
        self._send_bytes(error.status, ctype, data, error.headers)

    def _wait(self, seconds: float) -> bool:
        """Sleep unless the stub stops; False when it stopped."""
        return not self.stub.stopping.wait(seconds) if seconds > 0 else True

    def _reset(self) -> None:
        # SO_LINGER 0 makes close() send RST: the client sees "connection reset by peer".
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.connection.close()
        self.close_connection = True

    # -- endpoints -----------------------------------------------------------------

    def do_GET(self) -> None:
        if self.path == "/_stub/requests":
            self._send_json(200, [asdict(r) for r in self.stub.requests])
        else:
            self._send_json(
                404,
                {
                    "error": {
                        "type": "resource_not_found_error",
                        "message": f"no route for GET {self.path}",
                    }
                },
            )

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length).decode("utf-8", "replace")
        if self.path == "/_stub/replies":
            self.stub.push(*(reply_from_json(r) for r in json.loads(raw)))
            self._send_json(200, {"queued": True})
            return
        headers = {k.lower(): v for k, v in self.headers.items() if k.lower() != "authorization"}
        rec = RecordedRequest("POST", self.path, headers, raw, received=time.monotonic())
        self.stub.record(rec)
        try:
            self._chat(rec, raw)
            rec.answered = time.monotonic()
        except StubError as exc:
            self._error(rec, ErrorReply(exc.status, exc.type, exc.message))
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client went away mid-answer

    def _chat(self, rec: RecordedRequest, raw: str) -> None:
        stub = self.stub
        if self.headers.get("Authorization") != f"Bearer {stub.api_key}":
            raise StubError(401, "invalid_authentication_error", "Invalid Authentication")
        if self.path != "/v1/chat/completions":
            raise StubError(404, "resource_not_found_error", f"no route for POST {self.path}")
        try:
            body = rec.body = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise StubError(400, "invalid_request_error", f"invalid JSON body: {exc}") from None
        check_fields(body)
        if body.get("model") not in stub.models:
            raise StubError(
                404,
                "resource_not_found_error",
                f"Not found the model {body.get('model')} or Permission denied",
            )
        rec.assistant_checked = check_messages(body["messages"], stub.reasoning_field, stub.sent)
        stub.count_checked(rec.assistant_checked)
        if not stub.images and image_urls(body):
            # vLLM's words when the model is served without its vision tower.
            raise StubError(
                400, "invalid_request_error", "At most 0 image(s) may be provided in one request."
            )
        prompt = prompt_text(body)
        prompt_tokens = estimate_tokens(prompt) + image_tokens(body)
        if prompt_tokens + body["max_completion_tokens"] > stub.context_window:
            raise StubError(
                400,
                "invalid_request_error",
                f"Invalid request: Your request exceeded model token limit: {stub.context_window}",
            )
        if not stub.admit():
            raise StubError(
                429,
                "rate_limit_reached_error",
                f"Your account reached its RPM limit of {stub.rate_limit}, please try again later",
            )
        usage = usage_fields(prompt_tokens, stub.cached_tokens(prompt), stub.cached_in_details)
        reply = stub.next_reply(body)
        if not self._wait(reply.delay):
            return
        if reply.error is not None:
            self._error(rec, reply.error)
            return
        answer = render(reply, body, usage)
        rec.usage = answer.usage
        if body.get("stream"):
            self._stream(rec, reply, answer, body["model"])
        else:
            pace = reply.pace()
            if pace and not self._wait(answer.usage["completion_tokens"] / pace):
                return
            self._remember(answer)
            rec.status = 200
            self._send_json(200, completion_body(answer, body["model"], stub.reasoning_field))

    def _remember(self, answer: Answer) -> None:
        if self.stub.sent is not None:
            self.stub.sent.add(answer.reasoning, answer.content, answer.tool_calls)

    def _stream(self, rec: RecordedRequest, reply: Reply, answer: Answer, model: str) -> None:
        stub = self.stub
        pace = reply.pace()
        rec.status = 200
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        start, tokens = time.monotonic(), 0
        events = stream_events(
            answer, model, stub.reasoning_field, bool(pace), stub.usage_in_choice
        )
        for sent, (event, carried) in enumerate(events):
            if sent == reply.reset_after:
                self._reset()
                return
            if sent == reply.cut_after:
                break
            if sent == reply.pause_after and not self._wait(reply.pause_seconds):
                self.close_connection = True
                return
            if pace:
                tokens += carried
                if not self._wait(start + tokens / pace - time.monotonic()):
                    self.close_connection = True
                    return
            if event["choices"][0]["finish_reason"] is not None:
                self._remember(answer)
            self._chunk(sse(event))
        else:
            self._chunk(sse("[DONE]"))
        self._chunk(b"")  # the last chunk of the HTTP body
        if reply.cut_after is not None:
            self.close_connection = True

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")

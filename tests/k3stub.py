"""A Kimi K3 protocol stub: a real HTTP server speaking K3's wire format strictly.

    with K3Stub([Reply(content="hi")]) as stub:
        client = K3Client(LLMSettings(api_key=stub.api_key, base_url=stub.base_url))

``POST /v1/chat/completions`` needs ``Authorization: Bearer <api_key>``, refuses what K3
refuses (see ``k3stub_checks``) and answers scripted :class:`Reply` objects, streaming
(SSE chunks, ``data: [DONE]``) or not. Replies come from a queue (``push``) and then from
``brain(request_body) -> Reply``. Usage is estimated at 4 characters per token; cached
tokens are the longest prefix this prompt shares with an earlier one, counted above 256
tokens as K3's automatic prefix cache does.

For other processes: ``python tests/k3stub.py --port N --script FILE.json`` prints
``K3STUB_READY <base_url>``; ``GET /_stub/requests`` returns the recorded requests and
``POST /_stub/replies`` (a JSON list of replies) queues more.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import socket
import struct
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from k3stub_checks import SentMessages, StubError, check_fields, check_messages
from k3stub_reply import ErrorReply, Reply, estimate_tokens, reply_from_json
from k3stub_wire import Answer, completion_body, render, sse, stream_events, usage_fields

__all__ = ["ErrorReply", "K3Stub", "RecordedRequest", "Reply"]

#: K3's prefix cache only counts shared prefixes longer than this many tokens.
CACHE_MIN_TOKENS = 256
CONTEXT_WINDOW = 1_048_576
DEFAULT_KEY = "sk-k3stub-test-key-0123456789"


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


def prompt_text(body: dict[str, Any]) -> str:
    """The serialised prompt, stable part first, as a prefix cache would see it."""
    head = f"{body.get('model')}|{body.get('reasoning_effort', 'max')}|"
    dumps = lambda v: json.dumps(v, ensure_ascii=False, sort_keys=True)  # noqa: E731
    return head + dumps(body.get("tools") or []) + "".join(map(dumps, body["messages"]))


def common_prefix_len(a: str, b: str) -> int:
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:  # binary search; slice comparisons run in C
        mid = (lo + hi + 1) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 512  # parallel review groups and load tests connect in bursts

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that goes away (timeout, reset test, end of test) is not a stub failure.
        if not isinstance(sys.exc_info()[1], ConnectionError | TimeoutError):
            super().handle_error(request, client_address)


class K3Stub:
    def __init__(
        self,
        replies: Iterable[Reply] = (),
        *,
        brain: Callable[[dict[str, Any]], Reply] | None = None,
        api_key: str = DEFAULT_KEY,
        models: Iterable[str] = ("kimi-k3",),
        reasoning_field: str = "reasoning_content",
        usage_in_choice: bool = False,
        cached_in_details: bool = False,
        context_window: int = CONTEXT_WINDOW,
        check_history: bool = True,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.api_key = api_key
        self.models = set(models)
        self.reasoning_field = reasoning_field
        self.usage_in_choice = usage_in_choice
        self.cached_in_details = cached_in_details
        self.context_window = context_window
        self.brain = brain
        self.sent = SentMessages() if check_history else None
        self.brain_errors: list[str] = []
        self._replies: deque[Reply] = deque(replies)
        self._requests: list[RecordedRequest] = []
        self._prompts: list[str] = []
        self._checked = 0
        self._lock = threading.Lock()
        self.stopping = threading.Event()
        self._server = _Server((host, port), _Handler)
        self._server.stub = self  # type: ignore[attr-defined]
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"

    def start(self) -> K3Stub:
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()  # ends paced streams and delays at once
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> K3Stub:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def push(self, *replies: Reply) -> None:
        with self._lock:
            self._replies.extend(replies)

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far (a copy), control endpoints excluded."""
        with self._lock:
            return list(self._requests)

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path.endswith("/chat/completions")]

    @property
    def thinking_checks(self) -> int:
        """How many earlier assistant messages came back exactly as sent (all requests)."""
        with self._lock:
            return self._checked

    # -- used by the handler -------------------------------------------------------

    def record(self, request: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(request)

    def count_checked(self, n: int) -> None:
        with self._lock:
            self._checked += n

    def cached_tokens(self, prompt: str) -> int:
        with self._lock:
            best = max((common_prefix_len(prompt, p) for p in self._prompts), default=0)
            self._prompts.append(prompt)
            del self._prompts[:-256]  # bound the work per request
        tokens = best // 4
        return tokens if tokens > CACHE_MIN_TOKENS else 0

    def next_reply(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            if self._replies:
                return self._replies.popleft()
        if self.brain is None:
            return Reply(error=ErrorReply(500, "server_error", "k3stub: no scripted reply left"))
        try:
            return self.brain(body)
        except Exception as exc:  # a broken test brain must show up, not hang the client
            self.brain_errors.append(f"{type(exc).__name__}: {exc}")
            return Reply(error=ErrorReply(500, "server_error", f"k3stub brain failed: {exc}"))


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "k3stub/1.0"
    timeout = 60  # idle keep-alive connections end by themselves

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep test output clean

    @property
    def stub(self) -> K3Stub:
        return self.server.stub  # type: ignore[attr-defined, no-any-return]

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
        rec = RecordedRequest("POST", self.path, headers, raw)
        self.stub.record(rec)
        try:
            self._chat(rec, raw)
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
        prompt = prompt_text(body)
        prompt_tokens = estimate_tokens(prompt)
        if prompt_tokens + body["max_completion_tokens"] > stub.context_window:
            raise StubError(
                400,
                "invalid_request_error",
                f"Invalid request: Your request exceeded model token limit: {stub.context_window}",
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


def _load_script(path: Path) -> tuple[list[Reply], dict[str, Any]]:
    data = json.loads(path.read_text(encoding="utf-8"))
    if isinstance(data, list):
        data = {"replies": data}
    return [reply_from_json(r) for r in data.get("replies", [])], data.get("options", {})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Kimi K3 protocol stub server")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument(
        "--script",
        type=Path,
        help="JSON: a list of replies, or "
        '{"replies": [...], "options": {K3Stub keyword arguments}}',
    )
    parser.add_argument("--key", default=DEFAULT_KEY)
    args = parser.parse_args(argv)
    replies, options = _load_script(args.script) if args.script else ([], {})
    stub = K3Stub(replies, api_key=args.key, host=args.host, port=args.port, **options)
    with stub:
        print(f"K3STUB_READY {stub.base_url}", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            threading.Event().wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""A Kimi K3 protocol stub: a real HTTP server speaking K3's wire format strictly.

    with K3Stub([Reply(content="hi")]) as stub:
        client = K3Client(LLMSettings(api_key=stub.api_key, base_url=stub.base_url))

``POST /v1/chat/completions`` needs ``Authorization: Bearer <api_key>``, refuses what K3
refuses (see ``checks``) and answers scripted :class:`Reply` objects, streaming
(SSE chunks, ``data: [DONE]``) or not. Replies come from a queue (``push``) and then from
``brain(request_body) -> Reply``. Usage is estimated at 4 characters per token; cached
tokens are the longest prefix this prompt shares with an earlier one, counted above 256
tokens as K3's automatic prefix cache does. With ``rate_limit=N`` the stub answers 429
``rate_limit_reached_error`` to a chat request when it already admitted N within the last
``rate_window`` seconds (a strict sliding window, as an account's RPM is counted);
``rate_limited`` counts those answers and ``arrivals`` holds every chat request's time.

For other processes: ``python -m tests.fakes.k3 --port N --script FILE.json`` prints
``K3STUB_READY <base_url>``; ``GET /_stub/requests`` returns the recorded requests and
``POST /_stub/replies`` (a JSON list of replies) queues more.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from tests.fakes.k3.checks import SentMessages
from tests.fakes.k3.handler import RecordedRequest, StubHandler, StubServer
from tests.fakes.k3.reply import ErrorReply, Reply, reply_from_json

__all__ = ["ErrorReply", "K3Stub", "RecordedRequest", "Reply"]

#: K3's prefix cache only counts shared prefixes longer than this many tokens.
CACHE_MIN_TOKENS = 256
CONTEXT_WINDOW = 1_048_576
DEFAULT_KEY = "sk-k3stub-test-key-0123456789"


def common_prefix_len(a: str, b: str) -> int:
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:  # binary search; slice comparisons run in C
        mid = (lo + hi + 1) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


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
        rate_limit: int | None = None,
        rate_window: float = 60.0,
        host: str = "127.0.0.1",
        port: int = 0,
        images: bool = True,
    ) -> None:
        #: False: a text-only deployment, answering 400 to a request with an image.
        self.images = images
        self.rate_limit, self.rate_window = rate_limit, rate_window
        self.rate_limited = 0
        #: ``time.monotonic()`` of every chat request that reached the rate limit check.
        self.arrivals: list[float] = []
        self._admitted: deque[float] = deque()
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
        self._server = StubServer((host, port), StubHandler)
        self._server.stub = self
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        assert isinstance(host, str)  # an AF_INET server's address is (host, port)
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

    def admit(self) -> bool:
        """Whether a chat request fits the rate limit now (it then counts against it)."""
        now = time.monotonic()
        with self._lock:
            self.arrivals.append(now)
            if self.rate_limit is None:
                return True
            while self._admitted and self._admitted[0] <= now - self.rate_window:
                self._admitted.popleft()
            if len(self._admitted) >= self.rate_limit:
                self.rate_limited += 1
                return False
            self._admitted.append(now)
            return True

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

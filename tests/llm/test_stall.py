"""A model server that never answers is an error: the stall limit (no byte for
``stall_timeout`` seconds) against real servers that go silent, before the answer and in
the middle of a stream; and the progress line keeps counting while it waits."""

from __future__ import annotations

import io
import threading

import pytest

from bot.errors import ModelStalledError
from bot.llm.client import K3Client
from bot.llm.settings import LLMSettings
from bot.render.progress import ProgressLine
from tests.fakes.k3 import K3Stub, Reply
from tests.support.silent_server import SilentServer

USER = [{"role": "user", "content": "Review this change."}]
FAKE_KEY = "-".join(["sk", "stall", "test"])


class _Terminal(io.StringIO):
    """What the progress line draws on, as if stderr were a terminal; every write kept."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[str] = []
        self._lock = threading.Lock()

    def isatty(self) -> bool:
        return True

    def write(self, text: str) -> int:
        with self._lock:
            self.writes.append(text)
        return super().write(text)


def _client(base_url: str, stall: float) -> K3Client:
    settings = LLMSettings(
        api_key=FAKE_KEY,
        base_url=base_url,
        stall_timeout=stall,
        max_retries=3,
        backoff_base=0.001,
        backoff_max=0.01,
    )
    return K3Client(settings)


def test_a_server_that_accepts_and_never_answers_is_a_stall_naming_server_and_setting() -> None:
    with SilentServer() as server:
        client = _client(server.base_url, stall=1.0)
        with pytest.raises(ModelStalledError) as caught:
            client.complete(USER, max_completion_tokens=100)
        assert server.connections == 1  # given up, not retried on the same hung server
        assert server.received > 0
    message = str(caught.value)
    assert "\n" not in message
    assert f"127.0.0.1:{server.port}" in message
    assert "stall_timeout" in message and "[review]" in message
    assert FAKE_KEY not in message


def test_a_stream_that_goes_silent_half_way_is_a_stall() -> None:
    with K3Stub([Reply(content="fine", pause_after=2, pause_seconds=30)]) as stub:
        client = K3Client(
            LLMSettings(api_key=stub.api_key, base_url=stub.base_url, stall_timeout=1.0)
        )
        with pytest.raises(ModelStalledError) as caught:
            client.complete(USER, max_completion_tokens=100)
        assert len(stub.chat_requests) == 1
    assert "stall_timeout" in str(caught.value)


def test_a_slow_but_steady_stream_is_no_stall() -> None:
    """Bytes every 0.1 s for 2 s: each gap is far below the 1 s limit."""
    reply = Reply(content="fine", think_seconds=2.0, tokens_per_second=10)
    with K3Stub([reply]) as stub:
        client = K3Client(
            LLMSettings(api_key=stub.api_key, base_url=stub.base_url, stall_timeout=1.0)
        )
        turn = client.complete(USER, max_completion_tokens=100)
    assert turn.content == "fine"


def test_the_progress_line_keeps_counting_while_the_server_is_silent() -> None:
    terminal = _Terminal()
    progress = ProgressLine(terminal)
    with SilentServer() as server:
        client = _client(server.base_url, stall=3.0)
        try:
            with pytest.raises(ModelStalledError):
                client.complete(USER, max_completion_tokens=100, on_progress=progress)
        finally:
            progress.done()
    drawn = [w for w in terminal.writes if "K3 waiting" in w]
    assert any("K3 waiting 0s" in w for w in drawn)
    # The same event, redrawn by the ticker with the time that passed since.
    assert any("K3 waiting 1s" in w or "K3 waiting 2s" in w for w in drawn), drawn
    assert terminal.writes[-1] == "\r\x1b[2K"  # and the line is cleared at the end

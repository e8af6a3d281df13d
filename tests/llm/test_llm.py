"""The K3 client against the K3 stub over real sockets."""

from __future__ import annotations

import json
import logging
import socket
import subprocess
import sys
import threading
import time
from typing import Any

import pytest

from bot.errors import (
    ConfigError,
    ContextTooLongError,
    ModelConfigError,
    ModelError,
    ModelOutputError,
    ModelQuotaError,
    ModelRequestError,
    ModelTimeoutError,
    ModelUnavailableError,
)
from bot.llm.client import K3Client
from bot.llm.settings import LLMSettings
from bot.llm.stream import TurnBuilder
from bot.llm.types import Progress
from tests.fakes.k3 import K3Stub, Reply

USER = [{"role": "user", "content": "Review this change."}]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": "Read a file of the reviewed revision.",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
        },
    }
]
ALLOWED = {"model", "messages", "max_completion_tokens", "reasoning_effort", "stream"}


def client_for(stub: K3Stub, **overrides: Any) -> K3Client:
    values: dict[str, Any] = {"api_key": stub.api_key, "base_url": stub.base_url}
    values.update(backoff_base=0.001, backoff_max=0.01, max_retries=3)
    values.update(overrides)
    return K3Client(LLMSettings(**values))


def assert_clean(exc: BaseException, key: str) -> str:
    message = str(exc)
    assert "\n" not in message and key not in message and message
    return message


# -- settings --------------------------------------------------------------------------


def test_settings_from_env() -> None:
    env = {
        "MOONSHOT_API_KEY": "sk-moon",
        "KIMI_BASE_URL": "http://k3.internal:8000/v1",
        "GITNEURAL_MODEL": "kimi-k3-preview",
        "GITNEURAL_REASONING_EFFORT": "HIGH",
    }
    s = LLMSettings.from_env(env)
    assert (s.api_key, s.base_url, s.model, s.effort) == (
        "sk-moon",
        "http://k3.internal:8000/v1",
        "kimi-k3-preview",
        "high",
    )
    assert LLMSettings.from_env({**env, "KIMI_API_KEY": "sk-kimi"}).api_key == "sk-kimi"
    d = LLMSettings.from_env({}, effort=None, max_retries=1)
    assert (d.api_key, d.base_url, d.model, d.effort, d.max_retries) == (
        None,
        "https://api.moonshot.ai/v1",
        "kimi-k3",
        "max",
        1,
    )
    assert LLMSettings.from_env({}, effort="low").effort == "low"


def test_settings_refuse_bad_values_and_never_show_the_key() -> None:
    with pytest.raises(ConfigError, match="GITNEURAL_REASONING_EFFORT"):
        LLMSettings.from_env({"GITNEURAL_REASONING_EFFORT": "medium"})
    with pytest.raises(ConfigError, match="KIMI_BASE_URL"):
        LLMSettings.from_env({"KIMI_BASE_URL": "api.moonshot.ai"})
    s = LLMSettings.from_env({"KIMI_API_KEY": "sk-secret-value"})
    assert "sk-secret-value" not in repr(s) and "sk-secret-value" not in str(s)
    assert s.require_key() == "sk-secret-value"
    with pytest.raises(ModelConfigError, match="KIMI_API_KEY") as info:
        LLMSettings(api_key=None).require_key()
    assert isinstance(info.value, ModelError)
    # Without a key the client is made (the hook may need no request at all); the first
    # request fails at once, before any network or SDK import.
    keyless = K3Client(LLMSettings(api_key="", base_url="http://127.0.0.1:9/v1"))
    with pytest.raises(ModelConfigError, match="KIMI_API_KEY"):
        keyless.complete([{"role": "user", "content": "hi"}], max_completion_tokens=16)
    assert not keyless.started


def test_importing_bot_llm_does_not_import_openai() -> None:
    code = "import sys, bot.llm.client; print('openai' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# -- answers ---------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [True, False])
def test_plain_answer(stream: bool) -> None:
    with K3Stub([Reply(content="No issues.", reasoning="I read it.")]) as stub:
        turn = client_for(stub).complete(USER, max_completion_tokens=2000, stream=stream)
        assert (turn.content, turn.reasoning, turn.finish_reason) == (
            "No issues.",
            "I read it.",
            "stop",
        )
        assert turn.tool_calls == []
        assert turn.message == {
            "role": "assistant",
            "content": "No issues.",
            "reasoning_content": "I read it.",
        }
        assert turn.usage.requests == 1 and turn.usage.completion_tokens == 3 + 3
        sent = stub.chat_requests[0].body
        assert set(sent) == ALLOWED
        assert sent["stream"] is stream and sent["max_completion_tokens"] == 2000
        assert sent["reasoning_effort"] == "max"  # as-is, outside OpenAI's usual values


@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
def test_tool_conversation_sends_assistant_messages_back_exactly(stream: bool, field: str) -> None:
    replies = [
        Reply(tool_calls=[("read_file", {"path": "a.py"}), ("read_file", {"path": "b.py"})]),
        Reply(reasoning="", tool_calls=[("read_file", {"path": "c.py"})]),
        Reply(content="Found it.", reasoning="Now I see."),
    ]
    with K3Stub(replies, reasoning_field=field) as stub:
        client = client_for(stub)
        messages = list(USER)
        ids = []
        for _ in range(3):
            turn = client.complete(messages, tools=TOOLS, max_completion_tokens=4000, stream=stream)
            assert field in turn.message and {"reasoning_content", "reasoning"} - {field} - set(
                turn.message
            )
            messages.append(turn.message)
            for call in turn.tool_calls:
                ids.append(call.id)
                assert json.loads(call.arguments)["path"].endswith(".py")
                messages.append({"role": "tool", "tool_call_id": call.id, "content": "code"})
        assert ids == ["read_file:0", "read_file:1", "read_file:2"]
        assert turn.content == "Found it."
        assert [r.status for r in stub.chat_requests] == [200, 200, 200]
        assert [r.assistant_checked for r in stub.chat_requests] == [0, 1, 2]
        assert stub.thinking_checks == 3
        assert all(set(r.body) == ALLOWED | {"tools", "tool_choice"} for r in stub.chat_requests)
        assert all(r.body["tool_choice"] == "auto" for r in stub.chat_requests)


def test_dropping_reasoning_is_refused_with_k3s_message() -> None:
    with K3Stub([Reply(tool_calls=[("read_file", {"path": "a.py"})])]) as stub:
        client = client_for(stub)
        turn = client.complete(USER, tools=TOOLS, max_completion_tokens=4000)
        stripped = {k: v for k, v in turn.message.items() if k != "reasoning_content"}
        tool = {"role": "tool", "tool_call_id": turn.tool_calls[0].id, "content": "x"}
        with pytest.raises(ModelRequestError) as info:
            client.complete([*USER, stripped, tool], tools=TOOLS, max_completion_tokens=4000)
        assert "reasoning_content is missing in assistant tool call message at index 1" in str(
            info.value
        )
        assert len(stub.chat_requests) == 2  # a 400 is not retried


def test_tool_choice_is_sent_only_with_tools() -> None:
    with K3Stub([Reply(content="a"), Reply(content="b")]) as stub:
        client = client_for(stub, effort="low")
        client.complete(USER, tools=TOOLS, tool_choice="required", max_completion_tokens=100)
        client.complete(USER, tool_choice="required", max_completion_tokens=100)
        first, second = (r.body for r in stub.chat_requests)
        assert first["tool_choice"] == "required" and first["reasoning_effort"] == "low"
        assert set(second) == ALLOWED


def test_reasoning_leaked_into_content_is_returned_as_is() -> None:
    leaked = "<think>maybe a bug</think>\nHere is my review."
    with K3Stub([Reply(content=leaked, reasoning="")]) as stub:
        turn = client_for(stub).complete(USER, max_completion_tokens=1000)
        assert turn.content == leaked and turn.message["reasoning_content"] == ""


# -- retries ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fault",
    [
        Reply.http_error(429, "engine_overloaded_error", "The engine is currently overloaded"),
        Reply.http_error(429, "rate_limit_reached_error", "Your account reached the RPM limit"),
        Reply.http_error(500, "server_error", "internal error"),
        Reply.http_error(503, "server_error", "unavailable"),
        Reply.html_error(504),
        Reply(content="partial " * 50, reset_after=4),
        Reply(content="partial " * 50, cut_after=4),
        Reply(content="x", delay=2.0),  # slower than the request timeout
    ],
    ids=["overloaded", "rate-limit", "500", "503", "504-html", "reset", "cut", "timeout"],
)
def test_retryable_faults_are_retried_then_succeed(fault: Reply) -> None:
    with K3Stub([fault, Reply(content="Recovered.")]) as stub:
        seen: list[Progress] = []
        client = client_for(stub, request_timeout=0.5)
        turn = client.complete(USER, max_completion_tokens=4000, on_progress=seen.append)
        assert turn.content == "Recovered."
        assert len(stub.chat_requests) == 2
        retrying = [p for p in seen if p.phase == "retrying"]
        assert len(retrying) == 1 and "retrying in" in retrying[0].detail
        assert seen[-1].attempt == 2
        assert client.usage.requests == 1


def test_non_streaming_is_retried_too() -> None:
    with K3Stub([Reply.html_error(502), Reply(content="ok")]) as stub:
        assert (
            client_for(stub).complete(USER, max_completion_tokens=99, stream=False).content == "ok"
        )
        assert len(stub.chat_requests) == 2


def test_retries_run_out_into_a_transient_error() -> None:
    busy = Reply.http_error(429, "engine_overloaded_error", "overloaded", retry_after=0)
    with K3Stub([busy] * 3) as stub:
        with pytest.raises(ModelUnavailableError) as info:
            client_for(stub, max_retries=2).complete(USER, max_completion_tokens=100)
        assert len(stub.chat_requests) == 3
        message = assert_clean(info.value, stub.api_key)
        assert "3 attempts" in message and "engine_overloaded_error" in message
        assert info.value.transient and info.value.retry_after == 0


def test_retry_after_is_honoured() -> None:
    busy = Reply.http_error(429, "rate_limit_reached_error", "slow down", retry_after=0.6)
    with K3Stub([busy, Reply(content="ok")]) as stub:
        start = time.monotonic()
        client_for(stub, backoff_max=5).complete(USER, max_completion_tokens=100)
        assert time.monotonic() - start >= 0.6


def test_exhausted_quota_is_never_retried() -> None:
    quota = Reply.http_error(429, "exceeded_current_quota_error", "Your account is suspended")
    with K3Stub([quota, Reply(content="never")]) as stub:
        with pytest.raises(ModelQuotaError) as info:
            client_for(stub).complete(USER, max_completion_tokens=100)
        assert len(stub.chat_requests) == 1
        assert "quota" in assert_clean(info.value, stub.api_key)
        assert not info.value.transient


# -- failures that are not retried -------------------------------------------------------


def test_wrong_key_is_a_config_error_without_the_key() -> None:
    with K3Stub() as stub:
        key = "sk-wrong-0123456789abcdef"
        client = K3Client(LLMSettings(api_key=key, base_url=stub.base_url, backoff_base=0.001))
        with pytest.raises(ModelConfigError) as info:
            client.complete(USER, max_completion_tokens=100)
        message = assert_clean(info.value, key)
        assert "rejected" in message and "KIMI_API_KEY" in message
        assert info.value.__cause__ is None
        assert len(stub.requests) == 1


@pytest.mark.parametrize("wrong", ["base_url", "model"])
def test_404_is_a_config_error(wrong: str) -> None:
    with K3Stub() as stub:
        override = {"base_url": stub.url + "/api/v9"} if wrong == "base_url" else {"model": "k2"}
        with pytest.raises(ModelConfigError) as info:
            client_for(stub, **override).complete(USER, max_completion_tokens=100)
        message = assert_clean(info.value, stub.api_key)
        assert "KIMI_BASE_URL" in message and "404" in message
        assert len(stub.requests) == 1


def test_context_too_long() -> None:
    with K3Stub(context_window=500) as stub:
        with pytest.raises(ContextTooLongError) as info:
            client_for(stub).complete(USER, max_completion_tokens=490)
        assert "token limit" in assert_clean(info.value, stub.api_key)


def test_other_4xx_keeps_the_servers_message_but_not_the_key() -> None:
    with K3Stub() as stub:
        stub.push(
            Reply.http_error(400, "invalid_request_error", f"bad\nrequest from {stub.api_key}")
        )
        with pytest.raises(ModelRequestError) as info:
            client_for(stub).complete(USER, max_completion_tokens=100)
        message = assert_clean(info.value, stub.api_key)
        assert "invalid_request_error: bad request from ***" in message


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_unknown_host_is_unavailable() -> None:
    settings = LLMSettings(api_key="sk-x", base_url="http://no-such-host.invalid/v1", max_retries=0)
    with pytest.raises(ModelUnavailableError) as info:
        K3Client(settings).complete(USER, max_completion_tokens=100)
    assert str(info.value) == (
        "cannot reach the model API at http://no-such-host.invalid/v1 (host name not found) "
        "after 1 attempt; check KIMI_BASE_URL and the network"
    )


def test_connection_refused_names_the_base_url_not_the_key() -> None:
    port = _closed_port()
    key = "sk-refused-0123456789"
    settings = LLMSettings(
        api_key=key,
        base_url=f"http://user:hunter2@127.0.0.1:{port}/v1",
        max_retries=1,
        backoff_base=0.001,
    )
    with pytest.raises(ModelUnavailableError) as info:
        K3Client(settings).complete(USER, max_completion_tokens=100)
    message = assert_clean(info.value, key)
    assert f"http://127.0.0.1:{port}/v1" in message and "connection refused" in message
    assert "hunter2" not in message and "2 attempts" in message


@pytest.mark.parametrize("stream", [True, False])
def test_length_with_empty_content_is_an_output_error(stream: bool) -> None:
    with K3Stub([Reply(content="too late", reasoning="thinking " * 100)]) as stub:
        client = client_for(stub)
        with pytest.raises(ModelOutputError) as info:
            client.complete(USER, max_completion_tokens=40, stream=stream)
        assert "max_completion_tokens (40)" in assert_clean(info.value, stub.api_key)
        assert client.usage.completion_tokens == 40  # the spent tokens still count
        assert len(stub.chat_requests) == 1


# -- usage, progress, deadline, threads --------------------------------------------------


@pytest.mark.parametrize(
    "options",
    [{}, {"usage_in_choice": True}, {"cached_in_details": True}],
    ids=["moonshot-top", "in-choice", "details"],
)
def test_usage_and_cached_tokens_accumulate(options: dict[str, Any]) -> None:
    system = {"role": "system", "content": "You review code. " * 300}
    with K3Stub([Reply(content="a"), Reply(content="b")], **options) as stub:
        client = client_for(stub)
        first = client.complete([system, *USER], max_completion_tokens=100)
        second = client.complete(
            [system, {"role": "user", "content": "Another."}], max_completion_tokens=100
        )
        assert first.usage.cached_tokens == 0 and second.usage.cached_tokens > 1000
        server = [r.usage for r in stub.chat_requests]
        assert client.usage.prompt_tokens == sum(u["prompt_tokens"] for u in server) > 2000
        assert client.usage.completion_tokens == first.usage.completion_tokens + 1 + 18
        assert client.usage.cached_tokens == second.usage.cached_tokens
        assert client.usage.requests == 2


def test_progress_reports_thinking_then_answering_throttled() -> None:
    with K3Stub([Reply(content="Answer " * 10, think_seconds=1.0)]) as stub:
        seen: list[Progress] = []
        client_for(stub).complete(USER, max_completion_tokens=4000, on_progress=seen.append)
        phases = [p.phase for p in seen]
        assert phases[0] == "waiting" and phases[-1] == "answering"
        thinking = [p for p in seen if p.phase == "thinking"]
        assert 3 <= len(thinking) <= 7  # 1 s of thinking, at most one report per 0.25 s
        tokens = [p.tokens_received for p in seen]
        assert tokens == sorted(tokens)
        answering = [p for p in seen if p.phase == "answering"]
        assert answering[0].tokens_received >= 62 and answering[0].elapsed_s >= 1.0


def test_deadline_already_passed_sends_nothing() -> None:
    with K3Stub([Reply(content="x")]) as stub:
        with pytest.raises(ModelTimeoutError):
            client_for(stub).complete(USER, max_completion_tokens=9, deadline=time.monotonic())
        assert stub.requests == []


@pytest.mark.parametrize(
    "reply",
    [Reply(content="late", delay=10), Reply(content="late", think_seconds=10)],
    ids=["silent-server", "mid-stream"],
)
def test_deadline_stops_a_request(reply: Reply) -> None:
    with K3Stub([reply]) as stub:
        start = time.monotonic()
        with pytest.raises(ModelTimeoutError) as info:
            client_for(stub).complete(
                USER, max_completion_tokens=4000, deadline=time.monotonic() + 0.4
            )
        # Stopped by the deadline, not by the answer 10 s away (a loaded machine may take
        # a few seconds to get there).
        assert 0.35 <= time.monotonic() - start < 8
        assert_clean(info.value, stub.api_key)
        assert len(stub.chat_requests) == 1


def test_deadline_cuts_retries_short() -> None:
    busy = Reply.http_error(503, "server_error", "busy", retry_after=10)
    with K3Stub([busy] * 5) as stub:
        start = time.monotonic()
        with pytest.raises(ModelTimeoutError, match="503"):
            client_for(stub, backoff_max=30).complete(
                USER, max_completion_tokens=9, deadline=time.monotonic() + 1
            )
        # Did not sleep the 10 s the server asked for past the 1 s budget; half of that is
        # a margin no loaded machine needs, and a sleep of 10 s still fails.
        assert time.monotonic() - start < 5.0
        assert len(stub.chat_requests) == 1


def test_one_client_shared_by_threads() -> None:
    with K3Stub([Reply(content=f"answer {i}") for i in range(12)]) as stub:
        client = client_for(stub)
        answers: list[str] = []

        def run() -> None:
            answers.append(client.complete(USER, max_completion_tokens=500).content)

        threads = [threading.Thread(target=run) for _ in range(12)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(answers) == sorted(f"answer {i}" for i in range(12))
        assert client.usage.requests == 12
        assert client.usage.completion_tokens == sum(
            r.usage["completion_tokens"] for r in stub.chat_requests
        )


def test_debug_logging_never_shows_the_key(caplog: pytest.LogCaptureFixture) -> None:
    with K3Stub(
        [Reply(content="ok"), Reply.http_error(401, "invalid_authentication_error")]
    ) as stub:
        client = client_for(stub)
        with caplog.at_level(logging.DEBUG):
            client.complete(USER, max_completion_tokens=100)
            with pytest.raises(ModelConfigError):
                client.complete(USER, max_completion_tokens=100)
        assert caplog.records and stub.api_key not in caplog.text


def test_turn_builder_reads_other_servers_shapes() -> None:
    # vLLM-like: both reasoning names in one delta, usage in a trailing chunk without
    # choices, cached tokens under prompt_tokens_details, tool call deltas without index.
    builder = TurnBuilder("reasoning_content")
    for chunk in [
        {"choices": [{"delta": {"role": "assistant", "reasoning_content": None}}]},
        {"choices": [{"delta": {"reasoning": "think", "reasoning_content": "think"}}]},
        {"choices": [{"delta": {"tool_calls": [{"id": "x:0", "function": {"name": "f"}}]}}]},
        {"choices": [{"delta": {"tool_calls": [{"function": {"arguments": "{}"}}]}}]},
        {"choices": [{"delta": {}, "finish_reason": "tool_calls"}]},
        {
            "choices": [],
            "usage": {
                "prompt_tokens": 9,
                "completion_tokens": 3,
                "prompt_tokens_details": {"cached_tokens": 7},
            },
        },
    ]:
        builder.add(chunk)
    turn = builder.turn()
    assert turn.reasoning == "think"  # not doubled; K3's name wins when both are sent
    assert turn.message["reasoning_content"] == "think" and "reasoning" not in turn.message
    assert [(c.id, c.name, c.arguments) for c in turn.tool_calls] == [("x:0", "f", "{}")]
    assert (turn.usage.prompt_tokens, turn.usage.cached_tokens) == (9, 7)

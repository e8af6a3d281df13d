"""The K3 stub speaks K3's wire format and refuses what K3 refuses (raw HTTP, no SDK)."""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.fakes.k3 import K3Stub, Reply
from tests.fakes.k3.stub import common_prefix_len
from tests.support.paths import ROOT

USER = [{"role": "user", "content": "Review this."}]
TOOLS = [{"type": "function", "function": {"name": "read_file", "parameters": {"type": "object"}}}]


def body(**extra: Any) -> dict[str, Any]:
    return {
        "model": "kimi-k3",
        "messages": USER,
        "max_completion_tokens": 4096,
        "reasoning_effort": "max",
        **extra,
    }


def post(
    stub: K3Stub, payload: Any, *, key: str | None = None, path: str = "/v1/chat/completions"
) -> tuple[int, dict[str, str], bytes]:
    parts = urlsplit(stub.url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    headers = {"Content-Type": "application/json"}
    headers["Authorization"] = f"Bearer {stub.api_key if key is None else key}"
    try:
        conn.request("POST", path, json.dumps(payload), headers)
        resp = conn.getresponse()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
    finally:
        conn.close()


def sse_data(raw: bytes) -> list[str]:
    text = raw.decode()
    assert text.endswith("\n\n")
    return [block.removeprefix("data: ") for block in text.strip("\n").split("\n\n")]


def chunks(raw: bytes) -> list[dict[str, Any]]:
    data = sse_data(raw)
    assert data[-1] == "[DONE]"
    return [json.loads(d) for d in data[:-1]]


def error_of(raw: bytes) -> dict[str, Any]:
    err = json.loads(raw)["error"]
    assert set(err) == {"type", "message"}
    return err


@pytest.fixture
def stub():
    with K3Stub() as s:
        yield s


def test_wrong_or_missing_key_is_401_with_k3_error_body(stub: K3Stub) -> None:
    status, _, raw = post(stub, body(), key="sk-wrong")
    assert status == 401
    assert error_of(raw)["type"] == "invalid_authentication_error"
    assert stub.requests[0].status == 401
    assert "authorization" not in stub.requests[0].headers


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        ({"temperature": 0.6}, "temperature"),
        ({"top_p": 0.9}, "top_p"),
        ({"n": 1}, "n is not supported"),
        ({"presence_penalty": 0.0}, "presence_penalty"),
        ({"frequency_penalty": 0.0}, "frequency_penalty"),
        ({"stream_options": {"include_usage": True}}, "stream_options"),
        ({"reasoning_effort": "medium"}, "reasoning_effort"),
        (
            {"tools": TOOLS, "tool_choice": {"type": "function", "function": {"name": "x"}}},
            "naming a function",
        ),
        ({"tool_choice": "auto"}, "only allowed when tools"),
        ({"max_completion_tokens": None}, "max_completion_tokens is required"),
    ],
)
def test_strict_checks_answer_400(stub: K3Stub, extra: dict[str, Any], needle: str) -> None:
    payload = {k: v for k, v in body(**extra).items() if v is not None}
    status, _, raw = post(stub, payload)
    assert status == 400
    err = error_of(raw)
    assert err["type"] == "invalid_request_error"
    assert needle in err["message"]


def test_unknown_model_is_404(stub: K3Stub) -> None:
    status, _, raw = post(stub, body(model="kimi-k9"))
    assert status == 404
    assert "kimi-k9" in error_of(raw)["message"]


def test_non_streaming_completion_object(stub: K3Stub) -> None:
    stub.push(Reply(content="Looks fine.", reasoning="r1"))
    status, headers, raw = post(stub, body())
    assert status == 200 and headers["content-type"] == "application/json"
    data = json.loads(raw)
    assert data["object"] == "chat.completion"
    choice = data["choices"][0]
    assert choice["message"] == {
        "role": "assistant",
        "content": "Looks fine.",
        "reasoning_content": "r1",
    }
    assert choice["finish_reason"] == "stop"
    usage = data["usage"]
    assert usage["completion_tokens"] == 1 + 3  # "r1" and "Looks fine." at 4 chars/token
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
    assert usage["cached_tokens"] == 0


def test_stream_is_sse_with_reasoning_then_content_then_usage_and_done(stub: K3Stub) -> None:
    stub.push(Reply(content="All good here.", reasoning="Let me read the diff carefully."))
    status, headers, raw = post(stub, body(stream=True))
    assert status == 200 and headers["content-type"] == "text/event-stream"
    assert headers["transfer-encoding"] == "chunked"
    events = chunks(raw)
    assert all(e["object"] == "chat.completion.chunk" for e in events)
    deltas = [e["choices"][0]["delta"] for e in events]
    reasoning = "".join(d.get("reasoning_content", "") for d in deltas)
    content = "".join(d.get("content", "") for d in deltas)
    assert reasoning == "Let me read the diff carefully." and content == "All good here."
    first_content = next(i for i, d in enumerate(deltas) if d.get("content"))
    assert all("reasoning_content" not in d for d in deltas[first_content:])
    assert events[-1]["choices"][0]["finish_reason"] == "stop"
    assert events[-1]["usage"]["completion_tokens"] > 0
    assert all(e["choices"][0]["finish_reason"] is None for e in events[:-1])


def test_vllm_naming_and_usage_inside_choice_and_cached_in_details() -> None:
    with K3Stub(
        [Reply(content="x")] * 2,
        reasoning_field="reasoning",
        usage_in_choice=True,
        cached_in_details=True,
    ) as stub:
        _, _, raw = post(stub, body(stream=True))
        events = chunks(raw)
        assert any("reasoning" in e["choices"][0]["delta"] for e in events)
        assert not any("reasoning_content" in e["choices"][0]["delta"] for e in events)
        usage = events[-1]["choices"][0]["usage"]
        assert "usage" not in events[-1]
        assert usage["prompt_tokens_details"] == {"cached_tokens": 0}
        _, _, raw = post(stub, body())
        assert "reasoning" in json.loads(raw)["choices"][0]["message"]


def test_tool_call_ids_count_calls_over_the_conversation(stub: K3Stub) -> None:
    stub.push(Reply(tool_calls=[("read_file", {"path": "a.py"}), ("read_file", {"path": "b"})]))
    _, _, raw = post(stub, body(tools=TOOLS, stream=True))
    events = chunks(raw)
    heads = [
        tc for e in events for tc in e["choices"][0]["delta"].get("tool_calls", []) if "id" in tc
    ]
    assert [h["id"] for h in heads] == ["read_file:0", "read_file:1"]
    assert events[-1]["choices"][0]["finish_reason"] == "tool_calls"
    args = "".join(
        tc["function"]["arguments"]
        for e in events
        for tc in e["choices"][0]["delta"].get("tool_calls", [])
        if tc["index"] == 1
    )
    assert json.loads(args) == {"path": "b"}
    assistant = {
        "role": "assistant",
        "content": None,
        "reasoning_content": Reply().reasoning,
        "tool_calls": [
            {
                "id": h["id"],
                "type": "function",
                "function": {"name": "read_file", "arguments": json.dumps(a)},
            }
            for h, a in zip(heads, [{"path": "a.py"}, {"path": "b"}], strict=True)
        ],
    }
    history = [
        *USER,
        assistant,
        {"role": "tool", "tool_call_id": "read_file:0", "content": "1"},
        {"role": "tool", "tool_call_id": "read_file:1", "content": "2"},
    ]
    stub.push(Reply(tool_calls=[("read_file", "not json {")]))
    status, _, raw = post(stub, body(tools=TOOLS, messages=history))
    assert status == 200
    call = json.loads(raw)["choices"][0]["message"]["tool_calls"][0]
    assert call["id"] == "read_file:2" and call["function"]["arguments"] == "not json {"
    assert stub.thinking_checks == 1 and stub.requests[-1].assistant_checked == 1


def _first_turn(stub: K3Stub, reply: Reply) -> dict[str, Any]:
    stub.push(reply)
    _, _, raw = post(stub, body(tools=TOOLS))
    return json.loads(raw)["choices"][0]["message"]


def _second(stub: K3Stub, assistant: dict[str, Any], tools_answered: int = 1) -> tuple[int, str]:
    answers = [{"role": "tool", "tool_call_id": "read_file:0", "content": "x"}] * tools_answered
    stub.push(Reply(content="done"))
    status, _, raw = post(stub, body(tools=TOOLS, messages=[*USER, assistant, *answers]))
    return status, (error_of(raw)["message"] if status != 200 else "")


def test_preserved_thinking_check(stub: K3Stub) -> None:
    sent = _first_turn(stub, Reply(tool_calls=[("read_file", {"path": "a"})]))
    status, message = _second(stub, {k: v for k, v in sent.items() if k != "reasoning_content"})
    assert status == 400
    assert message == (
        "thinking is enabled but reasoning_content is missing in assistant "
        "tool call message at index 1"
    )
    status, message = _second(stub, {**sent, "reasoning_content": "edited"})
    assert status == 400 and "does not match any message" in message
    changed = json.loads(json.dumps(sent))
    changed["tool_calls"][0]["function"]["arguments"] = '{"path": "b"}'
    status, message = _second(stub, changed)
    assert status == 400 and "tool_calls changed" in message
    assert _second(stub, sent, tools_answered=0)[0] == 400
    assert "exactly one tool message" in _second(stub, sent, tools_answered=2)[1]
    assert stub.thinking_checks == 0
    assert _second(stub, {**sent, "content": ""}) == (200, "")  # null and "" are the same
    assert stub.thinking_checks == 1


def test_plain_assistant_message_is_checked_by_content_too(stub: K3Stub) -> None:
    sent = _first_turn(stub, Reply(content="first answer"))
    follow = [{"role": "user", "content": "more"}]
    stub.push(Reply(content="ok"), Reply(content="ok"))
    assert post(stub, body(messages=[*USER, sent, *follow]))[0] == 200
    status, _, raw = post(stub, body(messages=[*USER, {**sent, "content": "other"}, *follow]))
    assert status == 400 and "content changed" in error_of(raw)["message"]


def test_cached_tokens_are_the_shared_prefix_above_256_tokens(stub: K3Stub) -> None:
    stub.push(*[Reply(content="ok")] * 3)
    long = [{"role": "system", "content": "stable rules " * 200}]
    first = json.loads(post(stub, body(messages=[*long, {"role": "user", "content": "a"}]))[2])
    second = json.loads(post(stub, body(messages=[*long, {"role": "user", "content": "b"}]))[2])
    short = json.loads(post(stub, body(messages=[{"role": "user", "content": "b"}]))[2])
    assert first["usage"]["cached_tokens"] == 0
    assert 600 < second["usage"]["cached_tokens"] < second["usage"]["prompt_tokens"]
    assert short["usage"]["cached_tokens"] == 0
    assert common_prefix_len("abcdef", "abcxyz") == 3 and common_prefix_len("", "a") == 0


def test_reasoning_counts_against_max_completion_tokens(stub: K3Stub) -> None:
    stub.push(Reply(content="answer", reasoning="r" * 400))
    data = json.loads(post(stub, body(max_completion_tokens=50))[2])
    choice = data["choices"][0]
    assert choice["finish_reason"] == "length"
    assert choice["message"]["content"] == "" and len(choice["message"]["reasoning_content"]) == 200
    assert data["usage"]["completion_tokens"] == 50


def test_context_window_exceeded_is_400() -> None:
    with K3Stub(context_window=1000) as stub:
        status, _, raw = post(stub, body(max_completion_tokens=990))
        assert status == 400 and "exceeded model token limit" in error_of(raw)["message"]


def test_error_replies_carry_headers_and_html_pages(stub: K3Stub) -> None:
    stub.push(
        Reply.http_error(429, "engine_overloaded_error", "busy", retry_after=3),
        Reply.html_error(504),
    )
    status, headers, raw = post(stub, body())
    assert (status, headers["retry-after"]) == (429, "3")
    assert error_of(raw) == {"type": "engine_overloaded_error", "message": "busy"}
    status, headers, raw = post(stub, body())
    assert status == 504 and headers["content-type"] == "text/html"
    assert b"<title>504 Gateway Time-out</title>" in raw


def test_cut_stream_ends_without_done(stub: K3Stub) -> None:
    stub.push(Reply(content="x" * 100, cut_after=3))
    status, _, raw = post(stub, body(stream=True))
    data = sse_data(raw)
    assert status == 200 and len(data) == 3 and "[DONE]" not in data


def test_reset_mid_stream_resets_the_connection(stub: K3Stub) -> None:
    stub.push(Reply(content="x" * 100, reset_after=2))
    with pytest.raises((ConnectionResetError, http.client.IncompleteRead)):
        post(stub, body(stream=True))


def test_delay_and_paced_thinking(stub: K3Stub) -> None:
    stub.push(Reply(content="ok", delay=0.3), Reply(content="ok", think_seconds=0.5))
    start = time.monotonic()
    post(stub, body())
    assert time.monotonic() - start >= 0.3
    start = time.monotonic()
    events = chunks(post(stub, body(stream=True))[2])
    elapsed = time.monotonic() - start
    reasoning = "".join(e["choices"][0]["delta"].get("reasoning_content", "") for e in events)
    assert len(reasoning) == 31 * 4  # 0.5 s at 62 tokens/s
    assert 0.45 <= elapsed < 3  # the stub paces its thinking; under 3 s: it did not stall


def test_brain_sees_the_request_and_its_errors_surface() -> None:
    def brain(request: dict[str, Any]) -> Reply:
        last = request["messages"][-1]["content"]
        if last == "boom":
            raise RuntimeError("brain broke")
        return Reply(content=f"you said {last}")

    with K3Stub(brain=brain) as stub:
        data = json.loads(post(stub, body(messages=[{"role": "user", "content": "hi"}]))[2])
        assert data["choices"][0]["message"]["content"] == "you said hi"
        status, _, raw = post(stub, body(messages=[{"role": "user", "content": "boom"}]))
        assert status == 500 and "brain broke" in error_of(raw)["message"]
        assert stub.brain_errors == ["RuntimeError: brain broke"]


def test_exhausted_script_is_a_500(stub: K3Stub) -> None:
    status, _, raw = post(stub, body())
    assert status == 500 and "no scripted reply" in error_of(raw)["message"]


def test_concurrent_requests_are_all_answered_and_recorded() -> None:
    with K3Stub([Reply(content=f"r{i}") for i in range(16)]) as stub:
        results: list[str] = []
        lock = threading.Lock()

        def one() -> None:
            data = json.loads(post(stub, body(stream=False))[2])
            with lock:
                results.append(data["choices"][0]["message"]["content"])

        threads = [threading.Thread(target=one) for _ in range(16)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(results) == sorted(f"r{i}" for i in range(16))
        assert len(stub.chat_requests) == 16


def test_command_line_mode_serves_a_script_to_other_processes(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps(
            {
                "replies": [{"content": "from file", "tool_calls": [["read_file", {"path": "a"}]]}],
                "options": {"reasoning_field": "reasoning"},
            }
        )
    )
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.fakes.k3",
            "--script",
            str(script),
            "--key",
            "sk-cli",
        ],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    try:
        line = proc.stdout.readline()  # type: ignore[union-attr]
        assert line.startswith("K3STUB_READY http://127.0.0.1:")
        base = urlsplit(line.split()[1])
        conn = http.client.HTTPConnection(base.hostname, base.port, timeout=10)
        conn.request(
            "POST",
            "/v1/chat/completions",
            json.dumps(body(tools=TOOLS)),
            {"Authorization": "Bearer sk-cli", "Content-Type": "application/json"},
        )
        message = json.loads(conn.getresponse().read())["choices"][0]["message"]
        assert message["content"] == "from file" and "reasoning" in message
        assert message["tool_calls"][0]["id"] == "read_file:0"
        conn.request("POST", "/_stub/replies", json.dumps([{"content": "pushed"}]))
        assert conn.getresponse().read()
        conn.request(
            "POST",
            "/v1/chat/completions",
            json.dumps(body()),
            {"Authorization": "Bearer sk-cli", "Content-Type": "application/json"},
        )
        assert json.loads(conn.getresponse().read())["choices"][0]["message"]["content"] == "pushed"
        conn.request("GET", "/_stub/requests")
        recorded = json.loads(conn.getresponse().read())
        assert [r["status"] for r in recorded] == [200, 200]
        assert all("sk-cli" not in json.dumps(r) for r in recorded)
        conn.close()
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_rate_limit_answers_429_above_n_requests_in_any_window() -> None:
    with K3Stub(brain=lambda b: Reply(content="ok"), rate_limit=2, rate_window=1.0) as stub:
        first = [post(stub, body())[0] for _ in range(3)]
        assert first == [200, 200, 429]
        status, _, raw = post(stub, body())
        assert (status, error_of(raw)["type"]) == (429, "rate_limit_reached_error")
        # A refused request does not count; the window slides from the first admitted.
        time.sleep(1.05)  # only the clock slides the stub's window; a poll would be counted
        assert [post(stub, body())[0] for _ in range(3)] == [200, 200, 429]
        assert stub.rate_limited == 3
        assert len(stub.arrivals) == 7

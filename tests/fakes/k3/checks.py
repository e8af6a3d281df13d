"""The K3 stub's strict request checks: what a real Kimi K3 refuses, and a little more.

Each failed check raises :class:`StubError`, answered as an HTTP error with K3's error
body. The preserved-thinking check compares every earlier assistant message with what
the stub really sent (``SentMessages``), so dropping or editing reasoning is caught even
where K3 itself would only notice a missing field.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Sequence
from typing import Any

#: The only top-level fields GitNeural may send; anything else is refused.
ALLOWED_FIELDS = frozenset(
    {
        "model",
        "messages",
        "max_completion_tokens",
        "reasoning_effort",
        "stream",
        "tools",
        "tool_choice",
    }
)
#: K3 fixes its sampling; sending any of these is a 400 on the real API.
SAMPLING_FIELDS = frozenset(
    {
        "temperature",
        "top_p",
        "n",
        "presence_penalty",
        "frequency_penalty",
        "top_k",
        "min_p",
        "repetition_penalty",
        "seed",
        "logit_bias",
        "best_of",
    }
)
EFFORTS = ("low", "high", "max")
TOOL_CHOICES = ("auto", "none", "required")
ROLES = ("system", "user", "assistant", "tool")


class StubError(Exception):
    def __init__(self, status: int, type: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.type = type
        self.message = message


def invalid(message: str) -> StubError:
    return StubError(400, "invalid_request_error", message)


def sent_key(reasoning: str, content: str | None, calls: Sequence[tuple[Any, Any, Any]]) -> str:
    """A canonical form of an assistant message; null and empty content are the same."""
    return json.dumps([reasoning, content or "", calls])


def _calls_of(message: dict[str, Any]) -> list[tuple[Any, Any, Any]]:
    # JSON values as the client sent them: checking their types is not this function's job.
    calls = []
    for call in message.get("tool_calls") or []:
        function = call.get("function") or {}
        calls.append((call.get("id"), function.get("name"), function.get("arguments")))
    return calls


class SentMessages:
    """Every assistant message the stub sent, to verify that they come back unchanged."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._keys: Counter[str] = Counter()
        self._by_reasoning: dict[str, list[tuple[str, list[tuple[str, str, str]]]]] = {}

    def add(self, reasoning: str, content: str, calls: list[tuple[str, str, str]]) -> None:
        with self._lock:
            self._keys[sent_key(reasoning, content, calls)] += 1
            self._by_reasoning.setdefault(reasoning, []).append((content, calls))

    def check(self, index: int, message: dict[str, Any], field: str) -> None:
        reasoning = message[field]
        calls = _calls_of(message)
        with self._lock:
            if self._keys[sent_key(reasoning, message.get("content"), calls)]:
                return
            candidates = list(self._by_reasoning.get(reasoning, []))
        if not candidates:
            raise invalid(
                f"assistant message at index {index} does not match any message the model "
                f"sent: {field} differs (preserved thinking: send it back exactly)"
            )
        content, sent_calls = candidates[0]
        changed = [
            f
            for f, same in (
                ("content", content == (message.get("content") or "")),
                ("tool_calls", sent_calls == calls),
            )
            if not same
        ]
        raise invalid(
            f"assistant message at index {index} differs from what the model sent: "
            f"{', '.join(changed)} changed (preserved thinking: send it back exactly)"
        )


def check_fields(body: Any) -> None:
    if not isinstance(body, dict):
        raise invalid("request body must be a JSON object")
    for key in body:
        if key in SAMPLING_FIELDS:
            raise invalid(
                f"{key} is not supported: kimi-k3 fixes its sampling parameters, remove {key}"
            )
        if key not in ALLOWED_FIELDS:
            raise invalid(f"unsupported parameter: {key}")
    limit = body.get("max_completion_tokens")
    if limit is None:
        raise invalid("max_completion_tokens is required (reasoning counts against it)")
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise invalid(f"max_completion_tokens must be a positive integer, not {limit!r}")
    effort = body.get("reasoning_effort", "max")
    if effort not in EFFORTS:
        raise invalid(f"reasoning_effort must be one of {', '.join(EFFORTS)}, not {effort!r}")
    if not isinstance(body.get("stream", False), bool):
        raise invalid("stream must be a boolean")
    _check_tools(body)


def _check_tools(body: dict[str, Any]) -> None:
    tools = body.get("tools")
    choice = body.get("tool_choice")
    if choice is not None:
        if choice not in TOOL_CHOICES:
            raise invalid(
                f"tool_choice must be one of {', '.join(TOOL_CHOICES)}; "
                "kimi-k3 does not support naming a function"
            )
        if not tools:
            raise invalid("tool_choice is only allowed when tools are specified")
    if tools is None:
        return
    if not isinstance(tools, list) or not tools:
        raise invalid("tools must be a non-empty list")
    names = []
    for i, tool in enumerate(tools):
        function = tool.get("function") if isinstance(tool, dict) else None
        if not isinstance(function, dict) or tool.get("type") != "function":
            raise invalid(f"tools[{i}] must be {{'type': 'function', 'function': {{...}}}}")
        if not isinstance(function.get("name"), str) or not function["name"]:
            raise invalid(f"tools[{i}].function.name is required")
        names.append(function["name"])
    if len(set(names)) != len(names):
        raise invalid("tool names must be unique")


def check_messages(messages: Any, reasoning_field: str, sent: SentMessages | None) -> int:
    """Check the conversation; return how many assistant messages were verified."""
    if not isinstance(messages, list) or not messages:
        raise invalid("messages must be a non-empty list")
    verified = 0
    for index, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in ROLES:
            raise invalid(f"messages[{index}] must have a role in {', '.join(ROLES)}")
        if message["role"] == "tool" and not isinstance(message.get("tool_call_id"), str):
            raise invalid(f"tool message at index {index} has no tool_call_id")
        if isinstance(message.get("content"), list):
            _check_parts(message["content"], index)
        if message["role"] != "assistant":
            continue
        calls = message.get("tool_calls")
        kind = "assistant tool call message" if calls else "assistant message"
        if not isinstance(message.get(reasoning_field), str):
            raise invalid(
                f"thinking is enabled but {reasoning_field} is missing in {kind} at index {index}"
            )
        if calls:
            _check_answers(messages, index, calls)
        if sent is not None:
            sent.check(index, message, reasoning_field)
        verified += 1
    return verified


def _check_answers(messages: list[Any], index: int, calls: Any) -> None:
    if not isinstance(calls, list):
        raise invalid(f"tool_calls at index {index} must be a list")
    for call in calls:
        if not isinstance(call, dict) or call.get("type") != "function":
            raise invalid(f"tool call at index {index} must have type function")
    answers: Counter[Any] = Counter()  # ids as the client sent them, of any JSON type
    for later in messages[index + 1 :]:
        if not isinstance(later, dict) or later.get("role") != "tool":
            break
        answers[later.get("tool_call_id")] += 1
    ids = [call.get("id") for call in calls]
    for call_id in ids:
        if answers[call_id] != 1:
            raise invalid(
                f"tool call {call_id} at index {index} needs exactly one tool message "
                f"answering it, found {answers[call_id]}"
            )
    extra = set(answers) - set(ids)
    if extra:
        raise invalid(f"tool messages after index {index} answer unknown ids {sorted(extra)}")


_DATA_URI = ("data:image/png;base64,", "data:image/jpeg;base64,")


def _check_parts(parts: list[Any], index: int) -> None:
    """OpenAI-style content parts: text, or an image as a base64 data URI."""
    for n, part in enumerate(parts):
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text" and isinstance(part.get("text"), str):
            continue
        url = part.get("image_url", {}).get("url") if kind == "image_url" else None
        if not isinstance(url, str) or not url.startswith(_DATA_URI):
            raise invalid(f"messages[{index}].content[{n}] is not a text or image_url part")

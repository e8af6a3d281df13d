"""Assembling K3's answers (streamed chunks or one completion) into an ``AssistantTurn``.

Read defensively: Moonshot names the reasoning ``reasoning_content``, vLLM ``reasoning``;
usage may sit at the top of the last chunk or inside ``choices[0]``; cached tokens may be
``usage.cached_tokens`` or ``usage.prompt_tokens_details.cached_tokens``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from typing import Any

from bot.llm.types import AssistantTurn, Phase, Progress, ToolCall
from bot.usage import Usage

REASONING_FIELDS = ("reasoning_content", "reasoning")
#: Live token counts are estimates: the tokenizer is not available offline.
CHARS_PER_TOKEN = 4


def _int(value: Any) -> int:
    try:
        return max(0, int(value))
    except (TypeError, ValueError):
        return 0


def usage_from(data: Any) -> Usage:
    if not isinstance(data, Mapping):
        return Usage(requests=1)
    cached = data.get("cached_tokens")
    details = data.get("prompt_tokens_details")
    if cached is None and isinstance(details, Mapping):
        cached = details.get("cached_tokens")
    return Usage(
        prompt_tokens=_int(data.get("prompt_tokens")),
        completion_tokens=_int(data.get("completion_tokens")),
        cached_tokens=_int(cached),
        requests=1,
    )


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


class TurnBuilder:
    """Collects the chunks of one streamed answer."""

    def __init__(self, reasoning_field: str) -> None:
        self.reasoning_field = reasoning_field  # replaced by the name the server uses
        self._reasoning: list[str] = []
        self._content: list[str] = []
        self._calls: dict[int, dict[str, Any]] = {}
        self._chars = 0
        self.finish_reason: str | None = None
        self.usage: Any = None
        self.phase: Phase = "waiting"

    @property
    def tokens(self) -> int:
        return math.ceil(self._chars / CHARS_PER_TOKEN)

    def add(self, chunk: Mapping[str, Any]) -> None:
        if chunk.get("usage"):
            self.usage = chunk["usage"]
        choices = chunk.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
            return
        choice = choices[0]
        if choice.get("usage"):
            self.usage = choice["usage"]
        if choice.get("finish_reason"):
            self.finish_reason = str(choice["finish_reason"])
        delta = choice.get("delta")
        if not isinstance(delta, Mapping):
            return
        for name in REASONING_FIELDS:
            piece = delta.get(name)
            if isinstance(piece, str):  # some servers send both names: take one, once
                self.reasoning_field = name
                self._take(self._reasoning, piece, "thinking")
                break
        self._take(self._content, _text(delta.get("content")), "answering")
        for position, call in enumerate(delta.get("tool_calls") or []):
            if isinstance(call, Mapping):
                self._add_call(position, call)

    def _take(self, parts: list[str], piece: str, phase: Phase) -> None:
        if piece:
            parts.append(piece)
            self._chars += len(piece)
            self.phase = phase

    def _add_call(self, position: int, delta: Mapping[str, Any]) -> None:
        index = delta.get("index")
        key = index if isinstance(index, int) else position
        call = self._calls.setdefault(key, {"id": "", "name": "", "arguments": []})
        function = delta.get("function")
        function = function if isinstance(function, Mapping) else {}
        call["id"] = call["id"] or _text(delta.get("id"))
        call["name"] = call["name"] or _text(function.get("name"))
        self._take(call["arguments"], _text(function.get("arguments")), "answering")

    def turn(self) -> AssistantTurn:
        content, reasoning = "".join(self._content), "".join(self._reasoning)
        calls = [
            ToolCall(c["id"] or f"call_{i}", c["name"], "".join(c["arguments"]))
            for i, c in sorted(self._calls.items())
        ]
        message: dict[str, Any] = {
            "role": "assistant",
            "content": content,
            self.reasoning_field: reasoning,
        }
        if calls:
            message["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments},
                }
                for c in calls
            ]
        return AssistantTurn(
            message, content, reasoning, calls, self.finish_reason, usage_from(self.usage)
        )


def turn_from_completion(data: Mapping[str, Any], reasoning_field: str) -> AssistantTurn | None:
    """The turn in a non-streamed chat.completion, or None when it holds no message."""
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
        return None
    choice = choices[0]
    received = choice.get("message")
    if not isinstance(received, Mapping):
        return None
    field = next((f for f in REASONING_FIELDS if isinstance(received.get(f), str)), None)
    field = field or reasoning_field
    message: dict[str, Any] = {
        "role": received.get("role") or "assistant",
        "content": received.get("content"),
        field: _text(received.get(field)),
    }
    calls: list[ToolCall] = []
    raw_calls = received.get("tool_calls")
    if isinstance(raw_calls, list) and raw_calls:
        message["tool_calls"] = raw_calls  # as received: K3 checks them on the next turn
        for call in raw_calls:
            function = call.get("function") if isinstance(call, Mapping) else None
            function = function if isinstance(function, Mapping) else {}
            call_id = _text(call.get("id")) if isinstance(call, Mapping) else ""
            calls.append(
                ToolCall(call_id, _text(function.get("name")), _text(function.get("arguments")))
            )
    usage = data.get("usage") or choice.get("usage")
    finish = choice.get("finish_reason")
    return AssistantTurn(
        message,
        _text(received.get("content")),
        _text(received.get(field)),
        calls,
        str(finish) if finish else None,
        usage_from(usage),
    )


class ProgressEmitter:
    """Calls ``on_progress`` on phase changes and at most every ``interval`` seconds."""

    def __init__(
        self, callback: Callable[[Progress], None] | None, started: float, interval: float = 0.25
    ) -> None:
        self._callback = callback
        self._started = started
        self._interval = interval
        self._last_time = -math.inf
        self._last_phase: Phase | None = None

    def emit(self, phase: Phase, tokens: int, attempt: int, detail: str = "") -> None:
        if self._callback is None:
            return
        now = time.monotonic()
        if phase == self._last_phase and now - self._last_time < self._interval and not detail:
            return
        self._last_time, self._last_phase = now, phase
        self._callback(Progress(phase, now - self._started, tokens, attempt, detail))

"""What the K3 stub answers: scripted replies, injected faults, and the token estimate.

A :class:`Reply` is one model answer (reasoning, content, tool calls) or one fault (an
HTTP error, an HTML error page, a delay, a stream cut or reset). Replies can also be read
from JSON (``reply_from_json``) so a stub in another process can be scripted from a file.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

#: K3's real tokenizer is not available offline; the stub counts one token per 4
#: characters of text. Good enough for budgets, usage totals and the prefix cache.
CHARS_PER_TOKEN = 4

#: Pace of K3's output when a reply asks for realistic latency.
DEFAULT_TOKENS_PER_SECOND = 62.0

DEFAULT_REASONING = "The user wants a careful answer. Let me think it through step by step."

GATEWAY_TIMEOUT_HTML = (
    "<html>\r\n<head><title>504 Gateway Time-out</title></head>\r\n<body>\r\n"
    "<center><h1>504 Gateway Time-out</h1></center>\r\n<hr><center>nginx</center>\r\n"
    "</body>\r\n</html>\r\n"
)


def estimate_tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN)


@dataclass
class ErrorReply:
    """An HTTP error answer. ``html`` replaces the JSON error body with a page."""

    status: int
    type: str = "server_error"
    message: str = "stub error"
    headers: dict[str, str] = field(default_factory=dict)
    html: str | None = None

    def body(self) -> tuple[str, bytes]:
        """Content type and body bytes as K3 (or the proxy in front of it) sends them."""
        if self.html is not None:
            return "text/html", self.html.encode()
        payload = {"error": {"type": self.type, "message": self.message}}
        return "application/json", json.dumps(payload).encode()


@dataclass
class Reply:
    """One scripted answer of the stub model.

    ``tool_calls`` holds ``(name, arguments)`` pairs; a dict is JSON-encoded, a string is
    sent raw (to script arguments that are not JSON). ``finish_reason`` defaults to
    ``tool_calls`` or ``stop``. Faults: ``error`` answers an HTTP error instead; ``delay``
    waits before any byte of the answer; ``think_seconds`` streams reasoning for that long
    at ``tokens_per_second`` (default 62/s, filler text is added as needed);
    ``cut_after`` ends the stream body after that many chunks without ``[DONE]``;
    ``reset_after`` resets the TCP connection after that many chunks; ``pause_after``
    goes silent for ``pause_seconds`` after that many chunks (a stalled stream).
    """

    content: str = ""
    reasoning: str = DEFAULT_REASONING
    tool_calls: list[tuple[str, dict[str, Any] | str]] = field(default_factory=list)
    finish_reason: str | None = None
    error: ErrorReply | None = None
    delay: float = 0.0
    think_seconds: float = 0.0
    tokens_per_second: float | None = None
    cut_after: int | None = None
    reset_after: int | None = None
    pause_after: int | None = None
    pause_seconds: float = 0.0

    @classmethod
    def http_error(
        cls,
        status: int,
        type: str = "server_error",
        message: str = "stub error",
        *,
        retry_after: float | None = None,
        headers: dict[str, str] | None = None,
    ) -> Reply:
        extra = dict(headers or {})
        if retry_after is not None:
            extra["retry-after"] = f"{retry_after:g}"
        return cls(error=ErrorReply(status, type, message, extra))

    @classmethod
    def html_error(cls, status: int = 504, html: str = GATEWAY_TIMEOUT_HTML) -> Reply:
        return cls(error=ErrorReply(status, html=html))

    def pace(self) -> float | None:
        """Tokens per second to stream at, or None for as fast as possible."""
        if self.tokens_per_second:
            return self.tokens_per_second
        return DEFAULT_TOKENS_PER_SECOND if self.think_seconds > 0 else None

    def full_reasoning(self) -> str:
        """The reasoning text, padded with filler to last ``think_seconds``."""
        pace = self.pace()
        if not self.think_seconds or pace is None:
            return self.reasoning
        wanted_chars = int(self.think_seconds * pace) * CHARS_PER_TOKEN
        filler = " Let me check that once more."
        text = self.reasoning
        while len(text) < wanted_chars:
            text += filler
        return text[: max(wanted_chars, len(self.reasoning))]

    def encoded_tool_calls(self) -> list[tuple[str, str]]:
        return [
            (name, args if isinstance(args, str) else json.dumps(args))
            for name, args in self.tool_calls
        ]


def _tool_calls_from_json(raw: Any) -> list[tuple[str, dict[str, Any] | str]]:
    calls: list[tuple[str, dict[str, Any] | str]] = []
    for item in raw or []:
        if isinstance(item, dict):
            calls.append((str(item["name"]), item.get("arguments", {})))
        else:
            name, args = item
            calls.append((str(name), args))
    return calls


def reply_from_json(data: dict[str, Any]) -> Reply:
    """Build a Reply from its JSON form (the fields of :class:`Reply`)."""
    known = set(Reply.__dataclass_fields__)
    unknown = set(data) - known
    if unknown:
        raise ValueError(f"unknown reply fields {sorted(unknown)} (known: {sorted(known)})")
    values = dict(data)
    if "tool_calls" in values:
        values["tool_calls"] = _tool_calls_from_json(values["tool_calls"])
    if values.get("error") is not None:
        values["error"] = ErrorReply(**values["error"])
    return Reply(**values)

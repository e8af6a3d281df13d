"""The values the K3 client hands back, and the interface every model client offers.

The core depends on :class:`ModelClient` only, never on the client itself.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from bot.domain.route import Endpoint
from bot.effort import Effort
from bot.usage import Usage

ToolChoice = Literal["auto", "none", "required"]
Phase = Literal["waiting", "thinking", "answering", "retrying"]


@dataclass
class ToolCall:
    id: str  # opaque, e.g. "read_file:0"; the tool message must answer with it
    name: str
    arguments: str  # as the model wrote it: usually JSON, not guaranteed


@dataclass
class AssistantTurn:
    #: The assistant message exactly as it must be appended to ``messages`` for the next
    #: turn (preserved thinking): role, content, the reasoning field under the name the
    #: server used (even ""), and tool_calls when present.
    message: dict[str, Any]
    content: str
    reasoning: str
    tool_calls: list[ToolCall]
    finish_reason: str | None
    usage: Usage = field(default_factory=Usage)


@dataclass
class Progress:
    phase: Phase
    elapsed_s: float
    tokens_received: int  # an estimate while streaming: reasoning + content + tool arguments
    attempt: int
    detail: str = ""  # e.g. "429 engine_overloaded_error, retrying in 2.1s"


class ModelClient(Protocol):
    model: str
    effort: Effort
    usage: Usage  # cumulative over the client's life

    def complete(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None = None,
        tool_choice: ToolChoice = "auto",
        max_completion_tokens: int,
        deadline: float | None = None,
        on_progress: Callable[[Progress], None] | None = None,
        stream: bool = True,
    ) -> AssistantTurn: ...

    def for_route(self, effort: Effort, endpoint: Endpoint) -> ModelClient:
        """A client of the same deployment at ``effort`` on ``endpoint`` (a route's)."""
        ...

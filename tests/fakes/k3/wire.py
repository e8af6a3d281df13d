"""The K3 stub's answers on the wire: chat.completion objects and SSE chunk sequences.

``render`` turns a scripted :class:`Reply` into what the model "said" for one request
(tool-call ids ``name:index`` counted over the conversation, reasoning counted against
``max_completion_tokens`` as K3 does); ``completion_body`` and ``stream_events`` format it
the way Moonshot's API does.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from tests.fakes.k3.reply import CHARS_PER_TOKEN, Reply, estimate_tokens

#: Characters per SSE chunk when a reply is not paced (paced replies send one token).
UNPACED_PIECE = 16


@dataclass
class Answer:
    """What the stub model answers to one request, after the token limit."""

    reasoning: str
    content: str
    tool_calls: list[tuple[str, str, str]]  # (id, name, arguments)
    finish_reason: str
    usage: dict[str, Any]

    def message(self, reasoning_field: str) -> dict[str, Any]:
        message: dict[str, Any] = {
            "role": "assistant",
            # Like OpenAI-compatible servers, a tool-call-only message has null content.
            "content": self.content if self.content or not self.tool_calls else None,
            reasoning_field: self.reasoning,
        }
        if self.tool_calls:
            message["tool_calls"] = [
                {"id": cid, "type": "function", "function": {"name": name, "arguments": args}}
                for cid, name, args in self.tool_calls
            ]
        return message


def count_earlier_calls(messages: list[dict[str, Any]]) -> int:
    return sum(len(m.get("tool_calls") or []) for m in messages if m.get("role") == "assistant")


def render(reply: Reply, body: dict[str, Any], usage: dict[str, Any]) -> Answer:
    """Apply the scripted reply to this request; ``usage`` gets completion_tokens."""
    first = count_earlier_calls(body["messages"])
    calls = [
        (f"{name}:{first + i}", name, args)
        for i, (name, args) in enumerate(reply.encoded_tool_calls())
    ]
    reasoning, content = reply.full_reasoning(), reply.content
    finish = reply.finish_reason or ("tool_calls" if calls else "stop")
    used = estimate_tokens(reasoning) + estimate_tokens(content)
    used += sum(estimate_tokens(args) for _, _, args in calls)
    budget = body["max_completion_tokens"]
    if used > budget:
        # K3 counts reasoning in max_completion_tokens: the answer is cut where it ran out.
        chars = budget * CHARS_PER_TOKEN
        content = content[: max(0, chars - len(reasoning))]
        reasoning = reasoning[:chars]
        calls, finish, used = [], "length", budget
    usage = dict(usage)
    usage["completion_tokens"] = used
    usage["total_tokens"] = usage["prompt_tokens"] + used
    return Answer(reasoning, content, calls, finish, usage)


def usage_fields(prompt_tokens: int, cached_tokens: int, cached_in_details: bool) -> dict[str, Any]:
    usage: dict[str, Any] = {"prompt_tokens": prompt_tokens}
    if cached_in_details:  # vLLM / OpenAI style
        usage["prompt_tokens_details"] = {"cached_tokens": cached_tokens}
    else:  # Moonshot style
        usage["cached_tokens"] = cached_tokens
    return usage


def _envelope(kind: str, model: str, cid: str) -> dict[str, Any]:
    return {"id": cid, "object": kind, "created": int(time.time()), "model": model}


def completion_body(answer: Answer, model: str, reasoning_field: str) -> dict[str, Any]:
    body = _envelope("chat.completion", model, f"chatcmpl-{uuid.uuid4().hex[:24]}")
    body["choices"] = [
        {
            "index": 0,
            "message": answer.message(reasoning_field),
            "finish_reason": answer.finish_reason,
        }
    ]
    body["usage"] = answer.usage
    return body


def _pieces(text: str, size: int) -> Iterator[str]:
    for start in range(0, len(text), size):
        yield text[start : start + size]


def stream_events(
    answer: Answer, model: str, reasoning_field: str, paced: bool, usage_in_choice: bool
) -> Iterator[tuple[dict[str, Any], int]]:
    """Yield (chunk, tokens it carries) in the order Moonshot streams them."""
    size = CHARS_PER_TOKEN if paced else UNPACED_PIECE
    cid = f"chatcmpl-{uuid.uuid4().hex[:24]}"

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        event = _envelope("chat.completion.chunk", model, cid)
        event["choices"] = [{"index": 0, "delta": delta, "finish_reason": finish}]
        return event

    yield chunk({"role": "assistant", "content": ""}), 0
    for piece in _pieces(answer.reasoning, size):
        yield chunk({reasoning_field: piece}), estimate_tokens(piece)
    for piece in _pieces(answer.content, size):
        yield chunk({"content": piece}), estimate_tokens(piece)
    for index, (call_id, name, args) in enumerate(answer.tool_calls):
        head = {"index": index, "id": call_id, "type": "function"}
        head["function"] = {"name": name, "arguments": ""}
        yield chunk({"tool_calls": [head]}), 1
        for piece in _pieces(args, size):
            delta = {"tool_calls": [{"index": index, "function": {"arguments": piece}}]}
            yield chunk(delta), estimate_tokens(piece)
    final = chunk({}, answer.finish_reason)
    if usage_in_choice:  # Moonshot puts the stream's usage inside choices[0]
        final["choices"][0]["usage"] = answer.usage
    else:
        final["usage"] = answer.usage
    yield final, 0


def sse(event: dict[str, Any] | str) -> bytes:
    data = event if isinstance(event, str) else json.dumps(event, ensure_ascii=False)
    return f"data: {data}\n\n".encode()

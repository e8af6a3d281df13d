"""Helpers for agentic-review tests: a K3 client on the stub, and what a brain reads.

A stub *brain* is a function of the request body that returns the next :class:`Reply`;
these helpers let it read the conversation the way a model would: the first user
message (the diff and related code), and the tool results so far.
"""

from __future__ import annotations

import json
from typing import Any

from bot.effort import Effort
from bot.llm.client import K3Client
from bot.llm.settings import LLMSettings
from bot.settings.repository import Config
from tests.fakes.k3 import K3Stub, Reply


def client_for(stub: K3Stub, effort: Effort = "max") -> K3Client:
    return K3Client(
        LLMSettings(api_key=stub.api_key, base_url=stub.base_url, effort=effort, backoff_base=0.01)
    )


def config(**agent: Any) -> Config:
    cfg = Config()
    for key, value in agent.items():
        section, _, name = key.partition("__")
        setattr(getattr(cfg, section), name, value)
    return cfg


def call(name: str, **arguments: Any) -> tuple[str, dict[str, Any]]:
    return (name, arguments)


def submit(summary: str = "Reviewed.", findings: list[dict[str, Any]] | None = None) -> Reply:
    return Reply(
        reasoning="I have what I need; submitting.",
        tool_calls=[("submit_review", {"summary": summary, "findings": findings or []})],
    )


def tools_reply(*calls: tuple[str, dict[str, Any]], reasoning: str = "Let me look.") -> Reply:
    return Reply(reasoning=reasoning, tool_calls=list(calls))


def user_text(body: dict[str, Any]) -> str:
    """The first user message: the change under review (its text parts, with images)."""
    content = next(m["content"] for m in body["messages"] if m["role"] == "user")
    if isinstance(content, list):
        return "\n".join(p["text"] for p in content if p.get("type") == "text")
    return str(content)


def tool_results(body: dict[str, Any]) -> dict[str, str]:
    """``tool_call_id -> content`` of every tool message so far."""
    return {m["tool_call_id"]: str(m["content"]) for m in body["messages"] if m["role"] == "tool"}


def calls_made(body: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    """``(id, name, arguments)`` of every tool call the model made so far."""
    out = []
    for message in body["messages"]:
        for tc in message.get("tool_calls") or []:
            fn = tc["function"]
            try:
                args = json.loads(fn["arguments"])
            except ValueError:
                args = {}
            out.append((tc["id"], fn["name"], args))
    return out


def results_by_call(body: dict[str, Any]) -> list[tuple[str, dict[str, Any], str]]:
    """``(name, arguments, result)`` for each answered tool call, in order."""
    results = tool_results(body)
    return [(name, args, results[cid]) for cid, name, args in calls_made(body) if cid in results]


def notices(body: dict[str, Any]) -> list[str]:
    """User messages after the first: budget notices and repair requests."""
    users = [str(m["content"]) for m in body["messages"] if m["role"] == "user"]
    return users[1:]

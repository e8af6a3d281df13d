"""The conversation with K3: one-shot or agentic, always ending in one final tool call.

A review ends in ``submit_review``; a reply in a thread or an answer to ``/ask`` ends in
their own tool (:class:`FinalTool` says which, and how its arguments are read).

Every assistant message goes back into ``messages`` exactly as received (preserved
thinking: K3 answers 400 otherwise), every tool call gets exactly one ``tool`` message,
and the tool list and effort stay the same for the whole conversation so K3's prefix cache
keeps serving the stable start of the prompt. The model may answer in ``content`` instead
of calling the tool; that is parsed defensively. A bad submission gets one repair turn.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

from bot.errors import ModelOutputError, ModelTimeoutError
from bot.llm.types import ModelClient, Progress, ToolCall
from bot.review.agent.final import FinalTool, review_final
from bot.review.findings.submission import Submission, SubmissionError
from bot.settings.repository import AgentSettings
from bot.usage import Usage

T = TypeVar("T")

#: Turns the model gets after being told its budget is spent, before the review fails.
_GRACE_TURNS = 2
#: Tool calls of one turn run at once (they only read the snapshot).
_TOOL_THREADS = 8


class ToolRunner(Protocol):
    """The read-only repository tools (``bot.review.tools.toolbox.RepoTools``)."""

    def definitions(self) -> list[dict[str, Any]]: ...

    def call(self, name: str, arguments: str) -> str: ...


@dataclass
class LoopBudget:
    max_turns: int = 8
    max_tool_calls: int = 40
    #: Prompt plus completion tokens over the whole conversation.
    max_tokens: int = 600_000
    #: ``time.monotonic()`` deadline for the whole conversation, or None.
    deadline: float | None = None
    #: Seconds before the deadline kept for the final ``submit_review`` turn: the model
    #: is told to submit once less than this is left.
    reserve_s: float = 30.0

    @classmethod
    def for_agent(cls, agent: AgentSettings, deadline: float | None) -> LoopBudget:
        """The repository's ``[agent]`` limits, ending at ``agent.max_seconds`` from now or
        at ``deadline`` (``time.monotonic()``), whichever comes first."""
        started = time.monotonic()
        until = started + agent.max_seconds
        if deadline is not None:
            until = min(until, deadline)
        return cls(
            max_turns=agent.max_turns,
            max_tool_calls=agent.max_tool_calls,
            max_tokens=agent.max_tokens,
            deadline=until,
            # A short budget (the hook's) cannot keep 30 s back for the last turn.
            reserve_s=min(30.0, max(0.0, until - started) / 4),
        )


@dataclass
class LoopStats:
    turns: int = 0
    tool_calls: int = 0
    tokens: int = 0
    repaired: bool = False
    budget_notice: bool = False
    #: The turn count when the model was told to submit.
    notice_turn: int = 0
    tool_names: list[str] = field(default_factory=list)
    #: This conversation's own usage (a client may be shared by concurrent reviews).
    usage: Usage = field(default_factory=Usage)


def _budget_spent(budget: LoopBudget, stats: LoopStats) -> str | None:
    if stats.turns >= budget.max_turns - 1:
        return f"the turn budget ({budget.max_turns})"
    if stats.tool_calls >= budget.max_tool_calls:
        return f"the tool-call budget ({budget.max_tool_calls})"
    if stats.tokens >= budget.max_tokens:
        return f"the token budget ({budget.max_tokens:,})"
    if budget.deadline is not None and budget.deadline - time.monotonic() < budget.reserve_s:
        return "the time budget"
    return None


def _tool_message(call: ToolCall, text: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call.id, "name": call.name, "content": text}


def _run_tools(
    runner: ToolRunner | None,
    calls: list[ToolCall],
    refuse: str | None,
    allowed: int,
    final: FinalTool[Any],
) -> dict[str, str]:
    """Results of the non-submit calls of one turn, run concurrently (they only read).

    Only the first ``allowed`` calls run: a turn asking for more than the budget left
    (a prompt injection can ask for thousands) gets refusals for the rest.
    """
    if not calls:
        return {}
    if refuse is not None or runner is None:
        reason = refuse or f"no repository tools are available in this {final.noun}"
        return {c.id: f"error: {reason}; call {final.name} now" for c in calls}
    results = {
        c.id: f"error: the tool-call budget is spent; call {final.name} now"
        for c in calls[allowed:]
    }
    run = calls[:allowed]
    if len(run) == 1:
        results[run[0].id] = runner.call(run[0].name, run[0].arguments)
    elif run:
        with ThreadPoolExecutor(max_workers=min(_TOOL_THREADS, len(run))) as pool:
            futures = {c.id: pool.submit(runner.call, c.name, c.arguments) for c in run}
            results.update({cid: fut.result() for cid, fut in futures.items()})
    return results


def converse(
    client: ModelClient,
    messages: list[dict[str, Any]],
    *,
    tools: ToolRunner | None,
    budget: LoopBudget,
    max_completion_tokens: int,
    on_progress: Callable[[Progress], None] | None = None,
    offer: Sequence[dict[str, Any]] | None = None,
) -> tuple[Submission, LoopStats]:
    """Run the conversation until the model submits a valid review; ``messages`` grows."""
    return converse_until(
        review_final(),
        client,
        messages,
        tools=tools,
        budget=budget,
        max_completion_tokens=max_completion_tokens,
        on_progress=on_progress,
        offer=offer,
    )


def converse_until(
    final: FinalTool[T],
    client: ModelClient,
    messages: list[dict[str, Any]],
    *,
    tools: ToolRunner | None,
    budget: LoopBudget,
    max_completion_tokens: int,
    on_progress: Callable[[Progress], None] | None = None,
    offer: Sequence[dict[str, Any]] | None = None,
) -> tuple[T, LoopStats]:
    """Run the conversation until the model makes a valid ``final`` call; ``messages``
    grows.

    ``offer``: the whole tool list to send (None: ``final``, then the repository tools).
    A conversation that goes on after its first final call (``review.verify``) sends the
    same list in every request, so K3's prefix cache serves everything before; a call to
    an offered tool that is neither ``final`` nor a repository tool is told to wait.
    """
    offered = list(offer) if offer else [final.definition] + (tools.definitions() if tools else [])
    repo_names = {_name(d) for d in tools.definitions()} if tools else set()
    idle = {_name(d) for d in offered} - repo_names - {final.name}
    stats = LoopStats()
    spent: str | None = None
    while True:
        if budget.deadline is not None and time.monotonic() >= budget.deadline:
            raise ModelTimeoutError(f"the {final.noun}'s time budget ran out before K3 submitted")
        spent = spent or (_budget_spent(budget, stats) if tools else None)
        if spent and not stats.budget_notice:
            stats.budget_notice = True
            stats.notice_turn = stats.turns
            messages.append(
                {
                    "role": "user",
                    "content": f"You have used {spent}. Call {final.name} now with "
                    f"{final.what_you_have}; do not call any other tool.",
                }
            )
        elif stats.budget_notice and stats.turns >= stats.notice_turn + _GRACE_TURNS:
            raise ModelOutputError(
                f"K3 did not submit a {final.noun} within {stats.turns} turns ({spent})"
            )
        turn = client.complete(
            messages,
            tools=offered,
            tool_choice="required" if (tools is None or spent) else "auto",
            max_completion_tokens=max_completion_tokens,
            deadline=budget.deadline,
            on_progress=on_progress,
        )
        messages.append(turn.message)
        stats.turns += 1
        stats.tokens += turn.usage.prompt_tokens + turn.usage.completion_tokens
        stats.usage.add(turn.usage)
        if not turn.tool_calls:
            found = final.extract(turn.content)
            if found is not None:
                return found, stats
            _need_repair(stats, f"K3 answered without calling {final.name}", final)
            messages.append(
                {
                    "role": "user",
                    "content": f"Answer by calling the {final.name} function with your "
                    f"{final.noun}.",
                }
            )
            continue
        outcome = _handle_calls(final, turn.tool_calls, tools, spent, messages, stats, budget, idle)
        if outcome.result:
            return outcome.result[0], stats
        if outcome.error is not None:
            _need_repair(stats, outcome.error, final)


@dataclass
class _TurnOutcome(Generic[T]):
    #: The final tool's result, once it was called validly.
    result: list[T] = field(default_factory=list)
    #: The problem that calls for the repair turn.
    error: str | None = None


def _handle_calls(
    final: FinalTool[T],
    calls: list[ToolCall],
    tools: ToolRunner | None,
    spent: str | None,
    messages: list[dict[str, Any]],
    stats: LoopStats,
    budget: LoopBudget,
    idle: set[str],
) -> _TurnOutcome[T]:
    """Answer every tool call of one turn, in order; parse a ``final`` call if any."""
    waiting = {c.id for c in calls if c.name in idle}
    others = [c for c in calls if c.name != final.name and c.id not in waiting]
    allowed = max(0, budget.max_tool_calls - stats.tool_calls)
    refuse = f"you have used {spent}" if spent else None
    results = _run_tools(tools, others, refuse, allowed, final)
    stats.tool_calls += len(others)
    stats.tool_names.extend(c.name for c in others)
    outcome: _TurnOutcome[T] = _TurnOutcome()
    if others and tools is None:
        outcome.error = f"K3 called a tool that a one-shot {final.noun} does not offer"
    for call in calls:
        if call.id in waiting:
            messages.append(_tool_message(call, f"error: not now; call {final.name}"))
            continue
        if call.name != final.name:
            messages.append(_tool_message(call, results[call.id]))
            continue
        if outcome.result:
            messages.append(_tool_message(call, f"ignored: the {final.noun} was already submitted"))
            continue
        try:
            outcome.result.append(final.parse(call.arguments))
            messages.append(_tool_message(call, f"{final.noun} received"))
        except SubmissionError as exc:
            outcome.error = str(exc)
            messages.append(_tool_message(call, final.repair(exc)))
    return outcome


def _name(definition: dict[str, Any]) -> str:
    return str(definition["function"]["name"])


def _need_repair(stats: LoopStats, problem: str, final: FinalTool[Any]) -> None:
    if stats.repaired:
        raise ModelOutputError(f"K3's {final.noun} was unusable after one repair turn: {problem}")
    stats.repaired = True

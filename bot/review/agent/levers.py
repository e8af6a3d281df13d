"""One prompt of a review through the levers against noise: ``review.passes`` independent
conversations over it, their findings voted on, then ``review.verify`` asking K3 to
confirm or refute them.

Passes run one after another, so from the second on K3's prefix cache (and the stub's)
holds the whole prompt: a pass costs its completion tokens and little uncached prompt.
The first pass's summary and walkthrough speak for the review. Verification continues the
first pass's conversation, with the majority's findings. With one pass and verify off,
this is the one conversation of before, request for request.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from bot.domain.results import Finding
from bot.errors import ModelConfigError, ModelError, ModelQuotaError
from bot.llm.types import ModelClient, Progress
from bot.review.agent.loop import LoopBudget, LoopStats, ToolRunner, converse
from bot.review.agent.verify import verdicts_tool, verify
from bot.review.findings.majority import majority
from bot.review.findings.submission import Submission
from bot.review.prompt import submit_review_tool
from bot.settings.repository import VerifyMode

__all__ = ["NO_LEVERS", "GroupReview", "Levers", "review_tools", "run_levers"]


@dataclass(frozen=True)
class Levers:
    """``review.verify`` and ``review.passes``."""

    verify: VerifyMode = "off"
    passes: int = 1


#: One pass, no verification: the review as it always was.
NO_LEVERS = Levers()


def review_tools(levers: Levers, repo_tools: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The tool list of every request of a review (and of its verification)."""
    answer = [submit_review_tool()]
    if levers.verify != "off":
        answer.append(verdicts_tool())
    return answer + list(repo_tools)


@dataclass
class GroupReview:
    """One prompt reviewed: what the levers kept, and what they dropped, with reasons."""

    submission: Submission
    #: The first pass's statistics; their usage covers every pass and the verification.
    stats: LoopStats
    dropped: list[tuple[Finding, str]] = field(default_factory=list)
    #: Sentences for the summary (passes run, a verification that failed).
    notes: list[str] = field(default_factory=list)


def run_levers(
    client: ModelClient,
    messages: Sequence[dict[str, Any]],
    levers: Levers,
    *,
    tools: ToolRunner | None,
    budget: LoopBudget,
    max_completion_tokens: int,
    on_progress: Callable[[Progress], None] | None = None,
) -> GroupReview:
    """Review ``messages`` (the planned prompt, not modified) as ``levers`` say."""
    offer = review_tools(levers, tools.definitions() if tools else [])
    conversations: list[list[dict[str, Any]]] = []
    outcomes: list[tuple[Submission, LoopStats]] = []
    errors: list[ModelError] = []
    for _ in range(max(1, levers.passes)):
        conversation = list(messages)
        try:
            outcome = converse(
                client,
                conversation,
                tools=tools,
                budget=dataclasses.replace(budget),
                max_completion_tokens=max_completion_tokens,
                on_progress=on_progress,
                offer=offer,
            )
        except (ModelConfigError, ModelQuotaError):
            raise
        except ModelError as error:
            if levers.passes == 1:
                raise
            errors.append(error)
            continue
        conversations.append(conversation)
        outcomes.append(outcome)
    if not outcomes:
        raise errors[0]
    first, stats = outcomes[0]
    for _, other in outcomes[1:]:
        stats.usage.add(other.usage)
    findings = first.findings
    dropped: list[tuple[Finding, str]] = []
    notes: list[str] = []
    if levers.passes > 1:
        findings, dropped = majority([s.findings for s, _ in outcomes])
        failed = f" ({len(errors)} failed)" if errors else ""
        notes.append(
            f"Reviewed in {levers.passes} independent passes{failed}: {len(findings)} "
            f"finding(s) reported by most of them kept, {len(dropped)} dropped."
        )
    checked = verify(
        client,
        conversations[0],
        findings,
        levers.verify,
        tools=tools,
        offer=offer,
        budget=budget,
        max_completion_tokens=max_completion_tokens,
        on_progress=on_progress,
    )
    stats.usage.add(checked.usage)
    if checked.note:
        notes.append(checked.note)
    submission = dataclasses.replace(first, findings=checked.kept)
    return GroupReview(submission, stats, dropped + checked.refuted, notes)

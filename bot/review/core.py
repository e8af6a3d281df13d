"""The review core: ``plan_review`` (everything before the model) and ``review``.

Pipeline: select files (ignore globs, binaries) → scan the diff for committed secrets →
redact everything the model will see → grow hunks to their enclosing functions → pack
into the token budget (what does not fit is listed as skipped) → render the prompt →
converse with K3 (one-shot at ``low`` effort, agentic with read-only tools otherwise) →
check the findings against the real change (anchoring, suggestions, duplicates, cap).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any

from bot.config import Config, Effort
from bot.llm import ModelClient, Progress
from bot.review.agent import LoopBudget, converse
from bot.review.budget import estimate_tokens, pack
from bot.review.change import Change
from bot.review.context import FileContext, build_file_context, load_instructions
from bot.review.findings import check_findings
from bot.review.ignore import select_files
from bot.review.prompt import overhead_tokens, render_messages, submit_review_tool
from bot.review.redact import secret_findings
from bot.review.redacted import redacted_change
from bot.review.tools import RepoTools
from bot.review.types import Coverage, Finding, ReviewResult, SkippedFile
from bot.usage import Usage


@dataclass
class ReviewPlan:
    """What one review will send, computed without a model or a key."""

    change: Change
    effort: Effort
    agentic: bool
    files: list[FileContext]
    skipped: list[SkippedFile]
    secrets: list[Finding]
    instructions: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    estimated_tokens: int

    @property
    def coverage(self) -> Coverage:
        return Coverage([f.file.path for f in self.files], list(self.skipped))


def plan_review(
    change: Change,
    config: Config,
    *,
    effort: Effort,
    agentic: bool | None = None,
    changed_last: Collection[str] = (),
) -> ReviewPlan:
    if agentic is None:
        agentic = config.agent.enabled and effort != "low" and change.head is not None
    selected, skipped = select_files(change.diff, config.ignore_globs())
    secrets = secret_findings(change.diff)
    safe = redacted_change(change)
    contexts = []
    for file in selected:
        safe_file = safe.diff.get(file.path)
        assert safe_file is not None  # redaction keeps every path
        contexts.append(
            build_file_context(safe_file, safe.head, expand=config.review.expand_context)
        )
    instructions = load_instructions(
        safe.trusted, config.review.instructions, config.review.instructions_max_chars
    )
    tools = [submit_review_tool()]
    if agentic and change.head is not None:
        tools += RepoTools(change.head).definitions()
    overhead = overhead_tokens(
        change=safe, skipped=skipped, instructions=instructions, agentic=agentic
    ) + estimate_tokens(json.dumps(tools[1:]))
    packed, over = pack(contexts, max(0, config.review.max_prompt_tokens - overhead))
    skipped = skipped + over
    messages = render_messages(
        change=safe,
        files=packed,
        skipped=skipped,
        instructions=instructions,
        agentic=agentic,
        changed_last=changed_last,
    )
    estimated = estimate_tokens(json.dumps(messages)) + estimate_tokens(json.dumps(tools))
    return ReviewPlan(
        change, effort, agentic, packed, skipped, secrets, instructions, messages, tools, estimated
    )


def _nothing_to_review(plan: ReviewPlan) -> str:
    if not plan.change.diff.files:
        return "Nothing to review: the change is empty."
    return "Nothing to review: every changed file was skipped (see coverage)."


def review(
    change: Change,
    config: Config,
    client: ModelClient,
    *,
    on_progress: Callable[[Progress], None] | None = None,
    deadline: float | None = None,
    changed_last: Collection[str] = (),
) -> ReviewResult:
    """Review ``change`` with ``client`` (whose effort applies) and check the findings."""
    started = time.monotonic()
    plan = plan_review(change, config, effort=client.effort, changed_last=changed_last)
    usage = Usage()
    summary = _nothing_to_review(plan)
    model_findings: list[Finding] = []
    if plan.files:
        limit = started + config.agent.max_seconds
        budget = LoopBudget(
            max_turns=config.agent.max_turns,
            max_tool_calls=config.agent.max_tool_calls,
            max_tokens=config.agent.max_tokens,
            deadline=min(limit, deadline) if deadline is not None else limit,
        )
        tools = RepoTools(change.head) if plan.agentic and change.head is not None else None
        submission, stats = converse(
            client,
            plan.messages,
            tools=tools,
            budget=budget,
            max_completion_tokens=config.review.max_completion_tokens,
            on_progress=on_progress,
        )
        usage = stats.usage
        summary = submission.summary
        model_findings = submission.findings
    kept, dropped = check_findings(
        plan.secrets + model_findings, change, max_comments=config.review.max_comments
    )
    return ReviewResult(
        summary=summary,
        findings=kept,
        coverage=plan.coverage,
        usage=usage,
        model=client.model,
        effort=client.effort,
        duration_s=time.monotonic() - started,
        dropped=dropped,
    )

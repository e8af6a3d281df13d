"""The review core: ``plan_review`` (everything before the model) and ``review``.

Pipeline: select files (ignore globs, binaries, submodules) → scan the diff for committed
secrets → redact everything the model will see → grow hunks to their enclosing
functions → pack into the token budget, or split a change too large for one prompt into
groups of related files (:mod:`bot.review.budget.grouping`) → add related code (callers and
definitions, :mod:`bot.review.related`) in the room left → render the prompt(s) →
converse with K3 (one-shot at ``low`` effort, agentic with read-only tools otherwise;
the groups of a large change in parallel) → check the findings against the real change
(quoted evidence, anchoring, suggestions, duplicates, cap).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from bot.config import Config
from bot.domain.change import Change
from bot.domain.learnings import Learning
from bot.domain.results import Coverage, Finding, ReviewResult, SkippedFile
from bot.effort import Effort
from bot.llm.types import ModelClient, Progress
from bot.review.agent.conversation import LoopBudget
from bot.review.agent.parallel import ReviewGroup, review_groups
from bot.review.budget.grouping import split_files
from bot.review.budget.packing import file_cost, pack
from bot.review.context.file_context import FileContext, build_file_context, load_instructions
from bot.review.context.learnings import NONE, ShownLearnings, learnings_for
from bot.review.findings.check import check_findings
from bot.review.prompt import overhead_tokens, render_messages, submit_review_tool
from bot.review.related.finder import RelatedFinder, RelatedLimits
from bot.review.secrets.redacted_change import redacted_change
from bot.review.secrets.redaction import redact_text, secret_findings, secret_notes
from bot.review.selection import select_files
from bot.review.tokens import estimate_tokens
from bot.review.tools.toolbox import RepoTools, ToolLimits
from bot.usage import Usage

__all__ = ["ReviewGroup", "ReviewPlan", "plan_review", "review"]

#: Tokens the related-code section adds around its text (heading and fences).
_RELATED_FRAME_TOKENS = 64


@dataclass
class ReviewPlan:
    """What one review will send, computed without a model or a key."""

    change: Change
    effort: Effort
    agentic: bool
    #: Every file sent to the model, over all groups, by path.
    files: list[FileContext]
    skipped: list[SkippedFile]
    secrets: list[Finding]
    instructions: str
    #: The first (usually only) prompt; see ``groups`` for a change split in parts.
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    #: Over all groups.
    estimated_tokens: int
    groups: list[ReviewGroup] = field(default_factory=list)
    #: The repository's learnings the prompts show, and those the cap left out.
    learnings: ShownLearnings = NONE

    @property
    def coverage(self) -> Coverage:
        return Coverage([f.file.path for f in self.files], list(self.skipped))

    @property
    def split(self) -> bool:
        return len(self.groups) > 1


def plan_review(
    change: Change,
    config: Config,
    *,
    effort: Effort,
    agentic: bool | None = None,
    changed_last: Collection[str] = (),
    related: bool | None = None,
    related_limits: RelatedLimits | None = None,
    max_groups: int | None = None,
    learnings: Sequence[Learning] = (),
) -> ReviewPlan:
    """Everything a review sends, without a model; ``related=False`` leaves out the
    up-front callers and definitions; ``learnings`` are the repository's (trusted, from
    the store), shown after the instructions when they apply to the change. ``None``
    arguments come from ``config``."""
    if related is None:
        related = config.review.related_context
    if related_limits is None:
        related_limits = RelatedLimits(max_tokens=config.review.related_max_tokens)
    if max_groups is None:
        max_groups = config.agent.max_parts
    if agentic is None:
        agentic = config.agent.enabled and effort != "low" and change.head is not None
    selected, skipped = select_files(change.diff, config.ignore_globs())
    secrets = secret_findings(change.diff)
    safe = redacted_change(change)
    contexts = []
    for file in selected:
        safe_file = safe.diff.get(file.path)
        assert safe_file is not None  # redaction keeps every path
        # The real head: the context redacts the lines it shows (a redacted snapshot
        # would redact every file whole, most of which is never shown).
        contexts.append(
            build_file_context(safe_file, change.head, expand=config.review.expand_context)
        )
    instructions = load_instructions(
        safe.trusted, config.review.instructions, config.review.instructions_max_chars
    )
    shown = learnings_for(learnings, change)
    tools = [submit_review_tool()]
    if agentic and change.head is not None:
        tools += RepoTools(change.head).definitions()
    tool_tokens = estimate_tokens(json.dumps(tools[1:]))

    def room_after(listed: list[SkippedFile]) -> int:
        overhead = overhead_tokens(
            change=safe,
            skipped=listed,
            instructions=instructions,
            agentic=agentic,
            learnings=shown,
        )
        return max(0, config.review.max_prompt_tokens - overhead - tool_tokens)

    budget = room_after(skipped)
    packed, over = pack(contexts, budget)
    # Each group: its files, the skipped files its prompt lists, and its token budget.
    parts: list[tuple[list[FileContext], list[SkippedFile], int]]
    if not over:
        parts = [(packed, skipped, budget)] if packed else []
    else:
        # Too large for one prompt: parts of related files, each with its own prompt.
        # A part's prompt lists no skipped files (coverage is stated in the summary).
        part_budget = room_after([])
        groups, left_out = split_files(contexts, part_budget, max_groups=max_groups)
        skipped = skipped + left_out
        parts = [(pack(g.files, part_budget)[0], [], part_budget) for g in groups]
    extras = [""] * len(parts)
    if related and change.head is not None and parts:
        rooms = [
            room - sum(file_cost(f) for f in files) - _RELATED_FRAME_TOKENS
            for files, _, room in parts
        ]
        finder = RelatedFinder(change.head, related_limits)
        found = finder.contexts([[f.file for f in files] for files, _, _ in parts], rooms)
        # The snippets are redacted already; this also covers the section titles.
        extras = [redact_text(text)[0] for text in found]
    review_parts: list[ReviewGroup] = []
    for (files, listed, _), extra in zip(parts, extras, strict=True):
        messages = render_messages(
            change=safe,
            files=files,
            skipped=listed,
            instructions=instructions,
            extra_context=extra,
            agentic=agentic,
            changed_last=changed_last,
            learnings=shown,
        )
        estimated = estimate_tokens(json.dumps(messages)) + estimate_tokens(json.dumps(tools))
        review_parts.append(ReviewGroup(files, messages, extra, estimated))
    if not review_parts:
        messages = render_messages(
            change=safe,
            files=[],
            skipped=skipped,
            instructions=instructions,
            agentic=agentic,
            learnings=shown,
        )
        estimated = estimate_tokens(json.dumps(messages)) + estimate_tokens(json.dumps(tools))
    else:
        messages = review_parts[0].messages
        estimated = sum(g.estimated_tokens for g in review_parts)
    all_files = sorted((f for g in review_parts for f in g.files), key=lambda f: f.file.path)
    return ReviewPlan(
        change,
        effort,
        agentic,
        all_files,
        skipped,
        secrets,
        instructions,
        messages,
        tools,
        estimated,
        review_parts,
        shown,
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
    related: bool | None = None,
    related_limits: RelatedLimits | None = None,
    max_groups: int | None = None,
    tool_limits: ToolLimits | None = None,
    learnings: Sequence[Learning] = (),
) -> ReviewResult:
    """Review ``change`` with ``client`` (whose effort applies) and check the findings;
    ``learnings``: the repository's (see :func:`plan_review`)."""
    started = time.monotonic()
    plan = plan_review(
        change,
        config,
        effort=client.effort,
        changed_last=changed_last,
        related=related,
        related_limits=related_limits,
        max_groups=max_groups,
        learnings=learnings,
    )
    usage = Usage()
    summary = _nothing_to_review(plan)
    model_findings: list[Finding] = []
    coverage = plan.coverage
    if plan.groups:
        limit = started + config.agent.max_seconds
        until = min(limit, deadline) if deadline is not None else limit
        budget = LoopBudget(
            max_turns=config.agent.max_turns,
            max_tool_calls=config.agent.max_tool_calls,
            max_tokens=config.agent.max_tokens,
            deadline=until,
            # A short budget (the hook's) cannot keep 30 s back for the last turn.
            reserve_s=min(30.0, max(0.0, until - started) / 4),
        )
        outcome = review_groups(
            client,
            plan.groups,
            tools=(
                RepoTools(change.head, limits=tool_limits)
                if plan.agentic and change.head is not None
                else None
            ),
            budget=budget,
            max_completion_tokens=config.review.max_completion_tokens,
            concurrency=config.agent.concurrency,
            on_progress=on_progress,
            skipped=plan.skipped,
            total_files=len(change.diff.files),
        )
        usage = outcome.usage
        summary = outcome.summary
        model_findings = outcome.findings
        coverage = outcome.coverage
    kept, dropped = check_findings(
        plan.secrets + model_findings, change, max_comments=config.review.max_comments
    )
    # A secret in the title or a commit message has no line to be reported on.
    summary = "\n\n".join(
        s for s in [summary, *secret_notes(change.title, change.description)] if s
    )
    return ReviewResult(
        summary=summary,
        findings=kept,
        coverage=coverage,
        usage=usage,
        model=client.model,
        effort=client.effort,
        duration_s=time.monotonic() - started,
        dropped=dropped,
        learnings_left_out=list(plan.learnings.left_out),
    )

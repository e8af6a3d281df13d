"""The review core's run: :func:`review`, the plan (:mod:`bot.review.plan`) sent to K3.

The plan's prompt(s) are conversed with K3 (one-shot at ``low`` effort, agentic with
read-only tools otherwise; the groups of a large change in parallel), then the findings
are checked against the real change (quoted evidence, anchoring, suggestions,
duplicates, cap) and the summary gathers the notes (route, cuts, images).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Sequence

from bot.code.index import SymbolIndex
from bot.domain.change import Change
from bot.domain.learnings import Learning
from bot.domain.results import Finding, ReviewResult
from bot.llm.types import ModelClient, Progress
from bot.review.agent.loop import LoopBudget
from bot.review.agent.parallel import review_groups
from bot.review.findings.check import check_findings
from bot.review.images import TextOnlyFallback, images_note
from bot.review.notes import cut_note, heuristic_note, route_note, unparsed_note
from bot.review.plan import PlanOptions, ReviewPlan, plan_levers, plan_review
from bot.review.related.finder import RelatedLimits
from bot.review.secrets.redaction import secret_notes
from bot.review.tools.toolbox import RepoTools, ToolLimits
from bot.review.walkthrough.reading import settle_walkthrough
from bot.settings.repository import Config
from bot.usage import Usage

__all__ = ["review"]


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
    since: str | None = None,
    symbol_index: SymbolIndex | None = None,
) -> ReviewResult:
    """Review ``change`` with ``client`` (whose effort applies) and check the findings;
    ``learnings``: the repository's (see :func:`plan_review`); ``since``: the last
    reviewed head when ``change`` is what changed since it."""
    started = time.monotonic()
    options = PlanOptions(
        effort=client.effort,
        changed_last=changed_last,
        related=related,
        related_limits=related_limits,
        max_groups=max_groups,
        learnings=learnings,
        since=since,
        symbol_index=symbol_index,
    )
    plan = plan_review(change, config, options)
    route = plan.route
    if (
        route is not None
        and not route.skip
        and (plan.effort != client.effort or route.endpoint != "main")
    ):
        client = client.for_route(plan.effort, route.endpoint)
    usage = Usage()
    summary = route.line() if route is not None and route.skip else _nothing_to_review(plan)
    model_findings: list[Finding] = []
    coverage = plan.coverage
    walkthrough = None
    lever_drops: list[tuple[Finding, str]] = []
    # A text-only server's refusal of the images: asked again without them.
    fallback = TextOnlyFallback(client)
    if plan.images:
        client = fallback
    if plan.groups:
        budget = LoopBudget.for_agent(config.agent, deadline)
        outcome = review_groups(
            client,
            plan.groups,
            tools=(
                RepoTools(change.head, limits=tool_limits, index=symbol_index)
                if plan.agentic and change.head is not None
                else None
            ),
            budget=budget,
            max_completion_tokens=config.review.max_completion_tokens,
            concurrency=config.agent.concurrency,
            on_progress=on_progress,
            skipped=plan.skipped,
            total_files=len(change.diff.files),
            levers=plan_levers(config),
        )
        usage = outcome.usage
        summary = outcome.summary
        model_findings = outcome.findings
        coverage = outcome.coverage
        lever_drops = outcome.dropped
        if plan.walkthrough is not None:
            walkthrough = settle_walkthrough(
                outcome.walkthrough,
                diagram=plan.walkthrough.diagram,
                issues={issue.number for issue in change.linked_issues},
                since=since,
                images=plan.images,
                named=plan.images_named,
                refused=fallback.refused,
            )
    kept, dropped = check_findings(
        plan.secrets + model_findings, change, max_comments=config.review.max_comments
    )
    dropped += lever_drops
    # A secret in the title or a commit message has no line to be reported on.
    notes = [
        *secret_notes(change.title, change.description),
        route_note(route),
        cut_note(plan.instructions_cut),
        heuristic_note(plan.heuristic),
        unparsed_note(plan.unparsed),
        images_note(plan.images, plan.images_named, fallback.refused),
    ]
    summary = "\n\n".join(s for s in [summary, *notes] if s)
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
        walkthrough=walkthrough,
        route=route,
    )

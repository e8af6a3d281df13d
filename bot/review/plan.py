"""Everything a review sends, computed before the model: :func:`plan_review`.

Route the change (:mod:`bot.review.route`: its effort and endpoint, or no request at all
for formatting only) → select files (ignore globs, binaries, submodules) → scan the diff
for committed secrets → redact everything the model will see → grow hunks to their
enclosing functions → pack into the token budget, or split a change too large for one
prompt into groups of related files (:mod:`bot.review.packing.groups`) → add related code
(callers and definitions, :mod:`bot.review.related`) in the room left → render the
prompt(s), the images in the first. No model, no key: ``gitneural review --dry-run`` and
the benchmarks read the plan alone.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from bot.code.index import SymbolIndex
from bot.domain.change import Change
from bot.domain.diff import FileDiff
from bot.domain.images import NamedImage, PreparedImage
from bot.domain.learnings import Learning
from bot.domain.results import Coverage, Finding, SkippedFile
from bot.domain.route import Route
from bot.effort import Effort
from bot.review.agent.levers import Levers, review_tools
from bot.review.agent.parallel import ReviewGroup
from bot.review.context.file_context import FileContext, build_file_context
from bot.review.context.instructions import Instructions, read_instructions
from bot.review.context.learnings import NONE, ShownLearnings, change_paths, learnings_for
from bot.review.images import first_with_images, review_images
from bot.review.packing.fit import file_cost, pack
from bot.review.packing.groups import split_files
from bot.review.prompt import (
    WalkthroughAsk,
    overhead_tokens,
    render_messages,
)
from bot.review.related.finder import RelatedFinder, RelatedLimits
from bot.review.route import decide_route
from bot.review.secrets.redacted_change import redacted_change
from bot.review.secrets.redaction import redact_text, secret_findings
from bot.review.selection import select_files
from bot.review.token_estimate import estimate_tokens
from bot.review.tools.toolbox import RepoTools
from bot.settings.repository import Config

__all__ = ["PlanOptions", "ReviewPlan", "plan_levers", "plan_review"]

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
    #: What was cut from the instructions (for the summary).
    instructions_cut: list[str] = field(default_factory=list)
    #: The walkthrough the prompts ask for (None: none).
    walkthrough: WalkthroughAsk | None = None
    #: The images the first prompt shows, and those only named in the summary.
    images: list[PreparedImage] = field(default_factory=list)
    images_named: list[NamedImage] = field(default_factory=list)
    #: The route the change takes (``bot.review.route``); ``effort`` is the route's.
    route: Route | None = None

    @property
    def coverage(self) -> Coverage:
        return Coverage([f.file.path for f in self.files], list(self.skipped))

    @property
    def heuristic(self) -> list[str]:
        """The files sent whose enclosing code no parser read (the heuristic chose it)."""
        return [f.file.path for f in self.files if f.heuristic]

    @property
    def unparsed(self) -> list[tuple[str, str]]:
        """The files sent without context, no parser reading them, and why."""
        return [(f.file.path, f.unparsed) for f in self.files if f.unparsed]

    @property
    def split(self) -> bool:
        return len(self.groups) > 1


@dataclass(frozen=True)
class PlanOptions:
    """How one review is planned; ``None`` fields come from the repository's settings."""

    effort: Effort
    #: With the read-only tools; None: ``[agent] enabled`` and an effort above ``low``.
    agentic: bool | None = None
    #: Paths a push changed since the last review (said in the prompt).
    changed_last: Collection[str] = ()
    #: The callers and definitions up front; None: ``[review] related_context``.
    related: bool | None = None
    related_limits: RelatedLimits | None = None
    #: At most this many groups for a change too large for one prompt.
    max_groups: int | None = None
    #: The repository's learnings (trusted, from the store), shown after the instructions
    #: when they apply to the change.
    learnings: Sequence[Learning] = ()
    #: The last reviewed head, when the change is what changed since it (the
    #: walkthrough then summarises only that).
    since: str | None = None
    #: The head's symbol index (kept per commit by the entrance), for the related code
    #: and the tools; None: they walk the snapshot.
    symbol_index: SymbolIndex | None = None
    #: Decide the change's route (``bot.review.route``), whose effort then applies;
    #: False: ``effort`` as given (an answer in a thread is no review to route).
    routed: bool = True


#: A group's files, the skipped files its prompt lists, and its token budget.
_Part = tuple[list[FileContext], list[SkippedFile], int]


def plan_review(change: Change, config: Config, options: PlanOptions) -> ReviewPlan:
    """Everything a review sends, without a model."""
    route = decide_route(change, config, options.effort) if options.routed else None
    if route is not None and route.effort is None:
        return _not_sent(change, config, options.effort, route)
    effort = options.effort if route is None or route.effort is None else route.effort
    agentic = options.agentic
    if agentic is None:
        agentic = config.agent.enabled and effort != "low" and change.head is not None
    selected, skipped = select_files(change.diff, config.ignore_globs())
    safe = redacted_change(change)
    contexts = [
        # The real head: the context redacts the lines it shows (a redacted snapshot
        # would redact every file whole, most of which is never shown).
        build_file_context(
            _redacted_file(safe, f.path), change.head, expand=config.review.expand_context
        )
        for f in selected
    ]
    read = _instructions(safe, config)
    instructions = read.text
    shown = learnings_for(options.learnings, change)
    ask = (
        WalkthroughAsk(diagram=config.walkthrough.diagram, since=options.since)
        if config.walkthrough.enabled
        else None
    )
    repo_tools = RepoTools(change.head).definitions() if agentic and change.head is not None else []
    tools = review_tools(plan_levers(config), repo_tools)
    tool_tokens = estimate_tokens(json.dumps(tools[1:]))

    def room_after(listed: list[SkippedFile]) -> int:
        overhead = overhead_tokens(
            change=safe,
            skipped=listed,
            instructions=instructions,
            agentic=agentic,
            learnings=shown,
            walkthrough=ask,
        )
        return max(0, config.review.max_prompt_tokens - overhead - tool_tokens)

    max_groups = config.agent.max_parts if options.max_groups is None else options.max_groups
    parts, skipped = _parts(contexts, skipped, room_after, max_groups)
    related = config.review.related_context if options.related is None else options.related
    limits = options.related_limits or RelatedLimits(max_tokens=config.review.related_max_tokens)
    extras = (
        _related_extras(change, parts, limits, options.symbol_index)
        if related
        else [""] * len(parts)
    )
    review_parts = [
        _group(
            files,
            render_messages(
                change=safe,
                files=files,
                skipped=listed,
                instructions=instructions,
                extra_context=extra,
                agentic=agentic,
                changed_last=options.changed_last,
                learnings=shown,
                walkthrough=ask,
            ),
            extra,
            tools,
        )
        for (files, listed, _), extra in zip(parts, extras, strict=True)
    ]
    images, images_named = review_images(change)
    review_parts = first_with_images(
        review_parts,
        images,
        walkthrough=ask is not None,
        tools_tokens=estimate_tokens(json.dumps(tools)),
    )
    if review_parts:
        messages = review_parts[0].messages
        estimated = sum(g.estimated_tokens for g in review_parts)
    else:
        messages = render_messages(
            change=safe,
            files=[],
            skipped=skipped,
            instructions=instructions,
            agentic=agentic,
            learnings=shown,
            walkthrough=ask,
        )
        estimated = _estimate(messages, tools)
    return ReviewPlan(
        change=change,
        effort=effort,
        agentic=agentic,
        files=sorted((f for g in review_parts for f in g.files), key=lambda f: f.file.path),
        skipped=skipped,
        secrets=secret_findings(change.diff),
        instructions=instructions,
        messages=messages,
        tools=tools,
        estimated_tokens=estimated,
        groups=review_parts,
        learnings=shown,
        instructions_cut=read.cut,
        walkthrough=ask,
        images=images if review_parts else [],
        images_named=images_named,
        route=route,
    )


def _not_sent(change: Change, config: Config, effort: Effort, route: Route) -> ReviewPlan:
    """The plan of a change its route sends nowhere: every file listed as not sent."""
    selected, skipped = select_files(change.diff, config.ignore_globs())
    listed = [SkippedFile(f.path, f"not sent: {route.reason}") for f in selected]
    return ReviewPlan(
        change=change,
        effort=effort,
        agentic=False,
        files=[],
        skipped=sorted(skipped + listed, key=lambda s: s.path),
        secrets=secret_findings(change.diff),
        instructions="",
        messages=[],
        tools=[],
        estimated_tokens=0,
        route=route,
    )


def plan_levers(config: Config) -> Levers:
    """The review's levers (verification, passes), from the settings."""
    return Levers(verify=config.review.verify, passes=config.review.passes)


def _instructions(safe: Change, config: Config) -> Instructions:
    """The trusted instructions for this change (the scoped ones for the paths it touches)."""
    settings = config.review
    return read_instructions(
        safe.trusted,
        settings.instructions,
        settings.instructions_max_chars,
        paths=change_paths(safe),
        scoped=settings.scoped_instructions,
        path_rules=settings.path_instructions,
    )


def _redacted_file(safe: Change, path: str) -> FileDiff:
    found = safe.diff.get(path)
    assert found is not None  # redaction keeps every path
    return found


def _parts(
    contexts: list[FileContext],
    skipped: list[SkippedFile],
    room_after: Callable[[list[SkippedFile]], int],
    max_groups: int,
) -> tuple[list[_Part], list[SkippedFile]]:
    """The prompts' parts: one when the change fits, else groups of related files (each
    with its own prompt, listing no skipped files: coverage is stated in the summary)."""
    budget = room_after(skipped)
    packed, over = pack(contexts, budget)
    if not over:
        return ([(packed, skipped, budget)] if packed else []), skipped
    part_budget = room_after([])
    groups, left_out = split_files(contexts, part_budget, max_groups=max_groups)
    return [(pack(g.files, part_budget)[0], [], part_budget) for g in groups], skipped + left_out


def _related_extras(
    change: Change, parts: list[_Part], limits: RelatedLimits, index: SymbolIndex | None
) -> list[str]:
    """Each part's callers and definitions, in the room its files left."""
    if change.head is None or not parts:
        return [""] * len(parts)
    rooms = [
        room - sum(file_cost(f) for f in files) - _RELATED_FRAME_TOKENS for files, _, room in parts
    ]
    finder = RelatedFinder(change.head, limits, index=index)
    found = finder.contexts([[f.file for f in files] for files, _, _ in parts], rooms)
    # The snippets are redacted already; this also covers the section titles.
    return [redact_text(text)[0] for text in found]


def _estimate(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> int:
    return estimate_tokens(json.dumps(messages)) + estimate_tokens(json.dumps(tools))


def _group(
    files: list[FileContext],
    messages: list[dict[str, Any]],
    extra: str,
    tools: list[dict[str, Any]],
) -> ReviewGroup:
    return ReviewGroup(files, messages, extra, _estimate(messages, tools))

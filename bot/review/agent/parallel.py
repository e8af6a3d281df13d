"""Reviewing the prompt(s) of one change: one conversation, or parts in parallel.

A change too large for one prompt is planned as several groups of related files
(:mod:`bot.review.packing.groups`). Each group is its own conversation with K3; at most
``concurrency`` run at once (the K3 client is thread-safe), all against the review's
one deadline. Their findings are merged (the findings check de-duplicates them), their
usage summed, and the summary says what each part found and what was covered: how many
files were reviewed, how many were not, and why.

A part that fails (its model output unusable, its time out) does not sink the others:
its files are listed as not reviewed, with the reason. Failures that every part would
meet (a rejected key, an exhausted quota) stop the review at once, as does every part
failing.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any

from bot.domain.results import Coverage, Finding, SkippedFile
from bot.domain.walkthrough import IssueVerdict, Walkthrough
from bot.errors import ModelConfigError, ModelError, ModelQuotaError
from bot.llm.types import ModelClient, Progress
from bot.review.agent.levers import NO_LEVERS, GroupReview, Levers, run_levers
from bot.review.agent.loop import LoopBudget, LoopStats, ToolRunner
from bot.review.context.file_context import FileContext
from bot.text import one_line
from bot.usage import Usage

__all__ = ["GroupOutcome", "ReviewGroup", "coverage_sentence", "review_groups"]

#: Characters of one part's summary kept in the merged summary.
_PART_SUMMARY_CHARS = 600
#: Errors every part would meet: no point in going on.
_FATAL = (ModelConfigError, ModelQuotaError)


@dataclass
class ReviewGroup:
    """One prompt of a review: its files, messages and related code."""

    files: list[FileContext]
    messages: list[dict[str, Any]]
    extra_context: str
    estimated_tokens: int


@dataclass
class GroupOutcome:
    summary: str
    findings: list[Finding]
    coverage: Coverage
    usage: Usage
    #: One per part, in part order (None for a part that failed).
    stats: list[LoopStats | None] = field(default_factory=list)
    walkthrough: Walkthrough | None = None
    #: Findings the levers against noise dropped (refuted, no majority), with reasons.
    dropped: list[tuple[Finding, str]] = field(default_factory=list)


def _reason_kind(reason: str) -> str:
    if reason.startswith("ignored by"):
        return "ignored by a glob"
    return reason.split(" (", 1)[0]


def coverage_sentence(reviewed: int, skipped: Sequence[SkippedFile], total: int) -> str:
    """``Coverage: 2,950 of 3,000 changed files reviewed; not reviewed: 40 ignored …``."""
    text = f"Coverage: {reviewed:,} of {total:,} changed files reviewed"
    if not skipped:
        return text + "."
    counts: dict[str, int] = {}
    for item in skipped:
        kind = _reason_kind(item.reason)
        counts[kind] = counts.get(kind, 0) + 1
    why = ", ".join(f"{n:,} {kind}" for kind, n in counts.items())
    return f"{text}; not reviewed: {why}."


def _label(index: int, total: int, files: list[FileContext]) -> str:
    paths = sorted(f.file.path for f in files)
    where = paths[0] if len(paths) == 1 else f"{paths[0]} … {paths[-1]}"
    noun = "file" if len(paths) == 1 else "files"
    return f"Part {index}/{total} ({len(paths):,} {noun}: {where})"


class _SharedProgress:
    """One progress callback for parallel parts: serialised, each event names its part."""

    def __init__(self, sink: Callable[[Progress], None]) -> None:
        self._sink = sink
        self._lock = threading.Lock()

    def for_part(self, index: int, total: int) -> Callable[[Progress], None]:
        def emit(event: Progress) -> None:
            detail = f"part {index}/{total}" + (f": {event.detail}" if event.detail else "")
            with self._lock:
                self._sink(dataclasses.replace(event, detail=detail))

        return emit


def review_groups(
    client: ModelClient,
    groups: Sequence[ReviewGroup],
    *,
    tools: ToolRunner | None,
    budget: LoopBudget,
    max_completion_tokens: int,
    concurrency: int,
    on_progress: Callable[[Progress], None] | None = None,
    skipped: Sequence[SkippedFile] = (),
    total_files: int = 0,
    levers: Levers = NO_LEVERS,
) -> GroupOutcome:
    """Converse over each group (in parallel when there are several) and merge."""

    # The first error every part would meet. A pool thread whose part just failed takes
    # the next part before the caller can cancel it: that part must not ask the model.
    fatal: list[BaseException] = []

    def run(group: ReviewGroup, progress: Callable[[Progress], None] | None) -> GroupReview:
        if fatal:
            raise fatal[0]
        try:
            return run_levers(
                client,
                group.messages,  # the plan stays as planned; each conversation is a copy
                levers,
                tools=tools,
                budget=dataclasses.replace(budget),
                max_completion_tokens=max_completion_tokens,
                on_progress=progress,
            )
        except _FATAL as error:
            fatal.append(error)
            raise

    if len(groups) == 1:
        done = run(groups[0], on_progress)
        submission, stats = done.submission, done.stats
        paths = [f.file.path for f in groups[0].files]
        return GroupOutcome(
            "\n\n".join([submission.summary, *done.notes]),
            submission.findings,
            Coverage(paths, list(skipped)),
            stats.usage,
            [stats],
            submission.walkthrough,
            done.dropped,
        )
    shared = _SharedProgress(on_progress) if on_progress else None
    n = len(groups)
    pool = ThreadPoolExecutor(max_workers=max(1, min(concurrency, n)))
    futures = [
        pool.submit(run, g, shared.for_part(i, n) if shared else None)
        for i, g in enumerate(groups, 1)
    ]
    try:
        _stop_on_fatal(futures)
    finally:
        # After a fatal error, parts not started are cancelled and running ones are not
        # waited for (they meet the same error on their next request).
        pool.shutdown(wait=False, cancel_futures=True)
    return _merge(groups, futures, skipped, total_files)


Outcome = GroupReview


def _stop_on_fatal(futures: list[Future[Outcome]]) -> None:
    """Wait for every part; raise at once when one meets an error all would meet."""
    pending = set(futures)
    while pending:
        done, pending = wait(pending, return_when=FIRST_EXCEPTION)
        for future in done:
            error = future.exception()
            if isinstance(error, _FATAL):
                raise error


def _merge(
    groups: Sequence[ReviewGroup],
    futures: list[Future[Outcome]],
    skipped: Sequence[SkippedFile],
    total_files: int,
) -> GroupOutcome:
    n = len(groups)
    usage = Usage()
    findings: list[Finding] = []
    reviewed: list[str] = []
    not_reviewed = list(skipped)
    parts: list[str] = []
    stats_list: list[LoopStats | None] = []
    errors: list[ModelError] = []
    walkthroughs: list[Walkthrough] = []
    dropped: list[tuple[Finding, str]] = []
    for index, (group, future) in enumerate(zip(groups, futures, strict=True), 1):
        label = _label(index, n, group.files)
        error = future.exception()
        if error is not None:
            if not isinstance(error, ModelError):
                raise error
            errors.append(error)
            stats_list.append(None)
            reason = f"not reviewed: the review of its part failed ({one_line(str(error), 200)})"
            not_reviewed += [SkippedFile(f.file.path, reason) for f in group.files]
            parts.append(f"{label}: not reviewed: {one_line(str(error), 200)}")
            continue
        done = future.result()
        submission, stats = done.submission, done.stats
        dropped += done.dropped
        stats_list.append(stats)
        usage.add(stats.usage)
        findings += submission.findings
        if submission.walkthrough is not None:
            walkthroughs.append(submission.walkthrough)
        reviewed += [f.file.path for f in group.files]
        said = " ".join([submission.summary, *done.notes])
        parts.append(f"{label}: {one_line(said, _PART_SUMMARY_CHARS)}")
    if len(errors) == n:
        raise errors[0]
    reviewed.sort()
    head = (
        f"This change is too large for one prompt, so it was reviewed in {n} parts of "
        "related files."
    )
    total = total_files or len(reviewed) + len(not_reviewed)
    summary = "\n\n".join([head, *parts, coverage_sentence(len(reviewed), not_reviewed, total)])
    coverage = Coverage(reviewed, not_reviewed)
    merged = _merged_walkthrough(walkthroughs)
    return GroupOutcome(summary, findings, coverage, usage, stats_list, merged, dropped)


def _merged_walkthrough(parts: Sequence[Walkthrough]) -> Walkthrough | None:
    """The parts' walkthroughs as one: each part's summary, every file, the first five
    places to look, the first diagram and the first verdict on each issue."""
    if not parts:
        return None
    verdicts: dict[int, IssueVerdict] = {}
    for part in parts:
        for verdict in part.issues:
            verdicts.setdefault(verdict.number, verdict)
    return Walkthrough(
        summary=" ".join(part.summary for part in parts),
        files=[note for part in parts for note in part.files],
        focus=[line for part in parts for line in part.focus][:5],
        diagram=next((part.diagram for part in parts if part.diagram), None),
        issues=list(verdicts.values()),
    )

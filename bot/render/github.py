"""A review as GitHub shows it: inline comments, the review body, and the hidden marker.

The marker ``<!-- gitneural:v1 head=SHA trigger=T delivery=ID since=SHA|- conclusion=C
worst=S|- findings=N fp=F1,F2 -->`` ends every review body GitNeural posts: how a later
run knows its own work (head and trigger, or delivery, make posting idempotent; ``head``
starts the next ``synchronize`` review; fingerprints name the findings already posted).
Model text is sanitised (:func:`sanitize_markdown` removes every HTML comment), so a
finding can never forge a marker; the marker is added after.

Every piece of untrusted text (model titles and bodies, file names, skip reasons) is
sanitised or put in a code span here; the layout around it is GitNeural's own. Whole
paragraphs go through :func:`sanitize_markdown`; pieces of GitNeural's own lines (a
title, a category, a note) through :func:`sanitize_inline`, which keeps them on one line
and closed, so they cannot pair a backtick with a file name's code span next to them.
"""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from bot.domain.results import Coverage, Finding, Severity, unquoted_text
from bot.render.conversation import FindingMarker
from bot.render.review_marker import MARKER_PREFIX, Marker, parse_marker
from bot.render.sanitize import (
    neutralise_markers,
    sanitize_inline,
    sanitize_markdown,
    suggestion_fence,
)
from bot.review import LEARNINGS_LIMIT
from bot.text import printable
from bot.usage import Usage

__all__ = [
    "ICONS",
    "MARKER_PREFIX",
    "MAX_BODY",
    "Links",
    "Marker",
    "ReviewText",
    "code_span",
    "comment_body",
    "coverage_text",
    "dismissed_text",
    "inline_comment",
    "listed_finding",
    "parse_marker",
    "review_body",
    "severity_counts",
    "usage_line",
]

#: GitHub's limit for a review body and for each comment body.
MAX_BODY = 65_536
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
ICONS = {
    Severity.CRITICAL: "🔴",
    Severity.MAJOR: "🟠",
    Severity.MINOR: "🟡",
    Severity.NIT: "⚪",
}
_TITLE_LIMIT = 300
_FINDING_LIMIT = 4_000
_SUMMARY_LIMIT = 6_000
_MAX_SKIPPED_LISTED = 30
_COVERAGE_LIMIT = 8_000


@dataclass(frozen=True)
class Links:
    """Where a finding's lines are on GitHub's web pages."""

    #: The repository's web page, ``https://github.com/OWNER/REPO``.
    web_url: str
    #: The reviewed head (RIGHT side) and the reviewed change's base (LEFT side).
    head_sha: str
    base_sha: str | None

    def of(self, finding: Finding) -> str | None:
        sha = self.head_sha if finding.side == "RIGHT" else self.base_sha
        if sha is None:
            return None
        lines = f"L{finding.start_line}"
        if finding.end_line != finding.start_line:
            lines += f"-L{finding.end_line}"
        return f"{self.web_url}/blob/{sha}/{urllib.parse.quote(finding.path)}#{lines}"


def code_span(text: str) -> str:
    """``text`` as an inline code span that no backtick or newline in it can break."""
    clean = _CONTROL.sub("\ufffd", printable(text))
    longest = max((len(run) for run in re.findall(r"`+", clean)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if clean.startswith("`") or clean.endswith("`") or not clean.strip() else ""
    return f"{ticks}{pad}{clean}{pad}{ticks}"


def _where(finding: Finding) -> str:
    lines = (
        f"line {finding.start_line}"
        if finding.start_line == finding.end_line
        else f"lines {finding.start_line}-{finding.end_line}"
    )
    return lines + (" (old file)" if finding.side == "LEFT" else "")


def _headline(finding: Finding) -> str:
    category = sanitize_inline(finding.category, limit=60) if finding.category.strip() else ""
    parts = [f"{ICONS[finding.severity]} **{finding.severity}**"]
    if category:
        parts.append(category)
    return " · ".join(parts) + f": **{sanitize_inline(finding.title, limit=_TITLE_LIMIT)}**"


def _note(finding: Finding) -> str:
    return (
        f"<sub>{sanitize_inline(finding.note, limit=1_000)}</sub>" if finding.note.strip() else ""
    )


def comment_body(finding: Finding) -> str:
    """The body of an inline comment: headline, explanation, suggestion, note, and the
    finding's hidden marker (a reply in its thread is then known to be about it)."""
    fence = suggestion_fence(finding.suggestion) if finding.suggestion is not None else ""
    if len(fence) > MAX_BODY // 2:
        fence = ""  # a replacement this long is not a suggestion anyone reviews
    head, note = _headline(finding), _note(finding)
    marker = FindingMarker(finding.fingerprint, str(finding.severity)).render()
    room = MAX_BODY - len(head) - len(fence) - len(note) - len(marker) - 16
    text = sanitize_markdown(finding.body, limit=max(200, room)) if finding.body.strip() else ""
    return "\n\n".join(p for p in (head, text, fence, note, marker) if p)


def inline_comment(finding: Finding) -> dict[str, Any]:
    """One entry of the review's ``comments``, where the findings check anchored it."""
    comment: dict[str, Any] = {
        "path": finding.path,
        "body": comment_body(finding),
        "line": finding.end_line,
        "side": finding.side,
    }
    if finding.start_line < finding.end_line:
        comment["start_line"] = finding.start_line
        comment["start_side"] = finding.side
    return comment


def listed_finding(finding: Finding, links: Links) -> str:
    """A finding shown in the review body (outside the diff, or refused inline)."""
    place = f"{code_span(finding.path)} {_where(finding)}"
    url = links.of(finding)
    where = f"[{place}]({url})" if url else place
    parts = [f"{_headline(finding)} — {where}"]
    if finding.body.strip():
        parts.append(sanitize_markdown(finding.body, limit=_FINDING_LIMIT))
    if finding.suggestion is not None and finding.side == "RIGHT":
        code = finding.suggestion
        if len(code) <= _FINDING_LIMIT:
            longest = max((len(r) for r in re.findall(r"`+", code)), default=0)
            ticks = "`" * max(3, longest + 1)
            shown = neutralise_markers(code.rstrip("\n"))
            parts.append(f"Suggested replacement:\n\n{ticks}\n{shown}\n{ticks}")
    note = _note(finding)
    if note:
        parts.append(note)
    return "\n\n".join(parts)


def severity_counts(findings: Iterable[Finding]) -> str:
    """``1 critical, 2 minor`` (most severe first), or ``no findings``."""
    counts = {s: 0 for s in Severity}
    for finding in findings:
        counts[finding.severity] += 1
    text = ", ".join(f"{n} {s}" for s, n in counts.items() if n)
    return text or "no findings"


def usage_line(usage: Usage, model: str, effort: str, duration_s: float) -> str:
    requests = f"{usage.requests} request{'s' if usage.requests != 1 else ''}"
    return (
        f"{sanitize_inline(model, limit=80) or 'model'} at effort "
        f"{sanitize_inline(effort, limit=10) or '?'} · "
        f"{usage.prompt_tokens:,} prompt tokens ({usage.cached_tokens:,} cached, "
        f"{usage.cached_ratio:.0%}) · {usage.completion_tokens:,} completion tokens · "
        f"{requests} · {duration_s:.1f} s"
    )


def coverage_text(coverage: Coverage, scope: str, limit: int = _MAX_SKIPPED_LISTED) -> str:
    """Reviewed and skipped files, skipped ones named (up to ``limit``) with the reason."""
    n = len(coverage.reviewed)
    text = f"Reviewed {n} file{'s' if n != 1 else ''} ({scope})."
    if coverage.skipped:
        text += f" Skipped {len(coverage.skipped)}:"
        lines = [
            f"\n- {code_span(s.path)}: {sanitize_inline(s.reason, limit=200)}"
            for s in coverage.skipped[:limit]
        ]
        text += "".join(lines)
        if len(coverage.skipped) > limit:
            text += f"\n- … and {len(coverage.skipped) - limit} more"
    return text


def learnings_left_out(ids: Sequence[int]) -> str:
    """What a summary says of learnings the prompt could not show: which, and why."""
    shown = ", ".join(f"#{i}" for i in ids[:20]) + (" …" if len(ids) > 20 else "")
    n = len(ids)
    return (
        f"{n} learning{'s' if n != 1 else ''} left out of the prompt ({shown}): over the "
        f"limit of {LEARNINGS_LIMIT}"
    )


@dataclass
class ReviewText:
    """What :func:`review_body` needs besides the findings."""

    summary: str
    coverage: Coverage
    usage: Usage
    model: str
    effort: str
    duration_s: float
    #: "the whole pull request", or "changes since `abc1234`".
    scope: str
    #: Findings left out because an earlier GitNeural review already posted them.
    repeated: int = 0
    #: Findings dropped because the code they quote is not there (the evidence rule).
    unquoted: int = 0
    #: What the levers against noise dropped, in words (``ReviewResult.lever_counts``).
    levers: Sequence[str] = ()
    #: Findings held back: a writer (or K3, in a thread) dismissed them, on any PR.
    dismissed: int = 0
    #: Findings held back on this PR only: its author (without write access) dismissed them.
    dismissed_here: int = 0
    #: Ids of the repository's learnings the prompt could not show (over the cap).
    learnings_left_out: Sequence[int] = ()
    #: The walkthrough, rendered (``bot.render.walkthrough``), or "".
    walkthrough: str = ""


def dismissed_text(count: int, *, here: bool = False) -> str:
    """``3 findings not repeated: dismissed earlier``; ``here``: dismissed on this PR only."""
    s = "s" if count != 1 else ""
    why = "held back on this pull request: dismissed by its author" if here else ""
    return f"{count} finding{s} {why or 'not repeated: dismissed earlier'}"


def review_body(
    text: ReviewText,
    *,
    inline: Sequence[Finding],
    listed: Sequence[Finding],
    links: Links,
    marker: Marker,
) -> str:
    """The review body, at most :data:`MAX_BODY` characters, ending with the marker."""
    tail = "\n\n" + marker.render()
    total = [*inline, *listed]
    counts = f"**{severity_counts(total)}**"
    if inline:
        counts += f" · {len(inline)} inline"
    if listed:
        counts += f" · {len(listed)} below"
    if text.repeated:
        s = "s" if text.repeated != 1 else ""
        counts += f" · {text.repeated} finding{s} already reported earlier, not repeated"
    if text.unquoted:
        counts += f" · {unquoted_text(text.unquoted)}"
    counts += "".join(f" · {said}" for said in text.levers)
    if text.dismissed:
        counts += f" · {dismissed_text(text.dismissed)}"
    if text.dismissed_here:
        counts += f" · {dismissed_text(text.dismissed_here, here=True)}"
    head = [f"### GitNeural review\n\n{counts}"]
    if text.walkthrough:
        head.append(text.walkthrough)
    coverage = coverage_text(text.coverage, text.scope)
    if len(coverage) > _COVERAGE_LIMIT:  # skipped files with very long names
        coverage = coverage_text(text.coverage, text.scope, limit=0)
    footer = [
        *([learnings_left_out(text.learnings_left_out) + "."] if text.learnings_left_out else []),
        coverage,
        f"<sub>{usage_line(text.usage, text.model, text.effort, text.duration_s)}</sub>",
    ]
    room = MAX_BODY - len(tail) - sum(len(p) + 2 for p in head + footer) - 200
    summary = sanitize_markdown(text.summary, limit=max(0, min(_SUMMARY_LIMIT, room)))
    parts = head + ([summary] if summary.strip() else [])
    room -= len(summary) + 2
    if listed:
        parts.append("#### Findings not on the diff" if inline else "#### Findings")
        shown = 0
        for finding in listed:
            entry = listed_finding(finding, links)
            if len(entry) + 2 > room:
                break
            parts.append(entry)
            room -= len(entry) + 2
            shown += 1
        if shown < len(listed):
            parts.append(f"… and {len(listed) - shown} more: see the GitNeural check run.")
    return "\n\n".join(parts + footer)[: MAX_BODY - len(tail)] + tail

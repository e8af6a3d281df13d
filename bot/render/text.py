"""Terminal output: compiler-style lines that editors and ``grep`` understand.

Each finding starts with one line ``path:line: severity: title`` (``line`` is the first
line of the finding), then, indented by four spaces, a line with the category and what
else matters (the range when it spans lines, "old file" for a finding on removed code,
"outside the diff" when it could not be placed on the change), the body, the check's
note and the suggestion as a small unified diff. After the findings come their count
(and how many were dropped because the code they quote is not there), the summary,
coverage, dropped findings and usage. Every piece of model or repository text goes
through :func:`bot.render.sanitize.terminal_text` (no escape sequences, no undecodable
bytes).
"""

from __future__ import annotations

import os
from typing import TextIO

from bot.domain.change import Change
from bot.domain.results import Finding, Placement, ReviewResult, Severity, unquoted_text
from bot.render.sanitize import terminal_text
from bot.render.walkthrough import walkthrough_text
from bot.review import find_file, replacement_lines, side_text

INDENT = "    "
_COLORS = {
    Severity.CRITICAL: "\x1b[1;31m",
    Severity.MAJOR: "\x1b[31m",
    Severity.MINOR: "\x1b[33m",
    Severity.NIT: "\x1b[36m",
}
_BOLD = "\x1b[1m"
_DIM = "\x1b[2m"
_RESET = "\x1b[0m"
_EOL = "\r\n"


def wants_color(stream: TextIO) -> bool:
    """Colour only for a terminal, and never when ``NO_COLOR`` is set to anything
    (no-color.org: a non-empty value)."""
    return stream.isatty() and not os.environ.get("NO_COLOR")


class _Style:
    def __init__(self, color: bool) -> None:
        self.color = color

    def __call__(self, code: str, text: str) -> str:
        return f"{code}{text}{_RESET}" if self.color else text


def _indented(text: str, prefix: str = INDENT) -> list[str]:
    return [f"{prefix}{line}".rstrip() for line in terminal_text(text).split("\n")]


def headline(finding: Finding) -> str:
    """``path:line: severity: title`` without colour."""
    title = terminal_text(finding.title).replace("\n", " ")
    return f"{terminal_text(finding.path)}:{finding.start_line}: {finding.severity}: {title}"


def _suggestion_diff(finding: Finding, change: Change | None) -> list[str]:
    assert finding.suggestion is not None
    old: list[str] | None = None
    file = find_file(change.diff, finding.path) if change is not None else None
    if file is not None:
        old = side_text(change, file, "RIGHT").get(finding.start_line, finding.end_line)
    new = replacement_lines(finding.suggestion)
    start = finding.start_line
    lines = [f"{INDENT}suggestion:"]
    if old is None:
        lines.append(f"{INDENT}@@ +{start},{len(new)} @@")
    else:
        lines.append(f"{INDENT}@@ -{start},{len(old)} +{start},{len(new)} @@")
        lines += [f"{INDENT}-{terminal_text(line.rstrip(_EOL))}" for line in old]
    lines += [f"{INDENT}+{terminal_text(line)}" for line in new]
    return lines


def _finding(finding: Finding, change: Change | None, style: _Style) -> list[str]:
    title = terminal_text(finding.title).replace("\n", " ")
    severity = style(_COLORS[finding.severity], str(finding.severity))
    path = style(_BOLD, f"{terminal_text(finding.path)}:{finding.start_line}:")
    lines = [f"{path} {severity}: {title}"]
    category = terminal_text(finding.category).replace("\n", " ")
    facts: list[str] = []
    if finding.end_line != finding.start_line:
        facts.append(f"lines {finding.start_line}-{finding.end_line}")
    if finding.side == "LEFT":
        facts.append("old file")
    if finding.placement == Placement.SUMMARY:
        facts.append("outside the diff")
    if finding.source != "model":
        facts.append(f"from {terminal_text(finding.source)}")
    lines.append(style(_DIM, f"{INDENT}[{category}] {', '.join(facts)}".rstrip()))
    if finding.body.strip():
        lines += _indented(finding.body.strip("\n"))
    if finding.note:
        lines += _indented(f"note: {finding.note}")
    if finding.suggestion is not None:
        lines += _suggestion_diff(finding, change)
    return lines


def count_line(result: ReviewResult) -> str:
    if not result.findings:
        return "No findings."
    by = [f"{n} {s}" for s in Severity if (n := sum(f.severity == s for f in result.findings))]
    total = len(result.findings)
    return f"{total} finding{'s' if total != 1 else ''}: {', '.join(by)}"


def _tail(result: ReviewResult) -> list[str]:
    lines = [count_line(result)]
    unquoted = result.unquoted()
    if unquoted:
        lines.append(unquoted_text(unquoted))
    lines += result.lever_counts()
    if result.summary.strip():
        lines += ["", "Summary:", *_indented(result.summary.strip("\n"))]
    if result.walkthrough is not None:
        lines += ["", *walkthrough_text(result.walkthrough, INDENT)]
    cov = result.coverage
    lines += ["", f"Coverage: {len(cov.reviewed)} reviewed, {len(cov.skipped)} skipped"]
    lines += [f"{INDENT}{terminal_text(s.path)}: {terminal_text(s.reason)}" for s in cov.skipped]
    if result.dropped:
        lines += ["", f"Dropped: {len(result.dropped)}"]
        for finding, reason in result.dropped:
            lines.append(f"{INDENT}{headline(finding)} ({terminal_text(reason)})")
    usage = result.usage
    cached = f" ({usage.cached_tokens:,} cached)" if usage.cached_tokens else ""
    run = ", ".join(
        part
        for part in (
            terminal_text(result.model) and f"model {terminal_text(result.model)}",
            terminal_text(result.effort) and f"effort {terminal_text(result.effort)}",
        )
        if part
    )
    lines += [
        "",
        f"Usage: {usage.prompt_tokens:,} prompt tokens{cached}, "
        f"{usage.completion_tokens:,} completion tokens, "
        f"{usage.requests} request{'s' if usage.requests != 1 else ''}, "
        f"{result.duration_s:.1f} s" + (f" ({run})" if run else ""),
    ]
    return lines


def render_text(result: ReviewResult, change: Change | None = None, *, color: bool = False) -> str:
    """The whole review as terminal text, ending with a newline."""
    style = _Style(color)
    lines: list[str] = []
    for finding in result.findings:
        lines += _finding(finding, change, style)
        lines.append("")
    lines += _tail(result)
    return "\n".join(lines) + "\n"

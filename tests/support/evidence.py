"""Findings that quote their code, as an honest model's do.

Every model finding must quote the code it is about (the evidence rule,
``bot.review.findings.evidence``). Tests of the other steps of the findings check
(anchoring, suggestions, merging, the cap) give their findings the real code at their
lines with :func:`quoted`, so that what they check is those steps and not the rule.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from bot.domain.change import Change
from bot.domain.diff import FileDiff, Side
from bot.domain.results import Finding
from bot.review import find_file, side_text
from bot.review.findings.check import check_findings
from bot.review.findings.evidence import removed_lines

#: Lines quoted at most (the prompt asks for one to three).
MAX_QUOTED = 3


def _side(file: FileDiff, side: Side) -> Side:
    other: Side = "LEFT" if side == "RIGHT" else "RIGHT"
    return other if not file.lines_on(side) and file.lines_on(other) else side


def quote_of(change: Change, finding: Finding) -> str | None:
    """The code at the first lines of ``finding`` on its side, or None if none is known."""
    file = find_file(change.diff, finding.path)
    if file is None:
        return None
    side = _side(file, "LEFT" if str(finding.side).upper() == "LEFT" else "RIGHT")
    lines = removed_lines(file) if side == "LEFT" else side_text(change, file, side).lines
    start, end = sorted((max(1, finding.start_line), max(1, finding.end_line)))
    end = min(end, start + MAX_QUOTED - 1)
    picked = [lines[n].rstrip("\r\n") for n in range(start, end + 1) if n in lines]
    return "\n".join(picked) if any(p.strip() for p in picked) else None


def quoted(findings: list[Finding], change: Change) -> list[Finding]:
    """Copies of ``findings``, each quoting its real code unless it quotes something."""
    return [
        f if f.evidence is not None else dataclasses.replace(f, evidence=quote_of(change, f))
        for f in findings
    ]


def check_quoted(
    raw: list[Finding], change: Change, **options: Any
) -> tuple[list[Finding], list[tuple[Finding, str]]]:
    """:func:`check_findings` on ``raw`` whose findings quote their real code."""
    return check_findings(quoted(raw, change), change, **options)

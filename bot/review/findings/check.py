"""The findings check: what the model reported, made safe to show.

:func:`check_findings` takes the raw findings and returns the ones to show, most severe
first, and the ones it could not keep, each with a reason. Nothing disappears silently:
every input finding is either kept, dropped with a reason, or merged into a kept
finding whose note says so ("merged N duplicate(s): ...").

Steps, in order: find the file (a path outside the change is dropped), check the lines
exist (a finding that starts past the end of the file names no line and is dropped; one
that ends past it is cut at the last line), check the quoted evidence (see
:mod:`bot.review.findings.evidence`: a finding whose quote is not there is dropped; one
whose quote is a few lines away may move to it), anchor them (see
:mod:`bot.review.findings.anchor`), check the suggestion (see
:mod:`bot.review.findings.suggestions`; never on lines the model saw redacted, see
:mod:`bot.review.secrets.redacted_change`), fingerprint (see
:mod:`bot.review.findings.fingerprint`), merge duplicates, then cap at ``max_comments``.
Findings from the secret scan are never merged into another finding nor capped out: a
committed secret is always reported.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from bot.domain.change import Change
from bot.domain.diff import SIDES, FileDiff, Side
from bot.domain.results import Finding
from bot.review.findings.anchor import anchor, find_file, normalise_path
from bot.review.findings.evidence import Quoted, check_evidence
from bot.review.findings.fingerprint import SECRET_SOURCE, fingerprint
from bot.review.findings.merging import (
    add_note,
    fingerprint_secrets,
    merge_duplicates,
    order_key,
)
from bot.review.findings.side_text import SideText, side_text
from bot.review.findings.suggestions import apply_suggestion, suggestion_problem
from bot.review.secrets.redacted_change import REDACTION_MARK, redacted_lines

__all__ = ["PATH_NOT_IN_CHANGE", "apply_suggestion", "check_findings", "order_key"]

PATH_NOT_IN_CHANGE = "path not in this change"

_TextOf = Callable[[FileDiff, Side], SideText]
_HiddenOf = Callable[[FileDiff], frozenset[int]]


def _past_the_end(finding: Finding, text: SideText) -> str | None:
    """Why the finding names no line of the file, or None when its first line exists."""
    start = min(max(1, int(finding.start_line)), max(1, int(finding.end_line)))
    count = text.line_count
    if count is None or start <= count:
        return None
    # A line the file does not have is no line to comment on: moved to the last line it
    # would often land inside a hunk, far from anything the model looked at.
    where = (
        f"line {start}"
        if start == max(finding.start_line, finding.end_line)
        else (f"lines {start}-{max(finding.start_line, finding.end_line)}")
    )
    return f"{where} past the end of the file ({count} lines)"


def _clamp(finding: Finding, text: SideText) -> bool:
    """Sane lines (1 <= start <= end <= file length); whether the range changed.

    Only the end moves to the file's last line: the start is known to exist.
    """
    start, end = sorted((max(1, int(finding.start_line)), max(1, int(finding.end_line))))
    count = text.line_count
    if count is not None and end > count:
        end = max(start, count)
    moved = (start, end) != tuple(sorted((finding.start_line, finding.end_line)))
    if moved:
        add_note(finding, f"lines {finding.start_line}-{finding.end_line} clamped to the file")
    finding.start_line, finding.end_line = start, end
    return moved


def _check_suggestion(
    finding: Finding, file: FileDiff, text: SideText, moved: bool, hidden: frozenset[int]
) -> None:
    if finding.suggestion is None:
        return
    problem: str | None
    old = text.get(finding.start_line, finding.end_line)
    if finding.side != "RIGHT":
        problem = "it is on the old side of the file"
    elif moved:
        problem = "the finding was moved to other lines"
    elif old is None:
        problem = "its lines are not in the new file"
    elif any(n in hidden for n in range(finding.start_line, finding.end_line + 1)):
        # Applying it would overwrite content the model never saw.
        problem = "its lines were redacted before the review"
    elif REDACTION_MARK in finding.suggestion and not any(REDACTION_MARK in x for x in old):
        problem = "it would write a redaction placeholder into the file"
    else:
        problem = suggestion_problem(
            file.path, old, finding.suggestion, text.text, finding.start_line, finding.end_line
        )
    if problem is not None:
        finding.suggestion = None
        add_note(finding, f"suggestion dropped: {problem}")


def _check_one(
    original: Finding, file: FileDiff, text_of: _TextOf, hidden_of: _HiddenOf
) -> Finding | str:
    """The checked copy of ``original``, or why it cannot be kept at all."""
    finding = dataclasses.replace(original)
    if finding.path != file.path:
        renamed = file.old_path != file.path
        if renamed and normalise_path(finding.path) in (file.old_path, f"a/{file.old_path}"):
            add_note(finding, f"{finding.path} is the old name of {file.path}")
        finding.path = file.path
    side = str(finding.side).upper()
    if side not in SIDES:
        add_note(finding, f"side {finding.side!r} read as RIGHT")
        side = "RIGHT"
    finding.side = "LEFT" if side == "LEFT" else "RIGHT"
    past = _past_the_end(finding, text_of(file, finding.side))
    if past is not None and finding.source != SECRET_SOURCE:
        return past
    moved = _clamp(finding, text_of(file, finding.side))
    quoted = check_evidence(finding, file, lambda: text_of(file, "RIGHT").lines)
    if isinstance(quoted, str):
        return quoted
    if isinstance(quoted, Quoted) and quoted.moves:
        add_note(finding, quoted.note(finding.start_line, finding.end_line))
        finding.side, finding.start_line, finding.end_line = quoted.side, quoted.start, quoted.end
        moved = True
    where = anchor(file, finding.side, finding.start_line, finding.end_line)
    finding.side, finding.start_line, finding.end_line = where.side, where.start, where.end
    finding.placement = where.placement
    if where.note:
        add_note(finding, where.note)
    text = text_of(file, finding.side)
    if finding.suggestion is not None:
        hidden = hidden_of(file) if finding.side == "RIGHT" else frozenset()
        _check_suggestion(finding, file, text, moved or where.moved, hidden)
    if finding.source != SECRET_SOURCE:
        code = "".join(text.known(finding.start_line, finding.end_line))
        finding.fingerprint = fingerprint(finding.path, code, finding.title)
    return finding


def check_findings(
    raw: list[Finding], change: Change, *, max_comments: int = 20
) -> tuple[list[Finding], list[tuple[Finding, str]]]:
    """-> (kept findings sorted most severe first, dropped findings with reasons)

    The input findings are not modified; kept and dropped ones are checked copies.
    """
    cache: dict[tuple[str, Side], SideText] = {}
    hidden: dict[str, frozenset[int]] = {}

    def text_of(file: FileDiff, side: Side) -> SideText:
        key = (file.path, side)
        if key not in cache:
            cache[key] = side_text(change, file, side)
        return cache[key]

    def hidden_of(file: FileDiff) -> frozenset[int]:
        if file.path not in hidden:
            hidden[file.path] = redacted_lines(file, text_of(file, "RIGHT").text)
        return hidden[file.path]

    dropped: list[tuple[Finding, str]] = []
    checked: list[Finding] = []
    for original in raw:
        file = find_file(change.diff, original.path)
        if file is None:
            dropped.append((dataclasses.replace(original), PATH_NOT_IN_CHANGE))
            continue
        result = _check_one(original, file, text_of, hidden_of)
        if isinstance(result, str):
            dropped.append((dataclasses.replace(original), result))
        else:
            checked.append(result)
    fingerprint_secrets(checked)
    ordered = sorted(merge_duplicates(checked), key=order_key)
    room = max(0, max_comments - sum(f.source == SECRET_SOURCE for f in ordered))
    kept: list[Finding] = []
    for finding in ordered:
        if finding.source == SECRET_SOURCE or room > 0:
            kept.append(finding)
            room -= finding.source != SECRET_SOURCE
        else:
            dropped.append((finding, f"over max_comments ({max_comments})"))
    return kept, dropped

"""Secret redaction: nothing that looks like a credential leaves for the model.

Every text GitNeural sends (the diff, context, tool results) goes through
:func:`redact_text` or :func:`redact_diff`; :func:`secret_findings` turns secrets on added
lines into ``critical`` findings. Which formats count, and why, is in
:mod:`bot.review.secrets.patterns`.

Redaction never changes the number of lines, and every line it touches says so: each
line of a multi-line private key block becomes the placeholder (blank lines stay blank),
so line numbers the model cites still point at the reviewed file, and no line the model
is shown as code hides what it really holds.
"""

from __future__ import annotations

import bisect
import dataclasses
import hashlib
import re
from dataclasses import dataclass

from bot.domain.diff import Diff, DiffLine, FileDiff, FileStatus, Hunk
from bot.domain.results import Finding, Severity
from bot.review.secrets.blocks import BASE64_RUN, KEY_MATERIAL, Span, bare_runs, digest, key_blocks
from bot.review.secrets.patterns import patterns_for
from bot.review.secrets.wrapped import encoded_tokens, split_tokens


@dataclass(frozen=True)
class SecretHit:
    """Where a secret was found; deliberately without the secret itself."""

    kind: str
    #: 1-based line within the scanned text (the first line of a multi-line secret).
    line: int
    #: False when the match is redacted as a precaution but too uncertain to report.
    report: bool = True


def _pattern_spans(text: str) -> list[Span]:
    return [
        Span(start, end, kind, report, digest(text[start:end]))
        for pattern in patterns_for(text)
        for start, end, kind, report in pattern.find(text)
    ]


def _scan(text: str) -> list[Span]:
    """Non-overlapping secret spans, in order; on overlap the earlier/longer one wins."""
    spans: list[Span] = []
    if "PRIVATE KEY" in text:
        spans.extend(key_blocks(text))
    spans.extend(bare_runs(text))
    spans.extend(_pattern_spans(text))
    spans.extend(split_tokens(text))
    spans.extend(encoded_tokens(text))
    spans.sort(key=lambda s: (s.start, -(s.end - s.start)))
    kept: list[Span] = []
    for span in spans:
        if kept and span.start < kept[-1].end:
            last = kept[-1]
            if span.end > last.end:
                kept[-1] = dataclasses.replace(
                    last, end=span.end, report=last.report or span.report
                )
            continue
        kept.append(span)
    return kept


PLACEHOLDER_PREFIX = "[REDACTED:"


def _placeholder(kind: str) -> str:
    return f"{PLACEHOLDER_PREFIX}{kind}]"


def _covered(piece: str, placeholder: str) -> str:
    if not piece:
        return piece
    return placeholder + ("\r" if piece.endswith("\r") else "")


def _apply(text: str, spans: list[Span]) -> str:
    parts: list[str] = []
    pos = 0
    for span in spans:
        parts.append(text[pos : span.start])
        mark = _placeholder(span.kind)
        # One placeholder per line the secret covers: a blank line that was blank, and
        # the line break a span may end with, stay as they were.
        pieces = text[span.start : span.end].split("\n")
        parts.append("\n".join(_covered(piece, mark) for piece in pieces))
        pos = span.end
    parts.append(text[pos:])
    return "".join(parts)


class _Lines:
    """Maps offsets in a text to 1-based line numbers."""

    def __init__(self, text: str) -> None:
        self._starts = [0, *(m.end() for m in re.finditer("\n", text))]

    def of(self, offset: int) -> int:
        return bisect.bisect_right(self._starts, offset)


def redact_text(text: str) -> tuple[str, list[SecretHit]]:
    """``text`` with every secret replaced by ``[REDACTED:<kind>]``, and where they were."""
    spans = _scan(text)
    if not spans:
        return text, []
    lines = _Lines(text)
    hits = [SecretHit(s.kind, lines.of(s.start), s.report) for s in spans]
    return _apply(text, spans), hits


def redact_path(path: str) -> str:
    """A file name as the model may see it: a token in it is redacted too."""
    return redact_text(path)[0] if path else path


def _hunk_text(hunk: Hunk) -> str:
    return "\n".join(line.text for line in hunk.lines)


def _redact_section(section: str) -> str:
    """git names a hunk after the nearest column-0 line above it: inside a private key
    that is a bare base64 line, which no pattern catches without its BEGIN line."""
    text = redact_text(section)[0]
    for run in BASE64_RUN.findall(text):
        if any(c.isdigit() for c in run) and run.lower() != run and run.upper() != run:
            return f"[REDACTED:{KEY_MATERIAL}]"
    return text


def _redact_hunk(hunk: Hunk) -> Hunk:
    spans = _scan(_hunk_text(hunk))
    section = _redact_section(hunk.section) if hunk.section else hunk.section
    if not spans:
        return hunk if section == hunk.section else dataclasses.replace(hunk, section=section)
    texts = _apply(_hunk_text(hunk), spans).split("\n")
    lines = tuple(
        line if line.text == new else dataclasses.replace(line, text=new)
        for line, new in zip(hunk.lines, texts, strict=True)
    )
    return dataclasses.replace(hunk, section=section, lines=lines)


def redact_diff(diff: Diff) -> Diff:
    """The same diff with every line's text redacted; line numbers are unchanged."""
    files: list[FileDiff] = []
    for file in diff.files:
        hunks = [_redact_hunk(h) for h in file.hunks]
        changed = any(new is not old for new, old in zip(hunks, file.hunks, strict=True))
        files.append(dataclasses.replace(file, hunks=hunks) if changed else file)
    return Diff(files)


def _finding(path: str, line: DiffLine, span: Span, where: str = "on this line") -> Finding:
    assert line.new_no is not None
    body = (
        f"A {span.kind} appears to be committed {where}. Treat it as leaked: revoke "
        "or rotate it now, then remove it from the change (and from the history if it was "
        "pushed) and load it from the environment or a secret store instead. GitNeural "
        "redacted it before the review and does not repeat it here."
    )
    fingerprint = hashlib.sha256(f"secret-scan|{path}|{span.kind}|{span.digest}".encode())
    return Finding(
        path=path,
        start_line=line.new_no,
        end_line=line.new_no,
        side="RIGHT",
        severity=Severity.CRITICAL,
        category="security",
        title="secret committed",
        body=body,
        fingerprint=fingerprint.hexdigest()[:16],
        source="secret-scan",
    )


def _name_findings(file: FileDiff) -> list[Finding]:
    """A secret in the name of an added or renamed file, reported on its first new line."""
    first = next((ln for h in file.hunks for ln in h.lines if ln.kind == "+"), None)
    if first is None or (file.old_path == file.path and file.status != FileStatus.ADDED):
        return []
    spans = [s for s in _scan(file.path) if s.report]
    return [_finding(file.path, first, s, "in this file's name") for s in spans]


def secret_findings(diff: Diff) -> list[Finding]:
    """A ``critical`` finding for each reportable secret on an added line (or in the
    name of a file the change adds)."""
    findings: list[Finding] = []
    for file in diff.files:
        findings += _name_findings(file)
        seen: set[tuple[int, str]] = set()
        for hunk in file.hunks:
            text = _hunk_text(hunk)
            spans = [s for s in _scan(text) if s.report]
            if not spans:
                continue
            lines = _Lines(text)
            for span in spans:
                first, last = lines.of(span.start), lines.of(max(span.start, span.end - 1))
                added = [ln for ln in hunk.lines[first - 1 : last] if ln.kind == "+"]
                if not added or (added[0].new_no, span.kind) in seen:
                    continue
                seen.add((added[0].new_no or 0, span.kind))
                findings.append(_finding(file.path, added[0], span))
    return findings


def secret_notes(title: str, description: str) -> list[str]:
    """What the review's summary says of secrets in the change's title or description
    (a pull request's, or the commit messages of a local change): no line to comment on."""
    notes = []
    for where, text in (("title", title), ("description or commit messages", description)):
        kinds = sorted({hit.kind for hit in redact_text(text)[1] if hit.report})
        if kinds:
            notes.append(
                f"Secret committed: a {', a '.join(kinds)} appears in the change's {where}. "
                "Treat it as leaked and revoke or rotate it; GitNeural redacted it before the "
                "review and does not repeat it here."
            )
    return notes

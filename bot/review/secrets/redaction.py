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

from bot.domain.diff import Diff, DiffLine, FileDiff, Hunk
from bot.domain.results import Finding, Severity
from bot.review.secrets.patterns import patterns_for

PRIVATE_KEY = "private key"
#: Runs of bare base64 lines with no BEGIN/END in sight: the middle of a key, or a
#: certificate. Redacted (the model gains nothing from them) but never reported.
KEY_MATERIAL = "key material"

_BEGIN = re.compile(r"-----BEGIN[A-Z0-9 ]{0,40} PRIVATE KEY(?: BLOCK)?-----")
_END = re.compile(r"-----END[A-Z0-9 ]{0,40} PRIVATE KEY(?: BLOCK)?-----")
# A line of a PEM/OpenSSH body as it appears in files and source: base64, optional
# RFC 1421 headers, wrapped in quotes, string escapes, commas or concatenation.
_BODY_LINE = re.compile(
    r"""[ \t"'`+,;]*(?:[A-Za-z0-9+/=]{16,}|(?:Proc-Type|DEK-Info|Comment):[^\n]*|)"""
    r"""(?:\\n)?[ \t"'`+,;\\]*(?:\r?\n|\Z)"""
)
# Anchored on the newline, not on ``^``: ``re`` finds a literal fast, a class slowly.
_BARE_RUN = re.compile(
    r"""(?:\n[ \t"'`]*[A-Za-z0-9+/]{60,76}={0,2}(?:\\n)?[ \t"'`+,;]*(?=\r?\n|$)){3,}"""
)
_BARE_LINE = re.compile(r"""\n[ \t"'`]*[A-Za-z0-9+/]{60}""")
_BASE64_RUN = re.compile(r"[A-Za-z0-9+/]{40,}")
_MAX_KEY_CHARS = 20_000


@dataclass(frozen=True)
class SecretHit:
    """Where a secret was found; deliberately without the secret itself."""

    kind: str
    #: 1-based line within the scanned text (the first line of a multi-line secret).
    line: int
    #: False when the match is redacted as a precaution but too uncertain to report.
    report: bool = True


@dataclass(frozen=True)
class _Span:
    start: int
    end: int
    kind: str
    report: bool
    #: Short hash of the secret, for stable fingerprints; never the secret.
    digest: str


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8", "surrogateescape")).hexdigest()[:16]


def _key_blocks(text: str) -> list[_Span]:
    spans: list[_Span] = []
    paired_ends: set[int] = set()
    begin = _BEGIN.search(text)
    while begin is not None:
        following = _BEGIN.search(text, begin.end())
        # The END of this key comes before the next BEGIN (bounding the search keeps a
        # text of many markers linear).
        limit = min(begin.end() + _MAX_KEY_CHARS, following.start() if following else len(text))
        end = _END.search(text, begin.end(), limit)
        if end is not None:
            stop = end.end()
            paired_ends.add(end.start())
        else:
            # Truncated (a window or hunk that ends inside the key): the body lines after.
            nl = text.find("\n", begin.end())
            stop = len(text) if nl < 0 else nl + 1
            while nl >= 0 and (line := _BODY_LINE.match(text, stop)) and line.end() > stop:
                stop = line.end()
        body = text[begin.end() : stop]
        if _BASE64_RUN.search(body):
            # A marker without base64 after it is code that parses PEM, not a key.
            spans.append(_Span(begin.start(), stop, PRIVATE_KEY, True, _digest(body)))
        while following is not None and following.start() < stop:
            following = _BEGIN.search(text, following.end())
        begin = following
    # An END whose BEGIN lies before the scanned text: the key lines just above it.
    for end in _END.finditer(text):
        if end.start() in paired_ends:
            continue
        start = cursor = text.rfind("\n", 0, end.start()) + 1
        while cursor > 0:
            prev = text.rfind("\n", 0, cursor - 1) + 1
            if _BODY_LINE.fullmatch(text, prev, cursor) is None:
                break
            start = cursor = prev
        if _BASE64_RUN.search(text, start, end.start()):
            secret = text[start : end.end()]
            spans.append(_Span(start, end.end(), PRIVATE_KEY, True, _digest(secret)))
    return spans


def _bare_runs(text: str) -> list[_Span]:
    # Prefixing "\n" lets the first line start a run; offsets shift back by one. The
    # run regex is slow to scan with, so it only runs where a long base64 line starts.
    shifted = "\n" + text
    spans: list[_Span] = []
    pos = 0
    while (line := _BARE_LINE.search(shifted, pos)) is not None:
        run = _BARE_RUN.match(shifted, line.start())
        if run is None:
            pos = line.end()
            continue
        spans.append(_Span(run.start(), run.end() - 1, KEY_MATERIAL, False, ""))
        pos = run.end()
    return spans


def _pattern_spans(text: str) -> list[_Span]:
    spans: list[_Span] = []
    for pattern in patterns_for(text):
        for match in pattern.regex.finditer(text):
            secret = match.group(pattern.group)
            kind = pattern.kind_of(match) if secret else None
            if kind is None:
                continue
            report = pattern.report(match) if pattern.report is not None else True
            start, end = match.span(pattern.group)
            spans.append(_Span(start, end, kind, report, _digest(secret)))
    return spans


def _scan(text: str) -> list[_Span]:
    """Non-overlapping secret spans, in order; on overlap the earlier/longer one wins."""
    spans: list[_Span] = []
    if "PRIVATE KEY" in text:
        spans.extend(_key_blocks(text))
    spans.extend(_bare_runs(text))
    spans.extend(_pattern_spans(text))
    spans.sort(key=lambda s: (s.start, -(s.end - s.start)))
    kept: list[_Span] = []
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


def _apply(text: str, spans: list[_Span]) -> str:
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


def _hunk_text(hunk: Hunk) -> str:
    return "\n".join(line.text for line in hunk.lines)


def _redact_section(section: str) -> str:
    """git names a hunk after the nearest column-0 line above it: inside a private key
    that is a bare base64 line, which no pattern catches without its BEGIN line."""
    text = redact_text(section)[0]
    for run in _BASE64_RUN.findall(text):
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


def _finding(path: str, line: DiffLine, span: _Span) -> Finding:
    assert line.new_no is not None
    body = (
        f"A {span.kind} appears to be committed on this line. Treat it as leaked: revoke "
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


def secret_findings(diff: Diff) -> list[Finding]:
    """A ``critical`` finding for each reportable secret on an added line."""
    findings: list[Finding] = []
    for file in diff.files:
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

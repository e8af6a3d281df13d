"""What the model reads about each file: its annotated diff and the code around it.

The diff is shown with a label on every line saying where a comment may go: ``R12`` is
line 12 of the new file (an added or unchanged line, ``side: RIGHT``) and ``L7`` is line 7
of the old file (a removed line, ``side: LEFT``). Unchanged lines carry only their new
number, so every line has exactly one label and the model never has to do arithmetic.

The context is the enclosing function or class of every changed line, read from the
reviewed (head) content and numbered by new-file line: ``  40| code``.

Repository instructions are read by :mod:`bot.review.context.instructions`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass

from bot.domain.change import Snapshot
from bot.domain.diff import FileDiff, FileStatus, Hunk
from bot.errors import UnparsableError
from bot.review.context.enclosing import (
    enclosing_ranges,
    enclosing_units,
    heuristic_units,
    unit_name,
)
from bot.review.context.languages import language_for
from bot.review.secrets.redaction import redact_text
from bot.review.token_estimate import estimate_tokens
from bot.text import decode_text, printable

__all__ = [
    "FileContext",
    "annotate_diff",
    "build_file_context",
    "enclosing_ranges",
]

#: Head files larger than this get no context: parsing them costs more than it brings.
MAX_SOURCE_BYTES = 1_000_000
#: Context lines per file; what is beyond is cut with a visible note.
MAX_CONTEXT_LINES = 400
#: Lines redacted above and below each shown unit (as ``read_file`` does around a window).
REDACTION_MARGIN = 200
#: A unit is shown only if it adds this many lines the diff does not show: the hunk
#: header usually names the function already.
_MIN_NEW_LINES = 3


@dataclass
class FileContext:
    file: FileDiff
    language: str
    #: Hunks annotated with the line labels the model must use.
    diff_text: str
    #: Enclosing functions/classes from the head content ("" when none or not expanded).
    context_text: str
    #: Estimate of ``diff_text`` + ``context_text``.
    tokens: int
    #: The enclosing code was looked for by the heuristic, no parser reading the file
    #: (:func:`bot.review.context.enclosing.heuristic_units`); the summary names it.
    heuristic: bool = False
    #: Why the file is reviewed without context, when a parser would not or could not
    #: read it (:class:`bot.errors.UnparsableError`); "" otherwise. The summary names it.
    unparsed: str = ""

    def bare(self) -> FileContext:
        """The same file without its context (the budget's fallback)."""
        return dataclasses.replace(self, context_text="", tokens=estimate_tokens(self.diff_text))


def _annotate_hunk(hunk: Hunk, width: int) -> list[str]:
    out = [printable(hunk.header())]
    for line in hunk.lines:
        label = f"L{line.old_no}" if line.kind == "-" else f"R{line.new_no}"
        out.append(f"{label:<{width}} {line.kind}{printable(line.text)}")
        if not line.eol:  # as git prints it: after the old or the new last line
            out.append("\\ No newline at end of file")
    return out


def annotate_diff(file: FileDiff) -> str:
    """The file's hunks with a ``R<new>``/``L<old>`` label on every line."""
    biggest = max(
        (n for h in file.hunks for ln in h.lines for n in (ln.old_no, ln.new_no) if n),
        default=1,
    )
    width = len(str(biggest)) + 1
    lines: list[str] = []
    for hunk in file.hunks:
        lines.extend(_annotate_hunk(hunk, width))
    return "\n".join(lines)


def _read_head(head: Snapshot, path: str) -> str | None:
    size = head.size(path)
    if size is None or size > MAX_SOURCE_BYTES:
        return None
    data = head.read(path)
    if data is None or b"\0" in data[:8192]:
        return None
    return decode_text(data)


def _merge(ranges: Iterable[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
    merged: list[tuple[int, int, int]] = []
    for start, end, header in sorted(ranges):
        if merged and start <= merged[-1][1] + 1:
            first = merged[-1]
            merged[-1] = (first[0], max(first[1], end), first[2])
        else:
            merged.append((start, end, header))
    return merged


def _redacted(lines: list[str], blocks: list[tuple[int, int, int]]) -> dict[int, str]:
    """The lines of ``blocks`` (1-based ranges), redacted with a margin around each."""
    windows: list[tuple[int, int]] = []
    for start, end, _ in blocks:
        low, high = max(1, start - REDACTION_MARGIN), min(len(lines), end + REDACTION_MARGIN)
        if windows and low <= windows[-1][1] + 1:
            windows[-1] = (windows[-1][0], high)
        else:
            windows.append((low, high))
    shown: dict[int, str] = {}
    for low, high in windows:
        # Redaction keeps the number of lines, so the window's lines map one to one.
        text = redact_text("\n".join(lines[low - 1 : high]))[0]
        shown.update(enumerate(text.split("\n"), low))
    return shown


def render_context(file: FileDiff, source: str) -> str:
    """The enclosing units of the file's changes, numbered by new-file line.

    ``source`` need not be redacted: the units are found in it as it is, and only the
    lines shown, with ``REDACTION_MARGIN`` lines around them, are redacted (so a secret
    that spans lines, such as a private key cut at a unit's edge, is still recognised).
    Redacting the whole file instead cost more than all the rest of a file's context.
    """
    src = [ln.removesuffix("\r") for ln in printable(source).split("\n")]
    shown = file.right_lines
    picked: list[tuple[int, int, int]] = []
    cut = False
    used = 0
    for start, end, header in _merge(enclosing_units(file.path, src, file.touched_lines)):
        if sum(1 for n in range(start, end + 1) if n not in shown) < _MIN_NEW_LINES:
            continue  # (nearly) the whole unit is in the diff already
        if used + end - start + 1 > MAX_CONTEXT_LINES:
            cut = True
            break
        used += end - start + 1
        picked.append((start, end, header))
    lines = _redacted(src, picked)
    blocks: list[str] = []
    for start, end, header in picked:
        width = len(str(end))
        body = "\n".join(f"{n:>{width}}| {lines[n]}" for n in range(start, end + 1))
        blocks.append(f"lines {start}-{end}: {unit_name(lines[header])}\n{body}")
    if cut:
        blocks.append(f"[more enclosing code cut: over {MAX_CONTEXT_LINES} lines]")
    return "\n\n".join(blocks)


def build_file_context(file: FileDiff, head: Snapshot | None, *, expand: bool) -> FileContext:
    """Annotated diff, plus the enclosing code when ``expand`` and the head is readable.

    A new file is in the diff whole, so it gets no context; neither does a bare diff
    (no head snapshot).
    """
    language, _ = language_for(file.path)
    diff_text = annotate_diff(file)
    context_text = ""
    heuristic = False
    unparsed = ""
    if expand and head is not None and file.status not in (FileStatus.ADDED, FileStatus.DELETED):
        source = _read_head(head, file.path)
        if source is not None:
            try:
                context_text = render_context(file, source)
                heuristic = heuristic_units(file.path)
            except UnparsableError as error:
                unparsed = str(error)  # the diff alone is reviewed, and the summary says so
    tokens = estimate_tokens(diff_text) + estimate_tokens(context_text)
    return FileContext(file, language, diff_text, context_text, tokens, heuristic, unparsed)

"""A finding's ``evidence`` read as a quote of code, and where it occurs in a run of lines.

Matching is whitespace-insensitive: every whitespace character is removed from each line
of the quote and of the file, and blank lines are skipped on both sides, so other
indentation, other spacing (``age>18`` for ``age > 18``), tabs for spaces or CRLF still
match. The quote behaves like a selection in an editor: a one-line quote may be part of
a line; in a longer one the first line may be the end of a file line, the last line the
start of one, and the lines between must be whole lines.

The model copies what the prompt showed it, so two slips are forgiven (tried only when
the quote as given is not found): a line label and diff marker copied with the code
(``R12 +``, ``L7 -``, ``  40| ``), and the quote wrapped in a code fence or backticks. A
``[REDACTED:kind]`` placeholder stands for the secret the model was not shown: it
matches any text within its line. A quote that is only placeholders (a private key's
lines) is looked for as it is in the lines as the model saw them (``literal``).

Matching compares lines and finds the pieces between placeholders leftmost first, never a
backtracking regular expression: a quote and a file that both come from a pull request's
author cannot make it slow.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from bot.review.secrets.redacted_change import REDACTION_MARK
from bot.text import printable

#: A label the prompt puts before each diff line (``R12 +``) or enclosing-code line (``40|``).
_LABEL = re.compile(r"^\s*(?:[RL]\d+ +[-+]?|\d+\| ?)")
_FENCE = re.compile(r"^\s*(?:```|~~~)[\w+.-]*\s*$")
#: A placeholder, as redaction writes it: its kind may hold spaces ("private key").
_PLACEHOLDER = re.compile(re.escape(REDACTION_MARK) + r"[^\]\n]{0,60}\]")

#: One quoted line: the literal pieces around its placeholders (one piece: no placeholder).
_Line = tuple[str, ...]


def squeeze(line: str) -> str:
    """``line`` without any whitespace (and with undecodable bytes as U+FFFD)."""
    return "".join(printable(line).split())


def _unwrapped(lines: list[str]) -> list[str]:
    """The quote's lines without a surrounding code fence, backticks, labels or markers."""
    while lines and not lines[0].strip():
        lines = lines[1:]
    while lines and not lines[-1].strip():
        lines = lines[:-1]
    if len(lines) >= 2 and _FENCE.match(lines[0]) and _FENCE.match(lines[-1]):
        lines = lines[1:-1]
    if len(lines) == 1:
        one = lines[0].strip()
        if len(one) > 2 and one.startswith("`") and one.endswith("`"):
            lines = [one.strip("`")]
    return [_LABEL.sub("", line, count=1) for line in lines]


def _pieces(lines: list[str], literal: bool) -> tuple[_Line, ...] | None:
    """The quote's non-blank lines as pieces, or None if they quote nothing checkable."""
    out: list[_Line]
    if literal:
        out = [(squeeze(line),) for line in lines]
        return tuple(line for line in out if line[0]) or None
    out = [tuple(squeeze(p) for p in _PLACEHOLDER.split(line)) for line in lines]
    out = [line for line in out if any(line) or len(line) > 1]
    # A quote that is only placeholders (or blank) says nothing about the code.
    return tuple(out) if any(any(line) for line in out) else None


def _fits(line: _Line, text: str, *, at_start: bool, at_end: bool) -> bool:
    """Whether ``text`` holds the pieces of ``line`` in order (placeholders between them
    match anything), starting at its start and ending at its end when asked."""
    if len(line) == 1:
        piece = line[0]
        if at_start and at_end:
            return text == piece
        if at_start:
            return text.startswith(piece)
        return text.endswith(piece) if at_end else piece in text
    first, *middle, last = line
    if at_start and not text.startswith(first):
        return False
    pos = len(first) if at_start else text.find(first)
    if pos < 0:
        return False
    pos += len(first) if not at_start else 0
    for piece in middle:
        found = text.find(piece, pos)
        if found < 0:
            return False
        pos = found + len(piece)
    if at_end:
        return text.endswith(last) and len(text) - len(last) >= pos
    return text.find(last, pos) >= 0


@dataclass(frozen=True)
class Quote:
    """A finding's evidence, ready to be looked for."""

    #: The quote as given, then the quote cleaned of fences, labels and markers.
    variants: tuple[tuple[_Line, ...], ...]
    #: How many lines the quote covers (blank lines not counted).
    height: int

    @classmethod
    def of(cls, evidence: str | None, *, literal: bool = False) -> Quote | None:
        """The quote in ``evidence``, or None when there is nothing to look for.

        ``literal``: placeholders are text to find as they are, in the lines as the model
        was shown them (a quote of nothing but placeholders then says which lines).
        """
        if evidence is None or (literal and REDACTION_MARK not in evidence):
            return None
        raw = evidence.replace("\r\n", "\n").split("\n")
        variants: list[tuple[_Line, ...]] = []
        for lines in (raw, _unwrapped(raw)):
            pieces = _pieces(lines, literal)
            if pieces is not None and pieces not in variants:
                variants.append(pieces)
        if not variants:
            return None
        return cls(tuple(variants), max(len(v) for v in variants))


def _runs(lines: Mapping[int, str], lo: int, hi: int) -> Iterator[list[tuple[int, str]]]:
    """The known lines ``lo..hi``, squeezed, split where a line is unknown; blank lines
    skipped."""
    if hi - lo > len(lines):
        numbers = sorted(n for n in lines if lo <= n <= hi)
    else:
        numbers = [n for n in range(lo, hi + 1) if n in lines]
    run: list[tuple[int, str]] = []
    previous = None
    for n in numbers:
        if previous is not None and n != previous + 1 and run:
            yield run
            run = []
        previous = n
        text = squeeze(lines[n])
        if text:
            run.append((n, text))
    if run:
        yield run


def _at(quote: tuple[_Line, ...], run: list[tuple[int, str]], j: int) -> bool:
    """Whether the quote's lines match the run's lines from index ``j`` on, as a selection."""
    k = len(quote)
    if j + k > len(run):
        return False
    return all(
        _fits(line, run[j + i][1], at_start=i > 0, at_end=i < k - 1) for i, line in enumerate(quote)
    )


def occurrences(quote: Quote, lines: Mapping[int, str], lo: int, hi: int) -> list[tuple[int, int]]:
    """The line ranges within ``lo..hi`` of ``lines`` where ``quote`` occurs."""
    found: list[tuple[int, int]] = []
    for variant in quote.variants:
        for run in _runs(lines, lo, hi):
            for j in range(len(run)):
                if _at(variant, run, j):
                    where = (run[j][0], run[j + len(variant) - 1][0])
                    if where not in found:
                        found.append(where)
        if found:
            break
    return found

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
matches any text within its line.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from bot.review.secrets.redacted_change import REDACTION_MARK
from bot.text import printable

#: A label the prompt puts before each diff line (``R12 +``) or enclosing-code line (``40|``).
_LABEL = re.compile(r"^\s*(?:[RL]\d+ +[-+]?|\d+\| ?)")
_FENCE = re.compile(r"^\s*(?:```|~~~)[\w+.-]*\s*$")
_PLACEHOLDER = re.compile(re.escape(REDACTION_MARK) + r"[^\]\s]*\]")
#: What a placeholder matches once whitespace is gone: anything on the same line.
_ANY_IN_LINE = "[^\n]*?"


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


def _pattern(lines: list[str]) -> re.Pattern[str] | None:
    """The regular expression of quote lines, or None if they quote nothing checkable."""
    parts: list[str] = []
    for line in lines:
        pieces = [re.escape(squeeze(p)) for p in _PLACEHOLDER.split(line)]
        if any(pieces) or len(pieces) > 1:
            parts.append(_ANY_IN_LINE.join(pieces))
    # A quote that is only placeholders (or blank) says nothing about the code.
    if not any(squeeze(_PLACEHOLDER.sub("", line)) for line in lines):
        return None
    return re.compile("\n".join(parts))


@dataclass(frozen=True)
class Quote:
    """A finding's evidence, ready to be looked for."""

    #: The quote as given, then the quote cleaned of fences, labels and markers.
    patterns: tuple[re.Pattern[str], ...]
    #: How many lines the quote covers (blank lines not counted).
    height: int

    @classmethod
    def of(cls, evidence: str | None) -> Quote | None:
        """The quote in ``evidence``, or None when there is nothing to look for."""
        if evidence is None:
            return None
        raw = evidence.replace("\r\n", "\n").split("\n")
        patterns: list[re.Pattern[str]] = []
        for lines in (raw, _unwrapped(raw)):
            pattern = _pattern(lines)
            if pattern is not None and pattern.pattern not in [p.pattern for p in patterns]:
                patterns.append(pattern)
        if not patterns:
            return None
        height = max(1, sum(bool(squeeze(line)) for line in raw))
        return cls(tuple(patterns), height)


@dataclass(frozen=True)
class _Run:
    """Consecutive known lines: their numbers and their squeezed, newline-joined text."""

    numbers: list[int]
    offsets: list[int]
    text: str

    def lines_of(self, start: int, end: int) -> tuple[int, int]:
        first = bisect.bisect_right(self.offsets, start) - 1
        last = bisect.bisect_right(self.offsets, max(start, end - 1)) - 1
        return self.numbers[first], self.numbers[last]


def _runs(lines: Mapping[int, str], lo: int, hi: int) -> Iterator[_Run]:
    """The known lines ``lo..hi``, split where a line is unknown; blank lines skipped."""
    if hi - lo > len(lines):
        numbers = sorted(n for n in lines if lo <= n <= hi)
    else:
        numbers = [n for n in range(lo, hi + 1) if n in lines]
    run: list[tuple[int, str]] = []
    previous = None
    for n in numbers:
        if previous is not None and n != previous + 1 and run:
            yield _run(run)
            run = []
        previous = n
        text = squeeze(lines[n])
        if text:
            run.append((n, text))
    if run:
        yield _run(run)


def _run(items: list[tuple[int, str]]) -> _Run:
    offsets, at = [], 0
    for _, text in items:
        offsets.append(at)
        at += len(text) + 1
    return _Run([n for n, _ in items], offsets, "\n".join(t for _, t in items))


def occurrences(quote: Quote, lines: Mapping[int, str], lo: int, hi: int) -> list[tuple[int, int]]:
    """The line ranges within ``lo..hi`` of ``lines`` where ``quote`` occurs."""
    found: list[tuple[int, int]] = []
    for pattern in quote.patterns:
        for run in _runs(lines, lo, hi):
            for match in pattern.finditer(run.text):
                where = run.lines_of(match.start(), match.end())
                if where not in found:
                    found.append(where)
        if found:
            break
    return found

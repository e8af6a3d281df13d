"""The evidence rule: a finding is shown only if the code it quotes is really there.

Every model finding carries ``evidence``, one to three lines quoted from the code it is
about. The quote is looked for (see :mod:`bot.review.findings.quotes`: whitespace does not
count) in the reviewed snapshot, near the lines the model gave:

- side RIGHT: the new file (the head snapshot; for a bare diff, the lines it shows);
- side LEFT: the removed lines of the diff (a LEFT finding is about removed code);
- near: within the finding's lines widened by :data:`EVIDENCE_WINDOW` lines on each side
  (a quote of k lines may reach k - 1 lines further).

A ``[REDACTED:kind]`` placeholder in a quote stands for the line it replaced: a quote
that is only placeholders (the lines of a private key) is found in the lines as the
model was shown them. A finding whose quote is not found, or that quotes nothing, is not
shown: it is dropped
with a reason starting with :data:`QUOTE_NOT_FOUND` and counted in every output. The
secret scan's findings, and findings on deleted or binary files (no code to quote), are
exempt.

When the quote lies near the finding but not on its lines, the model's line numbers are
the likelier slip (the quote is verified text; the numbers are copied labels), so the
finding moves to the quoted lines if GitHub accepts a comment there, or if it does not
accept one on the finding's own lines either; otherwise it stays where it is. Either way
the anchoring rules (:mod:`bot.review.findings.anchor`) then apply as to any finding, and
a moved finding loses its suggestion (it was written for other lines).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from bot.domain.diff import FileDiff, FileStatus, Side
from bot.domain.results import QUOTE_NOT_FOUND, Finding
from bot.review.findings.fingerprint import SECRET_SOURCE
from bot.review.findings.quotes import Quote, occurrences
from bot.review.secrets.redaction import redact_text

#: Lines around a finding's own lines where its quote may be found.
EVIDENCE_WINDOW = 3


@dataclass(frozen=True)
class Quoted:
    """Where a finding's quote was found: the side and lines to place the finding on."""

    side: Side
    start: int
    end: int
    #: The finding should move there (its own lines do not hold the quote).
    moves: bool

    def note(self, start: int, end: int) -> str:
        """What the finding's note says when it moves from lines ``start..end``."""
        return (
            f"moved from {_lines(start, end)} to {_lines(self.start, self.end)}, the code it quotes"
        )


def _exempt(finding: Finding, file: FileDiff) -> bool:
    return finding.source == SECRET_SOURCE or file.status == FileStatus.DELETED or file.binary


def _side(file: FileDiff, side: Side) -> Side:
    """The side to read: an added file has only a new side (as the anchoring knows)."""
    other: Side = "LEFT" if side == "RIGHT" else "RIGHT"
    return other if not file.lines_on(side) and file.lines_on(other) else side


def removed_lines(file: FileDiff) -> dict[int, str]:
    """Old-file line number -> text, for the lines the diff removes."""
    return {
        ln.old_no: ln.text
        for hunk in file.hunks
        for ln in hunk.lines
        if ln.kind == "-" and ln.old_no is not None
    }


def _nearest(found: list[tuple[int, int]], start: int, end: int) -> tuple[int, int]:
    def distance(where: tuple[int, int]) -> int:
        lo, hi = where
        return max(0, lo - end, start - hi)

    return min(found, key=lambda where: (distance(where), where))


def _lines(start: int, end: int) -> str:
    return f"line {start}" if start == end else f"lines {start}-{end}"


def _where(side: Side, start: int, end: int) -> str:
    lines = _lines(start, end)
    return f"new-file {lines}" if side == "RIGHT" else f"the removed lines near old-file {lines}"


def _shown(lines: Mapping[int, str]) -> dict[int, str]:
    """``lines`` as the model was shown them: redacted (line for line) as one text, so a
    key spread over lines is recognised as in the prompt."""
    numbers = sorted(lines)
    # Lines keep their ends; whitespace does not count in a quote, so they are dropped.
    real = [lines[n].rstrip("\r\n") for n in numbers]
    shown = redact_text("\n".join(real))[0].split("\n")
    if len(shown) != len(numbers):  # a lone "\r" or the like inside a line
        shown = [redact_text(line)[0] for line in real]
    return dict(zip(numbers, shown, strict=True))


def check_evidence(
    finding: Finding, file: FileDiff, new_lines: Callable[[], Mapping[int, str]]
) -> Quoted | str | None:
    """Where ``finding``'s quote is (:class:`Quoted`), why it cannot be shown (a reason
    starting with :data:`QUOTE_NOT_FOUND`), or None when the rule does not apply.

    ``new_lines`` gives the new file's lines by number (whatever of them is known).
    """
    if _exempt(finding, file):
        return None
    quote = Quote.of(finding.evidence)
    literal = Quote.of(finding.evidence, literal=True)
    if quote is None and literal is None:
        return f"{QUOTE_NOT_FOUND}: the finding quotes no code as its evidence"
    side = _side(file, finding.side)
    start, end = finding.start_line, finding.end_line
    lines = new_lines() if side == "RIGHT" else removed_lines(file)
    found: list[tuple[int, int]] = []
    if quote is not None:
        reach = EVIDENCE_WINDOW + quote.height - 1
        found = occurrences(quote, lines, max(1, start - reach), end + reach)
    if not found and literal is not None:
        # The placeholders are looked for where the model saw them.
        reach = EVIDENCE_WINDOW + literal.height - 1
        found = occurrences(literal, _shown(lines), max(1, start - reach), end + reach)
    if not found:
        window = (max(1, start - EVIDENCE_WINDOW), end + EVIDENCE_WINDOW)
        return f"{QUOTE_NOT_FOUND} in {_where(side, *window)}"
    lo, hi = _nearest(found, start, end)
    on_own_lines = lo <= end and start <= hi
    moves = not on_own_lines and (
        file.commentable(side, lo, hi) or not file.commentable(finding.side, start, end)
    )
    return Quoted(side, lo, hi, moves) if moves else Quoted(finding.side, start, end, False)

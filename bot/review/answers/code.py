"""The code a reply in a finding's thread is about, as the model may see it.

Two views, both redacted: the PR's diff of the finding's file at its current head,
only the hunks around the finding's lines (labelled ``R``/``L`` as in a review), and
the file itself around those lines, numbered (``  40| code``). A secret in the window,
or in the lines next to it (a private key cut at the window's edge), is redacted as in
the review's context.
"""

from __future__ import annotations

import dataclasses

from bot.domain.change import Change
from bot.domain.conversation import PostedFinding
from bot.domain.diff import FileDiff
from bot.review.context.file_context import annotate_diff
from bot.review.secrets.redaction import redact_text
from bot.text import decode_text, printable

#: Lines shown above and below the finding's lines.
AROUND = 20
#: Hunks this close to the finding's lines count as around them.
_NEAR = 3
#: Lines redacted above and below the window (as the review's context does).
_REDACTION_MARGIN = 200
_MAX_SOURCE_BYTES = 1_000_000


def finding_diff(safe_file: FileDiff | None, finding: PostedFinding) -> str:
    """The hunks of ``safe_file`` (from the redacted diff) around the finding's lines."""
    if safe_file is None:
        return ""
    low, high = finding.start_line - _NEAR, finding.end_line + _NEAR
    hunks = []
    for hunk in safe_file.hunks:
        lines = hunk.lines_on(finding.side)
        if lines and min(lines) <= high and max(lines) >= low:
            hunks.append(hunk)
    if not hunks:
        return ""
    return annotate_diff(dataclasses.replace(safe_file, hunks=hunks))


def finding_code(change: Change, finding: PostedFinding) -> str:
    """The file around the finding's lines, numbered and redacted: the head's file for a
    RIGHT finding, the base's for a LEFT one."""
    snapshot = change.head if finding.side == "RIGHT" else change.base
    if snapshot is None:
        return ""
    size = snapshot.size(finding.path)
    data = snapshot.read(finding.path) if size is not None and size <= _MAX_SOURCE_BYTES else None
    if data is None or b"\0" in data[:8192]:
        return ""
    lines = [ln.removesuffix("\r") for ln in printable(decode_text(data)).split("\n")]
    start = max(1, finding.start_line - AROUND)
    end = min(len(lines), finding.end_line + AROUND)
    if start > end:
        return ""
    low, high = max(1, start - _REDACTION_MARGIN), min(len(lines), end + _REDACTION_MARGIN)
    # Redaction keeps the number of lines, so the redacted window maps line for line.
    redacted = redact_text("\n".join(lines[low - 1 : high]))[0].split("\n")
    width = len(str(end))
    return "\n".join(f"{n:>{width}}| {redacted[n - low]}" for n in range(start, end + 1))

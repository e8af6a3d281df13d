"""The text of one side of a changed file, from a snapshot when there is one.

The RIGHT side is read from ``change.head`` and the LEFT side from ``change.base``; for a
bare diff (no snapshots) only the lines the diff shows are known, which is enough to
check that a suggestion's lines exist and to fingerprint a finding.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from bot.domain.change import Change
from bot.domain.diff import FileDiff, FileStatus, Side
from bot.text import decode_text


def split_lines(text: str) -> list[str]:
    """Lines with their endings, split on ``\\n`` only (as git counts them).

    ``str.splitlines`` also splits on form feeds, ``\\x1c`` and U+2028, which would
    shift line numbers against the diff's.
    """
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


@dataclass(frozen=True)
class SideText:
    #: Line number -> the line with its ending.
    lines: Mapping[int, str]
    #: The whole file when read from a snapshot; ``None`` when only the diff is known.
    text: str | None

    def get(self, start: int, end: int) -> list[str] | None:
        """Lines ``start..end`` with their endings, or ``None`` if any is unknown."""
        # More lines than are known means one is unknown: answered before a model's
        # line 10**12 makes a list of that size.
        if start < 1 or end < start or end - start >= len(self.lines):
            return None
        found = [self.lines.get(n) for n in range(start, end + 1)]
        return None if any(line is None for line in found) else [str(x) for x in found]

    def known(self, start: int, end: int) -> list[str]:
        """Whichever of lines ``start..end`` are known, in order."""
        if end - start > len(self.lines):
            return [self.lines[n] for n in sorted(self.lines) if start <= n <= end]
        return [self.lines[n] for n in range(start, end + 1) if n in self.lines]

    @property
    def line_count(self) -> int | None:
        return len(self.lines) if self.text is not None else None


def _from_diff(file: FileDiff, side: Side) -> SideText:
    lines: dict[int, str] = {}
    for hunk in file.hunks:
        for ln in hunk.lines:
            number = ln.new_no if side == "RIGHT" else ln.old_no
            if number is not None:
                lines[number] = ln.text + ln.eol
    return SideText(lines, None)


def side_text(change: Change | None, file: FileDiff, side: Side) -> SideText:
    """The content of ``file`` on ``side``: the snapshot's, else the diff's lines."""
    data: bytes | None = None
    if change is not None and not file.binary:
        if side == "RIGHT" and change.head is not None and file.status != FileStatus.DELETED:
            data = change.head.read(file.path)
        elif side == "LEFT" and change.base is not None and file.status != FileStatus.ADDED:
            data = change.base.read(file.old_path)
    if data is None:
        return _from_diff(file, side)
    text = decode_text(data)
    return SideText(dict(enumerate(split_lines(text), start=1)), text)

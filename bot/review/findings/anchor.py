"""Anchoring: moving a finding onto lines where GitHub accepts a review comment.

GitHub rejects a whole review (HTTP 422) when one comment is on a line outside the diff,
or on a range that does not lie within one hunk. So a finding is placed:

1. where it is, if ``FileDiff.commentable`` accepts it (``INLINE``);
2. if its range overlaps hunks, on the part inside the hunk it overlaps most;
3. if it lies within :data:`NEAR_LINES` lines of a hunk, on that hunk's nearest line —
   models often point at the first line of a statement just above the context git shows;
4. otherwise nowhere inline: it stays where it is, placed in the summary (``SUMMARY``).

Cases 2 and 3 are "re-anchored": the note says from where, and a suggestion is dropped
(it was written for other lines).
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.domain.diff import Diff, FileDiff, FileStatus, Hunk, Side
from bot.domain.results import Placement
from bot.review.secrets.redaction import PLACEHOLDER_PREFIX, redact_path

#: How far (in lines) outside a hunk a finding may lie and still be moved onto it.
NEAR_LINES = 5


@dataclass(frozen=True)
class Anchor:
    side: Side
    start: int
    end: int
    placement: Placement
    #: Lines or side differ from what the finding asked for.
    moved: bool
    note: str = ""


def normalise_path(path: str) -> str:
    """``path`` without surrounding blanks, leading ``./`` or ``/``; ``\\`` as ``/``."""
    bare = path.strip().replace("\\", "/")
    while bare.startswith(("./", "/")):
        bare = bare[2:] if bare.startswith("./") else bare[1:]
    return bare


def find_file(diff: Diff, path: str) -> FileDiff | None:
    """The file of ``diff`` that ``path`` names, tolerating ``./``, ``a/``, ``b/``.

    The path as given wins over a stripped one (a directory may really be called
    ``a``). A renamed file is also found by its old name.
    """
    bare = normalise_path(path)
    candidates = [path, bare]
    if bare.startswith(("a/", "b/")):
        candidates.append(bare[2:])
    for name in candidates:
        found = diff.get(name)
        if found is not None:
            return found
    for name in candidates:
        for file in diff:
            if file.old_path == name and file.old_path != file.path:
                return file
    if PLACEHOLDER_PREFIX in path:
        # The model was shown the name with a secret in it redacted.
        for name in candidates:
            for file in diff:
                if redact_path(file.path) == name:
                    return file
    return None


def _span(hunk: Hunk, side: Side) -> tuple[int, int] | None:
    lines = hunk.lines_on(side)
    return (min(lines), max(lines)) if lines else None


def _where(start: int, end: int) -> str:
    return f"line {start}" if start == end else f"lines {start}-{end}"


def _no_lines_reason(file: FileDiff) -> str:
    if file.binary:
        return "binary file: no lines to comment on"
    if file.status == FileStatus.MODE_CHANGED:
        return "only the file mode changed: no lines to comment on"
    return "no changed lines to comment on"


def anchor(file: FileDiff, side: Side, start: int, end: int) -> Anchor:
    """Where a finding on ``side`` lines ``start..end`` of ``file`` can be shown."""
    if file.commentable(side, start, end):
        return Anchor(side, start, end, Placement.INLINE, moved=False)
    if not file.hunks:
        return Anchor(side, start, end, Placement.SUMMARY, False, _no_lines_reason(file))
    notes: list[str] = []
    moved = False
    other: Side = "LEFT" if side == "RIGHT" else "RIGHT"
    if not file.lines_on(side) and file.lines_on(other):
        # An added file has no old side and a deleted file no new one: the model meant
        # the only side there is.
        what = "new" if other == "RIGHT" else "old"
        notes.append(f"moved to side {other}: this file only has a {what} version")
        side, moved = other, True
        if file.commentable(side, start, end):
            return Anchor(side, start, end, Placement.INLINE, moved, notes[0])
    spans = [s for s in (_span(h, side) for h in file.hunks) if s is not None]
    best: tuple[int, int] | None = None
    best_overlap = 0
    for lo, hi in spans:
        overlap = min(end, hi) - max(start, lo) + 1
        if overlap > best_overlap:
            best, best_overlap = (max(start, lo), min(end, hi)), overlap
    if best is None:
        near: tuple[int, int] | None = None  # (distance, line)
        for lo, hi in spans:
            distance, line = (lo - end, lo) if end < lo else (start - hi, hi)
            if distance <= NEAR_LINES and (near is None or distance < near[0]):
                near = (distance, line)
        if near is not None:
            best = (near[1], near[1])
    if best is not None and file.commentable(side, *best):
        notes.append(f"re-anchored from {_where(start, end)} to {_where(*best)}")
        return Anchor(side, best[0], best[1], Placement.INLINE, True, "; ".join(notes))
    verb = "is" if start == end else "are"
    notes.append(f"{_where(start, end)} {verb} outside the diff")
    return Anchor(side, start, end, Placement.SUMMARY, moved, "; ".join(notes))

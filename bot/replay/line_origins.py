"""Which change each line came from, carried forward along the first-parent line: the
blame of every file at every commit, at the cost of one diff per commit.

A blame per fix walks the history back from the fix for each file it touched: whole
history mined at once, that is most of the history once per fix (a minute for a
thousand commits). Here each commit of the first-parent line is diffed once against its
first parent (whitespace ignored, renames followed: the blame's own rules) and the
origin of each line it adds recorded: the change it belongs to and its place in that
change's head. A line no change added, or added before the first change, has none. A
fixing commit then reads the origins of the lines it removes before its own diff is
applied.

A merge reviewed as ``merge^1..merge^2`` gives the lines it brings its head's places:
a line of the merge that is unchanged from the head (``merge^2``) is the head's line,
one that is not (a conflict's resolution) is the merge's own and no change's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pygit2

#: The same rules the blame followed: whitespace within lines ignored, no context.
_TRACK_FLAGS = pygit2.enums.DiffOption.IGNORE_WHITESPACE


@dataclass(frozen=True)
class Origin:
    """A line's change (its index in the changes mined) and its place in that change's
    head."""

    change: int
    path: str
    line: int


#: One file's lines, 1-based line n at index n - 1; lines past the end have no origin.
Lines = list[Origin | None]


def _diff(repo: pygit2.Repository, old: pygit2.Tree, new: pygit2.Tree) -> pygit2.Diff:
    diff = old.diff_to_tree(new, context_lines=0, flags=_TRACK_FLAGS)
    diff.find_similar()
    return diff


def _head_places(
    repo: pygit2.Repository, head: pygit2.Commit, merge: pygit2.Commit
) -> dict[str, tuple[str, list[tuple[int, int, int, int]]] | None]:
    """For each file the merge holds that differs from the head: its path in the head
    and the hunks between them (None for a file the head does not hold)."""
    places: dict[str, tuple[str, list[tuple[int, int, int, int]]] | None] = {}
    for patch in _diff(repo, head.tree, merge.tree):
        if patch is None:
            continue
        delta = patch.delta
        if delta.status_char() == "D":
            continue
        if delta.status_char() == "A" or delta.is_binary:
            places[delta.new_file.path] = None
            continue
        hunks = [(h.old_start, h.old_lines, h.new_start, h.new_lines) for h in patch.hunks]
        places[delta.new_file.path] = (delta.old_file.path, hunks)
    return places


def _in_head(
    places: dict[str, tuple[str, list[tuple[int, int, int, int]]] | None],
    path: str,
    line: int,
) -> tuple[str, int] | None:
    """Line ``line`` of the merge's ``path``, placed in the head: None when the merge
    changed it."""
    if path not in places:
        return path, line
    place = places[path]
    if place is None:
        return None
    old_path, hunks = place
    shift = 0
    for _old_start, old_lines, new_start, new_lines in hunks:
        if new_lines and new_start <= line < new_start + new_lines:
            return None
        before = new_start + new_lines - 1 < line if new_lines else new_start < line
        if before:
            shift += old_lines - new_lines
    return old_path, line + shift


class LineOrigins:
    """The origins of every line of the first-parent line, as far as it has been walked."""

    def __init__(self, repo: pygit2.Repository, changes: Sequence[tuple[str, pygit2.Oid]]) -> None:
        """``changes``: each change's head (hex) and the commit of the line it sits on
        (its merge, or its head), by the change's index."""
        self.repo = repo
        self.files: dict[str, Lines] = {}
        #: The changes whose lines each commit of the line adds: index and head.
        self.adds: dict[pygit2.Oid, list[tuple[int, str]]] = {}
        for index, (head, anchor) in enumerate(changes):
            self.adds.setdefault(anchor, []).append((index, head))

    def origins(self, path: str, first: int, last: int) -> list[Origin | None]:
        """The origins of lines ``first``..``last`` of ``path`` as walked so far."""
        lines = self.files.get(path, [])
        return [lines[n - 1] if n <= len(lines) else None for n in range(first, last + 1)]

    def step(self, commit: pygit2.Commit) -> None:
        """Walk on to ``commit`` (whose first parent was the last commit walked)."""
        added = self.adds.get(commit.id, [])
        index, head = added[-1] if added else (-1, "")
        places = None
        if added and head != str(commit.id):
            places = _head_places(self.repo, self.repo[head].peel(pygit2.Commit), commit)
        moved: dict[str, Lines] = {}
        gone: set[str] = set()
        for patch in _diff(self.repo, commit.parents[0].tree, commit.tree):
            if patch is None:
                continue
            delta = patch.delta
            old_path, new_path = delta.old_file.path, delta.new_file.path
            status = delta.status_char()
            lines = [] if status == "A" else self.files.get(old_path, [])
            if status != "A":
                gone.add(old_path)
            if status == "D" or delta.is_binary:
                continue
            lines = list(lines) if old_path != new_path else lines
            for h in reversed(patch.hunks):
                start = h.old_start - 1 if h.old_lines else h.old_start
                if len(lines) < start + h.old_lines:
                    lines.extend([None] * (start + h.old_lines - len(lines)))
                lines[start : start + h.old_lines] = [
                    self._origin(index, head, places, new_path, n)
                    for n in range(h.new_start, h.new_start + h.new_lines)
                ]
            moved[new_path] = lines
        for path in gone:
            self.files.pop(path, None)
        self.files.update(moved)

    def _origin(
        self,
        index: int,
        head: str,
        places: dict[str, tuple[str, list[tuple[int, int, int, int]]] | None] | None,
        path: str,
        line: int,
    ) -> Origin | None:
        if index < 0:
            return None
        if places is None:
            return Origin(index, path, line)
        place = _in_head(places, path, line)
        return Origin(index, *place) if place else None

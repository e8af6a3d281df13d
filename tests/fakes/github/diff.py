"""GitHub's view of a pull request's diff, computed with pygit2 and nothing of GitNeural's,
so the fake is an independent judge of where review comments may go.

The diff is three-dot (merge base of base and head to head), with renames detected, three
lines of context, like GitHub's. A comment may sit on the RIGHT side on an added or
context line (new numbering), on the LEFT side on a deleted or context line (old
numbering); ``start_line`` must lie in the same hunk and precede ``line``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pygit2
from pygit2.enums import DeltaStatus, DiffFind

MAX_BODY = 65_536
#: The PR diff endpoint gives up past these (406 ``too_large``).
MAX_DIFF_FILES = 300
MAX_DIFF_LINES = 20_000

_STATUS = {
    DeltaStatus.ADDED: "added",
    DeltaStatus.DELETED: "removed",
    DeltaStatus.MODIFIED: "modified",
    DeltaStatus.RENAMED: "renamed",
    DeltaStatus.COPIED: "copied",
    DeltaStatus.TYPECHANGE: "changed",
}


@dataclass(frozen=True)
class Line:
    origin: str  # "+", "-" or " "
    old_no: int | None
    new_no: int | None
    text: str  # with its line ending


@dataclass(frozen=True)
class Hunk:
    header: str
    lines: tuple[Line, ...]

    def numbers(self, side: str) -> frozenset[int]:
        if side == "RIGHT":
            return frozenset(ln.new_no for ln in self.lines if ln.new_no is not None)
        return frozenset(ln.old_no for ln in self.lines if ln.old_no is not None)

    def text(self) -> str:
        body = "".join(f"{ln.origin}{ln.text}" for ln in self.lines)
        return self.header + body


@dataclass(frozen=True)
class FileDiff:
    path: str
    old_path: str
    status: str
    sha: str
    binary: bool
    hunks: tuple[Hunk, ...]
    additions: int
    deletions: int

    def patch(self) -> str:
        return "".join(h.text() for h in self.hunks).rstrip("\n")

    def hunk_of(self, side: str, line: int) -> Hunk | None:
        return next((h for h in self.hunks if line in h.numbers(side)), None)

    def position_of(self, position: int) -> tuple[str, int] | None:
        """GitHub's legacy ``position``: lines below the first hunk header, headers counted."""
        pos = 0
        for index, hunk in enumerate(self.hunks):
            if index:
                pos += 1  # a later hunk's header line
            for ln in hunk.lines:
                pos += 1
                if pos == position:
                    if ln.origin == "-":
                        assert ln.old_no is not None
                        return "LEFT", ln.old_no
                    assert ln.new_no is not None
                    return "RIGHT", ln.new_no
        return None

    def diff_hunk(self, side: str, line: int) -> str:
        """The excerpt GitHub shows above a comment: hunk header down to the line."""
        hunk = self.hunk_of(side, line)
        if hunk is None:
            return ""
        out = [hunk.header.rstrip("\n")]
        for ln in hunk.lines:
            out.append(f"{ln.origin}{ln.text.rstrip(chr(10))}")
            if (ln.new_no if side == "RIGHT" else ln.old_no) == line:
                break
        return "\n".join(out)


@dataclass(frozen=True)
class PullDiff:
    files: dict[str, FileDiff]
    text: str

    @property
    def line_count(self) -> int:
        return self.text.count("\n")


def _empty_tree(git: pygit2.Repository) -> pygit2.Tree:
    return git[git.TreeBuilder().write()].peel(pygit2.Tree)


def pull_diff(git: pygit2.Repository, base_sha: str, head_sha: str) -> PullDiff:
    head = git[head_sha].peel(pygit2.Commit)
    merge_base = git.merge_base(base_sha, head.id)
    old_tree = git[merge_base].peel(pygit2.Tree) if merge_base else _empty_tree(git)
    diff = old_tree.diff_to_tree(head.tree, context_lines=3)
    diff.find_similar(flags=DiffFind.FIND_RENAMES)
    files: dict[str, FileDiff] = {}
    texts: list[str] = []
    for patch in diff:
        if patch is None:
            continue
        delta = patch.delta
        removed = delta.status == DeltaStatus.DELETED
        path = delta.old_file.path if removed else delta.new_file.path
        hunks = tuple(
            Hunk(
                header=h.header if h.header.endswith("\n") else h.header + "\n",
                lines=tuple(
                    Line(
                        origin=ln.origin,
                        old_no=ln.old_lineno if ln.old_lineno > 0 else None,
                        new_no=ln.new_lineno if ln.new_lineno > 0 else None,
                        text=ln.content,
                    )
                    for ln in h.lines
                    if ln.origin in "+- "
                ),
            )
            for h in patch.hunks
        )
        _, additions, deletions = patch.line_stats
        files[path] = FileDiff(
            path=path,
            old_path=delta.old_file.path,
            status=_STATUS.get(delta.status, "modified"),
            sha=str(delta.old_file.id if removed else delta.new_file.id),
            binary=bool(delta.is_binary),
            hunks=hunks,
            additions=additions,
            deletions=deletions,
        )
        texts.append(patch.text or "")
    return PullDiff(files=files, text="".join(texts))


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def comment_error(diff: PullDiff, comment: Mapping[str, Any]) -> str | None:
    """Why GitHub would refuse this review comment, or None when it is fine."""
    body = comment.get("body")
    if not isinstance(body, str) or not body:
        return "Body can't be blank"
    if len(body) > MAX_BODY:
        return f"Body is too long (maximum is {MAX_BODY} characters)"
    path = comment.get("path")
    file = diff.files.get(path) if isinstance(path, str) else None
    if file is None:
        return "Path could not be resolved"
    if comment.get("subject_type") == "file":
        return None
    if "line" not in comment:
        position = _int(comment.get("position"))
        if position is None:
            return "Either line or position must be specified"
        if file.position_of(position) is None:
            return "Pull request review thread position is invalid"
        return None
    line = _int(comment.get("line"))
    side = comment.get("side", "RIGHT")
    if side not in ("RIGHT", "LEFT"):
        return f"side must be RIGHT or LEFT, not {side!r}"
    if line is None or line < 1:
        return "line must be a positive integer"
    hunk = file.hunk_of(side, line)
    if hunk is None:
        return "Line could not be resolved"
    if comment.get("start_line") is None:
        return None
    start = _int(comment.get("start_line"))
    start_side = comment.get("start_side", side)
    if start_side not in ("RIGHT", "LEFT"):
        return f"start_side must be RIGHT or LEFT, not {start_side!r}"
    if start is None or start < 1:
        return "start_line must be a positive integer"
    if start_side == side and start >= line:
        return "start_line must precede the end line."
    if start not in hunk.numbers(start_side):
        return "start_line must be part of the same hunk as the line."
    return None

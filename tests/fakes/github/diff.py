"""GitHub's view of a pull request's diff, computed by git itself (``git diff -M``) and
parsed with unidiff, nothing of GitNeural's, so the fake is an independent judge of where
review comments may go.

The diff is three-dot (merge base of base and head to head), with git's rename detection,
indent heuristic and three lines of context, like GitHub's. A comment may sit on the
RIGHT side on an added or context line (new numbering), on the LEFT side on a deleted or
context line (old numbering); ``start_line`` must lie in the same hunk and precede
``line``.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pygit2
from unidiff.patch import PatchedFile, PatchSet

MAX_BODY = 65_536
#: The PR diff endpoint gives up past these (406 ``too_large``).
MAX_DIFF_FILES = 300
MAX_DIFF_LINES = 20_000


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


_STATUS = {"added": "added", "deleted": "removed", "renamed": "renamed", "modified": "modified"}
#: git as GitHub runs it: nobody's configuration, no colour, renames at 50%.
_GIT_DIFF = ("diff", "-M", "--no-color", "--no-ext-diff", "--full-index")


def _git_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update({"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "LC_ALL": "C"})
    return env


def _strip(name: str | None) -> str | None:
    if name is None or name == "/dev/null":
        return None
    return name[2:] if name.startswith(("a/", "b/")) else name


def _status(raw: PatchedFile) -> str:
    info = "".join(raw.patch_info or ())
    if "\nnew file mode " in info:
        return "added"
    if "\ndeleted file mode " in info:
        return "deleted"
    if "\nrename from " in info:
        return "renamed"
    return "modified"


def _sha(git: pygit2.Repository, commit: str, path: str) -> str:
    tree = git[commit].peel(pygit2.Commit).tree
    try:
        return str(tree[path].id)
    except KeyError:
        return "0" * 40


def pull_diff(git: pygit2.Repository, base_sha: str, head_sha: str) -> PullDiff:
    """What GitHub shows: ``git diff -M`` from the merge base, computed by git itself."""
    head = str(git[head_sha].peel(pygit2.Commit).id)
    merge_base = git.merge_base(base_sha, head)
    # git's well-known empty tree stands for "no merge base".
    old = str(merge_base) if merge_base else "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
    text = subprocess.run(
        ["git", "-c", "core.quotePath=false", "--git-dir", git.path, *_GIT_DIFF, old, head],
        capture_output=True,
        check=True,
        env=_git_env(),
    ).stdout.decode("utf-8", "surrogateescape")
    files: dict[str, FileDiff] = {}
    for raw in PatchSet(text):
        status = _STATUS[_status(raw)]
        removed = status == "removed"
        old_path = _strip(raw.source_file) or ""
        new_path = _strip(raw.target_file) or ""
        if not raw.source_file or not raw.target_file:
            # A binary or an exact rename prints no ---/+++ lines: the names are on
            # "diff --git a/x b/y" (unidiff keeps them in .path and the rename lines).
            old_path = old_path or raw.path
            new_path = new_path or raw.path
        if status == "renamed":
            old_path = _rename_from(raw) or old_path
        path = old_path if removed else new_path
        hunks = tuple(
            Hunk(
                header=f"@@ -{h.source_start},{h.source_length} "
                f"+{h.target_start},{h.target_length} @@"
                + (f" {h.section_header}" if h.section_header else "")
                + "\n",
                lines=tuple(
                    Line(
                        origin=ln.line_type,
                        old_no=ln.source_line_no,
                        new_no=ln.target_line_no,
                        text=ln.value,
                    )
                    for ln in h
                    if ln.line_type in "+- "
                ),
            )
            for h in raw
        )
        files[path] = FileDiff(
            path=path,
            old_path=old_path,
            status=status,
            sha=_sha(git, str(merge_base or head) if removed else head, path),
            binary=bool(raw.is_binary_file),
            hunks=hunks,
            additions=raw.added,
            deletions=raw.removed,
        )
    return PullDiff(files=files, text=text)


def _rename_from(raw: PatchedFile) -> str | None:
    for line in raw.patch_info or ():
        if line.startswith("rename from "):
            return str(line[len("rename from ") :]).rstrip("\n")
    return None


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

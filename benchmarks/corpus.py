"""Realistic repositories for benchmarks, made from the standard library's Python files.

The files come from :mod:`benchmarks.corpus_files` (the running interpreter's standard
library, in an order fixed by a seed: the same files for every set of installed
packages). A change edits each file the way a person would: at evenly spaced one-line
statements it inserts a few statements and edits the statement itself (a trailing
comment), so every edited file still parses and each edit is one hunk of
``inserted + 2`` changed lines.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from pathlib import Path

import pygit2
from pygit2.enums import FileMode

from benchmarks.corpus_files import SourceFile, corpus_id, source_files

__all__ = [
    "BASE_BRANCH",
    "SourceFile",
    "add_change",
    "build_repo",
    "corpus_id",
    "edit_count",
    "edited",
    "source_files",
]

BASE_BRANCH = "main"
#: Anchors closer than this would make git merge two edits into one hunk.
_MIN_GAP = 8
_WHEN = 1_700_000_000
_AGENTS_MD = b"# Review instructions\n\nPrefer small, correct changes. Flag missing tests.\n"


def _spread(anchors: Sequence[int], hunks: int) -> list[int]:
    """Up to ``hunks`` anchors spread evenly over the file, never close enough to merge."""
    chosen: list[int] = []
    for j in range(hunks):
        target = anchors[j * len(anchors) // hunks]
        floor = max(target, chosen[-1] + _MIN_GAP) if chosen else target
        at = bisect.bisect_left(anchors, floor)
        if at == len(anchors):
            break
        chosen.append(anchors[at])
    return chosen


def edit_count(source: SourceFile, hunks: int) -> int:
    """How many of ``hunks`` edits :func:`edited` can make in ``source``."""
    return len(_spread(source.anchors, hunks))


def edited(source: SourceFile, *, hunks: int, inserted: int) -> bytes:
    """``source`` with up to ``hunks`` edits of ``inserted`` new lines plus one changed line."""
    lines = source.data.splitlines(keepends=True)
    for n, at in enumerate(reversed(_spread(source.anchors, hunks))):
        line = lines[at - 1]
        body = line.rstrip(b"\r\n")
        eol = line[len(body) :] or b"\n"
        indent = body[: len(body) - len(body.lstrip())]
        added = [
            indent + f"_gitneural_bench_{n}_{k} = {k}  # added".encode() + eol
            for k in range(inserted)
        ]
        lines[at - 1 : at] = [*added, body + b"  # edited" + eol]
    return b"".join(lines)


def _commit(
    repo: pygit2.Repository,
    files: dict[str, bytes],
    message: str,
    parents: list[pygit2.Oid],
    base_tree: pygit2.Tree | None = None,
) -> pygit2.Oid:
    index = pygit2.Index()
    if base_tree is not None:
        index.read_tree(base_tree)
    for path, data in files.items():
        index.add(pygit2.IndexEntry(path, repo.create_blob(data), FileMode.BLOB))
    tree = index.write_tree(repo)
    who = pygit2.Signature("Bench Author", "bench@example.com", _WHEN + len(parents), 0)
    return repo.create_commit(None, who, who, message, tree, parents)


def build_repo(path: Path, files: Sequence[SourceFile]) -> pygit2.Repository:
    """A bare repository whose ``main`` holds ``files`` (and an AGENTS.md)."""
    repo = pygit2.init_repository(str(path), bare=True, initial_head=BASE_BRANCH)
    contents = {f.path: f.data for f in files}
    contents["AGENTS.md"] = _AGENTS_MD
    oid = _commit(repo, contents, "Import the sources", [])
    repo.references.create(f"refs/heads/{BASE_BRANCH}", oid)
    return repo


def add_change(
    repo: pygit2.Repository,
    branch: str,
    files: Sequence[SourceFile],
    *,
    hunks: int,
    inserted: int,
) -> str:
    """A branch off ``main`` editing ``files``; returns the branch name for range_change."""
    base = repo.revparse_single(BASE_BRANCH).peel(pygit2.Commit)
    contents = {f.path: edited(f, hunks=hunks, inserted=inserted) for f in files}
    message = f"Edit {len(files)} files\n\nBenchmark change: {hunks} edits per file."
    oid = _commit(repo, contents, message, [base.id], base.tree)
    repo.references.create(f"refs/heads/{branch}", oid)
    return branch

"""Following a finding's lines from one commit to another: touched, or where they went.

A push may change the lines a finding points at (the finding may be fixed), or only add
and remove lines elsewhere in the file (the finding moves with its code). The diff of the
file between the two commits, without context, tells which: a hunk that removes or
replaces one of the lines, or inserts between two of them, touches them; a hunk above
them moves them by what it adds minus what it removes. A file gone from the new commit
touches every line it had.
"""

from __future__ import annotations

import pygit2

from bot.errors import GitError
from bot.git.repo import resolve_commit


def _shift(hunks: list[tuple[int, int, int]], start: int, end: int) -> tuple[int, int] | None:
    shift = 0
    for old_start, old_lines, new_lines in hunks:
        if old_lines == 0:
            # An insertion after old line ``old_start``: inside the range, it touches it.
            if start <= old_start < end:
                return None
            if old_start < start:
                shift += new_lines
            continue
        old_end = old_start + old_lines - 1
        if old_start <= end and old_end >= start:
            return None
        if old_end < start:
            shift += new_lines - old_lines
    return start + shift, end + shift


def follow_lines(
    repo: pygit2.Repository, old: str, new: str, path: str, start: int, end: int
) -> tuple[int, int] | None:
    """Where lines ``start..end`` of ``path`` at ``old`` are at ``new``; None when the
    change between them touches any of them (or removes the file).

    Raises :class:`~bot.errors.GitError` when either commit is not in ``repo``."""
    old_commit, new_commit = resolve_commit(repo, old), resolve_commit(repo, new)
    if old_commit.id == new_commit.id:
        return start, end
    try:
        old_blob = old_commit.tree[path].id
    except KeyError:
        raise GitError(f"{path} is not in {old[:12]}") from None
    try:
        new_blob = new_commit.tree[path].id
    except KeyError:
        return None
    if old_blob == new_blob:
        return start, end
    patch = repo.diff(old_blob, new_blob, context_lines=0)
    if not isinstance(patch, pygit2.Patch):  # pragma: no cover - blobs give a patch
        return None
    hunks = [(h.old_start, h.old_lines, h.new_lines) for h in patch.hunks]
    return _shift(hunks, start, end)

"""Git access with pygit2: the changes GitNeural reviews, and files at any revision.

Every entrance builds its :class:`~bot.domain.change.Change` here (or, for ``--diff
FILE``, from the same :func:`bot.domain.diff.parse_diff`), so all of them share one diff
parser and one notion of renames. Nothing here writes to the repository: not the index,
not the object database, not the work tree. Every diff is made by :mod:`bot.git.diffs`,
exactly as ``git diff -M`` prints it, because GitHub anchors comments on that diff.
"""

from __future__ import annotations

from pathlib import Path

import pygit2
from pygit2.enums import DeltaStatus, DiffOption, SortMode

from bot.domain.change import Change
from bot.domain.diff import Diff, parse_diff
from bot.errors import GitError
from bot.git.diffs import (
    CONTEXT_LINES,
    DIFF_FLAGS,
    NewReader,
    diff_to_bytes,
    git_bytes,
    read_worktree_file,
)
from bot.git.snapshots import IndexSnapshot, TreeSnapshot, clean_path
from bot.git.worktree import WorkTreeSnapshot
from bot.text import decode_text, one_line

__all__ = [
    "IndexSnapshot",
    "TreeSnapshot",
    "WorkTreeSnapshot",
    "diff_to_bytes",
    "has_staged_changes",
    "open_repo",
    "range_change",
    "read_blob",
    "resolve_commit",
    "staged_change",
    "worktree_change",
]

#: git's well-known empty tree; libgit2 knows it without it being in the object database,
#: so diffing against it before the first commit writes nothing.
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

# The range description is untrusted context for the model, not the review itself.
_LOG_MAX_COMMITS = 50
_LOG_MAX_CHARS = 16_000

_UNTRACKED_FLAGS = (
    DiffOption.INCLUDE_UNTRACKED
    | DiffOption.RECURSE_UNTRACKED_DIRS
    | DiffOption.SHOW_UNTRACKED_CONTENT
)


def open_repo(path: str | Path = ".") -> pygit2.Repository:
    """The repository containing ``path`` (searching upward, like git)."""
    if not Path(path).is_dir():
        raise GitError(f"no such directory: {path}")
    try:
        found = pygit2.discover_repository(str(path))
    except (pygit2.GitError, OSError):
        found = None
    if found is None:
        raise GitError(f"not a git repository: {path}")
    try:
        return pygit2.Repository(found)
    except pygit2.GitError as exc:
        raise GitError(f"cannot open the git repository at {found}: {exc}") from None


def resolve_commit(repo: pygit2.Repository, rev: str) -> pygit2.Commit:
    """The commit ``rev`` names (a branch, tag, id, ``HEAD~2`` ...)."""
    try:
        commit = repo.revparse_single(rev).peel(pygit2.Commit)
    except (KeyError, ValueError, pygit2.GitError):
        raise GitError(f"unknown revision '{_shown(rev)}'") from None
    if not isinstance(commit, pygit2.Commit):
        raise GitError(f"unknown revision '{_shown(rev)}'")
    return commit


def snapshot_at(repo: pygit2.Repository, rev: str) -> TreeSnapshot:
    """The tree at ``rev``, labelled for people: the name given and its short id
    (``main (1a2b3c4d5e6f)``), as settings errors and the dry run show it."""
    commit = resolve_commit(repo, rev)
    short = str(commit.id)[:12]
    name = rev.removeprefix("refs/heads/").removeprefix("refs/remotes/")
    label = short if str(commit.id).startswith(name) else f"{_shown(name)} ({short})"
    return TreeSnapshot(repo, commit, label=label)


def _head_snapshot(repo: pygit2.Repository, head: pygit2.Commit) -> TreeSnapshot:
    return TreeSnapshot(repo, head, label=f"HEAD ({str(head.id)[:12]})")


def has_staged_changes(repo: pygit2.Repository) -> bool:
    """Whether the index differs from HEAD (before the first commit: holds any entry)."""
    index = _index(repo)
    head = _head_commit(repo)
    if head is None:
        return len(index) > 0
    return len(index.diff_to_tree(head.tree)) > 0


def staged_change(repo: pygit2.Repository) -> Change:
    """What ``git commit`` would record: the index against HEAD (or the empty tree)."""
    index = _index(repo)
    head = _head_commit(repo)
    diff = index.diff_to_tree(
        _tree(repo, head), DIFF_FLAGS, context_lines=CONTEXT_LINES, interhunk_lines=0
    )
    base = None if head is None else _head_snapshot(repo, head)
    return Change(
        diff=_parse(repo, diff),
        head=IndexSnapshot(repo, index),
        base=base,
        trusted=base,
        title="staged changes",
        head_sha=None,
        base_sha=None if head is None else str(head.id),
    )


def worktree_change(repo: pygit2.Repository, *, include_untracked: bool = False) -> Change:
    """The work tree against HEAD, staged or not (``git diff HEAD``).

    Untracked files are left out, as ``git diff HEAD`` does, unless
    ``include_untracked`` is set (ignored files never appear).
    """
    if repo.workdir is None:
        raise GitError("a bare repository has no work tree: review a range with --base")
    index = _index(repo)
    head = _head_commit(repo)
    # What libgit2's tree-to-workdir-with-index does: HEAD->index, then index->work tree.
    # Both halves get the same flags: merging drops untracked entries otherwise.
    flags = DIFF_FLAGS | (_UNTRACKED_FLAGS if include_untracked else DiffOption.NORMAL)
    diff = index.diff_to_tree(
        _tree(repo, head), flags, context_lines=CONTEXT_LINES, interhunk_lines=0
    )
    to_workdir = index.diff_to_workdir(flags, context_lines=CONTEXT_LINES, interhunk_lines=0)
    untracked = tuple(
        delta.new_file.path for delta in to_workdir.deltas if delta.status == DeltaStatus.UNTRACKED
    )
    diff.merge(to_workdir)
    base = None if head is None else _head_snapshot(repo, head)
    return Change(
        diff=_parse(repo, diff, read_worktree_file(repo)),
        head=WorkTreeSnapshot(repo, index, untracked=untracked),
        base=base,
        trusted=base,
        title="work tree changes",
        head_sha=None,
        base_sha=None if head is None else str(head.id),
    )


def range_change(repo: pygit2.Repository, base: str, head: str = "HEAD") -> Change:
    """A pull request's diff: ``merge_base(base, head)..head``, as GitHub's three dots.

    Changes made on ``base`` after ``head`` forked from it do not appear. ``base`` itself
    (like a default branch) is the trusted revision for settings and instructions.
    """
    head_commit = resolve_commit(repo, head)
    base_commit = resolve_commit(repo, base)
    fork = repo.merge_base(base_commit.id, head_commit.id)
    if fork is None:
        raise GitError(
            f"'{_shown(base)}' and '{_shown(head)}' share no history: "
            "check the revisions, or fetch more history if the clone is shallow"
        )
    fork_commit = resolve_commit(repo, str(fork))
    diff = fork_commit.tree.diff_to_tree(
        head_commit.tree, DIFF_FLAGS, context_lines=CONTEXT_LINES, interhunk_lines=0
    )
    return Change(
        diff=_parse(repo, diff),
        head=TreeSnapshot(repo, head_commit),
        base=TreeSnapshot(repo, fork_commit),
        trusted=snapshot_at(repo, base),
        title=_summary(head_commit),
        description=_log(repo, head_commit, base_commit),
        head_sha=str(head_commit.id),
        base_sha=str(fork),
    )


def read_blob(repo: pygit2.Repository, rev: str, path: str) -> bytes | None:
    """The regular file ``path`` at revision ``rev``; None if absent or not a file."""
    if clean_path(path) is None:
        return None
    return TreeSnapshot(repo, resolve_commit(repo, rev)).read(path)


def _parse(repo: pygit2.Repository, diff: pygit2.Diff, read_new: NewReader | None = None) -> Diff:
    return parse_diff(git_bytes(repo, diff, read_new))


def _index(repo: pygit2.Repository) -> pygit2.Index:
    try:
        index: pygit2.Index = repo.index
        # Pick up changes another process (git add) made since the repository was opened.
        index.read(False)
    except pygit2.GitError as exc:
        raise GitError(f"cannot read the git index: {exc}") from None
    return index


def _head_commit(repo: pygit2.Repository) -> pygit2.Commit | None:
    if repo.head_is_unborn:
        return None
    try:
        commit = repo.head.peel(pygit2.Commit)
    except (KeyError, ValueError, pygit2.GitError):
        raise GitError("HEAD does not point to a commit: check `git status`") from None
    return commit if isinstance(commit, pygit2.Commit) else None


def _tree(repo: pygit2.Repository, commit: pygit2.Commit | None) -> pygit2.Tree:
    if commit is not None:
        return commit.tree
    empty = repo.get(EMPTY_TREE)
    assert isinstance(empty, pygit2.Tree)  # libgit2 hardcodes it
    return empty


def _shown(rev: str) -> str:
    # A blank revision would show as nothing at all.
    return one_line(rev) if rev.strip() else repr(rev)


def _message(commit: pygit2.Commit) -> str:
    return decode_text(commit.raw_message).strip()


def _summary(commit: pygit2.Commit) -> str:
    return _message(commit).partition("\n")[0].strip()


def _log(repo: pygit2.Repository, head: pygit2.Commit, base: pygit2.Commit) -> str:
    """Messages of the commits in ``base..head``, newest first, within a size cap."""
    walker = repo.walk(head.id, SortMode.TOPOLOGICAL | SortMode.TIME)
    walker.hide(base.id)
    parts: list[str] = []
    used = 0
    for count, commit in enumerate(walker):
        block = f"commit {str(commit.id)[:12]}\n{_message(commit)}"
        if count >= _LOG_MAX_COMMITS or used + len(block) > _LOG_MAX_CHARS:
            parts.append("(older commits not shown)")
            break
        parts.append(block)
        used += len(block)
    return "\n\n".join(parts)

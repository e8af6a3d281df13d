"""Which past changes a replay reviews: the last first-parent merges of the current branch
(each ``merge^1..merge^2``) or, for a squash-merged history, its first-parent commits
(each ``c^..c``), within an optional ``A..B`` range."""

from __future__ import annotations

import pygit2

from bot.errors import GitError, UsageError
from bot.git.repo import resolve_commit
from bot.replay.items import PastChange


def _subject(commit: pygit2.Commit) -> str:
    lines = commit.message.strip().splitlines()
    return lines[0].strip() if lines else ""


def _merge_title(commit: pygit2.Commit) -> str:
    """A merge's title: the pull request's title GitHub writes on the message's third
    line (``Merge pull request #N from …``, blank, the title), else the subject."""
    lines = [line.strip() for line in commit.message.strip().splitlines()]
    if len(lines) >= 3 and lines[0].startswith("Merge pull request") and lines[2]:
        return lines[2]
    return lines[0] if lines else ""


def first_parent_walk(
    repo: pygit2.Repository, tip: pygit2.Commit, stop: pygit2.Oid | None
) -> list[pygit2.Commit]:
    """``tip`` and its first parents, newest first, up to (without) ``stop``'s history."""
    walker = repo.walk(tip.id, pygit2.enums.SortMode.TOPOLOGICAL)
    walker.simplify_first_parent()
    if stop is not None:
        walker.hide(stop)
    return list(walker)


def select_changes(
    repo: pygit2.Repository,
    *,
    last: int = 20,
    commits: bool = False,
    revision_range: str | None = None,
) -> list[PastChange]:
    """The last ``last`` changes, oldest first (the order they were reviewed in)."""
    if last < 1:
        raise UsageError("--last must be at least 1")
    stop: pygit2.Oid | None = None
    tip_rev = "HEAD"
    if revision_range:
        start, dots, end = revision_range.partition("..")
        if not dots or end.startswith("."):
            raise UsageError(f"--range takes A..B (two dots), not {revision_range!r}")
        stop = resolve_commit(repo, start).id if start else None
        tip_rev = end or "HEAD"
    if repo.head_is_unborn and tip_rev == "HEAD":
        raise GitError("the repository has no commits yet: nothing to replay")
    tip = resolve_commit(repo, tip_rev)
    found: list[PastChange] = []
    for c in first_parent_walk(repo, tip, stop):
        if len(found) >= last:
            break
        parents = c.parent_ids
        if commits and len(parents) >= 1:
            found.append(PastChange(str(parents[0]), str(c.id), _subject(c), str(c.id)))
        elif not commits and len(parents) >= 2:
            found.append(PastChange(str(parents[0]), str(parents[1]), _merge_title(c), str(c.id)))
    found.reverse()
    return found

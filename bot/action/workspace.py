"""The workflow's checkout as the place to read a pull request's commits from.

Read only: GitNeural never checks out, builds or runs anything in it, and writes nothing
there (no fetch into it, no ref, no file). When the checkout holds the PR's head and base
with their whole history, the review reads them from it and fetches nothing. A shallow
or partial checkout, or one without the head (``pull_request_target`` checks out the base
branch, ``actions/checkout`` fetches no ``refs/pull/*``), is left alone: the job runner
then fetches what it needs by git with the workflow's token into its own mirror.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pygit2

from bot.gh.pulls import PullInfo
from bot.usecases.context import LocalCode
from bot.usecases.pull_change import MirrorRefs

Say = Callable[[str], None]


def _open(path: Path) -> pygit2.Repository | None:
    try:
        found = pygit2.discover_repository(str(path))
        return pygit2.Repository(found) if found else None
    except (pygit2.GitError, OSError):
        return None


def _has_commit(repo: pygit2.Repository, sha: str) -> bool:
    try:
        return isinstance(repo.get(sha), pygit2.Commit)
    except (ValueError, pygit2.GitError):
        return False


def _partial(repo: pygit2.Repository) -> bool:
    """A partial clone (``filter: blob:none``) lacks blobs the review would read."""
    config = repo.config
    if "extensions.partialclone" in config:
        return True
    return any(
        entry.name.endswith(".promisor") for entry in config if entry.name.startswith("remote.")
    )


def missing(repo: pygit2.Repository, pull: PullInfo) -> str | None:
    """What the checkout lacks to be read in place, or None."""
    if repo.is_shallow:
        return "the checkout is shallow"
    if _partial(repo):
        return "the checkout is a partial clone"
    for name, sha in (("head", pull.head_sha), ("base", pull.base_sha)):
        if not _has_commit(repo, sha):
            return f"the checkout lacks the pull request's {name} commit {sha[:12]}"
    if repo.merge_base(pull.base_sha, pull.head_sha) is None:
        return "the checkout has no history shared by the head and the base"
    return None


def workspace_code(path: Path | None, say: Say) -> LocalCode:
    """The job runner's :data:`~bot.usecases.context.LocalCode` for the checkout at ``path``:
    commit ids in place of refs, and the base commit as the trusted revision."""

    def read_in_place(pull: PullInfo) -> tuple[pygit2.Repository, MirrorRefs] | None:
        repo = _open(path) if path is not None else None
        if repo is None:
            say("GitNeural: the workspace is not a git checkout; fetching the pull request by git")
            return None
        lacking = missing(repo, pull)
        if lacking is not None:
            say(f"GitNeural: {lacking}; fetching the pull request by git")
            return None
        say("GitNeural: reading the pull request from the workspace's git (nothing fetched)")
        refs = MirrorRefs(head=pull.head_sha, base=pull.base_sha, default=pull.base_sha)
        return repo, refs

    return read_in_place

"""What one hook run reviews: the staged change, or the commits a push sends.

The repository is opened the way git's own commands see it from inside a hook: ``git
commit -a`` and ``git commit PATH`` run the hook with ``GIT_INDEX_FILE`` naming a
temporary index that holds what will be committed, and worktrees set ``GIT_DIR``. Reading
``.git/index`` instead would review the wrong content.

Some commits need no review and finish at once, before any model or settings are loaded:
nothing staged, only deletions, and merge commits (their changes were reviewed on their
own branches). A push of a history from its root commit is not reviewed either: it would
be the whole repository, which is what ``gitneural review --base`` is for.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

import pygit2
from pygit2.enums import RepositoryOpenFlag, RepositoryState, SortMode

from bot.domain.change import Change
from bot.domain.diff import FileStatus
from bot.errors import GitError, UsageError
from bot.git.repo import range_change, resolve_commit, staged_change

Stage = Literal["pre-commit", "pre-push"]

_TRUE = {"1", "true", "yes", "on"}


@dataclass
class Target:
    #: Human: "staged changes", "push refs/heads/main 1a2b3c4d5e6f..7a8b9c0d1e2f".
    label: str
    change: Change | None = None
    #: Why this target is done at once without a review; None when it is to be reviewed.
    quick: str | None = None
    #: The repository's git folder, where a warm symbol index may wait.
    git_dir: str = ""


def skip_reason(env: Mapping[str, str]) -> str | None:
    """Why the user asked to skip the hook (``SKIP`` as the pre-commit framework reads it)."""
    if env.get("GITNEURAL_SKIP", "").strip().lower() in _TRUE:
        return "GITNEURAL_SKIP is set"
    if "gitneural" in {part.strip() for part in env.get("SKIP", "").split(",")}:
        return "SKIP names gitneural"
    return None


def open_repository(path: str = ".") -> pygit2.Repository:
    """The repository of ``path``, honouring ``GIT_DIR`` and ``GIT_INDEX_FILE`` like git."""
    try:
        return pygit2.Repository(path, RepositoryOpenFlag.FROM_ENV)
    except (pygit2.GitError, KeyError, OSError):
        raise GitError(f"not a git repository: {path} (run the hook inside one)") from None


def _quick(change: Change, nothing: str) -> str | None:
    files = change.diff.files
    if not files:
        return nothing
    if all(f.status == FileStatus.DELETED for f in files):
        return "only deletions: nothing to review"
    return None


def staged_target(repo: pygit2.Repository) -> Target:
    if repo.state() == RepositoryState.MERGE:
        return Target("merge commit", quick="merge commit: its branches were reviewed on their own")
    change = staged_change(repo)
    return Target("staged changes", change, _quick(change, "nothing staged"), repo.path)


def is_framework_push(env: Mapping[str, str]) -> bool:
    """The pre-commit framework runs this hook for ``git push`` (it names the remote)."""
    return bool(env.get("PRE_COMMIT_REMOTE_NAME") or env.get("PRE_COMMIT_FROM_REF"))


def push_targets(
    repo: pygit2.Repository, env: Mapping[str, str], remote: str, lines: str
) -> list[Target]:
    """The ranges a push sends: from the pre-commit framework's refs, else git's stdin lines.

    ``remote`` is the remote's name (git's first pre-push argument); ``lines`` are git's
    ``<local ref> <local sha> <remote ref> <remote sha>`` lines.
    """
    from_ref, to_ref = env.get("PRE_COMMIT_FROM_REF"), env.get("PRE_COMMIT_TO_REF")
    if from_ref and to_ref:
        return [_range(repo, from_ref, to_ref, env.get("PRE_COMMIT_LOCAL_BRANCH", to_ref))]
    if env.get("PRE_COMMIT_REMOTE_NAME"):
        # The framework names no range when the push starts at a root commit.
        return [Target("push", quick=_ROOT_PUSH)]
    targets = []
    for line in lines.splitlines():
        if not line.strip():
            continue
        parts = line.rsplit(maxsplit=3)
        if len(parts) != 4 or not (_is_sha(parts[1]) and _is_sha(parts[3])):
            raise UsageError(
                f"not a pre-push line: {line[:80]!r} (git sends '<ref> <sha> <ref> <sha>')"
            )
        local_ref, local_sha, _remote_ref, remote_sha = parts
        if set(local_sha) == {"0"}:
            continue  # a deletion sends no commits
        if set(remote_sha) != {"0"} and _exists(repo, remote_sha):
            targets.append(_range(repo, remote_sha, local_sha, local_ref))
            continue
        first = _first_unpushed(repo, local_sha, remote)
        if first is None:
            continue
        if not first.parents:
            targets.append(Target(f"push {local_ref}", quick=_ROOT_PUSH))
            continue
        targets.append(_range(repo, str(first.parents[0].id), local_sha, local_ref))
    return targets


_ROOT_PUSH = (
    "this push starts at a root commit (a whole history): not reviewed here; "
    "use `gitneural review --base REV`"
)


def _range(repo: pygit2.Repository, base: str, head: str, ref: str) -> Target:
    change = range_change(repo, base, head)
    label = f"push {ref} {base[:12]}..{head[:12]}"
    return Target(label, change, _quick(change, "nothing new to review"), repo.path)


def _is_sha(text: str) -> bool:
    # SHA-1 or SHA-256 object names, in full as git writes them to the hook.
    return len(text) in (40, 64) and all(c in "0123456789abcdef" for c in text)


def _exists(repo: pygit2.Repository, sha: str) -> bool:
    try:
        resolve_commit(repo, sha)
    except GitError:
        return False
    return True


def _first_unpushed(repo: pygit2.Repository, sha: str, remote: str) -> pygit2.Commit | None:
    """The oldest commit reachable from ``sha`` that no ref of ``remote`` reaches."""
    head = resolve_commit(repo, sha)
    walker = repo.walk(head.id, SortMode.TOPOLOGICAL | SortMode.REVERSE)
    prefix = f"refs/remotes/{remote}/"
    for name in repo.references:
        if not name.startswith(prefix):
            continue
        try:
            tip = repo.references[name].peel(pygit2.Commit)
        except (KeyError, ValueError, pygit2.GitError):
            continue  # a dangling symbolic ref such as a stale origin/HEAD
        walker.hide(tip.id)
    return next(iter(walker), None)

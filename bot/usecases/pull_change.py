"""The change a pull request review looks at, built from the mirror cache.

GitHub's own view of the PR is ``merge_base(base, head)..head`` (``pr_diff``): inline
comments must sit on its lines. What the model reviews may be smaller: after a push,
only what changed since the last reviewed head (when that head is an ancestor of the new
one; after a force-push the whole PR is reviewed again), and only in files that are part
of the PR, so a merge of the base branch into the PR is not reviewed as new work.

Settings and instructions come from the default branch, never from the PR.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import pygit2

from bot.domain.change import Change
from bot.domain.diff import Diff
from bot.errors import GitError
from bot.gh.pulls import PullInfo
from bot.git.repo import range_change, resolve_commit, snapshot_at

_DESCRIPTION_MAX = 16_000


@dataclass(frozen=True)
class MirrorRefs:
    """Where the PR's head, its base and the trusted revision are, in the repository the
    change is read from (refs of the mirror, or commit ids)."""

    head: str
    base: str
    default: str


@dataclass
class PullChange:
    #: What the review core reviews.
    change: Change
    #: GitHub's diff of the whole PR: where inline comments may go.
    pr_diff: Diff
    #: The last reviewed head when only the changes since then are reviewed.
    since: str | None = None
    #: Files changed since the last reviewed head (last in the prompt, for K3's cache).
    changed_last: list[str] = field(default_factory=list)

    @property
    def scope(self) -> str:
        if self.since is None:
            return "the whole pull request"
        return f"changes since `{self.since[:12]}`"


def _commit(mirror: pygit2.Repository, sha: str) -> pygit2.Commit | None:
    try:
        return resolve_commit(mirror, sha)
    except GitError:
        return None


def _describe(pull: PullInfo, log: str) -> str:
    text = f"{pull.body.strip()}\n\nCommits:\n{log}" if pull.body.strip() else log
    return text[:_DESCRIPTION_MAX]


def _paths_between(old: pygit2.Commit, new: pygit2.Commit) -> set[str]:
    diff = old.tree.diff_to_tree(new.tree)
    return {d.new_file.path for d in diff.deltas} | {d.old_file.path for d in diff.deltas}


def build_change(
    mirror: pygit2.Repository,
    pull: PullInfo,
    *,
    base_ref: str,
    default_ref: str,
    last_reviewed: str | None,
    incremental: bool,
) -> PullChange:
    """The PR's change at ``pull.head_sha``; ``base_ref``/``default_ref`` are mirror refs."""
    head = _commit(mirror, pull.head_sha)
    if head is None:
        raise GitError(f"the mirror has no commit {pull.head_sha[:12]}: fetch it again")
    base = pull.base_sha if _commit(mirror, pull.base_sha) is not None else base_ref
    full = range_change(mirror, base, pull.head_sha)
    trusted = snapshot_at(mirror, default_ref)
    full = replace(
        full, trusted=trusted, title=pull.title, description=_describe(pull, full.description)
    )
    last = _commit(mirror, last_reviewed) if last_reviewed else None
    if last is None or last.id == head.id:
        return PullChange(full, full.diff)
    in_pr = {f.path for f in full.diff} | {f.old_path for f in full.diff}
    changed = sorted(_paths_between(last, head) & in_pr)
    if not incremental or not mirror.descendant_of(head.id, last.id):
        return PullChange(full, full.diff, changed_last=changed)
    since = range_change(mirror, str(last.id), pull.head_sha)
    files = [f for f in since.diff if f.path in in_pr or f.old_path in in_pr]
    change = replace(
        since,
        diff=Diff(files),
        trusted=trusted,
        title=pull.title,
        description=_describe(pull, since.description),
    )
    return PullChange(change, full.diff, since=str(last.id), changed_last=changed)

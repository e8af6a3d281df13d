"""The git and model steps of a review job: fetching the PR into the mirror, the
repository's settings from its default branch, its learnings from the store, and running
the review core."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import cast

import github
import pygit2

from bot.code.index import repository_index
from bot.domain.learnings import Learning
from bot.domain.results import ReviewResult
from bot.domain.walkthrough import LinkedIssue
from bot.effort import Effort
from bot.errors import StoreError
from bot.gh.api.errors import github_errors
from bot.gh.linked_issues import described_issues, linked_issues
from bot.gh.mirrors.cache import MirrorAuthError
from bot.gh.pulls import PostedReview, PullInfo, by_gitneural, lazy_repo
from bot.gh.threads import ClosingIssue, ReviewThread, read_pull_threads
from bot.git.repo import snapshot_at
from bot.jobs import ReviewJob
from bot.llm.client import K3Client
from bot.review import review
from bot.settings.repository import Config, config_at, trusted_config
from bot.usecases.context import JobContext
from bot.usecases.errors import TransientJobError
from bot.usecases.images import pull_images
from bot.usecases.pull_change import MirrorRefs, PullChange, build_change
from bot.usecases.spend import usage_recorder

QUOTA_MARKER = "<!-- gitneural:notice quota -->"


def fetch_mirror(
    ctx: JobContext, installation_id: int, pull: PullInfo, *, default_only: bool = False
) -> tuple[pygit2.Repository, MirrorRefs]:
    """Bring the PR's head, its base and the default branch into the mirror, by git.

    The clone URL is the base repository's, as the API reported it: ``refs/pull/N/head``
    lives there even for a PR from a fork. A refused token is minted again, once. A
    repository that already holds the commits (``ctx.token_run.local_code``) is read instead.
    ``default_only``: only the trusted branch, for its settings (a merged PR's base
    branch may be gone).
    """
    run = ctx.token_run
    if run is not None and run.local_code is not None:
        local = run.local_code(pull)
        if local is not None:
            return local
    trusted = pull.base_ref if run is not None and run.settings_from_base else pull.default_branch
    refs = MirrorRefs(
        head=f"refs/pull/{pull.number}/head",
        base=f"refs/heads/{pull.base_ref}",
        default=f"refs/heads/{trusted}",
    )
    wanted = list(dict.fromkeys([refs.head, refs.base, refs.default]))
    if default_only:
        wanted = [refs.default]
    for attempt in (1, 2):
        try:
            mirror = ctx.mirrors.fetch(
                installation_id=installation_id,
                clone_url=pull.clone_url,
                token=ctx.tokens.get(installation_id),
                api_url=ctx.api_url,
                refs=wanted,
            )
            return mirror, refs
        except MirrorAuthError:
            ctx.forget_token(installation_id)
            if attempt == 2:
                raise
    raise AssertionError("unreachable")  # pragma: no cover


@dataclass(frozen=True)
class PolicySkip:
    """The trigger policy skips an automatic review in a way the pull request must show
    (a skip label, a change too large): its check run completes ``skipped``, never
    ``success``, saying why and that ``/review`` reviews it anyway."""

    reason: str
    #: The check is a gate (``check_conclusion = "failure"``) and the pull request is over
    #: a size cap: the run completes ``failure``, since branch protection would count
    #: ``skipped`` as passing and padding the change would pass the gate.
    blocks: bool = False


def settings_gate(
    job: ReviewJob,
    pull: PullInfo,
    mirror: pygit2.Repository,
    refs: MirrorRefs,
    config_path: str | None = None,
) -> Config | PolicySkip | str:
    """The repository's settings (from the trusted branch), or why the job is skipped:
    quietly (a string: the policy does not ask for this pull request), or shown on a
    check run (:class:`PolicySkip`)."""
    trusted = snapshot_at(mirror, refs.default)
    config = trusted_config(trusted) if config_path is None else config_at(trusted, config_path)
    settings = config.github
    if job.trigger == "command":
        association = job.author_association
        if association is not None and association not in settings.allowed_associations:
            return f"/review by {association} is not allowed (github.allowed_associations)"
        return config
    return trigger_policy(job.trigger, pull, config)


def trigger_policy(trigger: str, pull: PullInfo, config: Config) -> Config | PolicySkip | str:
    """Whether an automatic trigger reviews ``pull`` under the repository's settings."""
    g = config.github
    labels = {label.lower() for label in pull.labels}
    if g.auto_review == "off":
        return 'automatic reviews are off (github.auto_review = "off")'
    if pull.draft and not g.review_drafts:
        return "draft pull request (github.review_drafts = false)"
    if g.base_branches and not any(fnmatchcase(pull.base_ref, b) for b in g.base_branches):
        return f"base branch {pull.base_ref!r} is not in github.base_branches"
    wanted = g.review_label.lower() in labels
    if g.auto_review == "label" and not wanted:
        return f'not labelled {g.review_label!r} (github.auto_review = "label")'
    if trigger == "labeled" and not (g.auto_review == "label" and wanted):
        return "a label was added: only review_label starts a review, with auto_review = label"
    if g.skip_label.lower() in labels:
        return PolicySkip(f"the pull request is labelled `{g.skip_label}` (github.skip_label)")
    lines = pull.additions + pull.deletions
    gate = g.check_conclusion == "failure"
    if g.max_review_lines and lines > g.max_review_lines:
        return PolicySkip(
            f"{lines:,} changed lines, more than github.max_review_lines = {g.max_review_lines:,}",
            blocks=gate,
        )
    if g.max_review_files and pull.changed_files > g.max_review_files:
        return PolicySkip(
            f"{pull.changed_files:,} changed files, more than github.max_review_files = "
            f"{g.max_review_files:,}",
            blocks=gate,
        )
    return config


def review_change(
    ctx: JobContext,
    job: ReviewJob,
    pull: PullInfo,
    mirror: pygit2.Repository,
    refs: MirrorRefs,
    config: Config,
    last_reviewed: str | None,
    incremental: bool,
    *,
    pc: PullChange | None = None,
    linked: list[LinkedIssue] | None = None,
) -> tuple[PullChange, ReviewResult | None]:
    """Review the PR (or what changed since ``last_reviewed``) with K3; no result when an
    incremental review finds nothing changed in the PR's files. ``pc``: the change, if
    it was built already (for the budget's estimate); ``linked``: the issues it closes."""
    if pc is None:
        pc = pull_change(mirror, pull, refs, last_reviewed, incremental, config)
    if pc.since is not None and not pc.change.diff.files:
        return pc, None
    pc.change.linked_issues = list(linked or [])
    effort = cast(Effort, job.effort or config.review.effort)  # ReviewJob checked it
    settings = dataclasses.replace(ctx.llm, effort=effort)
    deadline = time.monotonic() + ctx.review_seconds if ctx.review_seconds else None
    client = K3Client(
        settings,
        on_usage=usage_recorder(ctx, job, "review"),
        # Told apart in the store: what the routine endpoint (a route's) cost.
        on_routine_usage=usage_recorder(ctx, job, "review-routine"),
    )
    head = pc.change.head
    # Built once per head beside the mirror, from the last indexed commit.
    index = (
        repository_index(head, pc.change.head_sha, mirror.path)
        if head is not None and pc.change.head_sha
        else None
    )
    result = review(
        pc.change,
        config,
        client,
        deadline=deadline,
        changed_last=pc.changed_last,
        on_progress=ctx.token_run.on_progress if ctx.token_run else None,
        learnings=repository_learnings(ctx, pull),
        since=pc.since,
        symbol_index=index,
    )
    return pc, result


def read_threads_and_issues(
    gh: github.Github,
    pull: PullInfo,
    config: Config,
    *,
    threads: bool,
    issues: bool = True,
    on_401: Callable[[], None] | None = None,
) -> tuple[list[ReviewThread] | None, list[LinkedIssue]]:
    """The PR's review threads (when ``threads``: GitNeural reviewed it before) and the
    issues it closes (``[walkthrough] linked_issues``), for two requests at most:
    GitHub's links ride on the threads query when there is one; otherwise they
    are asked for only when the description names an issue and GitHub links it (a pull
    request into the default branch); any issue the description names that GitHub's
    links did not carry is read by one GraphQL query for all of them. Without threads
    and issues, no request."""
    settings = config.walkthrough
    issues = issues and settings.enabled and settings.linked_issues
    described = described_issues(pull.body, pull.repo) if issues else []
    linked_by_github = bool(described) and pull.base_ref == pull.default_branch
    ask_github = issues and (threads or linked_by_github)
    if not threads and not ask_github:
        closing: list[ClosingIssue] = []
        found = None
    else:
        found = read_pull_threads(
            gh, pull.repo, pull.number, threads=threads, issues=ask_github, on_401=on_401
        )
        closing = found.closing
    linked = (
        linked_issues(gh, pull.repo, pull.body, closing, pr_number=pull.number, on_401=on_401)
        if issues
        else []
    )
    return (found.threads if threads and found is not None else None), linked


def repository_learnings(ctx: JobContext, pull: PullInfo) -> list[Learning]:
    """The rules taught with ``/learn`` for the PR's repository; none for a run with a
    token given to GitNeural (the Action, ``review --pr``), which has no App's store.
    A store out of reach is a transient fault: a review without them would repeat what
    the team asked GitNeural not to say."""
    if ctx.creds is None:
        return []
    from bot.store.learnings import active_learnings  # the App's store, its extra

    try:
        return active_learnings(ctx.ensure_store(), pull.repo_id)
    except StoreError as exc:
        raise TransientJobError(str(exc)) from exc


def pull_change(
    mirror: pygit2.Repository,
    pull: PullInfo,
    refs: MirrorRefs,
    last_reviewed: str | None,
    incremental: bool,
    config: Config | None = None,
    comment: tuple[str, str] | None = None,
) -> PullChange:
    """The change a review of ``pull`` looks at: the whole PR, or what changed since
    ``last_reviewed``; with ``config``, the description's images too (for the budget's
    estimate and the prompt), and those of the ``comment`` that asked (body, HTML)."""
    pc = build_change(
        mirror,
        pull,
        base_ref=refs.base,
        default_ref=refs.default,
        last_reviewed=last_reviewed,
        incremental=incremental,
    )
    if config is not None:
        pc.change.images = pull_images(pull.body_html, pull.body, config, comment=comment)
    return pc


def quota_notice_due(
    gh: github.Github, job: ReviewJob, bot_login: str | None, earlier: list[PostedReview]
) -> bool:
    """Whether to tell the PR the quota is exhausted: not if GitNeural already said so
    since its last review (every push would otherwise add one more comment)."""
    since = earlier[-1].submitted_at if earlier else None
    with github_errors("reading the PR's comments"):
        issue = lazy_repo(gh, job.repo).get_issue(job.pr_number)
        comments = issue.get_comments(since=since) if since else issue.get_comments()
        for comment in comments:
            data = comment.raw_data
            if since is not None and comment.created_at < since:
                continue
            if by_gitneural(data.get("user"), bot_login) and QUOTA_MARKER in (
                data.get("body") or ""
            ):
                return False
    return True

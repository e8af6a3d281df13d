"""Posting one review, ``event: COMMENT``, exactly once; and any other text, once
(:func:`post_once`: the answers in threads and to ``/ask`` use it too).

A POST is never retried blindly: when it fails without a clear "not stored" answer (a
5xx, a reset connection, a timeout), GitNeural first reads back and looks for its marker
(for a review: this head and delivery). After a 5xx that did not land, it is posted
again, once; after no answer at all, GitHub may still be storing it, so the job is left
to retry later (and reads back first). A 422 means GitHub stored nothing; for a review it
does not say which comment it refused, so the retry moves every inline comment into the
body.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import github
from github.Repository import Repository

from bot.errors import GitHubError
from bot.gh.api.errors import github_errors
from bot.gh.pulls import lazy_repo

log = logging.getLogger("gitneural.post")

#: The only event sent: GitNeural never approves nor requests changes, it only suggests
#: ("Suggestions only" in docs/architecture.md).
EVENT = "COMMENT"


@dataclass(frozen=True)
class ReviewDraft:
    commit_id: str
    body: str
    comments: list[dict[str, Any]]
    #: The same review with every inline comment moved into the body (for a 422).
    fallback_body: str


@dataclass(frozen=True)
class Posted:
    review_id: int
    #: The inline comments were refused (422) and went into the body instead.
    moved_inline: bool = False
    #: Found already posted (a lost answer, or an earlier run of the same job).
    found: bool = False


class ReviewRefusedError(GitHubError):
    """GitHub refused the review even without inline comments."""


def _create(
    repo: Repository, number: int, commit_id: str, body: str, comments: list[dict[str, Any]]
) -> int:
    # Lazy objects: naming the PR and the commit costs no request, only the POST does.
    pr = repo.get_pull(number)
    commit = repo.get_commit(commit_id)
    review = pr.create_review(commit=commit, body=body, event=EVENT, comments=comments)  # type: ignore[arg-type]
    return int(review.id)


def post_once(
    create: Callable[[], int],
    already_posted: Callable[[], int | None],
    *,
    doing: str,
    on_401: Callable[[], None] | None = None,
) -> tuple[int, bool]:
    """``create()`` (one POST, its new id) exactly once: ``(id, found)``.

    When the POST fails without a clear "not stored" answer (a 5xx, a reset, a timeout),
    ``already_posted`` reads back and returns the id if it landed after all (``found``).
    After a 5xx that did not land it is posted again, once; after no answer at all (or
    a rate limit) GitHub may still be storing it, so the error is raised for the job's
    retry, which reads back first. A 4xx is raised at once: nothing was stored.
    """
    tried_again = False
    while True:
        try:
            with github_errors(doing, on_401):
                return create(), False
        except GitHubError as exc:
            if not exc.transient and exc.status is not None and exc.status < 500:
                raise  # a plain refusal (403, 404, 422): nothing was stored
            landed = already_posted()
            if landed is not None:
                return landed, True
            # Without an answer (a timeout, a reset) GitHub may still be storing the
            # text: only a later run, which reads back first, can tell.
            if tried_again or exc.status is None or (exc.retry_after or 0) > 0:
                raise
            tried_again = True


def post_review(
    repo: Repository,
    number: int,
    draft: ReviewDraft,
    *,
    already_posted: Callable[[], int | None],
    on_401: Callable[[], None] | None = None,
) -> Posted:
    """Post ``draft`` on PR ``number`` of ``repo`` (a lazy repository).

    ``already_posted`` reads the reviews back and returns the id of this job's review if
    it landed after all.
    """

    def attempt(body: str, comments: list[dict[str, Any]]) -> tuple[int, bool]:
        return post_once(
            lambda: _create(repo, number, draft.commit_id, body, comments),
            already_posted,
            doing="posting the review",
            on_401=on_401,
        )

    try:
        review_id, found = attempt(draft.body, draft.comments)
        return Posted(review_id, found=found)
    except GitHubError as exc:
        if exc.status != 422:
            raise
        if not draft.comments:
            raise ReviewRefusedError(
                f"GitHub refused the review even without inline comments: {exc}"
            ) from None
        log.warning("GitHub refused the review's inline comments (422): %s", exc)
    try:
        review_id, found = attempt(draft.fallback_body, [])
    except GitHubError as exc:
        if exc.status == 422:
            raise ReviewRefusedError(
                f"GitHub refused the review even without inline comments: {exc}"
            ) from None
        raise
    return Posted(review_id, moved_inline=True, found=found)


def post_issue_comment(gh: github.Github, full_name: str, number: int, body: str) -> int:
    """A plain PR comment (for notices that are not reviews)."""
    with github_errors(f"commenting on pull request #{number}"):
        comment = lazy_repo(gh, full_name).get_issue(number).create_comment(body)
    return int(comment.id)

"""GitNeural's answers on GitHub: a reply in a review thread, or a comment on the PR.

Both are posted exactly once (:func:`bot.gh.post.post_once`): the caller reads its own
answers back by their hidden marker, before answering at all and after a POST whose
outcome is unknown. A reply always names the thread's first comment, as GitHub
requires (replies to replies are not supported).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import github

from bot.gh.api.errors import fresh_read, github_errors
from bot.gh.post import post_once
from bot.gh.pulls import lazy_pull, lazy_repo


@dataclass(frozen=True)
class IssueComment:
    id: int
    body: str
    #: REST's ``user`` object.
    user: dict[str, Any]
    created_at: datetime | None


def post_thread_reply(
    gh: github.Github,
    full_name: str,
    number: int,
    top_comment_id: int,
    body: str,
    *,
    already_posted: Callable[[], int | None],
    on_401: Callable[[], None] | None = None,
) -> tuple[int, bool]:
    """``POST …/pulls/{n}/comments/{top}/replies`` once: ``(id, found already posted)``."""

    def create() -> int:
        pull = lazy_pull(gh, full_name, number)
        return int(pull.create_review_comment_reply(top_comment_id, body).id)

    return post_once(create, already_posted, doing="replying in the review thread", on_401=on_401)


def post_pr_comment(
    gh: github.Github,
    full_name: str,
    number: int,
    body: str,
    *,
    already_posted: Callable[[], int | None],
    on_401: Callable[[], None] | None = None,
) -> tuple[int, bool]:
    """A comment on the PR's conversation, once: ``(id, found already posted)``."""

    def create() -> int:
        return int(lazy_repo(gh, full_name).get_issue(number).create_comment(body).id)

    return post_once(create, already_posted, doing="answering on the pull request", on_401=on_401)


def comments_since(
    gh: github.Github,
    full_name: str,
    number: int,
    since: datetime | None,
    *,
    on_401: Callable[[], None] | None = None,
) -> list[IssueComment]:
    """The PR's conversation comments updated at or after ``since`` (all when None)."""

    def read() -> list[IssueComment]:
        issue = lazy_repo(gh, full_name).get_issue(number)
        found = issue.get_comments(since=since) if since else issue.get_comments()
        comments = []
        for c in found:
            # Attributes, not ``raw_data``: that would fetch each listed comment again.
            user = {"login": c.user.login, "type": c.user.type} if c.user is not None else {}
            comments.append(IssueComment(int(c.id), str(c.body or ""), user, c.created_at))
        return comments

    return fresh_read(read, f"reading the comments of pull request #{number}", on_401)


def react(
    gh: github.Github,
    full_name: str,
    number: int,
    comment_id: int,
    content: str,
    *,
    on_401: Callable[[], None] | None = None,
) -> None:
    """React to a PR conversation comment (GitHub keeps one of each per user)."""
    with github_errors(f"adding the {content} reaction", on_401):
        issue = lazy_repo(gh, full_name).get_issue(number)
        issue.get_comment(comment_id).create_reaction(content)

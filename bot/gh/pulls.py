"""Reading a pull request and GitNeural's earlier reviews of it, in as few calls as possible.

One ``GET /pulls/{n}`` tells everything a review needs (state, draft, head and base, the
clone URL, the default branch); one ``GET /pulls/{n}/reviews`` per 100 reviews finds the
earlier GitNeural reviews by their hidden marker. Objects are made lazily so PyGithub
never spends a request on something it could name from a URL.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import github
from github.PullRequest import PullRequest
from github.Repository import Repository

from bot.errors import GitHubError
from bot.gh.api.errors import fresh_read
from bot.render.github import Marker, parse_marker

#: The pull request's JSON with its body as Markdown, HTML and text.
FULL_JSON = "application/vnd.github.full+json"


@dataclass(frozen=True)
class PullInfo:
    repo: str
    number: int
    state: str
    draft: bool
    head_sha: str
    base_ref: str
    base_sha: str
    default_branch: str
    #: The base repository's clone URL: ``refs/pull/N/head`` lives there, forks included.
    clone_url: str
    #: The base repository's web page, for links to files.
    web_url: str
    title: str
    body: str
    author: str
    #: The base repository's numeric id: stable across renames (the store keys on it).
    repo_id: int = 0
    #: Label names, as GitHub lists them on the pull request.
    labels: tuple[str, ...] = ()
    #: GitHub's own count of the whole pull request's changed lines and files.
    additions: int = 0
    deletions: int = 0
    changed_files: int = 0
    #: The description as GitHub renders it (the ``full`` media type): where a private
    #: repository's attachments appear as signed links.
    body_html: str = ""

    @property
    def open(self) -> bool:
        return self.state == "open"


@dataclass(frozen=True)
class PostedReview:
    id: int
    marker: Marker
    html_url: str
    submitted_at: datetime | None = None


def lazy_repo(gh: github.Github, full_name: str) -> Repository:
    return gh.withLazy(True).get_repo(full_name)


def lazy_pull(gh: github.Github, full_name: str, number: int) -> PullRequest:
    return lazy_repo(gh, full_name).get_pull(number)


def pull_info(data: dict[str, Any], full_name: str) -> PullInfo:
    """Everything a review needs from one complete ``GET /pulls/{n}`` answer's JSON."""
    base, head = data["base"], data["head"]
    base_repo = base["repo"]
    return PullInfo(
        repo=full_name,
        number=int(data["number"]),
        state=str(data["state"]),
        draft=bool(data.get("draft")),
        head_sha=str(head["sha"]),
        base_ref=str(base["ref"]),
        base_sha=str(base["sha"]),
        default_branch=str(base_repo["default_branch"]),
        clone_url=str(base_repo["clone_url"]),
        web_url=str(base_repo["html_url"]),
        title=str(data.get("title") or ""),
        body=str(data.get("body") or ""),
        author=str((data.get("user") or {}).get("login") or ""),
        repo_id=int(base_repo.get("id") or 0),
        labels=tuple(
            str(label.get("name") or "")
            for label in data.get("labels") or []
            if isinstance(label, dict)
        ),
        additions=int(data.get("additions") or 0),
        deletions=int(data.get("deletions") or 0),
        changed_files=int(data.get("changed_files") or 0),
        body_html=str(data.get("body_html") or ""),
    )


def read_pull(
    gh: github.Github,
    full_name: str,
    number: int,
    *,
    on_401: Callable[[], None] | None = None,
) -> PullInfo | None:
    """The pull request as it is now (one request); None if GitHub no longer has it."""

    def read() -> PullInfo:
        pr = lazy_pull(gh, full_name, number)
        # The whole JSON, with the body rendered too (``body_html``, for its images).
        _, data = pr.requester.requestJsonAndCheck("GET", pr.url, headers={"Accept": FULL_JSON})
        return pull_info(data, full_name)

    try:
        return fresh_read(read, f"reading pull request #{number} of {full_name}", on_401)
    except GitHubError as exc:
        if exc.status in (404, 410):
            return None
        raise


def read_comment_bodies(
    gh: github.Github, full_name: str, comment_id: int, *, on_401: Callable[[], None] | None = None
) -> tuple[str, str]:
    """An issue comment's body as written and as GitHub renders it (for its images);
    empty when GitHub no longer has it."""

    def read() -> tuple[str, str]:
        repo = lazy_repo(gh, full_name)
        _, data = repo.requester.requestJsonAndCheck(
            "GET", f"{repo.url}/issues/comments/{comment_id}", headers={"Accept": FULL_JSON}
        )
        return str(data.get("body") or ""), str(data.get("body_html") or "")

    try:
        return fresh_read(read, f"reading comment {comment_id} of {full_name}", on_401)
    except GitHubError as exc:
        if exc.status in (404, 410):
            return "", ""
        raise


def by_gitneural(user: Any, bot_login: str | None) -> bool:
    """Whether GitHub's ``user`` object is the App's bot (any bot, if its login is unknown)."""
    if not isinstance(user, dict):
        return False
    if bot_login is not None:
        return str(user.get("login") or "").lower() == bot_login.lower()
    return user.get("type") == "Bot"


def gitneural_reviews(
    gh: github.Github,
    full_name: str,
    number: int,
    bot_login: str | None,
    *,
    on_401: Callable[[], None] | None = None,
) -> list[PostedReview]:
    """GitNeural's earlier reviews of the PR, oldest first, each with its marker.

    A review counts only when its author is the App's bot account (or, if the login is
    not known, any bot account) and its body carries the marker: nobody else can make
    GitNeural believe it has already reviewed a head.
    """

    def read() -> list[PostedReview]:
        found: list[PostedReview] = []
        for review in lazy_pull(gh, full_name, number).get_reviews():
            data: dict[str, Any] = review.raw_data
            marker = parse_marker(data.get("body"))
            if marker is None or not by_gitneural(data.get("user"), bot_login):
                continue
            url = str(data.get("html_url") or "")
            found.append(PostedReview(int(data["id"]), marker, url, review.submitted_at))
        return found

    return fresh_read(read, f"listing the reviews of pull request #{number}", on_401)

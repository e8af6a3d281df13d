"""Reading a pull request and GitNeural's earlier reviews of it, in as few calls as possible.

One ``GET /pulls/{n}`` tells everything a review needs (state, draft, head and base, the
clone URL, the default branch); one ``GET /pulls/{n}/reviews`` per 100 reviews finds the
earlier GitNeural reviews by their hidden marker. Objects are made lazily so PyGithub
never spends a request on something it could name from a URL.

:func:`github_errors` turns PyGithub's and requests' exceptions into
:class:`~bot.errors.GitHubError`, marked transient for 5xx, rate limits and network
faults so the worker can reschedule the job.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

import github
import requests
from github import GithubException
from github.PullRequest import PullRequest
from github.Repository import Repository
from urllib3.exceptions import MaxRetryError

from bot.errors import GitHubError
from bot.gh.auth import github_retry_after, redact_tokens
from bot.render.github import Marker, parse_marker

T = TypeVar("T")
_TRANSIENT_STATUSES = frozenset({408, 429, 500, 502, 503, 504})


def _rate_limited(exc: GithubException) -> bool:
    headers = {str(k).lower(): str(v) for k, v in (exc.headers or {}).items()}
    if headers.get("x-ratelimit-remaining") == "0" or "retry-after" in headers:
        return True
    message = exc.data.get("message", "") if isinstance(exc.data, dict) else ""
    return "rate limit" in str(message).lower()


def github_error(exc: GithubException, doing: str) -> GitHubError:
    """A one-line :class:`GitHubError` for a failed request; never holds a token."""
    status = exc.status
    transient = status in _TRANSIENT_STATUSES or status >= 500
    transient = transient or (status == 403 and _rate_limited(exc)) or status == 401
    message = exc.data.get("message") if isinstance(exc.data, dict) else None
    # GitHub's message is quoted, never a token a proxy or a bug might echo in it.
    reason = redact_tokens(" ".join(str(message).split()))[:200] if message else "no message"
    return GitHubError(
        f"GitHub answered {status} when {doing} ({reason})"
        + ("; it is retried later" if transient else ""),
        transient=transient,
        retry_after=github_retry_after(exc.headers),
        status=status,
    )


@contextmanager
def github_errors(doing: str, on_401: Callable[[], None] | None = None) -> Iterator[None]:
    """Translate what PyGithub raises inside the block; ``on_401`` drops a stale token."""
    try:
        yield
    except GithubException as exc:
        if exc.status == 401 and on_401 is not None:
            on_401()
        raise github_error(exc, doing) from None
    except (requests.RequestException, MaxRetryError) as exc:
        raise GitHubError(
            f"cannot reach GitHub when {doing} ({type(exc).__name__}); it is retried later",
            transient=True,
        ) from None


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


def pull_info(pr: PullRequest, full_name: str) -> PullInfo:
    """Everything a review needs from one complete ``GET /pulls/{n}`` answer."""
    data: dict[str, Any] = pr.raw_data
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
    )


def fresh_read(read: Callable[[], T], doing: str, on_401: Callable[[], None] | None) -> T:
    """``read()``, once more after ``on_401`` if GitHub refused the cached token.

    Reads are safe to repeat, and so is a write GitHub refused with 401 (it changed
    nothing); a token revoked or expired early is otherwise only noticed by a 401, and
    the job should not wait for a retry just to mint a new one.
    """
    try:
        with github_errors(doing, on_401):
            return read()
    except GitHubError as exc:
        if exc.status != 401 or on_401 is None:
            raise
    with github_errors(doing):
        return read()


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
        pr.update()  # fetches the lazy object's whole JSON
        return pull_info(pr, full_name)

    try:
        return fresh_read(read, f"reading pull request #{number} of {full_name}", on_401)
    except GitHubError as exc:
        if exc.status in (404, 410):
            return None
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

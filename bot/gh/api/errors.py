"""GitHub's failures as GitNeural's errors, and GitHub's secrets kept out of every text.

:func:`github_errors` turns PyGithub's and requests' exceptions into
:class:`~bot.errors.GitHubError`, marked transient for 5xx, rate limits and network
faults so the worker can reschedule the job; :func:`fresh_read` reads once more when
GitHub refused a cached token. No message built here holds a token, a JWT or a key.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

import requests
from github import GithubException
from urllib3.exceptions import MaxRetryError

from bot.errors import GitHubError, GitNeuralError
from bot.gh.api.retry import github_retry_after
from bot.text import one_line

T = TypeVar("T")
_TRANSIENT_STATUSES = frozenset({408, 429, 500, 502, 503, 504})

_TOKEN_TEXT = re.compile(r"\b(gh[pousr]_|github_pat_)[A-Za-z0-9_]{16,}")
_JWT_TEXT = re.compile(r"\beyJ[A-Za-z0-9_-]+\.eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+")


def redact_tokens(text: str) -> str:
    """``text`` without GitHub tokens or JWTs (for messages that quote a server)."""
    return _JWT_TEXT.sub("***", _TOKEN_TEXT.sub(r"\1***", text))


class GitHubAuthError(GitNeuralError):
    """GitHub would not mint an installation token."""

    def __init__(
        self, message: str, *, transient: bool = False, retry_after: float | None = None
    ) -> None:
        super().__init__(message)
        #: Whether the same request may succeed later (5xx, rate limits, network faults).
        self.transient = transient
        self.retry_after = retry_after


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
    reason = redact_tokens(one_line(str(message)))[:200] if message else "no message"
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

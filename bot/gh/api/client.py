"""PyGithub clients acting as an installation (or with a token given to GitNeural), that
never retry a write."""

from __future__ import annotations

import github
from github import Auth

from bot.errors import GitHubError
from bot.gh.api.access_tokens import TokenSource
from bot.gh.api.counting import count_github_requests
from bot.gh.api.credentials import AppCredentials
from bot.gh.api.errors import github_errors
from bot.gh.api.retry import read_retry


class _InstallationTokenAuth(Auth.Auth):
    """Asks the cache for the token on every request, so a long task rolls over to a
    fresh token instead of failing when the first one expires."""

    def __init__(self, tokens: TokenSource, installation_id: int) -> None:
        self._tokens = tokens
        self._installation_id = installation_id

    @property
    def token_type(self) -> str:
        return "token"

    @property
    def token(self) -> str:
        return self._tokens.get(self._installation_id)

    @property
    def _masked_token(self) -> str:
        return "token (removed)"


def installation_client(
    creds: AppCredentials,
    tokens: TokenSource,
    installation_id: int,
    *,
    timeout: int = 30,
    seconds_between_requests: float | None = 0.25,
    seconds_between_writes: float | None = 1.0,
    max_rate_limit_wait: float = 60.0,
) -> github.Github:
    """A PyGithub client acting as the installation.

    Reads are retried on 5xx and rate limits; POST, PATCH and PUT never are (PyGithub's
    default would retry a POST and post a review twice). PyGithub's pacing between
    requests and writes is kept by default: it keeps GitHub's secondary rate limits away.
    """
    return api_client(
        creds.api_url,
        tokens,
        installation_id,
        timeout=timeout,
        seconds_between_requests=seconds_between_requests,
        seconds_between_writes=seconds_between_writes,
        max_rate_limit_wait=max_rate_limit_wait,
    )


def api_client(
    api_url: str,
    tokens: TokenSource,
    installation_id: int,
    *,
    timeout: int = 30,
    seconds_between_requests: float | None = 0.25,
    seconds_between_writes: float | None = 1.0,
    max_rate_limit_wait: float = 60.0,
) -> github.Github:
    """:func:`installation_client` on ``api_url``, for tokens that need no App (a
    workflow's ``GITHUB_TOKEN``, a person's token)."""
    count_github_requests()
    return github.Github(
        auth=_InstallationTokenAuth(tokens, installation_id),
        base_url=api_url,
        timeout=timeout,
        retry=read_retry(max_rate_limit_wait),
        per_page=100,
        seconds_between_requests=seconds_between_requests,
        seconds_between_writes=seconds_between_writes,
    )


#: Who writes with a workflow's ``GITHUB_TOKEN`` (on github.com and on GHES alike).
ACTIONS_BOT = "github-actions[bot]"


def token_writer(gh: github.Github) -> str:
    """The account ``gh``'s token posts as: the person of a personal token, else the
    workflow's bot (an installation token may not read ``/user``)."""
    return token_user(gh) or ACTIONS_BOT


def token_user(gh: github.Github) -> str | None:
    """The login of the person whose token ``gh`` holds; None for an installation's token
    (a workflow's ``GITHUB_TOKEN``), which GitHub does not let read ``/user``."""
    try:
        with github_errors("reading whose token this is"):
            return str(gh.get_user().login)
    except GitHubError as exc:
        if exc.status == 403:
            return None
        raise

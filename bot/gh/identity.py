"""Who GitNeural is on GitHub: the App's bot account, learned from the App itself.

A hidden marker proves nothing by itself: anyone, another bot included, can paste
GitNeural's marker into a review or a comment. Only text whose author is the App's own
bot account counts as GitNeural's. That account is named after the App's slug, which
``GET /app`` (authenticated with the App's JWT) tells; the worker asks once per process
(:meth:`bot.usecases.context.JobContext.identity`), so no setting is needed and a wrong
one cannot make GitNeural trust someone else. ``GITNEURAL_BOT_LOGIN`` still overrides it.

The two APIs spell the account differently: REST says ``<slug>[bot]`` (``type: Bot``),
GraphQL's ``author { login }`` says ``<slug>`` (``__typename: Bot``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import requests
from github import Auth, GithubException, GithubIntegration
from urllib3.exceptions import MaxRetryError

from bot.gh.api.credentials import AppCredentials
from bot.gh.api.errors import GitHubAuthError
from bot.gh.api.log_filter import guard_pygithub_logs
from bot.gh.api.retry import github_retry_after, read_retry

_BOT_SUFFIX = "[bot]"


@dataclass(frozen=True)
class BotIdentity:
    """The App's bot account."""

    #: The App's slug, e.g. ``gitneural``.
    slug: str

    @classmethod
    def from_login(cls, login: str) -> BotIdentity:
        """From a REST login (``gitneural[bot]``) or a bare slug."""
        return cls(login.strip().removesuffix(_BOT_SUFFIX))

    @property
    def rest_login(self) -> str:
        return f"{self.slug}{_BOT_SUFFIX}"

    @property
    def graphql_login(self) -> str:
        return self.slug

    def is_rest_user(self, user: Any) -> bool:
        """Whether REST's ``user`` object is this bot."""
        if not isinstance(user, dict):
            return False
        return str(user.get("login") or "").lower() == self.rest_login.lower()

    def is_graphql_author(self, author: Any) -> bool:
        """Whether GraphQL's ``author { login __typename }`` is this bot."""
        if not isinstance(author, dict) or author.get("__typename") != "Bot":
            return False
        return str(author.get("login") or "").lower() == self.graphql_login.lower()


def app_identity(creds: AppCredentials, *, timeout: int = 30) -> BotIdentity:
    """``GET /app`` with the App's JWT: the bot account GitNeural posts as."""
    guard_pygithub_logs()
    integration = GithubIntegration(
        auth=Auth.AppAuth(creds.app_id, creds.private_key),
        base_url=creds.api_url,
        timeout=timeout,
        retry=read_retry(),
    )
    try:
        slug = integration.get_app().slug
    except GithubException as exc:
        status = exc.status
        transient = status in (403, 429) or status >= 500
        raise GitHubAuthError(
            f"GitHub answered {status} to GET /app, which names the App's bot account"
            + ("; it is retried later" if transient else ": check GITHUB_APP_ID and the key"),
            transient=transient,
            retry_after=github_retry_after(exc.headers),
        ) from None
    except (requests.RequestException, MaxRetryError) as exc:
        raise GitHubAuthError(
            f"cannot reach {creds.api_url} to read the App ({type(exc).__name__}); "
            "it is retried later",
            transient=True,
        ) from None
    if not slug:
        raise GitHubAuthError("GET /app answered without the App's slug")
    return BotIdentity(str(slug))

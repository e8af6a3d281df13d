"""Installation tokens, minted with the App's JWT and cached until shortly before they
expire.

The App signs an RS256 JWT with its private key and trades it at
``POST /app/installations/{id}/access_tokens`` for an installation token (one hour).
Nothing here logs or raises with a token, a JWT or the key in its text.
"""

from __future__ import annotations

import threading
import time
from typing import Protocol

import requests
from github import Auth, GithubException, GithubIntegration
from urllib3.exceptions import MaxRetryError

from bot.gh.api.counting import count_github_requests
from bot.gh.api.credentials import AppCredentials
from bot.gh.api.errors import GitHubAuthError
from bot.gh.api.log_filter import guard_pygithub_logs
from bot.gh.api.retry import RETRIED_METHODS, github_retry_after, retry_policy


class TokenSource(Protocol):
    """Where a GitHub client and a git fetch get the token for an installation."""

    def get(self, installation_id: int) -> str: ...

    def invalidate(self, installation_id: int) -> None: ...


class PlainToken:
    """A token given, not minted: a workflow's ``GITHUB_TOKEN`` or a person's token.

    There is no App key to mint another with, so a refused token stays refused (GitHub's
    401 becomes the error); ``repr`` never shows it.
    """

    def __init__(self, token: str) -> None:
        self._token = token

    def __repr__(self) -> str:
        return "PlainToken(***)"

    def get(self, installation_id: int) -> str:
        return self._token

    def invalidate(self, installation_id: int) -> None:
        pass


class InstallationTokens:
    """A thread-safe cache of installation tokens, minted again ``refresh_margin_s``
    before they expire, so a token never dies in the middle of a request."""

    def __init__(
        self, creds: AppCredentials, *, refresh_margin_s: float = 300, timeout: int = 30
    ) -> None:
        self._creds = creds
        self._margin = refresh_margin_s
        self._timeout = timeout
        self._lock = threading.Lock()
        self._cache: dict[int, tuple[str, float]] = {}
        self._integration: GithubIntegration | None = None
        guard_pygithub_logs()
        count_github_requests()

    def get(self, installation_id: int) -> str:
        with self._lock:
            cached = self._cache.get(installation_id)
            if cached is not None and cached[1] - time.time() > self._margin:
                return cached[0]
            token, expires_at = self._mint(installation_id)
            self._cache[installation_id] = (token, expires_at)
            return token

    def invalidate(self, installation_id: int) -> None:
        """Forget the cached token (GitHub answered 401 with it); the next get() mints."""
        with self._lock:
            self._cache.pop(installation_id, None)

    def _mint(self, installation_id: int) -> tuple[str, float]:
        if self._integration is None:
            self._integration = GithubIntegration(
                auth=Auth.AppAuth(self._creds.app_id, self._creds.private_key),
                base_url=self._creds.api_url,
                timeout=self._timeout,
                # Minting twice is harmless, so this one POST may be retried.
                retry=retry_policy(RETRIED_METHODS | {"POST"}, max_rate_limit_wait=60.0),
                seconds_between_requests=None,
                seconds_between_writes=None,
            )
        try:
            auth = self._integration.get_access_token(installation_id)
        except GithubException as exc:
            raise _mint_error(exc, installation_id) from None
        except (requests.RequestException, MaxRetryError) as exc:
            raise GitHubAuthError(
                f"cannot reach {self._creds.api_url} to mint a token for installation "
                f"{installation_id} ({type(exc).__name__}); it is retried later",
                transient=True,
            ) from None
        expires_at = auth.expires_at.timestamp() if auth.expires_at else time.time() + 3600
        return auth.token, expires_at


def _mint_error(exc: GithubException, installation_id: int) -> GitHubAuthError:
    status = exc.status
    if status == 401:
        return GitHubAuthError(
            "GitHub refused the App's JWT (401): check GITHUB_APP_ID, the private key and "
            "this machine's clock"
        )
    if status == 404:
        return GitHubAuthError(
            f"installation {installation_id} not found: the App was uninstalled there, or "
            "GITHUB_APP_ID names another App"
        )
    transient = status in (403, 429) or status >= 500
    return GitHubAuthError(
        f"GitHub answered {status} when minting a token for installation {installation_id}"
        + ("; it is retried later" if transient else ""),
        transient=transient,
        retry_after=github_retry_after(exc.headers),
    )

"""GitHub App authentication: the App's credentials, installation tokens cached until
shortly before they expire, and PyGithub clients that never retry a write.

The App signs an RS256 JWT with its private key and trades it at
``POST /app/installations/{id}/access_tokens`` for an installation token (one hour).
Nothing here logs or raises with a token, a JWT or the key in its text.
"""

from __future__ import annotations

import logging
import os
import re
import threading
import time
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

import github
import requests
from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.hazmat.primitives.serialization import load_pem_private_key
from github import Auth, GithubException, GithubIntegration, GithubRetry
from urllib3 import HTTPResponse, Retry
from urllib3.connectionpool import ConnectionPool
from urllib3.exceptions import MaxRetryError

from bot.errors import ConfigError, GitNeuralError
from bot.retry_after import retry_after_seconds

DEFAULT_API_URL = "https://api.github.com"
_DEFAULT_PORTS = {"http": 80, "https": 443}
#: Reads are retried on these; writes never are (a review must not be posted twice).
_RETRIED_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
_RETRIED_STATUSES = [429, 500, 502, 503, 504]


_TOKEN_TEXT = re.compile(r"\b(gh[pousr]_|github_pat_)[A-Za-z0-9_]{16,}")
_TOKEN_FIELD = re.compile(r"""(['"]token['"]\s*:\s*['"])[^'"]+""")
_JWT_TEXT = re.compile(r"\beyJ[A-Za-z0-9_-]+\.eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+")


def redact_tokens(text: str) -> str:
    """``text`` without GitHub tokens or JWTs (for messages that quote a server)."""
    return _JWT_TEXT.sub("***", _TOKEN_TEXT.sub(r"\1***", text))


class _RedactTokens(logging.Filter):
    """PyGithub logs whole response bodies at DEBUG, and the body of an access-token
    request is the token: blank tokens out of its records before any handler sees them."""

    def filter(self, record: logging.LogRecord) -> bool:
        text = record.getMessage()
        redacted = _TOKEN_FIELD.sub(r"\1***", redact_tokens(text))
        if redacted != text:
            record.msg, record.args = redacted, None
        return True


def _guard_pygithub_logs() -> None:
    # Logger filters do not apply to records propagated from child loggers, so the
    # filter goes on the logger PyGithub actually logs requests with.
    logger = logging.getLogger("github.Requester")
    if not any(isinstance(f, _RedactTokens) for f in logger.filters):
        logger.addFilter(_RedactTokens())


class GitHubAuthError(GitNeuralError):
    """GitHub would not mint an installation token."""

    def __init__(
        self, message: str, *, transient: bool = False, retry_after: float | None = None
    ) -> None:
        super().__init__(message)
        #: Whether the same request may succeed later (5xx, rate limits, network faults).
        self.transient = transient
        self.retry_after = retry_after


@dataclass(frozen=True)
class AppCredentials:
    """The App's id, private key (PEM) and API root. ``repr`` never shows the key."""

    app_id: int
    private_key: str = field(repr=False)
    api_url: str = DEFAULT_API_URL

    def __post_init__(self) -> None:
        object.__setattr__(self, "api_url", self.api_url.rstrip("/"))

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> AppCredentials:
        """Read ``GITHUB_APP_ID``, ``GITHUB_PRIVATE_KEY`` or ``GITHUB_PRIVATE_KEY_PATH``,
        and ``GITHUB_API_URL`` (default ``https://api.github.com``)."""
        env = os.environ if env is None else env
        return cls(
            app_id=_app_id(env.get("GITHUB_APP_ID", "").strip()),
            private_key=_private_key(env),
            api_url=_api_url(env.get("GITHUB_API_URL", "").strip() or DEFAULT_API_URL),
        )


def _app_id(value: str) -> int:
    if not value:
        raise ConfigError("GITHUB_APP_ID is not set: set it to the App's numeric id")
    if not value.isdigit() or int(value) <= 0:
        raise ConfigError(f"GITHUB_APP_ID must be the App's numeric id, not {value!r}")
    return int(value)


def _private_key(env: Mapping[str, str]) -> str:
    text = env.get("GITHUB_PRIVATE_KEY", "").strip()
    path = env.get("GITHUB_PRIVATE_KEY_PATH", "").strip()
    if text and path:
        raise ConfigError("set GITHUB_PRIVATE_KEY or GITHUB_PRIVATE_KEY_PATH, not both")
    source = "GITHUB_PRIVATE_KEY"
    if path:
        source = f"the file GITHUB_PRIVATE_KEY_PATH names ({path})"
        try:
            text = Path(path).read_text(encoding="ascii").strip()
        except OSError as exc:
            raise ConfigError(
                f"cannot read GITHUB_PRIVATE_KEY_PATH {path}: {exc.strerror or 'unreadable'}"
            ) from None
        except UnicodeDecodeError:
            raise ConfigError(f"{source} is not a PEM file") from None
    if not text:
        raise ConfigError(
            "no App private key: set GITHUB_PRIVATE_KEY (the PEM text) or "
            "GITHUB_PRIVATE_KEY_PATH (a file holding it)"
        )
    if "\n" not in text and "\\n" in text:
        text = text.replace("\\n", "\n")  # a key squeezed onto one line of an .env file
    try:
        key = load_pem_private_key(text.encode("ascii", "replace"), password=None)
    except (ValueError, TypeError, UnsupportedAlgorithm):
        key = None
    if not isinstance(key, rsa.RSAPrivateKey):
        raise ConfigError(
            f"{source} is not an unencrypted PEM RSA private key: download a new key from "
            "the App's settings page"
        )
    return text + "\n"


def _api_url(value: str) -> str:
    parts = urllib.parse.urlsplit(value)
    if (
        parts.scheme not in _DEFAULT_PORTS
        or not parts.hostname
        or parts.username
        or parts.password
        or parts.query
        or parts.fragment
    ):
        raise ConfigError(
            "GITHUB_API_URL must be an http(s) URL without credentials, like "
            "https://api.github.com or https://HOST/api/v3 for GitHub Enterprise Server"
        )
    return value.rstrip("/")


def _origin(url: str) -> tuple[str, str, int] | None:
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in _DEFAULT_PORTS or not parts.hostname:
        return None
    if parts.username is not None or parts.password is not None:
        return None
    try:
        port = parts.port or _DEFAULT_PORTS[parts.scheme]
    except ValueError:
        return None
    return parts.scheme, parts.hostname.lower().rstrip("."), port


def api_host_matches(api_url: str, clone_url: str) -> bool:
    """Whether ``clone_url`` is served by the same GitHub as ``api_url``.

    ``api.github.com`` serves ``github.com`` (and ``api.X.ghe.com`` serves ``X.ghe.com``);
    GitHub Enterprise Server answers both on one host (``https://HOST/api/v3``). A
    different host, port or scheme, or credentials in the URL, do not match: the
    installation token must never be sent anywhere else.
    """
    api, clone = _origin(api_url), _origin(clone_url)
    if api is None or clone is None or api[0] != clone[0] or api[2] != clone[2]:
        return False
    return api[1] == clone[1] or api[1] == f"api.{clone[1]}"


def github_retry_after(headers: Mapping[str, Any] | None) -> float | None:
    """Seconds to wait from ``retry-after`` or ``x-ratelimit-reset``, if GitHub said."""
    waited = retry_after_seconds(headers)
    if waited is not None:
        return waited
    lowered = {str(k).lower(): str(v) for k, v in (headers or {}).items()}
    if lowered.get("x-ratelimit-remaining") == "0":
        reset = lowered.get("x-ratelimit-reset", "")
        if reset.isdigit():
            return max(0.0, int(reset) - time.time()) + 1
    return None


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
        _guard_pygithub_logs()

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
                retry=_retry(_RETRIED_METHODS | {"POST"}, max_rate_limit_wait=60.0),
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


class _InstallationTokenAuth(Auth.Auth):
    """Asks the cache for the token on every request, so a long task rolls over to a
    fresh token instead of failing when the first one expires."""

    def __init__(self, tokens: InstallationTokens, installation_id: int) -> None:
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


class _CappedRetry(GithubRetry):
    """Gives up (so the task can be rescheduled) instead of sleeping through a
    ``retry-after`` or rate-limit reset longer than ``max_rate_limit_wait``."""

    def increment(  # type: ignore[override]
        self,
        method: str | None = None,
        url: str | None = None,
        response: HTTPResponse | None = None,  # type: ignore[override]
        error: Exception | None = None,
        _pool: ConnectionPool | None = None,
        _stacktrace: TracebackType | None = None,
    ) -> Retry:
        if response is not None and self.max_rate_limit_wait is not None:
            wait = github_retry_after(response.headers)
            if wait is not None and wait > self.max_rate_limit_wait:
                # With raise_on_status=False urllib3 hands this response to PyGithub, which
                # raises GithubException carrying the headers for the caller's reschedule.
                raise MaxRetryError(_pool, url)  # type: ignore[arg-type]
        return super().increment(method, url, response, error, _pool, _stacktrace)


def _retry(methods: frozenset[str], max_rate_limit_wait: float) -> GithubRetry:
    return _CappedRetry(
        total=3,
        backoff_factor=0.5,
        backoff_max=30,
        allowed_methods=methods,
        status_forcelist=list(_RETRIED_STATUSES),
        raise_on_status=False,
        respect_retry_after_header=True,
        secondary_rate_wait=min(60.0, max_rate_limit_wait),
        max_rate_limit_wait=max_rate_limit_wait,
    )


def read_retry(max_rate_limit_wait: float = 60.0) -> GithubRetry:
    """Retries GET/HEAD/OPTIONS on 5xx and rate limits; never a write."""
    return _retry(_RETRIED_METHODS, max_rate_limit_wait)


def installation_client(
    creds: AppCredentials,
    tokens: InstallationTokens,
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
    return github.Github(
        auth=_InstallationTokenAuth(tokens, installation_id),
        base_url=creds.api_url,
        timeout=timeout,
        retry=read_retry(max_rate_limit_wait),
        per_page=100,
        seconds_between_requests=seconds_between_requests,
        seconds_between_writes=seconds_between_writes,
    )

"""How GitHub is retried: reads on 5xx and rate limits, never a write (a review must not be
posted twice), honouring ``retry-after`` and ``x-ratelimit-reset`` unless they ask for
longer than the job should sleep."""

from __future__ import annotations

import time
from collections.abc import Mapping
from types import TracebackType
from typing import Any

from github import GithubRetry
from urllib3 import HTTPResponse, Retry
from urllib3.connectionpool import ConnectionPool
from urllib3.exceptions import MaxRetryError

from bot.retry_after import retry_after_seconds

#: Reads are retried on these; writes never are (a review must not be posted twice).
RETRIED_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
_RETRIED_STATUSES = [429, 500, 502, 503, 504]


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


def retry_policy(methods: frozenset[str], max_rate_limit_wait: float) -> GithubRetry:
    """Retries ``methods`` on 5xx and rate limits, waiting at most ``max_rate_limit_wait``."""
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
    return retry_policy(RETRIED_METHODS, max_rate_limit_wait)

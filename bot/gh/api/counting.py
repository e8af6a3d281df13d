"""Every request to GitHub's REST API counted by status, retries included.

PyGithub sends through a ``requests`` session whose adapter retries inside urllib3, so
a response hook alone would see only the last attempt of a retried read; the
response's ``retries.history`` holds the earlier ones (their status, or none when the
connection failed). PyGithub makes its sessions itself: its connection classes are
replaced, once per process, by ones that add the hook.
"""

from __future__ import annotations

import threading
from typing import Any

import requests
from github.Requester import HTTPRequestsConnectionClass, HTTPSRequestsConnectionClass, Requester

from bot import metrics

_lock = threading.Lock()
_installed: list[bool] = []


def _count(response: requests.Response, *args: Any, **kwargs: Any) -> None:
    retries = getattr(response.raw, "retries", None)
    for attempt in getattr(retries, "history", None) or ():
        metrics.github_request(str(attempt.status) if attempt.status else "network")
    metrics.github_request(str(response.status_code))


class _CountedHTTP(HTTPRequestsConnectionClass):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.session.hooks["response"].append(_count)


class _CountedHTTPS(HTTPSRequestsConnectionClass):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.session.hooks["response"].append(_count)


def count_github_requests() -> None:
    """Count the requests of every PyGithub client made from now on in this process."""
    with _lock:
        if not _installed:
            Requester.injectConnectionClasses(_CountedHTTP, _CountedHTTPS)
            _installed.append(True)

"""What the App's own JWT shows of it, for ``gitneural doctor``: ``GET /app``, its
installations and its webhook's configuration. Plain requests, no retries: a check
reports what GitHub says now. Nothing here logs or raises with the key or the JWT."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from typing import Any, Final

import jwt

from bot.errors import GitHubError
from bot.gh.api.credentials import AppCredentials

_TIMEOUT: Final = 15


class AppProbe:
    def __init__(self, creds: AppCredentials) -> None:
        self.creds = creds

    def _jwt(self) -> str:
        now = int(time.time())
        claims = {"iat": now - 60, "exp": now + 540, "iss": str(self.creds.app_id)}
        return jwt.encode(claims, self.creds.private_key, algorithm="RS256")

    def get(self, path: str) -> Any:
        """``GET {api}{path}`` as the App; :class:`GitHubError` with GitHub's status."""
        request = urllib.request.Request(  # noqa: S310 - an http(s) URL, checked
            f"{self.creds.api_url}{path}",
            headers={
                "Authorization": f"Bearer {self._jwt()}",
                "Accept": "application/vnd.github+json",
                "X-GitHub-Api-Version": "2022-11-28",
                "User-Agent": "gitneural-doctor",
            },
        )
        try:
            with urllib.request.urlopen(request, timeout=_TIMEOUT) as response:  # noqa: S310
                return json.loads(response.read().decode("utf-8"))
        except urllib.error.HTTPError as exc:
            message = _message(exc)
            raise GitHubError(f"HTTP {exc.code}: {message}", status=exc.code) from None
        except (urllib.error.URLError, OSError, ValueError) as exc:
            reason = getattr(exc, "reason", None) or type(exc).__name__
            raise GitHubError(f"cannot reach {self.creds.api_url} ({reason})") from None

    def app(self) -> dict[str, Any]:
        found = self.get("/app")
        return found if isinstance(found, dict) else {}

    def installations(self) -> list[dict[str, Any]]:
        found = self.get("/app/installations?per_page=100")
        return [i for i in found if isinstance(i, dict)] if isinstance(found, list) else []

    def hook_config(self) -> dict[str, Any]:
        found = self.get("/app/hook/config")
        return found if isinstance(found, dict) else {}


def _message(exc: urllib.error.HTTPError) -> str:
    try:
        body = json.loads(exc.read().decode("utf-8", "replace"))
    except (ValueError, OSError):
        return exc.reason or "error"
    text = body.get("message") if isinstance(body, dict) else None
    return str(text or exc.reason or "error")[:200]

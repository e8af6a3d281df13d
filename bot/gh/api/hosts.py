"""Which hosts an installation token may be sent to: only the GitHub ``GITHUB_API_URL``
names, never a clone URL on another host."""

from __future__ import annotations

import urllib.parse

DEFAULT_PORTS = {"http": 80, "https": 443}


def _origin(url: str) -> tuple[str, str, int] | None:
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in DEFAULT_PORTS or not parts.hostname:
        return None
    if parts.username is not None or parts.password is not None:
        return None
    try:
        port = parts.port or DEFAULT_PORTS[parts.scheme]
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

"""Which hosts an installation token may be sent to: only the GitHub ``GITHUB_API_URL``
names, never a clone URL on another host, and never in clear text across a network."""

from __future__ import annotations

import ipaddress
import urllib.parse
from collections.abc import Mapping
from typing import Final

from bot.errors import ConfigError
from bot.settings.environment import env_bool

DEFAULT_PORTS = {"http": 80, "https": 443}
#: ``1`` lets a token go to GitHub over plain ``http://`` beyond this machine (a GitHub
#: Enterprise Server without TLS on a network the operator trusts).
ALLOW_INSECURE_ENV: Final = "GITNEURAL_ALLOW_INSECURE_GITHUB"


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


def is_loopback(host: str) -> bool:
    """``localhost``, 127.0.0.0/8 or ``::1``: traffic that never leaves this machine."""
    host = host.lower().rstrip(".")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def require_secure_github(url: str, what: str, env: Mapping[str, str]) -> None:
    """Refuse ``url`` (named ``what`` in the error) when it is plain ``http://`` to a host
    other than loopback, unless ``GITNEURAL_ALLOW_INSECURE_GITHUB=1``.

    Every request to it carries a token (an installation's, a workflow's or a person's),
    and git fetches send it too: over ``http://`` anyone on the path can read it. Loopback
    stays allowed (a tunnel, a local proxy, the tests' fake GitHub).
    """
    parts = urllib.parse.urlsplit(url.strip())
    if parts.scheme != "http" or is_loopback(parts.hostname or ""):
        return
    if env_bool(env, ALLOW_INSECURE_ENV, False):
        return
    host = (parts.hostname or "")[:100]
    raise ConfigError(
        f"{what} is plain http:// to {host!r}, which would send the GitHub token "
        f"unencrypted: use https://, or set {ALLOW_INSECURE_ENV}=1 on a network you trust"
    )

"""The GitHub App's credentials: its id, its private key and the API it talks to, read
from the environment and checked once. Nothing here logs or raises with the key."""

from __future__ import annotations

import os
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.hazmat.primitives.serialization import load_pem_private_key

from bot.errors import ConfigError
from bot.gh.api.hosts import DEFAULT_PORTS, require_secure_github

DEFAULT_API_URL = "https://api.github.com"


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
        and ``GITHUB_API_URL`` (see :func:`github_api_url`)."""
        env = os.environ if env is None else env
        return cls(
            app_id=_app_id(env.get("GITHUB_APP_ID", "").strip()),
            private_key=_private_key(env),
            api_url=github_api_url(env),
        )


def credential_problems(env: Mapping[str, str]) -> list[str]:
    """Every set-but-wrong credential (id, key, API URL), each a line naming what to fix;
    a missing one is left to the caller, which lists what is required."""
    checks = (
        ("GITHUB_APP_ID", lambda: _app_id(env.get("GITHUB_APP_ID", "").strip())),
        ("GITHUB_PRIVATE_KEY", lambda: _private_key(env)),
        ("GITHUB_API_URL", lambda: github_api_url(env)),
    )
    problems = []
    for name, check in checks:
        keys = (name, f"{name}_PATH") if name == "GITHUB_PRIVATE_KEY" else (name,)
        if not any(env.get(k, "").strip() for k in keys):
            continue
        try:
            check()
        except ConfigError as exc:
            problems.append(str(exc))
    return problems


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


def github_api_url(env: Mapping[str, str]) -> str:
    """``GITHUB_API_URL`` checked (default ``https://api.github.com``): the App's, a
    workflow's and ``review --pr``'s one way to the API. Plain ``http://`` beyond
    loopback is refused unless ``GITNEURAL_ALLOW_INSECURE_GITHUB=1``."""
    url = _api_url(env.get("GITHUB_API_URL", "").strip() or DEFAULT_API_URL)
    require_secure_github(url, "GITHUB_API_URL", env)
    return url


def _api_url(value: str) -> str:
    parts = urllib.parse.urlsplit(value)
    if (
        parts.scheme not in DEFAULT_PORTS
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

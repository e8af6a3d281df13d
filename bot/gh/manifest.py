"""Registering the GitHub App from its manifest (``app.yml``), GitHub's manifest flow as
Probot runs it: a page posts the manifest to ``{github}/settings/apps/new?state=S`` (or
``/organizations/ORG/settings/apps/new``), the person names the App and creates it,
GitHub redirects to the manifest's ``redirect_url`` with a one-hour ``code`` (and the
``state``), and ``POST {api}/app-manifests/{code}/conversions`` trades the code for the
App's id, private key, webhook secret and client credentials.

Nothing here logs or raises with a credential.
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, Final

from bot.errors import ConfigError, GitHubError
from bot.gh.api.credentials import DEFAULT_API_URL

GITHUB_URL: Final = "https://github.com"
_CODE: Final = re.compile(r"[A-Za-z0-9_-]{1,200}")
_ORG: Final = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})")
_TIMEOUT: Final = 30


def load_manifest() -> dict[str, Any]:
    """``app.yml``: the App's name, permissions and events (shipped in the package)."""
    import yaml  # the App's extra only: the CLI and the hook never read a manifest

    text = resources.files("bot.gh").joinpath("app.yml").read_text(encoding="utf-8")
    manifest = yaml.safe_load(text)
    if not isinstance(manifest, dict):
        raise ConfigError("app.yml is not a mapping: reinstall GitNeural")
    return manifest


def app_manifest(webhook_url: str, redirect_url: str, name: str | None = None) -> dict[str, Any]:
    """The manifest to post: ``app.yml`` with this deployment's webhook URL and the setup
    page's callback as ``redirect_url``."""
    manifest = load_manifest()
    manifest["hook_attributes"] = {**manifest.get("hook_attributes", {}), "url": webhook_url}
    manifest["redirect_url"] = redirect_url
    if name:
        manifest["name"] = name
    return manifest


def site_address(value: str, *, path: bool = False) -> urllib.parse.SplitResult | None:
    """``value``'s parts when it is a plain http(s) address: a host, a port that parses, no
    user, password, query or fragment, and no path unless ``path``; else None. Setup's
    GitHub address, public URL and webhook URL are all checked by it."""
    parts = urllib.parse.urlsplit(value)
    try:
        _ = parts.port
    except ValueError:
        return None
    plain = (
        parts.scheme in ("http", "https")
        and parts.hostname
        and not (parts.username or parts.password or parts.query or parts.fragment)
        and (path or not parts.path)
    )
    return parts if plain else None


def web_url(raw: str) -> str:
    """github.com or a GitHub Enterprise Server's address, checked: ``https://HOST``."""
    value = raw.strip().rstrip("/") or GITHUB_URL
    if site_address(value) is None:
        raise ConfigError(
            f"{raw!r} is not a GitHub address: use https://github.com or https://HOST for "
            "GitHub Enterprise Server (no path)"
        )
    return value


def api_url_for(github: str) -> str:
    """The REST API of a GitHub: api.github.com, or ``/api/v3`` on the server itself."""
    host = urllib.parse.urlsplit(github).hostname
    return DEFAULT_API_URL if host in ("github.com", "www.github.com") else f"{github}/api/v3"


def registration_url(github: str, organization: str | None, state: str) -> str:
    """Where the manifest form posts to: the person's or the organization's new App."""
    if organization:
        if not _ORG.fullmatch(organization):
            raise ConfigError(f"{organization!r} is not an organization's name on GitHub")
        path = f"/organizations/{organization}/settings/apps/new"
    else:
        path = "/settings/apps/new"
    return f"{github}{path}?{urllib.parse.urlencode({'state': state})}"


@dataclass(frozen=True)
class RegisteredApp:
    """What the conversion returns. ``repr`` shows none of the secrets."""

    app_id: int
    slug: str
    name: str
    html_url: str
    owner: str
    client_id: str
    pem: str = field(repr=False)
    webhook_secret: str = field(repr=False)
    client_secret: str = field(repr=False)

    @property
    def install_url(self) -> str:
        return f"{self.html_url}/installations/new"

    @property
    def bot_login(self) -> str:
        return f"{self.slug}[bot]"


def convert_code(api_url: str, code: str) -> RegisteredApp:
    """``POST /app-manifests/{code}/conversions`` (no authentication: the code is it)."""
    if not _CODE.fullmatch(code):
        raise ConfigError("GitHub's redirect carried no usable code: register the App again")
    request = urllib.request.Request(  # noqa: S310 - an http(s) URL, checked
        f"{api_url}/app-manifests/{code}/conversions",
        data=b"",
        method="POST",
        headers={
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": "2022-11-28",
            "User-Agent": "gitneural-setup",
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=_TIMEOUT) as response:  # noqa: S310
            body = json.loads(response.read().decode("utf-8"))
    except urllib.error.HTTPError as exc:
        hint = "the code expired or was used already: register the App again"
        raise GitHubError(
            f"GitHub refused the manifest code (HTTP {exc.code}): {hint}", status=exc.code
        ) from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", None) or type(exc).__name__
        raise GitHubError(f"cannot reach GitHub's API at {api_url} ({reason})") from None
    try:
        return RegisteredApp(
            app_id=int(body["id"]),
            slug=str(body["slug"]),
            name=str(body.get("name") or body["slug"]),
            html_url=str(body["html_url"]).rstrip("/"),
            owner=str((body.get("owner") or {}).get("login", "")),
            client_id=str(body.get("client_id") or ""),
            pem=str(body["pem"]),
            webhook_secret=str(body["webhook_secret"]),
            client_secret=str(body.get("client_secret") or ""),
        )
    except (KeyError, TypeError, ValueError):
        raise GitHubError("GitHub's answer to the manifest conversion lacks the App") from None

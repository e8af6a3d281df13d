"""How ``--golden github`` reaches GitHub: with a token (``GITHUB_TOKEN`` or ``GH_TOKEN``),
else as the App (``GITHUB_APP_ID`` and its private key: the installation on the
repository), on ``GITHUB_API_URL``; the repository named by ``--github-repo`` or by the
clone's ``origin`` remote. It only reads."""

from __future__ import annotations

import contextlib
import re
import urllib.parse
from collections.abc import Mapping, Sequence

import github
import pygit2
from github import Auth, GithubException

from bot.errors import ConfigError, GitHubError, UsageError
from bot.gh.api.access_tokens import InstallationTokens, PlainToken
from bot.gh.api.client import api_client, installation_client
from bot.gh.api.credentials import AppCredentials, github_api_url
from bot.replay.github_golden import pull_number, read_github_golden
from bot.replay.items import GoldenItem, PastChange

_NAME = re.compile(r"[A-Za-z0-9](?:-?[A-Za-z0-9])*/[A-Za-z0-9._-]+")
#: ``git@host:owner/repo.git`` (scp-like) or any URL whose path ends ``/owner/repo[.git]``.
_SCP = re.compile(r"^[\w.-]+@[\w.-]+:(?P<path>[^/].*)$")


def repository_name(repo: pygit2.Repository, given: str | None) -> str:
    """``OWNER/REPO``: ``given`` (``--github-repo``), else the ``origin`` remote's path."""
    if given:
        if not _NAME.fullmatch(given):
            raise UsageError(f"--github-repo takes OWNER/REPO, not {given!r}")
        return given
    try:
        url = repo.remotes["origin"].url or ""
    except KeyError:
        url = ""
    scp = _SCP.match(url)
    path = scp["path"] if scp else urllib.parse.urlsplit(url).path
    parts = [p for p in path.removesuffix("/").removesuffix(".git").split("/") if p]
    name = "/".join(parts[-2:])
    if len(parts) < 2 or not _NAME.fullmatch(name) or name.endswith("/."):
        raise UsageError(
            "--golden github: cannot tell the GitHub repository from the origin remote; "
            "pass --github-repo OWNER/REPO"
        )
    return name


def _pull_of(repo: pygit2.Repository, change: PastChange) -> int | None:
    """The pull request a change came from, as its merge commit's subject says (a
    change's title is the pull request's title, the merge message's third line)."""
    subject = change.title
    if change.commit:
        with contextlib.suppress(KeyError, ValueError):
            subject = repo.revparse_single(change.commit).peel(pygit2.Commit).message
    return pull_number(PastChange(change.base, change.head, subject))


def github_client(env: Mapping[str, str], full_name: str) -> github.Github:
    """A reading client: the token if one is set, else the App's installation on
    ``full_name``; neither is a one-line :class:`ConfigError`."""
    api_url = github_api_url(env)
    token = (env.get("GITHUB_TOKEN") or env.get("GH_TOKEN") or "").strip()
    if token:
        return api_client(api_url, PlainToken(token), 1, seconds_between_requests=None)
    if not env.get("GITHUB_APP_ID", "").strip():
        raise ConfigError(
            "--golden github needs a GitHub token (GITHUB_TOKEN, for example "
            "GITHUB_TOKEN=$(gh auth token)) or the App's GITHUB_APP_ID and private key"
        )
    creds = AppCredentials.from_env(env)
    owner, _, name = full_name.partition("/")
    try:
        integration = github.GithubIntegration(
            auth=Auth.AppAuth(creds.app_id, creds.private_key), base_url=creds.api_url
        )
        installation = integration.get_repo_installation(owner, name).id
    except GithubException as exc:
        raise GitHubError(
            f"the App is not installed on {full_name} (GitHub said {exc.status}); "
            "install it there or set GITHUB_TOKEN",
            status=exc.status,
        ) from None
    return installation_client(
        creds, InstallationTokens(creds), installation, seconds_between_requests=None
    )


def github_golden(
    repo: pygit2.Repository,
    changes: Sequence[PastChange],
    env: Mapping[str, str],
    *,
    github_repo: str | None,
) -> dict[str, list[GoldenItem]]:
    """Each change's golden items from its pull request's human inline comments; a change
    whose merge names no pull request has none."""
    full_name = repository_name(repo, github_repo)
    numbered = {n: c for c in changes if (n := _pull_of(repo, c)) is not None}
    found: dict[str, list[GoldenItem]] = {c.key: [] for c in changes}
    if not numbered:
        return found
    gh = github_client(env, full_name)
    login = env.get("GITNEURAL_BOT_LOGIN", "").strip() or None
    found.update(read_github_golden(gh, full_name, numbered, gitneural_login=login))
    return found

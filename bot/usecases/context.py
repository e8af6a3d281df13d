"""What a worker needs to run review jobs: App credentials, the token cache, the mirror
cache and the model settings, made once per worker process and shared by its jobs; the
App's bot account (asked of GitHub once) when first needed.

The same job runner also reviews with a token given to GitNeural instead of the App's
key (the GitHub Action's ``GITHUB_TOKEN``, a person's token for ``review --pr``):
:meth:`JobContext.for_token` makes that context, with the few differences such runs
have (the code may already be on disk, settings from the base branch, a check run only
if the token may create one).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import github
import pygit2

from bot.errors import ConfigError
from bot.extras import require
from bot.gh.api.access_tokens import InstallationTokens, PlainToken, TokenSource
from bot.gh.api.client import api_client
from bot.gh.api.credentials import AppCredentials
from bot.gh.identity import BotIdentity, app_identity
from bot.gh.mirrors.cache import MirrorCache
from bot.gh.mirrors.lru import max_bytes_from_env
from bot.gh.pulls import PullInfo
from bot.llm.settings import LLMSettings
from bot.llm.types import Progress
from bot.settings.budgets import Budgets, load_budgets
from bot.settings.environment import data_dir, env_bool, env_float
from bot.usecases.pull_change import MirrorRefs

if TYPE_CHECKING:
    # The store (SQLAlchemy) is the ``store`` extra's: imported by the runs that open it.
    from bot.store import Store

#: The installation id a token given to GitNeural stands for: it reaches what the token
#: reaches, and its mirrors live apart from the App's (``token-mirrors``).
TOKEN_INSTALLATION = 1

#: A repository that may already hold a PR's commits (the Action's workspace), and the
#: refs or ids to read them by; None when it lacks any of them.
LocalCode = Callable[[PullInfo], tuple[pygit2.Repository, MirrorRefs] | None]


@dataclass
class TokenRun:
    """What a review with a token given to GitNeural (the Action, ``review --pr``) does
    that the App's does not. Its check run is optional: the token may not create one."""

    #: Tried before the mirror is fetched: see :data:`LocalCode`.
    local_code: LocalCode | None = None
    #: Settings and instructions from the PR's base branch instead of the default branch
    #: (a workflow runs from its base branch: that is the revision it trusts).
    settings_from_base: bool = False
    #: A settings file other than ``.gitneural.toml``, read at the trusted revision.
    config_path: str | None = None
    #: Told how the model's part is going (a job's log, a terminal); the App's workers
    #: run many reviews at once and show none.
    on_progress: Callable[[Progress], None] | None = None


@dataclass
class JobContext:
    #: The App's id and key; None when GitNeural was given a token instead.
    creds: AppCredentials | None
    tokens: TokenSource
    mirrors: MirrorCache
    llm: LLMSettings
    data_dir: Path
    #: ``GITNEURAL_BOT_LOGIN`` (``<slug>[bot]``), if set; otherwise the account is asked of
    #: GitHub (:meth:`identity`). Only its reviews and comments count as GitNeural's.
    bot_login: str | None
    #: PyGithub's pacing between requests (keeps secondary rate limits away); tests
    #: turn it off.
    github_pacing: bool = True
    #: Seconds one review may take (the model's part stops then); ``None``: the
    #: repository's ``agent.max_seconds`` alone. Keep it under the task's soft time limit.
    review_seconds: float | None = None
    #: Seconds before a GitHub request without an answer is given up.
    github_timeout: int = 30
    #: Monthly token caps (``GITNEURAL_BUDGETS_FILE``); none by default.
    budgets: Budgets = field(default_factory=Budgets)
    #: Where model usage and budget notices are recorded; ``None``: nowhere (tests, and
    #: runs with a token given to GitNeural). What must never be lost (a dismissal) is
    #: written through :meth:`ensure_store`, which opens one when there is none.
    store: Store | None = None
    #: ``GITNEURAL_DATABASE_URL``; None: SQLite in ``data_dir``.
    database_url: str | None = None
    #: The GitHub API (``creds.api_url`` when there are App credentials).
    api_url: str = ""
    #: What a run with a token given to GitNeural does differently; None for the App.
    token_run: TokenRun | None = None

    _identity: BotIdentity | None = field(default=None, init=False, repr=False)
    _once: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)
    _store_current: bool = field(default=False, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.creds is not None:
            self.api_url = self.creds.api_url
        if not self.api_url:
            raise ValueError("a JobContext needs App credentials or an API URL")

    @property
    def checks_optional(self) -> bool:
        """Review without a check run when the token may not create one."""
        return self.token_run is not None

    @property
    def app_id(self) -> int | None:
        """The App whose check runs are GitNeural's; None when reviewing with a token."""
        return self.creds.app_id if self.creds is not None else None

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> JobContext:
        """``GITHUB_APP_ID``, ``GITHUB_PRIVATE_KEY[_PATH]``, ``GITHUB_API_URL``,
        ``KIMI_API_KEY``/``KIMI_BASE_URL``/``GITNEURAL_MODEL``, ``GITNEURAL_DATA_DIR``
        ``GITNEURAL_BOT_LOGIN``, ``GITNEURAL_GITHUB_PACING`` (false: no pause between
        GitHub requests), ``GITNEURAL_REVIEW_SECONDS``, ``GITNEURAL_MIRROR_MAX_BYTES``,
        ``GITNEURAL_BUDGETS_FILE`` and the store's ``GITNEURAL_DATABASE_URL``. A missing
        model key fails each job with a check run saying so, rather than the worker
        refusing to start."""
        from bot.store import database_url, open_store

        env = os.environ if env is None else env
        creds = AppCredentials.from_env(env)
        data = data_dir(env)
        review_seconds = env_float(env, "GITNEURAL_REVIEW_SECONDS", 0.0)
        return cls(
            creds=creds,
            tokens=InstallationTokens(creds),
            mirrors=MirrorCache(data / "mirrors", max_bytes=max_bytes_from_env(env)),
            llm=LLMSettings.from_env(env),
            data_dir=data,
            bot_login=env.get("GITNEURAL_BOT_LOGIN", "").strip() or None,
            github_pacing=env_bool(env, "GITNEURAL_GITHUB_PACING", True),
            review_seconds=review_seconds if review_seconds > 0 else None,
            budgets=load_budgets(env),
            store=open_store(database_url(env)),
            database_url=database_url(env),
        )

    @classmethod
    def for_token(
        cls,
        token: str,
        api_url: str,
        *,
        data: Path,
        llm: LLMSettings,
        bot_login: str | None,
        github_pacing: bool = True,
        run: TokenRun | None = None,
    ) -> JobContext:
        """A context acting with ``token`` (jobs use :data:`TOKEN_INSTALLATION`), making a
        check run only if the token may create one."""
        return cls(
            creds=None,
            tokens=PlainToken(token),
            mirrors=MirrorCache(data / "token-mirrors"),
            llm=llm,
            data_dir=data,
            bot_login=bot_login,
            github_pacing=github_pacing,
            api_url=api_url,
            token_run=run or TokenRun(),
        )

    def identity(self) -> BotIdentity:
        """The App's bot account: ``GITNEURAL_BOT_LOGIN``, else ``GET /app`` (once)."""
        with self._once:
            if self._identity is None:
                if self.bot_login:
                    self._identity = BotIdentity.from_login(self.bot_login)
                elif self.creds is None:
                    # A token given to GitNeural has no App to ask; its runs name the
                    # account they write as.
                    raise ConfigError("the account GitNeural writes as is unknown")
                else:
                    self._identity = app_identity(self.creds, timeout=self.github_timeout)
            return self._identity

    def login(self) -> str:
        """The REST login GitNeural's reviews and comments are written by: the App's bot,
        or, with a token given to GitNeural, that token's account (a person's login, or
        the workflow's bot) as its run named it."""
        if self.creds is None and self.bot_login:
            return self.bot_login
        return self.identity().rest_login

    def ensure_store(self) -> Store:
        """The store: the one given, else one opened on first use; at the newest schema
        (migrated once per process: ``gitneural worker`` did at start-up, a context made
        some other way may not have)."""
        require("store", "remembering a pull request's findings")
        from bot.store import database_url, open_store, upgrade

        with self._once:
            if self.store is None:
                url = self.database_url or database_url({"GITNEURAL_DATA_DIR": str(self.data_dir)})
                self.store = open_store(url)
            if not self._store_current:
                upgrade(self.store)
                self._store_current = True
            return self.store

    def github(self, installation_id: int) -> github.Github:
        """A client acting as the installation; it never retries a POST."""
        if self.github_pacing:
            return api_client(
                self.api_url, self.tokens, installation_id, timeout=self.github_timeout
            )
        return api_client(
            self.api_url,
            self.tokens,
            installation_id,
            timeout=self.github_timeout,
            seconds_between_requests=None,
            seconds_between_writes=None,
        )

    def forget_token(self, installation_id: int) -> None:
        self.tokens.invalidate(installation_id)

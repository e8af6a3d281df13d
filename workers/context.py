"""What a worker needs to run review jobs: App credentials, the token cache, the mirror
cache and the model settings, made once per worker process and shared by its jobs; the
App's bot account (asked of GitHub once) and the store (opened once), when first needed."""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import github

from bot.envvars import data_dir, env_bool, env_float
from bot.gh.client import installation_client
from bot.gh.credentials import AppCredentials
from bot.gh.identity import BotIdentity, app_identity
from bot.gh.mirror import MirrorCache
from bot.gh.tokens import InstallationTokens
from bot.llm.settings import LLMSettings
from bot.store import Store, database_url, open_store, upgrade


@dataclass
class WorkerContext:
    creds: AppCredentials
    tokens: InstallationTokens
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
    #: ``GITNEURAL_DATABASE_URL``; None: SQLite in ``data_dir``.
    database_url: str | None = None
    _identity: BotIdentity | None = field(default=None, init=False, repr=False)
    _store: Store | None = field(default=None, init=False, repr=False)
    _once: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> WorkerContext:
        """``GITHUB_APP_ID``, ``GITHUB_PRIVATE_KEY[_PATH]``, ``GITHUB_API_URL``,
        ``KIMI_API_KEY``/``KIMI_BASE_URL``/``GITNEURAL_MODEL``, ``GITNEURAL_DATA_DIR``
        ``GITNEURAL_BOT_LOGIN``, ``GITNEURAL_GITHUB_PACING`` (false: no pause between
        GitHub requests) and ``GITNEURAL_REVIEW_SECONDS``. A missing model key fails each
        job with a check run saying so, rather than the worker refusing to start."""
        env = os.environ if env is None else env
        creds = AppCredentials.from_env(env)
        data = data_dir(env)
        review_seconds = env_float(env, "GITNEURAL_REVIEW_SECONDS", 0.0)
        return cls(
            creds=creds,
            tokens=InstallationTokens(creds),
            mirrors=MirrorCache(data / "mirrors"),
            llm=LLMSettings.from_env(env),
            data_dir=data,
            bot_login=env.get("GITNEURAL_BOT_LOGIN", "").strip() or None,
            github_pacing=env_bool(env, "GITNEURAL_GITHUB_PACING", True),
            review_seconds=review_seconds if review_seconds > 0 else None,
            database_url=database_url(env),
        )

    def identity(self) -> BotIdentity:
        """The App's bot account: ``GITNEURAL_BOT_LOGIN``, else ``GET /app`` (once)."""
        with self._once:
            if self._identity is None:
                self._identity = (
                    BotIdentity.from_login(self.bot_login)
                    if self.bot_login
                    else app_identity(self.creds, timeout=self.github_timeout)
                )
            return self._identity

    def login(self) -> str:
        """The REST login GitNeural's reviews and comments are written by."""
        return self.identity().rest_login

    def store(self) -> Store:
        """The store, opened (and brought to the newest schema) on first use."""
        with self._once:
            if self._store is None:
                url = self.database_url or database_url({"GITNEURAL_DATA_DIR": str(self.data_dir)})
                store = open_store(url)
                upgrade(store)
                self._store = store
            return self._store

    def github(self, installation_id: int) -> github.Github:
        """A client acting as the installation; it never retries a POST."""
        if self.github_pacing:
            return installation_client(
                self.creds, self.tokens, installation_id, timeout=self.github_timeout
            )
        return installation_client(
            self.creds,
            self.tokens,
            installation_id,
            timeout=self.github_timeout,
            seconds_between_requests=None,
            seconds_between_writes=None,
        )

    def forget_token(self, installation_id: int) -> None:
        self.tokens.invalidate(installation_id)

"""What a worker needs to run review jobs: App credentials, the token cache, the mirror
cache and the model settings, made once per worker process and shared by its jobs."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import github

from bot.budgets import Budgets, load_budgets
from bot.envvars import data_dir, env_bool, env_float
from bot.gh.client import installation_client
from bot.gh.credentials import AppCredentials
from bot.gh.mirror import MirrorCache
from bot.gh.mirror_lru import max_bytes_from_env
from bot.gh.tokens import InstallationTokens
from bot.llm.settings import LLMSettings
from bot.store import Store, database_url, open_store


@dataclass
class WorkerContext:
    creds: AppCredentials
    tokens: InstallationTokens
    mirrors: MirrorCache
    llm: LLMSettings
    data_dir: Path
    #: The App's bot account (``<slug>[bot]``). Only its reviews count as GitNeural's;
    #: when unknown, any bot account's review carrying GitNeural's marker does.
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
    #: Where model usage and budget notices are recorded; ``None``: nowhere (tests).
    store: Store | None = None

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> WorkerContext:
        """``GITHUB_APP_ID``, ``GITHUB_PRIVATE_KEY[_PATH]``, ``GITHUB_API_URL``,
        ``KIMI_API_KEY``/``KIMI_BASE_URL``/``GITNEURAL_MODEL``, ``GITNEURAL_DATA_DIR``
        ``GITNEURAL_BOT_LOGIN``, ``GITNEURAL_GITHUB_PACING`` (false: no pause between
        GitHub requests), ``GITNEURAL_REVIEW_SECONDS``, ``GITNEURAL_MIRROR_MAX_BYTES``,
        ``GITNEURAL_BUDGETS_FILE`` and the store's ``GITNEURAL_DATABASE_URL``. A missing
        model key fails each job with a check run saying so, rather than the worker
        refusing to start."""
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
        )

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

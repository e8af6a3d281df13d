"""Deployment-wide settings of the webhook server, read from the environment once.

These are the gates the webhook applies before anything is queued. Per-repository
settings (``.gitneural.toml`` on the default branch) are applied later by the worker:
the webhook never calls GitHub, so it cannot read them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from bot.errors import ConfigError
from bot.settings.broker import REDIS_SCHEMES, broker_of
from bot.settings.environment import data_dir, default_data_dir, env_bool, env_int, env_words
from bot.settings.repository import AUTHOR_ASSOCIATIONS


@dataclass(frozen=True)
class WebSettings:
    #: ``GITHUB_WEBHOOK_SECRET``; kept out of ``repr`` so it never reaches a log.
    webhook_secret: str = field(repr=False)
    #: GitHub caps payloads at 25 MB; larger bodies are answered 413 unread.
    max_body_bytes: int = 25 * 1024 * 1024
    #: ``GITNEURAL_BOT_LOGIN``, e.g. ``"gitneural[bot]"``: deliveries it causes are ignored.
    bot_login: str | None = None
    #: Who may ask for a review with ``/review``.
    allowed_associations: tuple[str, ...] = ("OWNER", "MEMBER", "COLLABORATOR")
    review_drafts: bool = False
    auto_review: bool = True
    #: ``redis://…`` for the delivery log; ``None`` keeps it in SQLite under ``data_dir``.
    dedupe_url: str | None = None
    data_dir: Path = field(default_factory=default_data_dir)
    #: ``GITNEURAL_QUEUE_PREFIX``: names the delivery log's Redis keys, so deployments (or
    #: tests) sharing one Redis never see each other's deliveries.
    key_prefix: str = "gitneural"

    def __post_init__(self) -> None:
        if not self.webhook_secret:
            raise ConfigError(
                "GITHUB_WEBHOOK_SECRET is not set: set it to the webhook secret of the GitHub App"
            )
        if self.max_body_bytes <= 0:
            raise ConfigError("GITNEURAL_MAX_BODY_BYTES must be a whole number > 0")
        bad = sorted(set(self.allowed_associations) - AUTHOR_ASSOCIATIONS)
        if bad:
            raise ConfigError(
                f"GITNEURAL_ALLOWED_ASSOCIATIONS has unknown values {bad} "
                f"(known: {', '.join(sorted(AUTHOR_ASSOCIATIONS))})"
            )
        if self.dedupe_url is not None and not self.dedupe_url.startswith(REDIS_SCHEMES):
            raise ConfigError(
                "GITNEURAL_DEDUPE_URL must be a redis://, rediss:// or unix:// URL "
                "(leave it unset to keep the delivery log in SQLite)"
            )

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> WebSettings:
        """Read the settings; raises :class:`ConfigError` naming the variable to fix.

        The delivery log uses ``GITNEURAL_DEDUPE_URL``, else ``GITNEURAL_STATE_URL`` (the
        Redis of the workers' state, e.g. beside RabbitMQ), else the broker's Redis when
        ``GITNEURAL_BROKER_URL`` is a Redis URL (so several web hosts share one log),
        else SQLite under ``GITNEURAL_DATA_DIR``.
        """
        env = os.environ if env is None else env
        broker = env.get("GITNEURAL_BROKER_URL", "")
        dedupe = (
            env.get("GITNEURAL_DEDUPE_URL")
            or env.get("GITNEURAL_STATE_URL")
            or _broker_state_store(broker)
        )
        return cls(
            webhook_secret=env.get("GITHUB_WEBHOOK_SECRET", ""),
            max_body_bytes=env_int(env, "GITNEURAL_MAX_BODY_BYTES", cls.max_body_bytes),
            bot_login=env.get("GITNEURAL_BOT_LOGIN") or None,
            allowed_associations=env_words(
                env, "GITNEURAL_ALLOWED_ASSOCIATIONS", cls.allowed_associations
            ),
            review_drafts=env_bool(env, "GITNEURAL_REVIEW_DRAFTS", cls.review_drafts),
            auto_review=env_bool(env, "GITNEURAL_AUTO_REVIEW", cls.auto_review),
            dedupe_url=dedupe,
            data_dir=data_dir(env),
            key_prefix=env.get("GITNEURAL_QUEUE_PREFIX", "").strip() or cls.key_prefix,
        )


def _broker_state_store(url: str) -> str | None:
    try:
        return broker_of(url).state_store
    except ConfigError:
        return None  # the worker's own settings name the bad broker URL

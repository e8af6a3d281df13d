"""How GitNeural reaches K3: the key, the server, the model, the effort, timeouts and
retries, from the environment; and the routine endpoint a route may send a change to
(``KIMI_ROUTINE_*``, each the main one's when unset). ``repr`` never shows a key."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

from bot.domain.route import Endpoint
from bot.effort import EFFORTS, Effort
from bot.errors import ConfigError, MissingKeyError
from bot.llm.errors import display_url
from bot.llm.rate_limit import RequestBudget

DEFAULT_BASE_URL = "https://api.moonshot.ai/v1"
DEFAULT_MODEL = "kimi-k3"


@dataclass(frozen=True)
class LLMSettings:
    api_key: str | None = field(repr=False)  # never in a repr, a log line or a message
    base_url: str = DEFAULT_BASE_URL
    model: str = DEFAULT_MODEL
    effort: Effort = "max"
    request_timeout: float = 900.0  # per HTTP request, at most
    #: A streamed answer from which no byte arrives for this long has stalled: the
    #: request ends with :class:`~bot.errors.ModelStalledError` (``[review] stall_timeout``).
    stall_timeout: float = 120.0
    max_retries: int = 5
    backoff_base: float = 1.0  # seconds
    backoff_max: float = 60.0  # also caps how long a retry-after is honoured
    #: The deployment's shared model rate limit, taken before every attempt; ``None``: none.
    budget: RequestBudget | None = field(default=None, repr=False, compare=False)
    #: The routine endpoint (``model = "routine"`` routes); None: the main one's.
    routine_model: str | None = None
    routine_base_url: str | None = None
    routine_api_key: str | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.effort not in EFFORTS:
            raise ConfigError(
                f"reasoning effort must be one of {', '.join(EFFORTS)}, not {self.effort!r}"
            )
        for name, url in (
            ("KIMI_BASE_URL", self.base_url),
            ("KIMI_ROUTINE_BASE_URL", self.routine_base_url or self.base_url),
        ):
            if not url.startswith(("http://", "https://")):
                raise ConfigError(f"{name} must be an http(s) URL, not {display_url(url)!r}")

    def on(self, endpoint: Endpoint) -> LLMSettings:
        """These settings for ``endpoint``: the routine one takes its own model, server
        and key where they are set."""
        if endpoint == "main":
            return self
        return replace(
            self,
            model=self.routine_model or self.model,
            base_url=self.routine_base_url or self.base_url,
            api_key=self.routine_api_key or self.api_key,
        )

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: Any) -> LLMSettings:
        """Settings from the environment; ``overrides`` whose value is None are ignored."""
        env = os.environ if env is None else env
        effort = env.get("GITNEURAL_REASONING_EFFORT", "").strip().lower() or "max"
        if effort not in EFFORTS:
            raise ConfigError(
                f"GITNEURAL_REASONING_EFFORT must be one of {', '.join(EFFORTS)}, not {effort!r}"
            )
        values: dict[str, Any] = {
            "api_key": (env.get("KIMI_API_KEY") or env.get("MOONSHOT_API_KEY") or "").strip()
            or None,
            "base_url": env.get("KIMI_BASE_URL", "").strip() or DEFAULT_BASE_URL,
            "model": env.get("GITNEURAL_MODEL", "").strip() or DEFAULT_MODEL,
            "effort": effort,
            "routine_model": env.get("KIMI_ROUTINE_MODEL", "").strip() or None,
            "routine_base_url": env.get("KIMI_ROUTINE_BASE_URL", "").strip() or None,
            "routine_api_key": env.get("KIMI_ROUTINE_API_KEY", "").strip() or None,
        }
        known = {f.name for f in fields(cls)}
        unknown = set(overrides) - known
        if unknown:
            raise TypeError(f"unknown LLMSettings fields: {sorted(unknown)}")
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)

    def require_key(self) -> str:
        if not self.api_key:
            raise MissingKeyError(
                "no API key: set KIMI_API_KEY (or MOONSHOT_API_KEY) to a Moonshot API key"
            )
        return self.api_key

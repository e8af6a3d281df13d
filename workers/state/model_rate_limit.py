"""The deployment's model rate limit, kept where every worker sees it: Redis (shared by
every host) or SQLite (one machine). :mod:`bot.llm.rate_limit` says what is counted and why.

Each store keeps a log of the requests granted in the last window, with their tokens; a
request is granted only if the window ending now, with it, stays within both limits.
Otherwise the answer is how long until enough of the log has left the window. Every
grant is one atomic step (a Lua script on Redis' clock, an SQLite write transaction), so
no two workers can both take the last place.

``GITNEURAL_MODEL_RPM`` and ``GITNEURAL_MODEL_TPM``: requests and tokens per window
(``GITNEURAL_MODEL_RATE_WINDOW``, 60 s: per minute). Unset or 0: no limit.
"""

from __future__ import annotations

import math
import os
import sqlite3
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from bot.errors import ConfigError, GitNeuralError
from bot.llm.rate_limit import RequestBudget
from bot.settings.environment import env_float, env_int
from workers.settings import WorkerSettings
from workers.state.lua_scripts import script
from workers.state.sqlite import ThreadConnections

#: Added to the window: a request we timed at the window's edge may reach the server a
#: little sooner after the previous one than we measured (network jitter).
SLACK: Final = 0.5


class BudgetStoreError(GitNeuralError):
    """The shared rate limit's store failed (the request is retried later)."""

    transient = True
    retry_after: float | None = None


@dataclass(frozen=True)
class ModelRateLimit:
    requests: int
    tokens: int
    window: float = 60.0

    def __post_init__(self) -> None:
        if self.requests < 0 or self.tokens < 0:
            raise ConfigError(
                "GITNEURAL_MODEL_RPM and GITNEURAL_MODEL_TPM must be whole numbers >= 0"
            )
        if not self.window > 0:
            raise ConfigError("GITNEURAL_MODEL_RATE_WINDOW must be a number of seconds > 0")

    @property
    def active(self) -> bool:
        return self.requests > 0 or self.tokens > 0

    @property
    def description(self) -> str:
        parts = [f"{self.requests} requests"] if self.requests else []
        parts += [f"{self.tokens:,} tokens"] if self.tokens else []
        return f"{' and '.join(parts)} per {self.window:g} s"

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> ModelRateLimit:
        return cls(
            requests=env_int(env, "GITNEURAL_MODEL_RPM", 0),
            tokens=env_int(env, "GITNEURAL_MODEL_TPM", 0),
            window=env_float(env, "GITNEURAL_MODEL_RATE_WINDOW", 60.0),
        )

    def wait(self, log: list[tuple[float, int]], now: float, tokens: int) -> float:
        """Seconds until a request of ``tokens`` fits after ``log`` (oldest first, all
        within the window ending ``now``); 0: it fits now; ``inf``: it never will."""
        if self.tokens and tokens > self.tokens:
            return math.inf
        span = self.window + SLACK
        wait = 0.0
        if self.requests and len(log) >= self.requests:
            wait = log[len(log) - self.requests][0] + span - now
        used = sum(t for _, t in log)
        if self.tokens and used + tokens > self.tokens:
            for at, t in log:
                used -= t
                if used + tokens <= self.tokens:
                    wait = max(wait, at + span - now)
                    break
        return max(0.0, wait)


def open_model_budget(
    settings: WorkerSettings, env: Mapping[str, str] | None = None
) -> RequestBudget | None:
    limit = ModelRateLimit.from_env(os.environ if env is None else env)
    if not limit.active:
        return None
    if settings.state_url is not None:
        return RedisModelBudget(settings.state_url, limit, key=f"{settings.prefix}:model-budget")
    return SQLiteModelBudget(settings.data_dir / "model-budget.sqlite3", limit)


class SQLiteModelBudget:
    def __init__(
        self, path: Path, limit: ModelRateLimit, *, clock: Callable[[], float] = time.time
    ) -> None:
        self.path, self.limit, self._clock = path, limit, clock
        self.description = limit.description
        self._connections = ThreadConnections(
            path,
            (
                "CREATE TABLE IF NOT EXISTS granted (id INTEGER PRIMARY KEY, at REAL NOT NULL, "
                "tokens INTEGER NOT NULL)",
            ),
        )

    def _conn(self) -> sqlite3.Connection:
        return self._connections.get()

    def try_take(self, tokens: int) -> float:
        try:
            conn = self._conn()
            conn.execute("BEGIN IMMEDIATE")
            try:
                now = self._clock()
                span = self.limit.window + SLACK
                conn.execute("DELETE FROM granted WHERE at <= ?", (now - span,))
                log = conn.execute("SELECT at, tokens FROM granted ORDER BY at, id").fetchall()
                wait = self.limit.wait([(float(a), int(t)) for a, t in log], now, tokens)
                if wait == 0:
                    conn.execute("INSERT INTO granted (at, tokens) VALUES (?, ?)", (now, tokens))
                conn.execute("COMMIT")
                return wait
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        except sqlite3.Error as exc:
            raise BudgetStoreError(
                f"model rate limit store {self.path} failed ({exc}): check the disk and "
                "GITNEURAL_DATA_DIR"
            ) from None


class RedisModelBudget:
    def __init__(self, url: str, limit: ModelRateLimit, *, key: str) -> None:
        import redis  # only deployments that use Redis pay for the import

        self.limit, self.key = limit, key
        self.description = limit.description
        self._errors = redis.RedisError
        self._redis: redis.Redis = redis.Redis.from_url(
            url, socket_timeout=3.0, socket_connect_timeout=3.0
        )
        self._take = self._redis.register_script(script("rate_take"))

    def try_take(self, tokens: int) -> float:
        span_ms = round((self.limit.window + SLACK) * 1000)
        args: list[int | str] = [
            self.limit.requests,
            self.limit.tokens,
            span_ms,
            tokens,
            uuid.uuid4().hex,
        ]
        try:
            answer = int(self._take(keys=[self.key], args=args))
        except self._errors as exc:
            raise BudgetStoreError(
                f"model rate limit store on Redis failed ({type(exc).__name__}): "
                "check that Redis is up and GITNEURAL_STATE_URL is right"
            ) from None
        return math.inf if answer < 0 else answer / 1000

    def close(self) -> None:
        self._redis.close()

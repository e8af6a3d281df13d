"""Reading GitNeural's environment variables: one parser per type, errors that name the
variable, and the one data directory every part shares."""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path

from bot.errors import ConfigError

_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})


def data_dir(env: Mapping[str, str]) -> Path:
    """``GITNEURAL_DATA_DIR``, else the user's cache directory (mirrors, queues, caches)."""
    raw = env.get("GITNEURAL_DATA_DIR", "").strip()
    if raw:
        return Path(raw).expanduser()
    return default_data_dir()


def default_data_dir() -> Path:
    import platformdirs  # only when the variable is unset: the hook's start stays lean

    return Path(platformdirs.user_cache_dir("gitneural"))


def env_int(env: Mapping[str, str], name: str, default: int) -> int:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        return int(raw)
    except ValueError:
        raise ConfigError(f"{name} must be a whole number, not {raw!r}") from None


def env_float(env: Mapping[str, str], name: str, default: float) -> float:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ConfigError(f"{name} must be a number of seconds, not {raw!r}") from None
    if not math.isfinite(value):
        raise ConfigError(f"{name} must be a finite number of seconds")
    return value


def env_bool(env: Mapping[str, str], name: str, default: bool) -> bool:
    raw = env.get(name, "").strip().lower()
    if not raw:
        return default
    if raw in _TRUE:
        return True
    if raw in _FALSE:
        return False
    raise ConfigError(f"{name} must be true or false, not {raw!r}")


def env_words(env: Mapping[str, str], name: str, default: tuple[str, ...]) -> tuple[str, ...]:
    """A comma-separated list, upper-cased (``OWNER,MEMBER``)."""
    raw = env.get(name, "").strip()
    if not raw:
        return default
    return tuple(part.strip().upper() for part in raw.split(",") if part.strip())

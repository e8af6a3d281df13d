"""Monthly token budgets, from the TOML file ``GITNEURAL_BUDGETS_FILE`` names.

    [default]                      # every installation without a cap of its own
    monthly_tokens = 50_000_000
    [installation.4242001]
    monthly_tokens = 2_000_000
    [repository."acme/shop"]
    monthly_tokens = 500_000

A cap counts prompt and completion tokens in a calendar month (UTC). An installation's
cap and the default are held against the installation's spend, a repository's against
the repository's; every cap that applies is checked, so the tightest wins. A job that
would start over a cap is not sent to the model: :func:`refusal` says which cap, and
when it resets. A bad file is a :class:`ConfigError` naming the key, at start-up.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal

from bot.errors import ConfigError

BUDGETS_ENV: Final = "GITNEURAL_BUDGETS_FILE"
_REPO: Final = re.compile(r"[A-Za-z0-9_.-]{1,100}/[A-Za-z0-9_.-]{1,100}")
_MONTH: Final = re.compile(r"(\d{4})-(0[1-9]|1[0-2])")
Scope = Literal["default", "installation", "repository"]


@dataclass(frozen=True)
class Limit:
    scope: Scope
    #: ``default``, the installation id, or ``owner/name``.
    key: str
    monthly_tokens: int

    @property
    def label(self) -> str:
        return "default budget" if self.scope == "default" else f"{self.scope} {self.key}"


@dataclass(frozen=True)
class Budgets:
    default: int | None = None
    installations: Mapping[int, int] = field(default_factory=dict)
    #: Keys lower-cased: GitHub names repositories case-insensitively.
    repositories: Mapping[str, int] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return self.default is None and not self.installations and not self.repositories

    def installation_limit(self, installation_id: int) -> Limit | None:
        """The cap on the installation's spend: its own or the default, the tighter."""
        found = []
        if installation_id in self.installations:
            found.append(
                Limit("installation", str(installation_id), self.installations[installation_id])
            )
        if self.default is not None:
            found.append(Limit("default", "default", self.default))
        return min(found, key=lambda limit: limit.monthly_tokens, default=None)

    def repository_limit(self, repo: str) -> Limit | None:
        cap = self.repositories.get(repo.lower())
        return None if cap is None else Limit("repository", repo.lower(), cap)

    def limits_for(self, installation_id: int, repo: str) -> list[Limit]:
        found = [self.repository_limit(repo), self.installation_limit(installation_id)]
        return [limit for limit in found if limit is not None]


@dataclass(frozen=True)
class Refusal:
    limit: Limit
    spent: int
    estimate: int
    resets_at: dt.datetime

    @property
    def message(self) -> str:
        """One line: which budget, how much is used, and when it resets."""
        cap = f"{self.limit.monthly_tokens:,}"
        used = f"{self.spent:,} used this month"
        if self.estimate:
            used += f", this one needs about {self.estimate:,}"
        when = self.resets_at.strftime("%Y-%m-%d %H:%M UTC")
        return (
            f"the monthly token budget of {self.limit.label} ({cap} tokens) is spent "
            f"({used}); it resets on {when}"
        )


def refusal(
    limits: list[Limit], spent: Mapping[Scope, int], estimate: int, month: str
) -> Refusal | None:
    """The tightest cap that ``estimate`` more tokens would pass, if any. ``spent`` is
    this month's spend of the repository (``repository``) and of the installation
    (``installation``, which the default is held against too)."""
    worst: tuple[int, Limit] | None = None
    for limit in limits:
        used = spent.get("repository" if limit.scope == "repository" else "installation", 0)
        if used + estimate > limit.monthly_tokens or limit.monthly_tokens == 0:
            room = limit.monthly_tokens - used
            if worst is None or room < worst[0]:
                worst = (room, limit)
    if worst is None:
        return None
    limit = worst[1]
    used = spent.get("repository" if limit.scope == "repository" else "installation", 0)
    return Refusal(limit, used, estimate, month_start(next_month(month)))


# -- months --------------------------------------------------------------------------------


def month_of(when: dt.datetime | None = None) -> str:
    """``YYYY-MM`` of ``when`` (default: now), in UTC."""
    when = when or dt.datetime.now(dt.UTC)
    return when.astimezone(dt.UTC).strftime("%Y-%m")


def parse_month(raw: str) -> str:
    if not _MONTH.fullmatch(raw.strip()):
        raise ConfigError(f"--month must be YYYY-MM (for instance 2026-12), not {raw!r}")
    return raw.strip()


def month_start(month: str) -> dt.datetime:
    year, number = (int(part) for part in parse_month(month).split("-"))
    return dt.datetime(year, number, 1, tzinfo=dt.UTC)


def next_month(month: str) -> str:
    start = month_start(month)
    return month_of(start + dt.timedelta(days=32))


# -- the file ------------------------------------------------------------------------------


def load_budgets(env: Mapping[str, str] | None = None) -> Budgets:
    """The budgets ``GITNEURAL_BUDGETS_FILE`` names, or none when it is unset."""
    env = os.environ if env is None else env
    raw = env.get(BUDGETS_ENV, "").strip()
    if not raw:
        return Budgets()
    path = Path(raw).expanduser()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{BUDGETS_ENV}: cannot read {path} ({exc.strerror})") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{BUDGETS_ENV}: {path} is not valid TOML ({exc})") from None
    return parse_budgets(data, str(path))


def parse_budgets(data: Mapping[str, Any], where: str = "budgets") -> Budgets:
    unknown = sorted(set(data) - {"default", "installation", "repository"})
    if unknown:
        raise ConfigError(
            f"{where}: unknown table [{unknown[0]}]: use [default], "
            '[installation.ID] or [repository."owner/name"]'
        )
    default = _cap(data["default"], "default", where) if "default" in data else None
    installations: dict[int, int] = {}
    for key, table in _tables(data.get("installation", {}), "installation", where).items():
        if not key.isdigit() or int(key) < 1:
            raise ConfigError(f"{where}: installation.{key}: an installation id is a number")
        installations[int(key)] = _cap(table, f"installation.{key}", where)
    repositories: dict[str, int] = {}
    for key, table in _tables(data.get("repository", {}), "repository", where).items():
        if not _REPO.fullmatch(key):
            raise ConfigError(f'{where}: repository."{key}": name it "owner/name"')
        repositories[key.lower()] = _cap(table, f'repository."{key}"', where)
    return Budgets(default, installations, repositories)


def _tables(value: Any, name: str, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: {name} must hold tables, e.g. [{name}.KEY]")
    return value


def _cap(table: Any, name: str, where: str) -> int:
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: {name} must be a table with monthly_tokens")
    extra = sorted(set(table) - {"monthly_tokens"})
    if extra:
        raise ConfigError(f"{where}: {name}.{extra[0]}: unknown key (only monthly_tokens)")
    value = table.get("monthly_tokens")
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ConfigError(f"{where}: {name}.monthly_tokens must be a whole number >= 0")
    return value

"""Every setting of the App checked before a process starts, and every problem listed in
one message: a newcomer learns in one try what ``serve`` needs, not in four.

Three passes over the environment (the settings file already merged in, see
:mod:`bot.settings.env_file`): the settings the process's roles require
(``bot.settings.server``), the type of every one that is set, then the settings objects
that read them (their checks across settings: limits that must outlive others, URLs,
files). A problem already reported for a setting is not reported again.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from bot.errors import ConfigError
from bot.gh.api.credentials import credential_problems
from bot.gh.mirrors.lru import max_bytes_from_env
from bot.llm.settings import LLMSettings
from bot.logs import log_format
from bot.settings.budgets import load_budgets
from bot.settings.environment import env_bool, env_float, env_int
from bot.settings.server import SERVER_SETTINGS, Role, ServerSetting
from bot.store import database_url
from bot.web.settings import WebSettings
from workers.settings import WorkerSettings
from workers.state.model_rate_limit import ModelRateLimit

_KIND_CHECKS: dict[str, Callable[[Mapping[str, str], str], Any]] = {
    "int": lambda env, name: env_int(env, name, 0),
    "seconds": lambda env, name: env_float(env, name, 0.0),
    "bool": lambda env, name: env_bool(env, name, False),
}


class SettingsError(ConfigError):
    """Settings to fix before a process can start: one line each."""

    def __init__(self, command: str, problems: list[str], source: str) -> None:
        self.problems = problems
        if len(problems) == 1:
            super().__init__(problems[0])
            return
        head = (
            f"{command} cannot start: {len(problems)} settings to fix (in the environment "
            f"or {source}; `gitneural setup` registers the App and writes its own):"
        )
        super().__init__("\n".join([head, *(f"  {p}" for p in problems)]))


def _is_set(env: Mapping[str, str], setting: ServerSetting) -> bool:
    return any(env.get(n, "").strip() for n in (setting.name, *setting.alternatives))


def _missing(setting: ServerSetting) -> str:
    also = "".join(f" (or {a})" for a in setting.alternatives)
    what = setting.description[:1].lower() + setting.description[1:].rstrip(".")
    return f"{setting.name}{also} is not set: {what}"


def settings_problems(roles: Iterable[Role], env: Mapping[str, str] | None = None) -> list[str]:
    """Every missing or malformed setting of ``roles``, one line each, in table order."""
    env = os.environ if env is None else env
    roles = tuple(roles)
    problems: list[str] = []
    names: set[str] = set()

    def add(message: str, *settings: str) -> None:
        if not any(n in message for n in names):
            problems.append(message)
        names.update(settings)

    stand_ins: dict[str, str] = {}
    for setting in SERVER_SETTINGS:
        if any(role in setting.required_for for role in roles) and not _is_set(env, setting):
            add(_missing(setting), setting.name, *setting.alternatives)
            # So that the checks below look past it, at the settings that are there.
            stand_ins[setting.name] = "unset"
    for setting in SERVER_SETTINGS:
        kind_check = _KIND_CHECKS.get(setting.kind)
        if kind_check is not None and env.get(setting.name, "").strip():
            try:
                kind_check(env, setting.name)
            except ConfigError as exc:
                add(str(exc), setting.name)
                stand_ins[setting.name] = ""  # its default, for the checks below
    env = {**env, **stand_ins}
    checks: list[Callable[[Mapping[str, str]], object]] = [
        WorkerSettings.from_env,
        database_url,
        load_budgets,
        log_format,
        max_bytes_from_env,
    ]
    if "web" in roles:
        checks.insert(0, WebSettings.from_env)
    if "worker" in roles:
        checks += [LLMSettings.from_env, ModelRateLimit.from_env]
    # Set but wrong is wrong whichever process starts: a web-only `serve` beside a shared
    # broker would start with an App id of letters and leave the workers to fail on it.
    for message in credential_problems(env):
        add(message)
    for check in checks:
        _run_check(check, env, add)
    return problems


def _run_check(
    check: Callable[[Mapping[str, str]], object],
    env: Mapping[str, str],
    add: Callable[[str], None],
) -> None:
    """Run a settings object's own checks; after each problem, put the setting it names
    back to its default and run them again, so one object reports all its problems."""
    env = dict(env)
    for _ in range(len(SERVER_SETTINGS)):
        try:
            check(env)
            return
        except ConfigError as exc:
            add(str(exc))
            named = [s.name for s in SERVER_SETTINGS if s.name in str(exc) and env.get(s.name)]
            if not named:
                return
            env[max(named, key=len)] = ""  # the longest: ..._BACKOFF_MAX, not ..._BACKOFF


def check_settings(
    command: str,
    roles: Iterable[Role],
    source: str,
    env: Mapping[str, str] | None = None,
    *,
    reach: bool = False,
) -> None:
    """Raise :class:`SettingsError` listing every problem, if there is one; with
    ``reach``, and settings otherwise right, the services they name are asked too."""
    problems = settings_problems(roles, env)
    if reach and not problems:
        from bot.cli.server.reachability import unreachable

        problems = unreachable()
    if problems:
        raise SettingsError(command, problems, source)


def warn_unknown_names(original: Mapping[str, str], source: Path | None) -> None:
    """One warning line on standard error per name that looks meant for GitNeural but
    is none of its settings (a typo leaves the real setting at its default)."""
    from bot.cli.server.setting_names import unknown_names
    from bot.settings.env_file import read_settings

    in_file = read_settings(source) if source is not None else {}
    for line in unknown_names(original, in_file):
        print(f"gitneural: warning: {line}", file=sys.stderr)

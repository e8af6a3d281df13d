"""What a GitHub Actions job gives ``gitneural action``: the event, the repository, the
API, the workspace, the token and the files for the step summary and outputs, plus the
action's inputs (``action.yml`` passes each one as an environment variable).

Nothing here calls GitHub or reads git: a job with nothing to review ends before any of
that, and a missing token or key is only an error once there is something to review.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bot.domain.results import Severity
from bot.effort import EFFORTS, Effort
from bot.errors import ConfigError
from bot.gh.api.credentials import github_api_url
from bot.settings.environment import data_dir, env_bool, env_words
from bot.settings.repository import AUTHOR_ASSOCIATIONS

#: Who may ask for a review with ``/review`` unless ``GITNEURAL_ALLOWED_ASSOCIATIONS``
#: says otherwise: the App's default (``.gitneural.toml`` may narrow it further).
DEFAULT_ASSOCIATIONS = ("OWNER", "MEMBER", "COLLABORATOR")
FAIL_ON_VALUES = ("none", *(str(s) for s in Severity))


def _required(env: Mapping[str, str], name: str) -> str:
    value = env.get(name, "").strip()
    if not value:
        raise ConfigError(
            f"{name} is not set: `gitneural action` runs as a step of a GitHub Actions job "
            "(elsewhere, use `gitneural review --pr`)"
        )
    return value


def _event(path: str) -> dict[str, Any]:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(
            f"cannot read GITHUB_EVENT_PATH {path}: {exc.strerror or 'unreadable'}"
        ) from None
    except ValueError:
        raise ConfigError(f"GITHUB_EVENT_PATH {path} does not hold a JSON event") from None
    if not isinstance(data, dict):
        raise ConfigError(f"GITHUB_EVENT_PATH {path} does not hold a JSON object")
    return data


def _fail_on(raw: str) -> Severity | None:
    value = raw.strip().lower() or "none"
    if value not in FAIL_ON_VALUES:
        raise ConfigError(f"fail-on must be one of {', '.join(FAIL_ON_VALUES)}, not {raw!r}")
    return None if value == "none" else Severity(value)


def _effort(raw: str) -> Effort | None:
    value = raw.strip().lower()
    if not value:
        return None
    if value not in EFFORTS:
        raise ConfigError(f"effort must be one of {', '.join(EFFORTS)}, not {raw!r}")
    return value


def _associations(env: Mapping[str, str]) -> tuple[str, ...]:
    allowed = env_words(env, "GITNEURAL_ALLOWED_ASSOCIATIONS", DEFAULT_ASSOCIATIONS)
    unknown = sorted(set(allowed) - AUTHOR_ASSOCIATIONS)
    if unknown:
        raise ConfigError(f"GITNEURAL_ALLOWED_ASSOCIATIONS has unknown values {unknown}")
    return allowed


def _path(env: Mapping[str, str], name: str) -> Path | None:
    value = env.get(name, "").strip()
    return Path(value) if value else None


def _data(env: Mapping[str, str]) -> Path:
    """``GITNEURAL_DATA_DIR``, else the job's ``RUNNER_TEMP`` (emptied after every job),
    else the user's cache directory."""
    if env.get("GITNEURAL_DATA_DIR", "").strip() or not env.get("RUNNER_TEMP", "").strip():
        return data_dir(env)
    return Path(env["RUNNER_TEMP"].strip()) / "gitneural"


@dataclass(frozen=True)
class ActionEnv:
    event_name: str
    event: dict[str, Any]
    #: ``GITHUB_REPOSITORY``, ``owner/name``: the repository the workflow runs in.
    repository: str
    api_url: str
    server_url: str
    #: ``GITHUB_WORKSPACE``: a checkout GitNeural may read (never runs), or an empty dir.
    workspace: Path | None
    #: ``GITHUB_TOKEN`` from the ``github-token`` input; "" when the workflow gave none.
    token: str = field(repr=False)
    step_summary: Path | None
    output: Path | None
    #: ``GITHUB_RUN_ID``: names the job's review, so a re-run of the run finds it.
    run_id: str
    #: Where mirrors and the SARIF file go: see :func:`_data`.
    temp: Path
    fail_on: Severity | None
    config_path: str | None
    effort: Effort | None
    bot_login: str | None
    allowed_associations: tuple[str, ...]
    github_pacing: bool

    @property
    def delivery_id(self) -> str:
        return f"actions-{self.run_id}"

    def pull_link(self, full_name: str, number: int) -> str:
        """A Markdown link to the pull request on ``GITHUB_SERVER_URL``."""
        return f"[{full_name}#{number}]({self.server_url.rstrip('/')}/{full_name}/pull/{number})"

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> ActionEnv:
        return cls(
            event_name=_required(env, "GITHUB_EVENT_NAME"),
            event=_event(_required(env, "GITHUB_EVENT_PATH")),
            repository=_required(env, "GITHUB_REPOSITORY"),
            api_url=github_api_url(env),
            server_url=env.get("GITHUB_SERVER_URL", "").strip() or "https://github.com",
            workspace=_path(env, "GITHUB_WORKSPACE"),
            token=env.get("GITHUB_TOKEN", "").strip(),
            step_summary=_path(env, "GITHUB_STEP_SUMMARY"),
            output=_path(env, "GITHUB_OUTPUT"),
            run_id=env.get("GITHUB_RUN_ID", "").strip() or f"local-{uuid.uuid4().hex[:12]}",
            temp=_data(env),
            fail_on=_fail_on(env.get("GITNEURAL_FAIL_ON", "")),
            config_path=env.get("GITNEURAL_CONFIG", "").strip() or None,
            effort=_effort(env.get("GITNEURAL_REASONING_EFFORT", "")),
            bot_login=env.get("GITNEURAL_BOT_LOGIN", "").strip() or None,
            allowed_associations=_associations(env),
            github_pacing=env_bool(env, "GITNEURAL_GITHUB_PACING", True),
        )

    def require_token(self) -> None:
        """Raise when the workflow gave no token: nothing can be read or posted."""
        if not self.token:
            raise ConfigError(
                "GITHUB_TOKEN is empty: pass the action's github-token input "
                "(its default is the workflow's ${{ github.token }})"
            )

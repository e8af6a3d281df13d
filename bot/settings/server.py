"""The App's deployment settings (``gitneural serve``, ``gitneural worker``, ``setup``,
``doctor``) as one declarative table: name, default, description, and which process
refuses to start without it.

The table is what the documentation's configuration reference is generated from, and what
``bot.cli.server.settings_check`` checks before a process starts: every missing or malformed
setting at once. The values are read where they are used (``WebSettings``,
``WorkerSettings``, ``AppCredentials``, ``LLMSettings`` …); this module only describes
them. Each may come from the environment or the settings file (``gitneural.env``, see
:mod:`bot.settings.env_file`); the environment wins.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

#: ``web``: the webhook server (``gitneural serve``); ``worker``: the review workers
#: (``gitneural worker``, and ``serve`` with the embedded broker, which runs both).
Role = Literal["web", "worker"]
#: How a value is checked before start: a whole number, seconds, true/false, or by the
#: settings object that reads it (``text``).
Kind = Literal["text", "int", "seconds", "bool"]


@dataclass(frozen=True)
class ServerSetting:
    name: str
    #: As documented ("" for none; a phrase where the default is computed).
    default: str
    description: str
    #: The processes that refuse to start without it.
    required_for: tuple[Role, ...] = ()
    kind: Kind = "text"
    #: Never printed (``doctor`` shows "set", not the value).
    secret: bool = False
    #: Other names that satisfy the requirement (``MOONSHOT_API_KEY`` for the key).
    alternatives: tuple[str, ...] = ()
    #: Where the table groups it in the docs.
    group: str = "GitHub App"


_APP: Final = "GitHub App"
_MODEL: Final = "model"
_SERVER: Final = "server"
_QUEUE: Final = "queue and workers"
_OPS: Final = "operations"

SERVER_SETTINGS: Final[tuple[ServerSetting, ...]] = (
    # -- the GitHub App ------------------------------------------------------------------
    ServerSetting(
        "GITHUB_APP_ID", "", "The App's numeric id (written by `gitneural setup`).", ("worker",)
    ),
    ServerSetting(
        "GITHUB_PRIVATE_KEY",
        "",
        "The App's private key, PEM text (written by "
        "`gitneural setup`; `\\n` escapes allowed on one line).",
        ("worker",),
        secret=True,
        alternatives=("GITHUB_PRIVATE_KEY_PATH",),
    ),
    ServerSetting(
        "GITHUB_PRIVATE_KEY_PATH",
        "",
        "A file holding the App's private key, instead of GITHUB_PRIVATE_KEY.",
    ),
    ServerSetting(
        "GITHUB_WEBHOOK_SECRET",
        "",
        "The App's webhook secret: deliveries whose "
        "signature does not match are refused (written by `gitneural setup`).",
        ("web",),
        secret=True,
    ),
    ServerSetting(
        "GITHUB_API_URL",
        "https://api.github.com",
        "The REST API: `https://HOST/api/v3` for GitHub Enterprise Server.",
    ),
    ServerSetting(
        "GITHUB_CLIENT_ID",
        "",
        "The App's OAuth client id (written by `gitneural setup`; kept for reference, unused).",
    ),
    ServerSetting(
        "GITHUB_CLIENT_SECRET",
        "",
        "The App's OAuth client secret (written by `gitneural setup`; kept for reference, unused).",
        secret=True,
    ),
    ServerSetting(
        "GITNEURAL_ALLOW_INSECURE_GITHUB",
        "false",
        "Allow `GITHUB_API_URL` over "
        "plain `http://` to a host other than loopback (every request carries a "
        "token): only for a GitHub Enterprise Server without TLS on a network you "
        "trust.",
        kind="bool",
    ),
    ServerSetting(
        "GITNEURAL_BOT_LOGIN",
        "asked of GitHub",
        "The App's bot account, `<slug>[bot]`: deliveries it causes are ignored.",
    ),
    # -- the model -----------------------------------------------------------------------
    ServerSetting(
        "KIMI_API_KEY",
        "",
        "The Moonshot API key the reviews are made with.",
        ("worker",),
        secret=True,
        alternatives=("MOONSHOT_API_KEY",),
        group=_MODEL,
    ),
    ServerSetting(
        "KIMI_BASE_URL",
        "https://api.moonshot.ai/v1",
        "The OpenAI-compatible API the model is reached at.",
        group=_MODEL,
    ),
    ServerSetting("GITNEURAL_MODEL", "kimi-k3", "The model's name.", group=_MODEL),
    ServerSetting(
        "KIMI_ROUTINE_MODEL",
        "GITNEURAL_MODEL's",
        'The model of the routine endpoint, which routes with `model = "routine"` ask.',
        group=_MODEL,
    ),
    ServerSetting(
        "KIMI_ROUTINE_BASE_URL",
        "KIMI_BASE_URL's",
        "The OpenAI-compatible API of the routine endpoint.",
        group=_MODEL,
    ),
    ServerSetting(
        "KIMI_ROUTINE_API_KEY",
        "KIMI_API_KEY's",
        "The API key of the routine endpoint.",
        secret=True,
        group=_MODEL,
    ),
    ServerSetting(
        "GITNEURAL_REASONING_EFFORT",
        "max",
        "Effort when a repository sets none: low, high or max.",
        group=_MODEL,
    ),
    ServerSetting(
        "KIMI_IMAGES",
        "true",
        "false (or 0): the server takes no images (K3 without its vision tower): reviews send none "
        "and name them in the summary.",
        kind="bool",
        group=_MODEL,
    ),
    ServerSetting(
        "GITNEURAL_ATTACHMENTS_URL",
        "",
        "Origins (comma-separated) besides GitHub's attachment hosts that a description's "
        "images may be fetched from: a GitHub Enterprise Server's own host.",
        group=_MODEL,
    ),
    ServerSetting(
        "GITNEURAL_REVIEW_SECONDS",
        "0 (the repository's agent.max_seconds)",
        "Seconds one review may take.",
        kind="seconds",
        group=_MODEL,
    ),
    ServerSetting(
        "GITNEURAL_MODEL_RPM",
        "0 (no limit)",
        "Model requests per window, shared by every worker.",
        kind="int",
        group=_MODEL,
    ),
    ServerSetting(
        "GITNEURAL_MODEL_TPM",
        "0 (no limit)",
        "Model tokens per window, shared by every worker.",
        kind="int",
        group=_MODEL,
    ),
    ServerSetting(
        "GITNEURAL_MODEL_RATE_WINDOW",
        "60",
        "The window of the two limits above, in seconds.",
        kind="seconds",
        group=_MODEL,
    ),
    # -- the web server ------------------------------------------------------------------
    ServerSetting(
        "GITNEURAL_HOST",
        "127.0.0.1",
        "The address `gitneural serve` listens on (`--host`).",
        group=_SERVER,
    ),
    ServerSetting(
        "GITNEURAL_PORT",
        "8000",
        "The port `gitneural serve` listens on (`--port`).",
        kind="int",
        group=_SERVER,
    ),
    ServerSetting(
        "GITNEURAL_SETTINGS_FILE",
        "./gitneural.env if present",
        "The settings file read besides the environment (the environment wins).",
        group=_SERVER,
    ),
    ServerSetting(
        "GITNEURAL_DATA_DIR",
        "the user's cache directory",
        "Mirrors, the embedded broker, the SQLite store, metrics.",
        group=_SERVER,
    ),
    ServerSetting(
        "GITNEURAL_MAX_BODY_BYTES",
        "26214400",
        "Larger webhook bodies are answered 413 unread.",
        kind="int",
        group=_SERVER,
    ),
    ServerSetting(
        "GITNEURAL_ALLOWED_ASSOCIATIONS",
        "OWNER,MEMBER,COLLABORATOR",
        "Who may ask for a review with `/review`.",
        group=_SERVER,
    ),
    ServerSetting(
        "GITNEURAL_REVIEW_DRAFTS",
        "false",
        "Review draft pull requests.",
        kind="bool",
        group=_SERVER,
    ),
    ServerSetting(
        "GITNEURAL_AUTO_REVIEW",
        "true",
        "Review every pull request opened or pushed (false: only on `/review`).",
        kind="bool",
        group=_SERVER,
    ),
    ServerSetting(
        "GITNEURAL_DEDUPE_URL",
        "the state store",
        "A Redis URL for the delivery log (else SQLite in the data directory).",
        group=_SERVER,
    ),
    # -- queue and workers ---------------------------------------------------------------
    ServerSetting(
        "GITNEURAL_BROKER_URL",
        "embedded SQLite",
        "The Celery broker: `redis://…` or `amqp://…` for several machines.",
        group=_QUEUE,
        secret=True,
    ),
    ServerSetting(
        "GITNEURAL_STATE_URL",
        "the broker's Redis, else SQLite",
        "A Redis URL for PR locks, the schedule and head records.",
        group=_QUEUE,
        secret=True,
    ),
    ServerSetting(
        "GITNEURAL_DATABASE_URL",
        "SQLite in the data directory",
        "The store: `sqlite:///PATH` or `postgresql+psycopg://…`.",
        group=_QUEUE,
        secret=True,
    ),
    ServerSetting(
        "GITNEURAL_QUEUE_PREFIX",
        "gitneural",
        "Names the queues and keys, so deployments can share one Redis.",
        group=_QUEUE,
    ),
    ServerSetting(
        "GITNEURAL_WORKER_POOL", "threads", "Celery pool: threads, prefork or solo.", group=_QUEUE
    ),
    ServerSetting(
        "GITNEURAL_WORKER_CONCURRENCY",
        "8",
        "Reviews one worker runs at once.",
        kind="int",
        group=_QUEUE,
    ),
    ServerSetting(
        "GITNEURAL_WORKER_HOST",
        "the host name",
        "This worker host's name, for routing repositories to their mirrors.",
        group=_QUEUE,
    ),
    ServerSetting(
        "GITNEURAL_INSTALLATION_CONCURRENCY",
        "0 (fair share)",
        "Reviews one installation may run at once, whoever else waits (unset: all "
        "threads when alone, 3/4 of them while another installation has work).",
        kind="int",
        group=_QUEUE,
    ),
    ServerSetting(
        "GITNEURAL_SCHEDULE", "fair", "fair (installations take turns) or fifo.", group=_QUEUE
    ),
    ServerSetting(
        "GITNEURAL_TASK_SOFT_TIME_LIMIT",
        "1800",
        "Seconds before a review is interrupted.",
        kind="seconds",
        group=_QUEUE,
    ),
    ServerSetting(
        "GITNEURAL_TASK_TIME_LIMIT",
        "2100",
        "Seconds before a worker gives up on a review.",
        kind="seconds",
        group=_QUEUE,
    ),
    ServerSetting(
        "GITNEURAL_TASK_MAX_RETRIES", "6", "Retries of a transient fault.", kind="int", group=_QUEUE
    ),
    ServerSetting(
        "GITNEURAL_RETRY_BACKOFF",
        "30",
        "First retry's delay, in seconds.",
        kind="seconds",
        group=_QUEUE,
    ),
    ServerSetting(
        "GITNEURAL_RETRY_BACKOFF_MAX",
        "900",
        "Longest retry delay, in seconds.",
        kind="seconds",
        group=_QUEUE,
    ),
    ServerSetting(
        "GITNEURAL_LOCK_LEASE",
        "60",
        "Seconds a PR's lock outlives a crashed worker.",
        kind="seconds",
        group=_QUEUE,
    ),
    ServerSetting(
        "GITNEURAL_LOCK_RETRY_DELAY",
        "15",
        "Seconds a job for a busy PR waits.",
        kind="seconds",
        group=_QUEUE,
    ),
    ServerSetting(
        "GITNEURAL_VISIBILITY_TIMEOUT",
        "the time limit + 600",
        "Seconds before an unacknowledged job is handed to another worker.",
        kind="seconds",
        group=_QUEUE,
    ),
    ServerSetting(
        "GITNEURAL_BROKER_POLL_INTERVAL",
        "1",
        "Seconds between polls of the embedded broker.",
        kind="seconds",
        group=_QUEUE,
    ),
    ServerSetting(
        "GITNEURAL_SHUTDOWN_GRACE",
        "20",
        "Seconds running reviews may finish after SIGTERM.",
        kind="seconds",
        group=_QUEUE,
    ),
    ServerSetting(
        "GITNEURAL_GITHUB_PACING",
        "true",
        "Pause between GitHub requests (keeps secondary rate limits away).",
        kind="bool",
        group=_QUEUE,
    ),
    # -- operations ----------------------------------------------------------------------
    ServerSetting(
        "GITNEURAL_ADMIN_TOKEN",
        "",
        "Bearer token of `/status` (unset: `/status` is off).",
        secret=True,
        group=_OPS,
    ),
    ServerSetting("GITNEURAL_BUDGETS_FILE", "", "Monthly token budgets (TOML).", group=_OPS),
    ServerSetting(
        "GITNEURAL_MIRROR_MAX_BYTES", "no cap", "Cap of the mirror cache, e.g. 20G.", group=_OPS
    ),
    ServerSetting("GITNEURAL_LOG_FORMAT", "text", "text or json.", group=_OPS),
)

BY_NAME: Final = {s.name: s for s in SERVER_SETTINGS}


def required(role: Role) -> tuple[ServerSetting, ...]:
    """The settings ``role`` refuses to start without."""
    return tuple(s for s in SERVER_SETTINGS if role in s.required_for)

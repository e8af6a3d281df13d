"""The checks of ``gitneural doctor``: each asks the real thing (the model, GitHub, the
broker, the stores) and turns what it says into a row: ok or not, what was seen, and for a
failure the fix. A check that cannot run because an earlier one failed says so."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from bot.errors import (
    GitHubError,
    GitNeuralError,
    MissingKeyError,
    ModelConfigError,
    ModelError,
    ModelOutputError,
    ModelQuotaError,
)


@dataclass(frozen=True)
class Row:
    check: str
    ok: bool
    detail: str
    fix: str = ""


def settings_rows(problems: list[str], source: str) -> list[Row]:
    if not problems:
        return [Row("settings", True, f"every required setting is set ({source})")]
    return [
        Row("settings", False, problem, f"set it in the environment or {source}")
        for problem in problems
    ]


def name_rows(unknown: list[str]) -> list[Row]:
    """A row for each name that looks meant for GitNeural but is no setting of it."""
    if not unknown:
        return [Row("setting names", True, "every GITNEURAL_/KIMI_ name is a known setting")]
    return [Row("setting names", False, line, "rename or remove it") for line in unknown]


#: Seconds the model check waits for its one-line answer: a person is watching the table,
#: and a server that accepts and never answers must not hold it for a minute.
MODEL_CHECK_TIMEOUT = 15.0


def model_rows() -> Iterator[Row]:
    from bot.llm.client import K3Client
    from bot.llm.settings import LLMSettings

    try:
        llm = LLMSettings.from_env(
            max_retries=0,
            request_timeout=MODEL_CHECK_TIMEOUT,
            stall_timeout=MODEL_CHECK_TIMEOUT,
            effort="low",
        )
    except GitNeuralError as exc:
        yield Row("model", False, str(exc), "fix the setting it names")
        return
    if not llm.api_key:
        yield Row(
            "model key",
            False,
            "KIMI_API_KEY is not set",
            "set KIMI_API_KEY (or MOONSHOT_API_KEY) to a Moonshot API key",
        )
        return
    yield Row("model key", True, "set")
    where = f"{llm.model} at {llm.base_url}"
    try:
        K3Client(llm).complete(
            [{"role": "user", "content": "Reply with the word OK."}],
            max_completion_tokens=256,
            stream=False,
        )
    except ModelOutputError:
        pass  # it answered, and spent the tokens on thinking: the server works
    except ModelError as exc:
        yield Row("model", False, str(exc), _model_fix(exc))
        return
    yield Row("model", True, f"{where} answered a one-line request")


def _model_fix(exc: ModelError) -> str:
    text = str(exc)
    if isinstance(exc, MissingKeyError) or "rejected" in text:
        return "set KIMI_API_KEY to a valid key (platform.moonshot.ai → API keys)"
    if isinstance(exc, ModelConfigError):
        return "check GITNEURAL_MODEL (the model's name) and KIMI_BASE_URL (…/v1)"
    if isinstance(exc, ModelQuotaError):
        return "top up the account, or use another key"
    if "cannot reach" in text:
        return "check KIMI_BASE_URL and that this machine can reach it"
    return "try again later; if it persists, check the model server"


def github_rows() -> Iterator[Row]:
    from bot.gh.api.credentials import AppCredentials
    from bot.gh.app_probe import AppProbe

    try:
        probe = AppProbe(AppCredentials.from_env())
    except GitNeuralError as exc:
        yield Row("GitHub App", False, str(exc), "run `gitneural setup`, or set the setting")
        return
    api = probe.creds.api_url
    try:
        app = probe.app()
    except GitHubError as exc:
        fix = (
            "GITHUB_APP_ID and the private key do not match: download a new key from "
            "the App's settings page, or run `gitneural setup --force`"
            if exc.status in (401, 403, 404)
            else "check GITHUB_API_URL and the network"
        )
        yield Row("GitHub App", False, f"GET {api}/app: {exc}", fix)
        return
    slug = str(app.get("slug") or "?")
    yield Row("GitHub App", True, f"{slug} (id {probe.creds.app_id}) at {api}")
    page = str(app.get("html_url") or "").rstrip("/")
    try:
        installations = probe.installations()
    except GitHubError as exc:
        yield Row("installations", False, str(exc), "check the App's permissions")
    else:
        if installations:
            accounts = sorted({str((i.get("account") or {}).get("login")) for i in installations})
            yield Row("installations", True, f"{len(installations)}: {', '.join(accounts)}")
        else:
            where = f"{page}/installations/new" if page else "the App's page"
            yield Row(
                "installations",
                False,
                "the App is installed on no account",
                f"install it on repositories: {where}",
            )
    yield from _webhook_rows(probe)


def _webhook_rows(probe: object) -> Iterator[Row]:
    from bot.gh.app_probe import AppProbe

    assert isinstance(probe, AppProbe)
    local = os.environ.get("GITHUB_WEBHOOK_SECRET", "").strip()
    try:
        config = probe.hook_config()
    except GitHubError as exc:
        yield Row("webhook", False, f"GET /app/hook/config: {exc}", "check the App's settings")
        return
    url = str(config.get("url") or "none")
    if not local:
        yield Row(
            "webhook secret",
            False,
            "GITHUB_WEBHOOK_SECRET is not set",
            "set it to the App's webhook secret (gitneural setup writes it)",
        )
    elif not config.get("secret"):
        yield Row(
            "webhook secret",
            False,
            "GitHub sends deliveries unsigned (the App has no webhook secret)",
            "set the same secret in the App's settings → Webhook secret",
        )
    elif len(local) < 16:
        yield Row(
            "webhook secret",
            False,
            "GITHUB_WEBHOOK_SECRET is shorter than 16 characters",
            "use a long random secret, here and in the App's settings",
        )
    else:
        yield Row("webhook secret", True, "set here and on GitHub")
    yield Row("webhook URL", True, url)


def queue_rows() -> Iterator[Row]:
    from bot.cli.server.serve_line import broker_text
    from bot.store import database_url, open_store, redacted_url
    from bot.store.errors import store_errors
    from workers.celeryapp import health
    from workers.celeryapp.app import create_publisher
    from workers.settings import WorkerSettings

    try:
        settings = WorkerSettings.from_env()
    except GitNeuralError:
        yield Row("broker", False, "not checked: fix the settings above first")
    else:
        yield _probe(
            "broker",
            broker_text(settings),
            lambda: health.check_broker(create_publisher(settings), settings),
            "start the broker, or fix GITNEURAL_BROKER_URL",
        )
        yield _probe(
            "state store",
            "Redis" if settings.state_url else "SQLite",
            lambda: health.check_state_store(settings),
            "start Redis, or fix GITNEURAL_STATE_URL",
        )
    url = database_url(os.environ)

    def ping() -> None:
        store = open_store(url)
        try:
            with store_errors(url):
                store.ping()
        finally:
            store.close()

    yield _probe(
        "store", redacted_url(url), ping, "start the database, or fix GITNEURAL_DATABASE_URL"
    )


def _probe(name: str, what: str, check: Callable[[], object], fix: str) -> Row:
    try:
        check()
    except GitNeuralError as exc:
        return Row(name, False, f"{what}: {exc}", fix)
    return Row(name, True, f"{what}: answers")

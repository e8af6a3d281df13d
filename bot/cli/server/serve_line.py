"""The one line ``gitneural serve`` prints when it starts: where the webhook, ``/status``
and ``/metrics`` are, which broker and store it uses, how many workers it runs. Nothing
secret in it: URLs lose their passwords."""

from __future__ import annotations

import logging
import os
import urllib.parse
from pathlib import Path

from bot.logs import JsonFormatter, log_format
from bot.store import database_url, redacted_url
from workers.settings import WorkerSettings


def shown_url(url: str) -> str:
    """``url`` without a password (``redis://:pw@host`` → ``redis://host``)."""
    parts = urllib.parse.urlsplit(url)
    if parts.password is None and parts.username is None:
        return url
    host = parts.hostname or ""
    host = f"[{host}]" if ":" in host else host
    netloc = (f"{parts.username}@" if parts.username else "") + host
    netloc += f":{parts.port}" if parts.port else ""
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc))


def broker_text(settings: WorkerSettings) -> str:
    if settings.broker_path is not None:
        return f"embedded SQLite ({settings.broker_path})"
    return shown_url(settings.broker_url)


def store_text() -> str:
    url = database_url(os.environ)
    return redacted_url(url).replace("sqlite:///", "SQLite ", 1)


def as_printed(line: str) -> str:
    """The line as ``GITNEURAL_LOG_FORMAT`` asks: a JSON object when every line is one."""
    if log_format() != "json":
        return line
    record = logging.LogRecord("gitneural.serve", logging.INFO, __file__, 0, line, None, None)
    return JsonFormatter().format(record)


def serve_line(
    host: str,
    port: int,
    settings: WorkerSettings,
    workers: tuple[int, int] | None,
    settings_file: Path | None,
) -> str:
    shown_host = f"[{host}]" if ":" in host else host
    base = f"http://{shown_host}:{port}"
    status = (
        "/status"
        if os.environ.get("GITNEURAL_ADMIN_TOKEN", "").strip()
        else ("/status (off: GITNEURAL_ADMIN_TOKEN unset)")
    )
    if workers is None:
        running = "workers: none here (run `gitneural worker` on the shared broker)"
    else:
        running = f"workers: {workers[0]} review threads, {workers[1]} for reactions and replies"
    state = shown_url(settings.state_url) if settings.state_url else "SQLite"
    read = f"; settings from {settings_file}" if settings_file else ""
    return (
        f"gitneural: serving the webhook at {base}/webhook, {status}, /metrics; "
        f"broker: {broker_text(settings)}; state: {state}; store: {store_text()}; "
        f"{running}{read}"
    )

"""The one line ``gitneural serve`` prints when it starts: where the webhook, ``/status``
and ``/metrics`` are, which broker and store it uses, how many workers it runs. Nothing
secret in it: URLs lose their passwords."""

from __future__ import annotations

import logging
import os
import re
import urllib.parse
from pathlib import Path

from bot.logs import JsonFormatter, log_format
from bot.store import database_url, redacted_url
from workers.settings import WorkerSettings

#: Query parameters that carry a secret (redis-py reads ``?password=``), by name.
_SECRET_PARAM = re.compile(r"pass|secret|token|key|auth|cred|sig", re.IGNORECASE)


def shown_url(url: str) -> str:
    """``url`` with nothing secret in it, for a start line or a doctor row: no password,
    no query parameter named like one, no fragment (``redis://:pw@host/0?password=x`` →
    ``redis://host/0?password=***``). Never raises and never echoes what it cannot parse: a
    password holding ``#``, ``/`` or ``?`` breaks a URL parser, so the user information is
    cut at the last ``@`` by hand (no host name holds one)."""
    scheme, sep, rest = url.partition("://")
    if not sep or not re.fullmatch(r"[A-Za-z][A-Za-z0-9+.-]*", scheme):
        return "(not a URL)"
    user = ""
    if "@" in rest:
        userinfo, rest = rest.rsplit("@", 1)
        if any(mark in userinfo for mark in "/?#"):
            # The '@' may sit in the password or in the query (?password=a@b): which part
            # is the host cannot be told, so nothing of it is shown.
            return f"{scheme}://(hidden: percent-encode the password's '@', '/', '?', '#')"
        name, colon, _ = userinfo.partition(":")
        # A name before a password is shown; user information that is one word may be a
        # token (redis://TOKEN@host), and is not.
        if colon and name and re.fullmatch(r"[\w.-]+", name):
            user = f"{name}@"
    rest = rest.partition("#")[0]
    where, question, query = rest.partition("?")
    if question:
        pairs = urllib.parse.parse_qsl(query, keep_blank_values=True)
        query = "&".join(
            f"{urllib.parse.quote(k, safe='')}="
            + ("***" if _SECRET_PARAM.search(k) else urllib.parse.quote(v, safe=""))
            for k, v in pairs
        )
    return f"{scheme}://{user}{where}" + (f"?{query}" if question else "")


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

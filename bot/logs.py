"""Log lines as text or, with ``GITNEURAL_LOG_FORMAT=json``, one JSON object per line.

A JSON line carries ``time``, ``level``, ``logger`` and ``message``, plus what is known
of the work at hand: ``delivery`` (``X-GitHub-Delivery``), ``installation``,
``repository``, ``pr``, ``head`` and ``job`` (the queue's task id). The webhook and the
workers set those with :func:`log_context` for the request or the job; a context
variable carries them, so each thread of a pool sees its own job. Messages are written
as logged: what logs them already keeps secrets out (the secrets test reads both
formats).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import logging
import os
import sys
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from types import MappingProxyType
from typing import Final

from bot.errors import ConfigError

LOG_FORMAT_ENV: Final = "GITNEURAL_LOG_FORMAT"
TEXT_FORMAT: Final = "%(asctime)s %(levelname)s %(name)s: %(message)s"
#: The context fields, in the order a JSON line shows them.
FIELDS: Final = ("delivery", "installation", "repository", "pr", "head", "job")

_EMPTY: Final[Mapping[str, object]] = MappingProxyType({})
_context: ContextVar[Mapping[str, object]] = ContextVar("gitneural_log_context", default=_EMPTY)


@contextlib.contextmanager
def log_context(**fields: object) -> Iterator[None]:
    """Add ``fields`` (those not ``None``) to every line logged inside the block."""
    unknown = set(fields) - set(FIELDS)
    if unknown:
        raise ValueError(f"unknown log context field(s): {', '.join(sorted(unknown))}")
    merged = {**_context.get(), **{k: v for k, v in fields.items() if v is not None}}
    token = _context.set(merged)
    try:
        yield
    finally:
        _context.reset(token)


def current_context() -> dict[str, object]:
    return dict(_context.get())


class JsonFormatter(logging.Formatter):
    """One JSON object per record, on one line (a traceback is a field, not lines)."""

    def format(self, record: logging.LogRecord) -> str:
        when = dt.datetime.fromtimestamp(record.created, dt.UTC)
        line: dict[str, object] = {
            "time": when.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        context = _context.get()
        line.update((name, context[name]) for name in FIELDS if name in context)
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        if record.stack_info:
            line["stack"] = self.formatStack(record.stack_info)
        return json.dumps(line, ensure_ascii=False, default=str)


def log_format(env: Mapping[str, str] | None = None) -> str:
    """``text`` (the default) or ``json``."""
    env = os.environ if env is None else env
    raw = env.get(LOG_FORMAT_ENV, "").strip().lower() or "text"
    if raw not in ("text", "json"):
        raise ConfigError(f"{LOG_FORMAT_ENV} must be text or json, not {raw!r}")
    return raw


def make_formatter(fmt: str) -> logging.Formatter:
    return JsonFormatter() if fmt == "json" else logging.Formatter(TEXT_FORMAT)


def configure_logging(level: int, env: Mapping[str, str] | None = None) -> str:
    """The root logger on stderr in the environment's format; returns the format."""
    fmt = log_format(env)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(make_formatter(fmt))
    logging.basicConfig(level=level, handlers=[handler])
    if fmt == "json":
        logging.captureWarnings(True)  # a warning is a log line too, not free text
    return fmt


def reformat_handlers(logger: logging.Logger, fmt: str) -> None:
    """Give ``logger``'s handlers the format (for libraries that set up their own, as a
    Celery worker does)."""
    if fmt != "json":
        return
    for handler in logger.handlers:
        handler.setFormatter(JsonFormatter())

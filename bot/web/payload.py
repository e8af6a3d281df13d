"""Typed reads from a webhook payload: a missing key or a wrong type is a 400, not a 500.

Only the fields a handler actually reads are checked, so GitHub adding or changing fields
GitNeural does not use never breaks delivery.
"""

from __future__ import annotations

import json
from typing import Any

from bot.errors import GitNeuralError


class PayloadError(GitNeuralError):
    """A delivery whose body is not the JSON GitHub sends (answered 400)."""


Payload = dict[str, Any]


def parse(body: bytes) -> Payload:
    """The JSON object in ``body``."""
    try:
        data = json.loads(body)
    except RecursionError:
        raise PayloadError("body is nested too deeply to be a GitHub payload") from None
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError, int too long
        raise PayloadError(f"body is not JSON ({type(exc).__name__})") from None
    if not isinstance(data, dict):
        raise PayloadError("body is not a JSON object")
    return data


def _get(obj: Payload, path: str) -> Any:
    value: Any = obj
    for key in path.split("."):
        if not isinstance(value, dict) or key not in value:
            raise PayloadError(f"payload has no {path}")
        value = value[key]
    return value


def section(obj: Payload, path: str) -> Payload:
    value = _get(obj, path)
    if not isinstance(value, dict):
        raise PayloadError(f"payload {path} is not an object")
    return value


def _checked_text(value: str, path: str) -> str:
    # JSON may escape lone surrogates ("\ud800"), which no UTF-8 text holds: such a
    # string would break every log line, queue message and request it reached.
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise PayloadError(f"payload {path} is not valid Unicode text") from None
    return value


def text(obj: Payload, path: str) -> str:
    value = _get(obj, path)
    if not isinstance(value, str):
        raise PayloadError(f"payload {path} is not a string")
    return _checked_text(value, path)


def optional_text(obj: Payload, path: str) -> str | None:
    """A string, or ``None`` when absent or null (e.g. ``comment.body`` of an empty comment)."""
    try:
        value = _get(obj, path)
    except PayloadError:
        return None
    if value is None:
        return None
    if not isinstance(value, str):
        raise PayloadError(f"payload {path} is not a string")
    return _checked_text(value, path)


def ident(obj: Payload, path: str) -> int:
    """A positive integer id (``bool`` is refused although it is an ``int``)."""
    value = _get(obj, path)
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise PayloadError(f"payload {path} is not a positive integer")
    return value


def flag(obj: Payload, path: str, default: bool = False) -> bool:
    try:
        value = _get(obj, path)
    except PayloadError:
        return default
    if not isinstance(value, bool):
        raise PayloadError(f"payload {path} is not true or false")
    return value


def has(obj: Payload, path: str) -> bool:
    """Whether ``path`` exists and is not null."""
    try:
        return _get(obj, path) is not None
    except PayloadError:
        return False

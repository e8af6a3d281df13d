"""A tool call's arguments as the model wrote them: JSON, checked against the tool's
parameters (:data:`bot.review.tools.specs.ARGUMENTS`), values coerced to their types."""

from __future__ import annotations

import json
from typing import Any

from bot.review.tools.paths import ToolError, shown
from bot.review.tools.specs import ARGUMENTS


def parse_arguments(name: str, arguments: str) -> dict[str, Any]:
    """The JSON arguments of a call, checked against the tool's parameters."""
    try:
        parsed = json.loads(arguments or "{}")
    except (ValueError, RecursionError):
        raise ToolError(
            f"the arguments of {name} are not valid JSON; send an object such as "
            '{"path": "src/app.py"}'
        ) from None
    if not isinstance(parsed, dict):
        raise ToolError(f"the arguments of {name} must be a JSON object")
    spec = ARGUMENTS[name]
    unknown = sorted(set(parsed) - set(spec))
    if unknown:
        raise ToolError(f"{name} has no argument {shown(unknown[0])}; it takes {', '.join(spec)}")
    kwargs: dict[str, Any] = {}
    for key, (kind, required) in spec.items():
        value = parsed.get(key)
        if value is None:
            if required:
                raise ToolError(f"{name} needs the argument {shown(key)}")
            continue
        kwargs[key] = _coerce(name, key, kind, value)
    return kwargs


def _coerce(name: str, key: str, kind: type, value: Any) -> Any:
    """``value`` as ``kind``; models sometimes quote numbers and booleans."""
    if kind is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("true", "false"):
            return value.lower() == "true"
    elif kind is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, str) and len(value) <= 12 and value.strip().lstrip("-").isdigit():
            return int(value)
    elif isinstance(value, str):
        return value
    raise ToolError(f"{name}: {shown(key)} must be a {kind.__name__}, not {shown(repr(value))}")

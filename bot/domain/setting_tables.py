"""The grammar the settings' lists of tables share (``[[review.route]]``,
``[[review.path_instructions]]``): a list of tables, each with only its known keys and a
non-empty list of globs under ``paths``; a bad one named by its index."""

from __future__ import annotations

from collections.abc import Collection, Iterator
from typing import Any

from bot.errors import ConfigError


def tables(key: str, value: Any, shape: str, known: Collection[str]) -> Iterator[tuple[str, Any]]:
    """``(where, table)`` of each table of ``value`` (``where``: ``key[index]``)."""
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise ConfigError(f"{shape}, not {value!r}")
    for index, table in enumerate(value):
        where = f"{key}[{index}]"
        unknown = set(table) - set(known)
        if unknown:
            raise ConfigError(
                f"unknown key {where}.{sorted(unknown)[0]} (known keys: {', '.join(sorted(known))})"
            )
        yield where, table


def glob_list(where: str, paths: Any) -> tuple[str, ...]:
    """A table's ``paths``: a non-empty list of globs."""
    if not isinstance(paths, list) or not paths or not all(isinstance(p, str) for p in paths):
        raise ConfigError(f"{where}.paths must be a non-empty list of globs, not {paths!r}")
    return tuple(paths)

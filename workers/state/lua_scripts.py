"""The Lua the per-PR records and the shared model rate limit run in Redis, kept as ``.lua``
files in ``workers/state/lua/`` (package data) like the schedule's: one per operation, each
opening with what its ``KEYS`` and ``ARGV`` are."""

from __future__ import annotations

from functools import cache
from importlib.resources import files


@cache
def script(name: str) -> str:
    """The source of ``lua/NAME.lua``."""
    package = __name__.rpartition(".")[0]  # this module's own package, where lua/ ships
    return (files(package) / "lua" / f"{name}.lua").read_text(encoding="utf-8")

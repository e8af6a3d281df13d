"""GitNeural's comment commands, one module each, and their registry.

Each module of this package builds one :class:`~bot.commands.registry.Command` (its
grammar, who may run it, whether it needs the model, the job it becomes, its handler)
and registers it when imported; importing this package imports them all, in the order
``/help`` lists them. Adding a command is adding a module here (and its tests): the
webhook, the worker, the Action and ``/help`` find it in the registry.
"""

from __future__ import annotations

import importlib
import pkgutil

from bot.commands.registry import (
    Command,
    CommandError,
    Invocation,
    UnknownJobKindError,
    command_named,
    commands,
    find_command,
    register,
    unregister,
)

__all__ = [
    "Command",
    "CommandError",
    "Invocation",
    "UnknownJobKindError",
    "command_named",
    "commands",
    "find_command",
    "register",
    "unregister",
]

#: Modules of this package that are not commands.
_NOT_COMMANDS = frozenset({"registry", "dispatch"})
#: The order ``/help`` lists them in; a module not named here comes after, by name.
_ORDER = ("review", "ask", "describe", "learn", "learnings", "forget", "help")


def _load() -> None:
    found = {m.name for m in pkgutil.iter_modules(__path__)} - _NOT_COMMANDS
    for name in [*(n for n in _ORDER if n in found), *sorted(found - set(_ORDER))]:
        importlib.import_module(f"{__name__}.{name}")


_load()

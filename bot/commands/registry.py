"""The registry of comment commands: each command is one module of :mod:`bot.commands`
that builds a :class:`Command` (its grammar, who may run it, whether it needs the model,
the job it becomes and the handler that answers it) and registers it.

The webhook (:mod:`bot.web.commands`), the worker (:mod:`bot.commands.dispatch`), the
Action and ``/help`` read this registry and nothing else, so a command added here is
routed everywhere; a job whose kind nothing registered is an error
(:class:`UnknownJobKindError`), never a fall-through to another handler.

Grammar shared by every command: the comment's first non-blank line starts with
``/NAME`` (any case), followed by whitespace or nothing; what follows is the command's
own (:attr:`Command.parse`). ``/reviewer`` is not ``/review``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Literal

from bot.errors import GitNeuralError

if TYPE_CHECKING:
    from bot.usecases.conversation.thread_run import ConversationOutcome, ConversationRun

#: ``review``: the command becomes a :class:`~bot.jobs.ReviewJob` (trigger ``command``);
#: ``conversation``: a :class:`~bot.jobs.ConversationJob` whose trigger is the command's
#: name, answered by :attr:`Command.handle`.
JobShape = Literal["review", "conversation"]
Handler = Callable[["ConversationRun"], "ConversationOutcome"]


class CommandError(GitNeuralError):
    """A command whose options cannot be honoured: refused as a whole, never guessed."""


class UnknownJobKindError(GitNeuralError):
    """A job names a kind no module registered (a web/worker version skew, or a bug)."""


@dataclass(frozen=True)
class Invocation:
    """A command as a comment says it: its free text and its ``name=value`` options."""

    argument: str = ""
    options: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Command:
    #: ``describe`` for ``/describe``; also the job's kind (a conversation's trigger).
    name: str
    #: ``/ask QUESTION``: how it is written, for ``/help`` and the docs.
    usage: str
    #: One line: what it does.
    summary: str
    #: A comment that runs it, for the docs.
    example: str
    #: The rest of the comment after ``/NAME`` (the first line's remainder, a newline,
    #: the other lines) to an :class:`Invocation`; raises :class:`CommandError`.
    parse: Callable[[str], Invocation]
    needs_model: bool
    job: JobShape
    #: For ``conversation`` jobs: the use case that answers it in the worker.
    handle: Handler | None = None
    #: The kind its jobs are counted under (:data:`bot.metrics.JOB_KINDS`).
    metric: str = "command"
    #: Also answered when written in a review thread (the answer goes there).
    in_threads: bool = False
    #: Also answered on a closed pull request.
    on_closed: bool = False
    #: Run by the GitHub Action too (otherwise the Action says the App answers it).
    in_action: bool = False
    #: Who may run it; the worker asks GitHub (``may_command``) before anything else.
    who: str = "people with write access"

    def __post_init__(self) -> None:
        if self.job == "conversation" and self.handle is None:
            raise ValueError(f"/{self.name}: a conversation command needs a handler")


_COMMANDS: dict[str, Command] = {}
#: Job kinds that are not comment commands (a reply in a thread, a resolved thread):
#: names a command may not take.
RESERVED = frozenset({"reply", "resolved", "command"})


def register(command: Command) -> Command:
    """Add ``command``; a name taken twice is a bug, said at import time."""
    if command.name in _COMMANDS or command.name in RESERVED:
        raise ValueError(f"command /{command.name} is registered twice")
    if not command.name.isascii() or not command.name.isalpha() or not command.name.islower():
        raise ValueError(f"command name {command.name!r} must be lowercase letters")
    _COMMANDS[command.name] = command
    return command


def unregister(name: str) -> None:
    """Remove a command (tests that add a throwaway one take it away again)."""
    _COMMANDS.pop(name, None)


def commands() -> Mapping[str, Command]:
    """Every registered command by name, in registration order."""
    return MappingProxyType(_COMMANDS)


def command_named(name: str) -> Command:
    """The command of a job's kind; :class:`UnknownJobKindError` if none is registered."""
    found = _COMMANDS.get(name)
    if found is None:
        known = ", ".join(sorted(_COMMANDS)) or "none"
        raise UnknownJobKindError(f"unknown job kind {name[:40]!r} (registered commands: {known})")
    return found


def find_command(body: str | None) -> tuple[Command, Invocation] | None:
    """The registered command a comment body starts with and what it says; None when the
    comment is no command. Raises :class:`CommandError` for a command it cannot honour."""
    stripped = (body or "").lstrip()
    first, _, rest = stripped.partition("\n")
    words = first.split(maxsplit=1)
    if not words or not words[0].startswith("/"):
        return None
    command = _COMMANDS.get(words[0][1:].lower())
    if command is None:
        return None
    head = words[1] if len(words) > 1 else ""
    return command, command.parse(f"{head}\n{rest}" if rest else head)


def first_line(text: str) -> str:
    """The part of a command's text on the command's own line."""
    return text.partition("\n")[0]

"""``/help``: the commands (from the registry), who may use them, and the repository's
settings that decide what GitNeural does on its own. No model call; anything written
after the command is ignored."""

from __future__ import annotations

from bot.commands.registry import Command, Invocation, commands, register
from bot.render.command_answers import CommandLine
from bot.usecases.conversation.help import answer_help
from bot.usecases.conversation.thread_run import ConversationOutcome, ConversationRun


def parse(text: str) -> Invocation:
    return Invocation()


def listing() -> list[CommandLine]:
    """Every registered command, as ``/help`` shows it."""
    return [CommandLine(c.usage, c.summary, c.who, c.needs_model) for c in commands().values()]


def answer(run: ConversationRun) -> ConversationOutcome:
    return answer_help(run, listing())


COMMAND = register(
    Command(
        name="help",
        usage="/help",
        summary="lists the commands and this repository's review settings, without the model",
        example="/help",
        parse=parse,
        needs_model=False,
        job="conversation",
        handle=answer,
        in_action=True,
    )
)

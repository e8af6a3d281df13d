"""``/learnings``: the repository's rules, listed with their ids. No model call; anything
written after the command is ignored."""

from __future__ import annotations

from bot.commands.learn import learning_command
from bot.commands.registry import Command, Invocation, register
from bot.usecases.conversation.learn import answer_learning


def parse(text: str) -> Invocation:
    return Invocation()


COMMAND = register(
    Command(
        name="learnings",
        usage="/learnings",
        summary="lists the rules taught with /learn, with their ids",
        example="/learnings",
        parse=parse,
        needs_model=False,
        job="conversation",
        handle=lambda run: answer_learning(run, learning_command),
        metric="learning",
        in_threads=True,
        on_closed=True,
    )
)

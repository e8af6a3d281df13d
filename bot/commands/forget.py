"""``/forget ID``: a rule taught with ``/learn`` is no longer followed. No model call.

The id is the rest of the command's line, ``12`` or ``#12``; without one the answer is
the usage.
"""

from __future__ import annotations

from bot.commands.learn import learning_command
from bot.commands.registry import Command, Invocation, first_line, register
from bot.usecases.conversation.learn import answer_learning


def parse(text: str) -> Invocation:
    return Invocation(argument=first_line(text).strip())


COMMAND = register(
    Command(
        name="forget",
        usage="/forget ID",
        summary="stops following the rule with that id (see /learnings)",
        example="/forget 12",
        parse=parse,
        needs_model=False,
        job="conversation",
        handle=lambda run: answer_learning(run, learning_command),
        metric="learning",
        in_threads=True,
        on_closed=True,
    )
)

"""``/learn RULE``: a rule every later review of the repository follows (taught in a
review thread, for that thread's file only). No model call.

The rule is the rest of the command's line and every line after it. ``/learnings`` and
``/forget`` (their own modules) share the handler, which reads the command again from
the comment with :func:`learning_command`.
"""

from __future__ import annotations

from typing import cast

from bot.commands.registry import Command, Invocation, find_command, register
from bot.domain.learnings import LearningCommand, LearningName
from bot.usecases.conversation.learn import answer_learning

#: The commands :func:`bot.usecases.conversation.learn.answer_learning` answers.
LEARNING_COMMANDS = frozenset({"learn", "learnings", "forget"})


def parse(text: str) -> Invocation:
    return Invocation(argument=text.strip())


def learning_command(body: str | None) -> LearningCommand | None:
    """The learning command a comment is, or None when it is none of the three."""
    found = find_command(body)
    if found is None or found[0].name not in LEARNING_COMMANDS:
        return None
    name = found[0].name
    return LearningCommand(cast(LearningName, name), found[1].argument)


COMMAND = register(
    Command(
        name="learn",
        usage="/learn RULE",
        summary="teaches a rule every later review follows (in a review thread: for that "
        "file only)",
        example="/learn Prefer pathlib over os.path in new code.",
        parse=parse,
        needs_model=False,
        job="conversation",
        handle=lambda run: answer_learning(run, learning_command),
        metric="learning",
        in_threads=True,
        on_closed=True,
    )
)

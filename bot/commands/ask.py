"""``/ask QUESTION``: K3 answers a question about the pull request, on the pull request.

The question is the rest of the command's line and every line after it. An ``/ask``
with nothing asked is answered with the usage, without a model call.
"""

from __future__ import annotations

from bot.commands.registry import Command, Invocation, find_command, register
from bot.usecases.conversation.ask import answer_ask


def parse(text: str) -> Invocation:
    return Invocation(argument=text.strip())


def ask_question(body: str | None) -> str | None:
    """The question of an ``/ask`` comment ("" when nothing is asked), or None when the
    comment is not ``/ask`` (the worker reads the comment again: it may have been edited)."""
    found = find_command(body)
    if found is None or found[0] is not COMMAND:
        return None
    return found[1].argument


COMMAND = register(
    Command(
        name="ask",
        usage="/ask QUESTION",
        summary="answers a question about the pull request, reading the change and the repository",
        example="/ask Why does is_adult refuse 18-year-olds now?",
        parse=parse,
        needs_model=True,
        job="conversation",
        handle=lambda run: answer_ask(run, ask_question),
        metric="ask",
    )
)

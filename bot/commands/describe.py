"""``/describe``: a suggested title and description of the pull request (what, why, how
to test, risk), posted as one comment its author can copy. GitNeural edits nothing.

Anything written after the command is ignored. The pull request's title and description
reach K3 fenced as untrusted text (the author's claims, checked against the code).
"""

from __future__ import annotations

from bot.commands.registry import Command, Invocation, register
from bot.usecases.conversation.describe import answer_describe


def parse(text: str) -> Invocation:
    return Invocation()


COMMAND = register(
    Command(
        name="describe",
        usage="/describe",
        summary="suggests a title and description (what, why, how to test, risk) to copy; "
        "edits nothing",
        example="/describe",
        parse=parse,
        needs_model=True,
        job="conversation",
        handle=answer_describe,
        in_action=True,
    )
)

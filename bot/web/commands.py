"""Parsing ``/review`` comments.

Grammar: the comment's first non-blank line is ``/review`` followed by options separated
by whitespace; later lines are free text for humans and are not read.

- ``effort=low|high|max``: the model's reasoning effort for this review;
- ``full``: review the whole pull request, not only what changed since the last review.

Options are case-insensitive. A command with an unknown, repeated or malformed option is
refused as a whole (the delivery is answered 200 with the reason, visible in the App's
delivery log) rather than run with a guess: ``/review efort=low`` must not silently become
a ``max`` review. ``/reviewer`` or ``/review-please`` are not the command.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bot.effort import EFFORTS
from bot.errors import GitNeuralError

COMMAND = "/review"


class CommandError(GitNeuralError):
    """A ``/review`` comment whose options cannot be honoured."""


@dataclass(frozen=True)
class ReviewCommand:
    effort: str | None = None
    full: bool = False


def parse_review_command(body: str | None) -> ReviewCommand | None:
    """The command in a comment body, ``None`` if the comment is not a ``/review``."""
    if not body:
        return None
    stripped = body.lstrip()
    first_line = stripped.split("\n", 1)[0]
    words = first_line.split()
    if not words or words[0].lower() != COMMAND:
        return None
    effort: str | None = None
    full = False
    seen: set[str] = set()
    for word in words[1:]:
        option = word.lower()
        name, _, value = option.partition("=")
        if name in seen:
            raise CommandError(f"option {name!r} given twice")
        seen.add(name)
        if option == "full":
            full = True
        elif name == "effort" and value in EFFORTS:
            effort = value
        elif name == "effort":
            raise CommandError(f"effort must be one of {', '.join(EFFORTS)}")
        else:
            raise CommandError(f"unknown option {_shown(name, value)} (known: effort=, full)")
    return ReviewCommand(effort=effort, full=full)


_NAME = re.compile(r"[a-z]{1,20}")


def _shown(name: str, value: str) -> str:
    # The reason ends up in a log line: name the option only when it is a plain word,
    # so a token pasted after /review is never echoed.
    if not _NAME.fullmatch(name):
        return "(not shown)"
    return f"'{name}=…'" if value else f"'{name}'"

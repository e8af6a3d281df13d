"""``/review [effort=low|high|max] [full]``: a review of the pull request, now.

Options are the words of the command's line, case-insensitive; later lines are free
text for humans and are not read.

- ``effort=low|high|max``: the model's reasoning effort for this review;
- ``full``: review the whole pull request, not only what changed since the last review.

A command with an unknown, repeated or malformed option is refused as a whole (the
delivery is answered 200 with the reason, visible in the App's delivery log) rather than
run with a guess: ``/review efort=low`` must not silently become a ``max`` review.

It becomes a :class:`~bot.jobs.ReviewJob` (trigger ``command``), run by the review job
runner: a pull request the trigger policy leaves alone (a skip label, too large) is
reviewed all the same, since someone asked.
"""

from __future__ import annotations

import re

from bot.commands.registry import Command, CommandError, Invocation, first_line, register
from bot.effort import EFFORTS

_NAME = re.compile(r"[a-z]{1,20}")


def parse(text: str) -> Invocation:
    options: dict[str, str] = {}
    for word in first_line(text).split():
        option = word.lower()
        name, _, value = option.partition("=")
        if name in options:
            raise CommandError(f"option {name!r} given twice")
        if option == "full":
            options["full"] = "yes"
        elif name == "effort" and value in EFFORTS:
            options["effort"] = value
        elif name == "effort":
            raise CommandError(f"effort must be one of {', '.join(EFFORTS)}")
        else:
            raise CommandError(f"unknown option {_shown(name, value)} (known: effort=, full)")
    return Invocation(options=options)


def _shown(name: str, value: str) -> str:
    # The reason ends up in a log line: name the option only when it is a plain word,
    # so a token pasted after /review is never echoed.
    if not _NAME.fullmatch(name):
        return "(not shown)"
    return f"'{name}=…'" if value else f"'{name}'"


COMMAND = register(
    Command(
        name="review",
        usage="/review [effort=low|high|max] [full]",
        summary="reviews the pull request now (only what changed since the last review, "
        "unless `full`), even one the trigger policy skips",
        example="/review effort=high",
        parse=parse,
        needs_model=True,
        job="review",
        metric="review",
        in_action=True,
    )
)

"""``/learn TEXT``, ``/learnings`` and ``/forget ID``: the commands' grammar, read by the
webhook (is this one of them?) and by the worker (what does it say?) alike.

As for ``/ask``: the comment's first non-blank line starts with the command (any case)
followed by whitespace or nothing. ``/learn``'s rule is the rest of that line and every
line after it; ``/forget``'s argument is the rest of the first line (``12`` or ``#12``);
``/learnings`` takes none (anything after it is ignored). ``/learned`` or ``/forgetful``
are not commands.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final, Literal

Name = Literal["learn", "learnings", "forget"]
NAMES: Final[tuple[Name, ...]] = ("learn", "learnings", "forget")

#: A rule is at most this long: it is read by the model in every later review.
MAX_RULE_CHARS: Final = 1_000

_ID = re.compile(r"#?([0-9]{1,18})")


@dataclass(frozen=True)
class LearningCommand:
    name: Name
    #: ``/learn``: the rule ("" when none is given); ``/forget``: the id as written.
    argument: str


def learning_command(body: str | None) -> LearningCommand | None:
    """The command a comment is, or None when it is none of the three."""
    stripped = (body or "").lstrip()
    first, _, rest = stripped.partition("\n")
    words = first.split(maxsplit=1)
    if not words or not words[0].startswith("/"):
        return None
    name = words[0][1:].lower()
    head = words[1] if len(words) > 1 else ""
    if name == "learn":
        return LearningCommand("learn", f"{head}\n{rest}".strip())
    if name == "learnings":
        return LearningCommand("learnings", "")
    if name == "forget":
        return LearningCommand("forget", head.strip())
    return None


def forget_id(argument: str) -> int | None:
    """The id ``/forget`` names (``12`` or ``#12``), or None when it names none."""
    found = _ID.fullmatch(argument.strip())
    return int(found.group(1)) if found else None

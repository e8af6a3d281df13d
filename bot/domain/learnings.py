"""A learning: a rule a person with write access taught GitNeural for one repository
(``/learn TEXT``), shown to K3 in the trusted instructions of every later review and
answer of that repository.

A rule taught in a review thread is scoped to the thread's file: it applies to a change
only when the change touches that path (a file, or everything under a directory).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final, Literal

#: The commands that teach, list and forget learnings (their grammar: :mod:`bot.commands`).
LearningName = Literal["learn", "learnings", "forget"]

#: A rule is at most this long: it is read by the model in every later review.
MAX_RULE_CHARS: Final = 1_000

_ID = re.compile(r"#?([0-9]{1,18})")


@dataclass(frozen=True)
class LearningCommand:
    name: LearningName
    #: ``/learn``: the rule ("" when none is given); ``/forget``: the id as written.
    argument: str


def forget_id(argument: str) -> int | None:
    """The id ``/forget`` names (``12`` or ``#12``), or None when it names none."""
    found = _ID.fullmatch(argument.strip())
    return int(found.group(1)) if found else None


@dataclass(frozen=True)
class Learning:
    #: The store's id, what ``/forget ID`` names; ids only grow.
    id: int
    text: str
    #: The path the rule is for; None: the whole repository.
    path: str | None = None
    #: Who taught it (a login, as GitHub showed it).
    author: str = ""

    def applies_to(self, paths: Iterable[str]) -> bool:
        """Whether the rule is for a change touching ``paths``."""
        if not self.path:
            return True
        scope = self.path.strip("/")
        return any(p == scope or p.startswith(f"{scope}/") for p in paths)

"""A learning: a rule a person with write access taught GitNeural for one repository
(``/learn TEXT``), shown to K3 in the trusted instructions of every later review and
answer of that repository.

A rule taught in a review thread is scoped to the thread's file: it applies to a change
only when the change touches that path (a file, or everything under a directory).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


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

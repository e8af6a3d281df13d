"""Which of a repository's learnings a prompt shows, and how.

Learnings are trusted text (taught by people with write access) and sit in the prompt's
trusted section, after the repository's instructions. They are shown oldest first, so a
new rule adds to the end and the prompt's cached prefix stays as it was. A rule scoped to
a path the change does not touch is not shown. At most :data:`MAX_LEARNINGS` rules and
:data:`MAX_LEARNINGS_CHARS` characters of rule text are shown; the ones that do not fit
are named (by id) so the review's summary can say what was left out, and the prompt says
that some were.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Final

from bot.domain.change import Change
from bot.domain.learnings import Learning
from bot.text import printable

MAX_LEARNINGS: Final = 50
MAX_LEARNINGS_CHARS: Final = 8_000
#: The caps in words, as the prompt and the review's summary say them.
LIMIT_TEXT: Final = f"{MAX_LEARNINGS} rules and {MAX_LEARNINGS_CHARS:,} characters"


@dataclass(frozen=True)
class ShownLearnings:
    """The learnings one prompt shows (rendered lines), and the ids left out by the cap."""

    lines: tuple[str, ...] = ()
    left_out: tuple[int, ...] = ()
    #: Rules for paths the change does not touch (not shown, and not "left out").
    not_applicable: int = 0
    chars: int = field(default=0, compare=False)

    def variables(self) -> dict[str, object]:
        """What the templates' ``learnings.md.j2`` renders."""
        return {
            "learnings": list(self.lines),
            "learnings_left_out": len(self.left_out),
            "learnings_limit": LIMIT_TEXT,
        }


NONE: Final = ShownLearnings()


def change_paths(change: Change) -> set[str]:
    """The paths a change touches (a renamed file's old path too)."""
    paths: set[str] = set()
    for file in change.diff.files:
        paths.add(file.path)
        if file.old_path:
            paths.add(file.old_path)
    return paths


def _line(learning: Learning, text: str) -> str:
    scope = ""
    if learning.path:
        scope = f" (only for {json.dumps(printable(learning.path), ensure_ascii=False)})"
    head = f"#{learning.id}{scope}: "
    # Continuation lines are indented: a rule's text never starts a line of the prompt
    # (no heading, no fence line of its own), and stays one item of the list.
    return head + "\n  ".join(text.splitlines())


def select_learnings(
    learnings: Iterable[Learning],
    paths: Collection[str],
    *,
    max_rules: int = MAX_LEARNINGS,
    max_chars: int = MAX_LEARNINGS_CHARS,
) -> ShownLearnings:
    """The learnings for a change touching ``paths``, oldest first, within the caps."""
    lines: list[str] = []
    left_out: list[int] = []
    skipped = 0
    used = 0
    for learning in sorted(learnings, key=lambda item: item.id):
        if not learning.applies_to(paths):
            skipped += 1
            continue
        text = printable(learning.text).strip()
        if not text:
            continue
        if len(lines) >= max_rules or used + len(text) > max_chars:
            left_out.append(learning.id)
            continue
        used += len(text)
        lines.append(_line(learning, text))
    return ShownLearnings(tuple(lines), tuple(left_out), skipped, used)


def learnings_for(learnings: Sequence[Learning], change: Change) -> ShownLearnings:
    return select_learnings(learnings, change_paths(change)) if learnings else NONE

"""GitNeural's answers to ``/learn``, ``/learnings`` and ``/forget``, and the line a
review's summary gives to learnings the prompt could not show.

A rule is a person's text: it is shown sanitised (no mention pings, no markup), on one
line, cut to :data:`RULE_SHOWN` characters in a list. Every answer ends with the marker
of the comment it answers (:func:`bot.render.conversation.answer_marker`), so a job run
twice finds it and answers once.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from bot.domain.learnings import MAX_RULE_CHARS, Learning
from bot.render.conversation import Kind, answer_marker
from bot.render.github import code_span
from bot.render.sanitize import sanitize_inline
from bot.review import LEARNINGS_LIMIT

#: Characters of a rule shown in an answer.
RULE_SHOWN: Final = 300
#: An answer listing learnings stays well within GitHub's 65,536 characters.
MAX_LIST: Final = 60_000

LEARN_USAGE: Final = (
    "Usage: `/learn RULE` on the first line of a comment, for example "
    "`/learn we use tabs in Makefiles, do not report them`; as a reply in a review "
    "thread, the rule is for that thread's file only."
)
FORGET_USAGE: Final = "Usage: `/forget ID`, with an id from `/learnings` (for example `/forget 3`)."


def _rule(learning: Learning, limit: int = RULE_SHOWN) -> str:
    scope = f" (for {code_span(learning.path)} only)" if learning.path else ""
    return f"**#{learning.id}**{scope}: {sanitize_inline(learning.text, limit=limit)}"


def answer(text: str, *, kind: Kind, to: int) -> str:
    """GitNeural's own text (its parts from users already sanitised), then the marker."""
    return f"{text}\n\n{answer_marker(kind, to)}"


def learnt_text(learning: Learning, *, over_cap: bool) -> str:
    text = (
        f"Learnt {_rule(learning)}\n\n"
        "GitNeural follows it in every later review and answer of this repository"
        f"{' that touches this path' if learning.path else ''}. "
        f"`/learnings` lists the rules; `/forget {learning.id}` removes this one."
    )
    if over_cap:
        text += (
            "\n\nThis repository has more learnings than a prompt shows: the newest are "
            "left out (each review's summary says which); `/forget` some to make room."
        )
    return text


def too_long_text(length: int) -> str:
    return (
        f"Not learnt: the rule is {length:,} characters; a learning is at most "
        f"{MAX_RULE_CHARS:,}. Say it shorter."
    )


def full_text(kept: int) -> str:
    return f"Not learnt: this repository keeps {kept} learnings already; `/forget` one first."


def listing_text(learnings: Sequence[Learning]) -> str:
    if not learnings:
        return "No learnings for this repository yet. Teach one with `/learn RULE`."
    n = len(learnings)
    head = (
        f"{n} learning{'s' if n != 1 else ''} for this repository, oldest first (a prompt "
        f"shows at most {LEARNINGS_LIMIT}; `/forget ID` removes one):"
    )
    lines = [head, ""]
    used = len(head)
    for shown, learning in enumerate(learnings):
        line = f"- {_rule(learning)} (by {code_span(learning.author or 'someone')})"
        if used + len(line) > MAX_LIST:
            lines.append(f"- … and {n - shown} more")
            break
        lines.append(line)
        used += len(line) + 1
    return "\n".join(lines)


def forgot_text(learning: Learning) -> str:
    return f"Forgot {_rule(learning)}\n\nLater reviews no longer follow it."


def forgotten_before_text(learning_id: int) -> str:
    return f"Learning #{learning_id} was forgotten already."


def unknown_text(learning_id: int) -> str:
    return f"No learning #{learning_id} in this repository (`/learnings` lists them)."

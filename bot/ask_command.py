"""``/ask QUESTION``: the command's grammar, read by the webhook (is this ``/ask``?) and by
the worker (what is asked?), so both read a comment the same way.

The comment's first non-blank line starts with ``/ask`` (any case) followed by
whitespace or nothing; the question is the rest of that line and every line after it.
``/asking`` or ``/ask-me`` are not the command.
"""

from __future__ import annotations

COMMAND = "/ask"


def ask_question(body: str | None) -> str | None:
    """The question of an ``/ask`` comment ("" when nothing is asked), or None when the
    comment is not ``/ask``."""
    stripped = (body or "").lstrip()
    first, _, rest = stripped.partition("\n")
    words = first.split(maxsplit=1)
    if not words or words[0].lower() != COMMAND:
        return None
    head = words[1] if len(words) > 1 else ""
    return f"{head}\n{rest}".strip()

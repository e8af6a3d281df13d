"""Which language a file is in, by its name: the name shown to the model, and the family
of heuristic that finds the function or class around a line (see
:mod:`bot.review.context.enclosing`), read from the one table of languages
(:mod:`bot.code.languages`)."""

from __future__ import annotations

from bot.code.languages import Family, language_of

__all__ = ["Family", "language_for"]


def language_for(path: str) -> tuple[str, Family]:
    """The language name shown to the model, and the family of the heuristic."""
    row = language_of(path)
    return ("text", "auto") if row is None else (row.name, row.family)

"""Whether an edit breaks a file's syntax, by its language's tree-sitter grammar.

tree-sitter reads every file to the end, marking what it could not read (``ERROR`` and
``MISSING`` nodes) instead of stopping. An edit breaks the syntax when the file read
clean before and does not after. A file that already had such marks (a C file whose
macros stand for statements, a grammar older than the code) is not judged: the marks
would say more about the grammar than about the edit.
"""

from __future__ import annotations

from bot.code.grammars import language_of
from bot.code.outline import parse_tree
from bot.errors import UnparsableError

__all__ = ["breaks_syntax"]


def breaks_syntax(path: str, before: bytes, after: bytes) -> bool | None:
    """``True`` when ``after`` has syntax errors ``before`` had not, ``False`` when it
    reads clean, ``None`` when there is no grammar here or ``before`` had errors (or
    either is past the parser's limits: :mod:`bot.code.limits`)."""
    language = language_of(path)
    if language is None:
        return None
    try:
        old = parse_tree(language, before)
        if old is None or old.has_error:
            return None
        new = parse_tree(language, after)
    except UnparsableError:
        return None
    return new is not None and new.has_error

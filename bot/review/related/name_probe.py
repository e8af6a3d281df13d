"""How one name is looked for in the files of a snapshot (by :mod:`bot.review.related.finder`).

A cheap test on the raw bytes first (the name must occur), then its whole-word mentions
in the text, then, line by line, whether a mention calls it or defines it.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator

import regex

from bot.review.tools.search import definition_pattern

__all__ = ["NameProbe"]


@functools.lru_cache(maxsize=1024)
def _definition_pattern(name: str) -> regex.Pattern[str]:
    # Compiling one takes about 10 ms; a worker reviewing one repository again and again
    # meets the same names.
    return definition_pattern(name)[1]


class NameProbe:
    """How one name is looked for: bytes that must occur, then words on lines.

    ``calls``: its callers are wanted (a changed name); ``definitions``: its definitions
    are (a used name). Only what is wanted is classified, so the costly definition
    pattern runs on every mention of a used name but only on the calls of a changed one.
    """

    def __init__(self, name: str, *, calls: bool = True, definitions: bool = True) -> None:
        escaped = re.escape(name)
        self.name = name
        self.calls = calls
        self.definitions = definitions
        self.needle = name.encode()
        # The look-behind is checked by hand (see ``mentions``): a pattern that starts with
        # the name is found by re's fast literal search, one with a look-behind is tried
        # at every position, thirty times slower.
        self.word = re.compile(rf"{escaped}(?![\w$])")
        # No space before "(": calls in code, not "a width (in cells)" in prose.
        self.call = re.compile(rf"(?<![\w$]){escaped}\(")
        self._definition: regex.Pattern[str] | None = None

    def mentions(self, text: str) -> Iterator[int]:
        """Offsets where the name occurs as a whole word (not inside a longer name)."""
        for match in self.word.finditer(text):
            at = match.start()
            # What ``\w`` means to re: alphanumeric (str.isalnum) or "_".
            if at == 0 or not (text[at - 1].isalnum() or text[at - 1] in "_$"):
                yield at

    @property
    def definition(self) -> regex.Pattern[str]:
        """The tools' definition pattern, compiled on first use (it takes milliseconds)."""
        if self._definition is None:
            self._definition = _definition_pattern(self.name)
        return self._definition

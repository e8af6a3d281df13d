"""Whether a Python suggestion keeps its file parseable, parsing only what is around it.

Parsing a whole module costs about a millisecond per 8 kB, and the findings check used
to do it twice per suggestion (before and after). A suggestion replaces a few lines, so
this parses only the run of whole statements that holds them, before and after.

The run is cut at **definition lines**: ``def``, ``async def`` or ``class`` at the start
of a line (after spaces only), outside triple-quoted strings and not continuing a line
that ends with a backslash. In a file that parses, such a line always starts a statement
(a definition cannot stand inside brackets), so the lines between two definitions of one
block are whole statements of that block. Decorators, comments and blank lines just above
a definition go with it. The run is the one between the definitions around the changed
lines, entered into a class (or function) when the lines lie between its own nested
definitions; it is dedented and parsed as a module of its own.

If that run parses before and after the replacement, and the replacement leaves it
starting with a definition when it did (a multi-line decorator above it may be waiting
for one), the whole file parses after if it did before: replacing whole statements of a
block by others at the same indentation changes nothing around them. Anything else
(small files, no usable cut, tabs or shallower lines in the run, a run that does not
parse) answers "unknown" and the caller parses the whole file as before.
"""

from __future__ import annotations

import ast
import bisect
import re

from bot.review.context.python_units import inside_strings

__all__ = ["parses_locally"]

#: Below this many lines the whole file is parsed: cutting would not pay.
_SMALL_FILE_LINES = 150
_DEFINITION = re.compile(r"^( *)(?:async[ \t]+def|def|class)[ \t]", re.MULTILINE)
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


class _Cuts:
    """The definition lines of one file, and where the blocks holding them end."""

    def __init__(self, text: str, lines: list[str]) -> None:
        self.lines = lines
        self.in_string = inside_strings(lines)
        #: ``(first line of the unit, indentation)`` of each definition, 0-based, in order.
        self.cuts: list[tuple[int, int]] = []
        line, counted = 0, 0
        for match in _DEFINITION.finditer(text):
            line += text.count("\n", counted, match.start())
            counted = match.start()
            if not self.in_string[line] and not self._continued(line):
                self.cuts.append((self._unit_start(line, len(match.group(1))), len(match[1])))

    def _continued(self, line: int) -> bool:
        return line > 0 and self.lines[line - 1].endswith("\\")

    def _unit_start(self, line: int, indent: int) -> int:
        """Decorators at the definition's indentation, comments and blank lines above it
        belong to it."""
        while line > 0 and not self.in_string[line - 1]:
            above = self.lines[line - 1]
            code = above.lstrip(" ")
            decorator = code.startswith("@") and len(above) - len(code) == indent
            if code and not code.startswith("#") and not decorator:
                break
            line -= 1
        return line

    def _block_end(self, after: int, stop: int, indent: int) -> int:
        """The first line from ``after`` on (before ``stop``) that leaves a block at
        ``indent``: code indented less, outside strings and continuations."""
        for i in range(after, stop):
            line = self.lines[i]
            code = line.lstrip(" \t")
            if (
                code
                and not code.startswith("#")
                and len(line) - len(code) < indent
                and not self.in_string[i]
                and not self._continued(i)
            ):
                return i
        return stop

    def region(self, first: int, last: int) -> tuple[int, int, int]:
        """``(start, stop, indentation)`` of the run of whole statements of one block that
        holds lines ``first..last`` (0-based, inclusive; ``stop`` exclusive)."""
        start, stop, indent, level = 0, len(self.lines), 0, 0
        while True:
            bounds = [c for c, i in self.cuts if i == level and start <= c < stop]
            k = bisect.bisect_right(bounds, first) - 1
            if k < 0 and level > indent:
                return start, stop, indent  # in the block's head, before its definitions
            new_start = bounds[k] if k >= 0 else start
            after = bisect.bisect_right(bounds, last)
            if after < len(bounds):
                new_stop = bounds[after]
            elif level > indent:
                new_stop = self._block_end(bounds[-1] + 1, stop, level)
            else:
                new_stop = stop
            if last >= new_stop:
                return start, stop, indent
            start, stop, indent = new_start, new_stop, level
            deeper = [i for c, i in self.cuts if start < c < stop and i > level]
            if not deeper:
                return start, stop, indent
            level = min(deeper)


def _dedented(lines: list[str], indent: int) -> str | None:
    """The lines without their first ``indent`` spaces; None if one has fewer, or if tabs
    or form feeds indent one (their width depends on the column they start at)."""
    out = []
    for line in lines:
        text = line.rstrip("\r\n")
        if indent:
            code = text.lstrip(" \t\f")
            if "\t" in text[: len(text) - len(code)] or "\f" in text[: len(text) - len(code)]:
                return None
            if not code:
                text = ""
            elif text.startswith(" " * indent):
                text = text[indent:]
            else:
                return None
        out.append(text)
    return "\n".join(out) + "\n"


def _parse(text: str | None) -> ast.Module | None:
    if text is None:
        return None
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def parses_locally(text: str, lines: list[str], start: int, end: int, new: list[str]) -> bool:
    """True when replacing lines ``start..end`` (1-based) of ``text`` by ``new`` (lines
    with their endings) certainly keeps the file parseable if it parsed before; False
    when that is unknown. ``lines`` are ``text``'s lines with their endings."""
    if len(lines) < _SMALL_FILE_LINES:
        return False
    cuts = _Cuts(text, [line.rstrip("\r\n") for line in lines])
    if not cuts.cuts:
        return False
    first, stop, indent = cuts.region(start - 1, end - 1)
    before = _parse(_dedented(lines[first:stop], indent))
    if before is None or not before.body:
        return False
    after = _parse(_dedented([*lines[first : start - 1], *new, *lines[end:stop]], indent))
    if after is None or not after.body:
        return False
    return not isinstance(before.body[0], _DEFINITIONS) or isinstance(after.body[0], _DEFINITIONS)

"""The ``search`` tool's pattern, compiled within bounds.

The pattern is a tool argument, so a prompt injection can choose it. The ``regex``
package's ``timeout=`` bounds matching, not compiling: ``(?:x{10000}){10000}`` (20
characters) expands to 10^8 nodes and grew to 5.7 GB before a ``MemoryError``. So a regex
is parsed first with the standard library's parser (cheap: it builds a small tree and
expands nothing) and its size once compiled is estimated from the tree, repeat counts
multiplied along their nesting; a pattern over the bound is refused with a message the
model can act on. Only then does ``regex`` compile it. Syntax the standard parser does
not know (``\\p{L}``, fuzzy matching) is refused the same way: Python ``re`` syntax is
what the tool's description promises.
"""

from __future__ import annotations

import importlib
import re
from typing import Any

import regex

from bot.review.tools.paths import ToolError, shown

#: Longer patterns are refused: a real search is a few dozen characters.
MAX_PATTERN_CHARS = 1000
#: Nodes a compiled regex may have (``x{60000}`` compiles in about 0.1 s and 15 MB).
MAX_COMPILED_NODES = 20_000
#: The standard library's regex parser (``sre_parse``, deprecated under that name; the
#: stubs do not describe it).
sre_parse: Any = importlib.import_module("re._parser")
_REPEATS = {"MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"}


def _nodes(tree: Any) -> int:
    """An upper estimate of the compiled size of a parsed (sub)pattern."""
    total = 0
    for op, arg in tree:
        name = str(op)
        if name in _REPEATS:
            low, high, sub = arg
            count = low if high == sre_parse.MAXREPEAT else max(low, high)
            total += max(count, 1) * _nodes(sub)
        elif name == "SUBPATTERN":
            total += _nodes(arg[3])
        elif name in ("ATOMIC_GROUP",):
            total += _nodes(arg)
        elif name in ("ASSERT", "ASSERT_NOT"):
            total += _nodes(arg[1])
        elif name == "BRANCH":
            total += sum(_nodes(branch) for branch in arg[1])
        elif name == "GROUPREF_EXISTS":
            total += _nodes(arg[1]) + (_nodes(arg[2]) if arg[2] is not None else 0)
        else:
            total += 1
        if total > MAX_COMPILED_NODES:
            # Stop early: a bomb's estimate is itself a big product.
            return total
    return total


def _check_size(pattern: str) -> None:
    try:
        tree = sre_parse.parse(pattern, re.MULTILINE)
    except re.error as exc:
        raise ToolError(
            f"invalid regex {shown(pattern)}: {exc} (use Python re syntax, or regex=false "
            "for a literal search)"
        ) from None
    if _nodes(tree) > MAX_COMPILED_NODES:
        raise ToolError(
            f"regex {shown(pattern)} is too large once compiled (its repeat counts multiply "
            f"past {MAX_COMPILED_NODES:,}); use smaller counts such as {{1,100}} or + and *"
        )


def compile_search(pattern: str, is_regex: bool) -> regex.Pattern[str]:
    """``pattern`` compiled for a search (literal unless ``is_regex``), or a ToolError."""
    if not pattern:
        raise ToolError("the search pattern is empty")
    if "\n" in pattern:
        raise ToolError("search matches within one line: the pattern cannot contain a newline")
    if len(pattern) > MAX_PATTERN_CHARS:
        raise ToolError(
            f"the search pattern is {len(pattern):,} characters; use at most {MAX_PATTERN_CHARS:,}"
        )
    if not is_regex:
        return regex.compile(regex.escape(pattern))
    try:
        _check_size(pattern)
        return regex.compile(pattern, regex.MULTILINE)
    except (regex.error, OverflowError, RecursionError, MemoryError) as exc:
        raise ToolError(f"invalid regex {shown(pattern)}: {type(exc).__name__}: {exc}") from None

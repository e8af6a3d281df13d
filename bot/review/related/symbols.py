"""Names a change is about: what it defines or edits, and what its added lines use.

The names are looked up by :mod:`bot.review.related.finder`: callers of the changed ones,
definitions of the used ones. They are read from the (redacted) diff with patterns that
cover the common languages; keywords, builtins and the methods of built-in containers
are left out, since their definitions would only be noise.
"""

from __future__ import annotations

import builtins
import keyword
import re

from bot.code.index import SymbolIndex
from bot.domain.change import Snapshot
from bot.domain.diff import FileDiff
from bot.errors import UnparsableError
from bot.review.context.enclosing import enclosing_ranges
from bot.review.tools.search import is_binary
from bot.text import decode_text

__all__ = ["add_name", "changed_names", "units_touched", "used_names"]

_IDENT = r"[A-Za-z_$][\w$]*"
# A definition on a changed line, in the common languages (the name is group 1).
_DEF_LINE = re.compile(
    r"\s*(?:(?:export|default|public|private|protected|internal|static|abstract|final"
    r"|async|pub(?:\([^)]*\))?|unsafe|override|virtual|inline|extern)\s+)*"
    r"(?:def|class|function\*?|func|fn|fun|sub|struct|interface|enum|trait|type|record)"
    rf"\s+(?:\([^)]*\)\s*)?(?:{_IDENT}(?:\.|::))?({_IDENT})"
)
_ARROW = re.compile(
    rf"\s*(?:export\s+)?(?:const|let|var)\s+({_IDENT})\s*=\s*(?:async\s*)?"
    rf"(?:function\b|\([^)]*\)\s*(?::[^=]*)?=>|{_IDENT}\s*=>)"
)
_CALL = re.compile(rf"(?<![\w$])({_IDENT})\s*\(")
_TYPE = re.compile(r"(?<![\w$])([A-Z][A-Za-z0-9_]*[a-z][A-Za-z0-9_]*)(?![\w$])")

_OTHER_KEYWORDS = """if for while switch case return catch function new typeof sizeof super this
        self cls func fn let var const void static public private protected throw throws
        try else elif then end begin require include import export default extends
        implements instanceof delete await async yield struct enum impl match where
        println printf sprintf fprintf malloc free memcpy strlen make append panic
        String Object Array Map Set Promise Error Exception Optional List Dict Any
        Result Some None Ok Err Vec Box Self TODO FIXME NOTE"""

# Names whose definitions would be noise: keywords of the common languages, Python's
# builtins, and the methods of built-in containers (``append``, ``get``, ``items`` …).
_COMMON = frozenset(
    {
        *keyword.kwlist,
        *dir(builtins),
        *(n for t in (str, bytes, list, dict, set, tuple, int, float) for n in dir(t)),
        *_OTHER_KEYWORDS.split(),
    }
)

_MIN_NAME = 3


def _definition_name(text: str) -> str | None:
    found = _DEF_LINE.match(text) or _ARROW.match(text)
    return found.group(1) if found else None


def add_name(names: list[str], seen: set[str], name: str | None) -> None:
    if name and name not in seen and len(name) >= _MIN_NAME and name not in _COMMON:
        seen.add(name)
        names.append(name)


def changed_names(file: FileDiff, head: Snapshot | None) -> list[str]:
    """Functions and classes the change defines, edits or removes, in diff order."""
    names: list[str] = []
    seen: set[str] = set()
    for hunk in file.hunks:
        for line in hunk.lines:
            if line.kind != " ":
                add_name(names, seen, _definition_name(line.text))
    data = head.read(file.path) if head is not None else None
    if data is not None and len(data) <= 1_000_000 and not is_binary(data):
        try:
            ranges = enclosing_ranges(file.path, decode_text(data), file.touched_lines)
        except UnparsableError:
            ranges = []  # the file's context says so; its diff still names what changed
        for _, _, header in ranges:
            add_name(names, seen, _definition_name(header))
    return names


def used_names(file: FileDiff) -> list[str]:
    """Functions called and types named on added lines, most used first."""
    counts: dict[str, int] = {}
    for hunk in file.hunks:
        for line in hunk.lines:
            if line.kind != "+":
                continue
            defined = _definition_name(line.text)
            for pattern in (_CALL, _TYPE):
                for match in pattern.finditer(line.text):
                    if match.group(1) != defined:
                        counts[match.group(1)] = counts.get(match.group(1), 0) + 1
    ordered = sorted(counts, key=lambda n: -counts[n])  # stable: ties keep diff order
    names: list[str] = []
    seen: set[str] = set()
    for name in ordered:
        add_name(names, seen, name)
    return names


def units_touched(file: FileDiff, index: SymbolIndex) -> list[str]:
    """The innermost unit (not a closure) around each added line, from the index: what
    the change edits, as the parser sees it, in line order."""
    entry = index.files.get(file.path)
    if entry is None:
        return []
    units = [(s, e, n) for n, kind, _, s, e in entry.definitions if kind != "closure"]
    names: list[str] = []
    for line in sorted(file.added_lines):
        around = [(e - s, n) for s, e, n in units if s <= line <= e]
        if around and min(around)[1] not in names:
            names.append(min(around)[1])
    return names

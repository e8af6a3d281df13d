"""The function or class around a changed line, so the model sees whole units of code.

Python is parsed with :mod:`ast` (see :mod:`bot.review.context.python_units`): the innermost
``def``/``class`` containing the line (decorators included); a module-level line has no
enclosing unit. The other languages with a tree-sitter grammar installed (the
``parsers`` extra: Go, Java, TypeScript, Rust, C, Ruby … see :mod:`bot.code.grammars`),
and Python that ``ast`` cannot read, get the innermost unit of their syntax tree
(:func:`bot.code.outline.outline`).

Any other file, or every file without the extra, gets a heuristic. Scanning backwards
from the line (at most ``_MAX_SCAN`` lines), a line is a candidate header when it is
indented no deeper than the changed line and looks like a definition: a definition
keyword after optional modifiers (``function``, ``func``, ``fn``, ``def``, ``class``,
``struct``, ``impl``, ``interface``, ``type T struct`` …),
a C/Java-style signature (``int main(void)``, ``public Foo bar(…)``, but not ``if (…)``),
or a JavaScript function assigned to a name (``const f = async (x) => {``). Its end is
found forwards (at most ``_MAX_BLOCK`` lines):

- brace languages: the ``{`` opened by the header (before any ``;``) and its matching
  ``}``, counted on lines stripped of string literals and comments;
- indentation languages (Python without a valid parse, Ruby, Lua, Elixir …): the
  header's bracketed continuation lines, then every line indented deeper, then a closing
  ``end``/``}`` at the header's indentation.

The first candidate whose block contains the line is the innermost one. Attribute lines
just above a header (``@decorator``, ``#[derive]``) belong to it. Data and markup files
(JSON, YAML, Markdown …) have no enclosing units. A unit longer than ``max_lines`` is cut
to its first ``_HEAD_LINES`` lines (signature and docstring): the hunk itself is in the
diff already, and a 2,000-line function would eat the token budget.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from bot.code.grammars import available, language_of
from bot.code.outline import Outline, outline
from bot.review.context.languages import Family, language_for
from bot.review.context.python_units import python_units
from bot.text import printable

MAX_RANGE_LINES = 200
_HEAD_LINES = 15
_MAX_SCAN = 1500
_MAX_BLOCK = 3000
_HEADER_SPAN = 8

_MODIFIERS = (
    r"(?:(?:export|default|public|private|protected|internal|static|final|abstract|sealed"
    r"|async|override|virtual|inline|extern|unsafe|const|open|data|suspend|partial|declare"
    r"|local|fileprivate|mutating|synchronized|pub(?:\([\w:\s]*\))?)\s+)*"
)
_KEYWORDS = (
    r"(?:function|func|fn|fun|def|defp|defmodule|defmacro|class|struct|enum|interface"
    r"|trait|impl|namespace|module|object|record|union|protocol|extension"
    r"|type\s+\w+(?:\[[^\]]*\])?\s+(?:struct|interface))\b"
)
_KEYWORD_HEADER = re.compile(rf"^\s*{_MODIFIERS}{_KEYWORDS}")
_CONTROL = (
    r"(?:if|else|elif|for|foreach|while|switch|catch|do|try|return|throw|new|case|using"
    r"|lock|await|yield|sizeof|typeof|delete|when|match|with|assert|print|echo)\b"
)
_SIGNATURE = re.compile(rf"^\s*(?!{_CONTROL})[A-Za-z_$~][\w$<>\[\],.:*&~?\s]*\(")
_ASSIGNED_FUNCTION = re.compile(
    r"^\s*(?:export\s+)?(?:(?:const|let|var|readonly|static|public|private)\s+)*[\w$.]+"
    r"\s*(?::[^=]*)?[:=]\s*(?:async\s*)?(?:function\b|\([^)]*\)\s*(?::[^=]+)?=>|[\w$]+\s*=>)"
)
_CONTINUATION = re.compile(
    r"^(?:(?:where|throws|extends|implements|const|noexcept|override|requires)\b|->|:)"
)
#: A C return type on its own line above the name ("static int\nadd(int a)").
_TYPE_LINE = re.compile(r"^\s*[A-Za-z_][\w\s*&:<>,]*$")
_ATTRIBUTE = re.compile(r"^\s*(?:@\w|#\[)")
_CLOSER = re.compile(r"^\s*(?:end\b|[}\])])")
_STRINGS = re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'|`(?:\\.|[^`\\])*`')


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def _is_header(line: str, family: Family) -> bool:
    if _KEYWORD_HEADER.match(line):
        return True
    # In indentation languages a call looks like a signature and has no brace to refute it.
    return family != "indent" and bool(_SIGNATURE.match(line) or _ASSIGNED_FUNCTION.match(line))


class _Scanner:
    """The heuristic over one file; block ends are memoised per header line."""

    def __init__(self, lines: list[str], family: Family) -> None:
        self.lines = lines
        self.family = family
        self._code: list[str] | None = None
        self._ends: dict[int, int | None] = {}
        self._headers: dict[int, bool] = {}

    @property
    def code(self) -> list[str]:
        """Lines without string literals and comments (only braces matter here)."""
        if self._code is None:
            out: list[str] = []
            in_comment = False
            for line in self.lines:
                text = _STRINGS.sub('""', line)
                if in_comment:
                    close = text.find("*/")
                    text = "" if close < 0 else text[close + 2 :]
                    in_comment = close < 0
                text = re.sub(r"/\*.*?\*/", "", text)
                start = text.find("/*")
                if start >= 0:
                    text, in_comment = text[:start], True
                out.append(text.split("//", 1)[0])
            self._code = out
        return self._code

    def _brace_end(self, j: int) -> int | None:
        """The line of the ``}`` closing the block the header at ``j`` opens."""
        code = self.code
        parens = 0
        continues = False
        for k in range(j, min(len(code), j + _HEADER_SPAN)):
            text = code[k]
            stripped = text.strip()
            # After a complete line, only a signature's continuation may precede the "{":
            # otherwise "fmt.Println(x)" would adopt the next "if x {" as its body.
            opens = stripped.startswith("{") or _CONTINUATION.match(stripped)
            if k > j and parens <= 0 and not continues and not opens:
                return None
            for col, ch in enumerate(text):
                if ch in "([":
                    parens += 1
                elif ch in ")]":
                    parens -= 1
                elif ch == ";" and parens <= 0:
                    return None  # a declaration without a body
                elif ch == "{" and parens <= 0:
                    return self._matching(k, col)
            continues = stripped.endswith((",", "->", "=>", "where"))
        return None

    def _matching(self, k: int, col: int) -> int | None:
        depth = 0
        for m in range(k, min(len(self.code), k + _MAX_BLOCK)):
            for ch in self.code[m][col:] if m == k else self.code[m]:
                if ch == "{":
                    depth += 1
                elif ch == "}":
                    depth -= 1
                    if depth == 0:
                        return m
        return None

    def _indent_end(self, j: int) -> int | None:
        lines = self.lines
        base = _indent(lines[j])
        k, depth = j, 0
        # Bracketed continuation lines belong to the header ("def f(\n  a,\n) -> int:").
        while k < len(lines) and k - j < _HEADER_SPAN:
            depth += sum(lines[k].count(c) for c in "([{") - sum(lines[k].count(c) for c in ")]}")
            if depth <= 0:
                break
            k += 1
        end = k
        for m in range(k + 1, min(len(lines), j + _MAX_BLOCK)):
            if not lines[m].strip():
                continue
            if _indent(lines[m]) > base:
                end = m
                continue
            if _CLOSER.match(lines[m]) and _indent(lines[m]) == base:
                end = m
            break
        return end

    def block_end(self, j: int) -> int | None:
        if j not in self._ends:
            family = self.family
            if family == "auto":
                region = "".join(self.code[j : j + 3])
                family = "brace" if "{" in region.split(";", 1)[0] else "indent"
            self._ends[j] = self._brace_end(j) if family == "brace" else self._indent_end(j)
        return self._ends[j]

    def is_header(self, j: int) -> bool:
        if j not in self._headers:
            self._headers[j] = _is_header(self.lines[j], self.family)
        return self._headers[j]

    def enclosing(self, i: int) -> tuple[int, int, int] | None:
        """0-based ``(start, end, header)`` of the innermost unit containing line ``i``."""
        lines = self.lines
        limit = _indent(lines[i]) if lines[i].strip() else 1 << 30
        for j in range(i, max(-1, i - _MAX_SCAN), -1):
            line = lines[j]
            if not line.strip() or _indent(line) > limit or not self.is_header(j):
                continue
            end = self.block_end(j)
            if end is not None and end >= i:
                start = j
                while start > 0 and _ATTRIBUTE.match(lines[start - 1]):
                    start -= 1
                above = lines[start - 1] if start > 0 else ""
                if (
                    self.family == "brace"
                    and _TYPE_LINE.match(above)
                    and _indent(above) == _indent(lines[j])
                    and not self.is_header(start - 1)
                ):
                    start -= 1
                return start, end, j
        return None


def heuristic_units(path: str) -> bool:
    """Whether the units around a change in ``path`` come from the heuristic: a code file
    no parser reads here (no grammar for its language, or the ``parsers`` extra is not
    installed). Python is read by :mod:`ast` either way; data and markup files have no
    units at all."""
    _, family = language_for(path)
    if family in ("none", "python"):
        return False
    language = language_of(path)
    return language is None or not available(language)


def unit_name(line: str) -> str:
    """How a unit is named: its header line, stripped and cut at 80 characters."""
    text = line.strip()
    return text if len(text) <= 80 else text[:77] + "..."


def enclosing_ranges(
    path: str, source: str, lines: Iterable[int], *, max_lines: int = MAX_RANGE_LINES
) -> list[tuple[int, int, str]]:
    """1-based ``(start, end, header)`` of the innermost unit around each line, sorted.

    Lines outside the file or outside any unit contribute nothing. Raises
    :class:`bot.errors.UnparsableError` for a file its parser will not or could not read
    (see :mod:`bot.code.limits`).
    """
    # Only "\n" ends a line for git; str.splitlines() would also split on \f, \x1c …
    src_lines = [ln.removesuffix("\r") for ln in printable(source).split("\n")]
    units = enclosing_units(path, src_lines, lines, max_lines=max_lines)
    return sorted({(start, end, unit_name(src_lines[header - 1])) for start, end, header in units})


def _outline(path: str, src_lines: list[str]) -> Outline | None:
    """The file's syntax tree's units, where a grammar reads its language."""
    try:
        data = "\n".join(src_lines).encode("utf-8", "replace")
    except UnicodeError:
        return None
    return outline(path, data)


def enclosing_units(
    path: str, src_lines: list[str], lines: Iterable[int], *, max_lines: int = MAX_RANGE_LINES
) -> list[tuple[int, int, int]]:
    """1-based ``(start, end, header line)`` of the innermost unit around each line, sorted.

    ``src_lines`` are the file's printable lines without their endings (as
    :func:`enclosing_ranges` splits them); the header line is the one naming the unit.
    """
    wanted = sorted({n for n in lines if 1 <= n <= len(src_lines)})
    _, family = language_for(path)
    if not wanted or family == "none":
        return []
    found: set[tuple[int, int, int]] = set()
    units = python_units(src_lines, wanted) if family == "python" else None
    parsed = None if units is not None else _outline(path, src_lines)
    scanner = _Scanner(src_lines, "indent" if family == "python" else family)
    if parsed is not None:
        for n in wanted:
            unit = parsed.innermost(n)
            best = None if unit is None else (unit.start, unit.end, unit.line)
            if parsed.has_errors:
                # Where the parser lost its way (C macros standing for statements, an
                # #ifdef cutting a function in two, functions run together) the
                # heuristic may still see the unit, or a smaller one inside.
                hit = scanner.enclosing(n - 1)
                if hit is not None and (
                    best is None or (best[0] <= hit[0] + 1 and hit[1] + 1 <= best[1])
                ):
                    best = (hit[0] + 1, hit[1] + 1, hit[2] + 1)
            if best is not None:
                found.add(best)
    elif units is not None:
        for n in wanted:
            inside = [u for u in units if u[0] <= n <= u[1]]
            if inside:
                found.add(min(inside, key=lambda u: u[1] - u[0]))
    else:
        for n in wanted:
            hit = scanner.enclosing(n - 1)
            if hit is not None:
                found.add((hit[0] + 1, hit[1] + 1, hit[2] + 1))
    result = set()
    for start, end, header in found:
        if end - start + 1 > max_lines:
            end = min(end, max(header, start + _HEAD_LINES - 1))
        result.add((start, end, header))
    return sorted(result)

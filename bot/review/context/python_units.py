"""Python definitions around changed lines, found with :mod:`ast` but without parsing the
whole file.

Parsing is most of the cost of context on a large change (a 20 kB module takes about
4 ms), and a change touches few of a file's statements. So the file is cut into its
statements at one indentation level (decorators stay with their definition); a large
``def``/``class`` is recorded as a unit and cut again at its body's level, and every
other touched statement is dedented and parsed on its own. A cut that falls in the wrong
place (text at a shallower indentation inside a multi-line string) does not parse; then
:func:`python_units` parses the whole file, as it also does for a small one.
"""

from __future__ import annotations

import ast
import bisect
import re

from bot.errors import UnparsableError

Unit = tuple[int, int, int]

_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
#: Fields holding statement lists: definitions can only be found there, so expressions
#: (most of a syntax tree) are never visited.
_BODIES = ("body", "orelse", "finalbody", "handlers", "cases")
#: A statement starts with code, not a comment or the closing bracket of a signature.
_STATEMENT = re.compile(r"[^\s#)\]}]")
_DEFINITION = re.compile(r"(?:async\s+def|def|class)\s")
#: Only compound statements can hold a definition; a simple one (an assignment of a
#: 8,000-line table, say) is never parsed.
_COMPOUND = re.compile(r"(?:if|for|while|try|with|match|async|def|class)\b")
_STRINGS = re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'')
#: A backslash ending a line: the next line continues it.
_CONTINUATION = re.compile(r"\\\n")
_TOKENS = re.compile(r'"""|\'\'\'|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|#')
#: Clauses that continue the statement above them at the same indentation.
_CLAUSE = re.compile(r"(?:else|elif|except|finally)\b")
#: Definitions longer than this are cut instead of parsed whole.
_SPLIT_LINES = 30
_MAX_HEADER_LINES = 50
#: Files shorter than this are parsed whole: cutting would not pay.
_SMALL_FILE_LINES = 40


def parse_units(source: str, offset: int = 0) -> list[Unit] | None:
    """``(start, end, header)`` 1-based of every def/class; None if it does not parse.

    Raises :class:`UnparsableError` when the parser gave up on the code's depth (3,000
    nested ``lambda:`` make ``ast.parse`` raise ``MemoryError``, deep brackets
    ``RecursionError``): no other parser is asked to try, the file gets no context."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    except (MemoryError, RecursionError) as error:
        raise UnparsableError("nested too deeply for Python's parser") from error
    units = []
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, _DEFINITIONS):
            start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            end = node.end_lineno or node.lineno
            units.append((start + offset, end + offset, node.lineno + offset))
        for name in _BODIES:
            children = getattr(node, name, None)
            if isinstance(children, list):
                stack.extend(children)
    return units


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def _is_code(line: str) -> bool:
    stripped = line.lstrip(" \t")
    return bool(stripped) and not stripped.startswith("#")


def _string_state(line: str, quote: str) -> str:
    """The triple quote open at the end of ``line`` ("" if none), given the one open at
    its start."""
    pos = 0
    while True:
        if quote:
            close = line.find(quote, pos)
            if close < 0:
                return quote
            pos, quote = close + 3, ""
            continue
        match = _TOKENS.search(line, pos)
        if match is None or match.group() == "#":
            return quote
        if match.group() in ('"""', "'''"):
            quote = match.group()
        pos = match.end()


def _string_spans(lines: list[str]) -> list[tuple[int, int]]:
    """``[first, stop)`` runs of lines that start inside a triple-quoted string."""
    spans: list[tuple[int, int]] = []
    quote = ""
    done = 0  # lines before this one are accounted for
    # Only a line holding a triple quote can change the state.
    for line in [i for i, text in enumerate(lines) if '"""' in text or "'''" in text]:
        if quote:
            spans.append((done, line + 1))
        quote = _string_state(lines[line], quote)
        done = line + 1
    if quote and done < len(lines):
        spans.append((done, len(lines)))
    return spans


def inside_strings(lines: list[str]) -> list[bool]:
    """For each line, whether it starts inside a triple-quoted string."""
    inside = [False] * len(lines)
    for first, stop in _string_spans(lines):
        inside[first:stop] = [True] * (stop - first)
    return inside


class _Cutter:
    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        text = "\n".join(lines)
        spans = _string_spans(lines)
        self.in_string = [False] * len(lines)
        self.units: list[Unit] = []
        # A line after a backslash continues the statement, whatever its indentation.
        self.continued = [False] * len(lines)
        continued: list[int] = []
        line, counted = 0, 0
        for match in _CONTINUATION.finditer(text):
            line += text.count("\n", counted, match.start())
            counted = match.start()
            continued.append(line + 1)
        # Indentation of each line that may start a statement; -1 for blank lines,
        # comments, string text and continuation lines. Built whole-list at a time: this
        # runs over every line of every large file of a change.
        self.depth = [
            len(ln) - len(code) if code and code[0] != "#" else -1
            for ln in lines
            for code in (ln.lstrip(" \t"),)
        ]
        for first, stop in spans:
            self.in_string[first:stop] = [True] * (stop - first)
            self.depth[first:stop] = [-1] * (stop - first)
        for i in continued:
            self.continued[i] = True
            self.depth[i] = -1

    def starts(self, first: int, last: int, indent: int) -> list[int] | None:
        """Statement starts at ``indent`` in ``[first, last)``; None if the code is odd."""
        starts: list[int] = []
        after_decorator = False
        for i, depth in enumerate(self.depth[first:last], first):
            if depth < 0 or depth > indent:
                continue
            if depth < indent:
                return None  # odd code: let the whole file be parsed
            code = self.lines[i][depth:]
            if _STATEMENT.match(code) and not _CLAUSE.match(code):
                if not after_decorator:
                    starts.append(i)
                after_decorator = code[0] == "@"
        return starts

    def header_end(self, i: int, last: int) -> int | None:
        """The line ending the signature that starts at ``i`` with ``:``."""
        depth = 0
        for k in range(i, min(last, i + _MAX_HEADER_LINES)):
            code = _STRINGS.sub('""', self.lines[k]).split("#", 1)[0]
            depth += sum(map(code.count, "([{")) - sum(map(code.count, ")]}"))
            if depth <= 0:
                return k if code.rstrip().endswith(":") else None
        return None

    def parse(self, first: int, last: int, indent: int) -> bool:
        text: list[str] = []
        for i in range(first, last):
            line = self.lines[i]
            if not line[:indent].strip(" \t"):
                text.append(line[indent:])
            elif self.in_string[i] or self.continued[i]:
                text.append(line.lstrip(" \t"))  # only the string's text changes
            elif _is_code(line):
                return False
            else:
                text.append("")  # a comment at a shallower indentation
        found = parse_units("\n".join(text), first)
        if found is None:
            return False
        self.units.extend(found)
        return True

    def collect(self, first: int, last: int, indent: int, wanted: list[int]) -> bool:
        starts = self.starts(first, last, indent)
        if starts is None:
            return False
        done: set[int] = set()
        for n in wanted:
            k = bisect.bisect_right(starts, n) - 1
            if k < 0 or k in done:
                continue
            done.add(k)
            start = starts[k]
            end = starts[k + 1] if k + 1 < len(starts) else last
            if not self.statement(start, end, indent, [w for w in wanted if start <= w < end]):
                return False
        return True

    def statement(self, start: int, end: int, indent: int, wanted: list[int]) -> bool:
        header = start
        while header < end and self.lines[header][indent:].startswith("@"):
            header += 1
        if header == start and not _COMPOUND.match(self.lines[start][indent:]):
            return True
        if header == end:
            return self.parse(start, end, indent)
        if end - start <= _SPLIT_LINES or not _DEFINITION.match(self.lines[header][indent:]):
            return self.parse(start, end, indent)
        signature_end = self.header_end(header, end)
        if signature_end is None:
            return self.parse(start, end, indent)
        first = next((i for i in range(signature_end + 1, end) if self.is_code(i)), None)
        if first is None:
            return self.parse(start, end, indent)
        if _indent(self.lines[first]) <= indent:
            return False
        # The unit ends at its last line of code, string text or continuation.
        last = max(
            i
            for i in range(first, end)
            if self.is_code(i)
            or ((self.in_string[i] or self.continued[i]) and self.lines[i].strip())
        )
        self.units.append((start + 1, last + 1, header + 1))
        inner = [w for w in wanted if w > signature_end]
        return self.collect(signature_end + 1, last + 1, _indent(self.lines[first]), inner)

    def is_code(self, i: int) -> bool:
        return self.depth[i] >= 0


def python_units(lines: list[str], wanted: list[int]) -> list[Unit] | None:
    """Units containing the ``wanted`` 1-based lines (and maybe others); None if the file
    does not parse."""
    if len(lines) >= _SMALL_FILE_LINES:
        cutter = _Cutter(lines)
        if cutter.collect(0, len(lines), 0, sorted({n - 1 for n in wanted})):
            return cutter.units
    return parse_units("\n".join(lines))

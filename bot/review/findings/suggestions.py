"""Suggestions: applying a replacement to a file, and deciding whether to keep one.

A suggestion is the exact replacement text for lines ``start..end`` of the new file, as
GitHub applies a ```suggestion block: the block's lines replace the range's lines. One
trailing newline in the replacement is not an extra empty line (models often add one),
and an empty replacement deletes the lines.

A suggestion is only worth showing when applying it can be trusted: it must apply to the
head content, change something, and not break the file. "Not break" is, for Python, that
the statements around the replaced lines parse before and after (see
:mod:`bot.review.findings.python_syntax`), or else ``ast.parse`` of the whole new file (when the
old file parsed); for the other languages a tree-sitter grammar reads (the ``parsers``
extra: Go, Java, TypeScript, Rust …), that the whole new file reads without syntax errors
when the old one did (:func:`bot.code.syntax.breaks_syntax`); elsewhere an unchanged
bracket balance of the replaced region (strings and comments skipped roughly).
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

from bot.code import languages
from bot.code.grammars import language_of
from bot.code.syntax import breaks_syntax
from bot.errors import GitNeuralError
from bot.review.findings.python_syntax import parses_locally
from bot.review.findings.side_text import split_lines
from bot.text import encode_text

_PYTHON = (".py", ".pyi")
_OPEN = "([{"
_CLOSE = ")]}"


class SuggestionError(GitNeuralError):
    """A suggestion that cannot be applied to the file it is meant for."""


def replacement_lines(replacement: str) -> list[str]:
    """The lines a replacement puts in place of the range, without line endings."""
    text = replacement.replace("\r\n", "\n")
    if text.endswith("\n"):
        text = text[:-1]
    return text.split("\n") if text or replacement else []


def _line_ending(line: str) -> str:
    if line.endswith("\r\n"):
        return "\r\n"
    if line.endswith("\n"):
        return "\n"
    return ""


def _strip_ending(line: str) -> str:
    return line[: len(line) - len(_line_ending(line))]


def apply_suggestion(text: str, start: int, end: int, replacement: str) -> str:
    """``text`` with lines ``start..end`` (1-based, inclusive) replaced.

    New lines take the line ending of the replaced region (so CRLF files stay CRLF);
    the last new line keeps the ending of the last replaced line (so a file without a
    newline at its end still has none).
    """
    lines = split_lines(text)
    if not 1 <= start <= end <= len(lines):
        raise SuggestionError(
            f"lines {start}-{end} are not in the file ({len(lines)} lines): "
            "anchor the suggestion on existing lines"
        )
    old = lines[start - 1 : end]
    eol = _line_ending(old[0]) or next((e for e in map(_line_ending, lines) if e), "\n")
    new = [line + eol for line in replacement_lines(replacement)]
    if new:
        new[-1] = _strip_ending(new[-1]) + _line_ending(old[-1])
    return "".join([*lines[: start - 1], *new, *lines[end:]])


def _comment_style(path: str) -> str:
    """The line comment of ``path``'s language (the one table of languages); C-like
    otherwise."""
    row = languages.language_of(path)
    return "//" if row is None else row.comment


def bracket_balance(text: str, comment: str = "//") -> tuple[int, int, int]:
    """Net count of open minus close for ``()``, ``[]`` and ``{}``.

    A rough scan: quoted strings end at their quote or at the end of the line, comments
    are ``comment`` to the end of the line (plus ``/* */`` for C-like files).
    """
    counts = [0, 0, 0]
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if text.startswith(comment, i):
            i = text.find("\n", i)
            i = n if i < 0 else i
            continue
        if comment == "//" and text.startswith("/*", i):
            close = text.find("*/", i + 2)
            i = n if close < 0 else close + 2
            continue
        if ch in "\"'`":
            i += 1
            while i < n and text[i] not in (ch, "\n"):
                i += 2 if text[i] == "\\" else 1
        elif ch in _OPEN:
            counts[_OPEN.index(ch)] += 1
        elif ch in _CLOSE:
            counts[_CLOSE.index(ch)] -= 1
        i += 1
    return counts[0], counts[1], counts[2]


def _parses(text: str) -> bool:
    try:
        ast.parse(text)
    except (SyntaxError, ValueError, UnicodeError, RecursionError, MemoryError):
        return False
    return True


def suggestion_problem(
    path: str,
    old_lines: Sequence[str],
    replacement: str,
    whole_text: str | None,
    start: int,
    end: int,
) -> str | None:
    """Why the suggestion must not be shown, or ``None`` when it may.

    ``old_lines`` are the lines ``start..end`` of the head content (with endings);
    ``whole_text`` is the whole head file when known (needed for the Python check).
    """
    new = replacement_lines(replacement)
    if new == [_strip_ending(line) for line in old_lines]:
        return "it changes nothing"
    if path.endswith(_PYTHON) and whole_text is not None:
        if parses_locally(whole_text, split_lines(whole_text), start, end, new):
            return None  # the statements around it parse: no need to parse the whole file
        if _parses(whole_text):
            if not _parses(apply_suggestion(whole_text, start, end, replacement)):
                return "the file would no longer parse as Python"
            return None
    elif whole_text is not None and language_of(path) is not None:
        after = apply_suggestion(whole_text, start, end, replacement)
        broken = breaks_syntax(path, encode_text(whole_text), encode_text(after))
        if broken is not None:
            return f"the file would no longer parse as {language_of(path)}" if broken else None
    style = _comment_style(path)
    if bracket_balance("\n".join(new), style) != bracket_balance("".join(old_lines), style):
        return "it would unbalance brackets"
    return None

"""Whether a change is formatting only: empty once trailing whitespace and line endings
are ignored, or each file's tokens unchanged. Such a change needs no review at all.

Wrong here means a real change left unreviewed, so every doubt answers "not formatting":
a file added, deleted, renamed or binary; a Python file that does not tokenize; a
language whose indentation is syntax (YAML, Makefiles …) when more than trailing
whitespace moved. Text inside string literals counts, whitespace and all; so does the
space between two operator characters that could fuse (``a - -b`` is not ``a --b``).
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterator, Sequence

from bot.code.languages import language_of
from bot.domain.change import Change
from bot.domain.diff import FileDiff, FileStatus
from bot.text import decode_text

#: A string literal (kept whole, whitespace and all), a word, one operator character, or
#: a run of whitespace (kept only between two operators: ``- -`` is not ``--``).
_TOKEN = re.compile(
    r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|`[^`]*`|(\w+)|(\s+)|([^\w\s])', re.S
)

#: Operator characters that never fuse with a neighbour into another operator: the space
#: beside them is layout (``){`` is ``) {``, while ``- -`` is not ``--``).
_NEVER_FUSE = frozenset("()[]{},;")

#: Python tokens whose text is layout: compared by kind only.
_LAYOUT_TOKENS = frozenset({tokenize.INDENT, tokenize.NEWLINE, tokenize.ENDMARKER})


def formatting_only(change: Change, files: Sequence[FileDiff]) -> bool:
    """Whether every one of ``files`` (at least one) changed its layout only."""
    return bool(files) and all(_layout_only(change, f) for f in files)


def _layout_only(change: Change, file: FileDiff) -> bool:
    if file.status is not FileStatus.MODIFIED or file.binary or not file.hunks:
        return False
    if all(_strip(old) == _strip(new) for old, new in _hunk_sides(file)):
        return True
    # Where indentation or blank lines are syntax (the language table says), only
    # trailing whitespace may move, which the check above has seen.
    language = language_of(file.path)
    if language is not None and language.layout_is_syntax:
        return False
    texts = _whole_texts(change, file)
    if language is not None and language.family == "python":
        # Indentation is syntax: only the tokenizer, which sees it, may judge.
        if texts is None:
            return False
        old = _python_tokens(texts[0])
        return old is not None and old == _python_tokens(texts[1])
    if texts is not None:
        return _tokens(texts[0]) == _tokens(texts[1])
    return all(_tokens("".join(o)) == _tokens("".join(n)) for o, n in _hunk_sides(file))


def _hunk_sides(file: FileDiff) -> Iterator[tuple[list[str], list[str]]]:
    """Each hunk's removed and added lines, with their endings."""
    for hunk in file.hunks:
        old = [ln.text + ln.eol for ln in hunk.lines if ln.kind == "-"]
        new = [ln.text + ln.eol for ln in hunk.lines if ln.kind == "+"]
        yield old, new


def _strip(lines: list[str]) -> list[str]:
    return [line.rstrip() for line in lines]


def _whole_texts(change: Change, file: FileDiff) -> tuple[str, str] | None:
    if change.base is None or change.head is None:
        return None
    old, new = change.base.read(file.old_path), change.head.read(file.path)
    if old is None or new is None:
        return None
    return decode_text(old), decode_text(new)


def _tokens(text: str) -> list[str]:
    found: list[str] = []
    previous_operator = False
    pending_space = False
    for match in _TOKEN.finditer(text):
        word, space, operator = match.groups()
        if space is not None:
            pending_space = True
            continue
        if operator is not None and operator not in _NEVER_FUSE:
            if previous_operator and pending_space:
                found.append(" ")
            previous_operator = True
        else:
            previous_operator = False
        pending_space = False
        found.append(word if word is not None else match.group(0))
    return found


def _python_tokens(text: str) -> list[tuple[int, str]] | None:
    """Python's token stream without blank lines; None when it does not tokenize."""
    try:
        return [
            (tok.type, _python_text(tok))
            for tok in tokenize.generate_tokens(io.StringIO(text).readline)
            if tok.type != tokenize.NL
        ]
    except (tokenize.TokenError, SyntaxError, ValueError):
        return None


def _python_text(tok: tokenize.TokenInfo) -> str:
    """What a token means: layout tokens nothing; a plain string literal its value, so a
    formatter's quote change (``'a'`` to ``"a"``) is layout too."""
    if tok.type in _LAYOUT_TOKENS:
        return ""
    if tok.type == tokenize.STRING and not re.match(r"[A-Za-z]*[fF]", tok.string):
        try:
            return repr(ast.literal_eval(tok.string))
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return tok.string
    return tok.string

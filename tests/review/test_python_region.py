"""Suggestions on Python files are checked by parsing only the statements around them:
whenever that says "parses", parsing the whole new file agrees, on code full of traps
(definitions in strings, multi-line decorators, continuations, blocks under ``if``)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from bot.review.findings.python_syntax import parses_locally
from bot.review.findings.side_text import split_lines
from bot.review.findings.suggestions import apply_suggestion, replacement_lines
from tests.review.test_findings import finding, make_change
from tests.support.evidence import check_quoted

HEAD = '''"""Module docstring.

def not_a_definition():
    pass
"""
import os

TABLE = [
    1,
    2,
]


@decorator
def top(a, b):
    x = a + b
    return x


@decorator(
    "multi-line",
)
def decorated(a):
    return a


class Shape:
    """A shape."""

    size = 3

    def area(self):
        return self.size * self.size

    @property
    def name(self):
        text = """
def inside_string():
    pass
"""
        return text

    def long(self, a,
             b):
        total = a + \\
            b
        return total

    if os.name == "nt":
        def windows(self):
            return 1
    else:
        def windows(self):
            return 2


def tail():
    return [
        line
        for line in range(3)
    ]
'''
FILLER = "".join(f"\n\ndef filler_{i}(value):\n    return value + {i}\n" for i in range(30))
MODULE = HEAD + FILLER
LINES = split_lines(MODULE)
AREA_RETURN = LINES.index("        return self.size * self.size\n") + 1


def _templates(first_line: str) -> list[list[str]]:
    pad = first_line[: len(first_line) - len(first_line.lstrip())]
    old = first_line.rstrip("\n")
    return [
        [old + "  # edited"],
        [pad + "x = 1"],
        [pad + "x = ("],
        [pad + '"""'],
        [],
        [pad + "else:", pad + "    pass"],
        [pad + "@decorator"],
        [pad + "def added():", pad + "    return 1"],
        ["    " + old],
        [old.lstrip()],
        [pad + "\tx = 1"],
        [old, pad + "    y = 2"],
        [pad + "return ]"],
    ]


def _parses(text: str) -> bool:
    try:
        ast.parse(text)
    except SyntaxError:
        return False
    return True


def test_module_is_large_enough_to_be_cut_and_parses() -> None:
    assert len(LINES) >= 150 and _parses(MODULE)


@pytest.mark.parametrize("span", [0, 1, 3])
def test_a_local_yes_is_always_a_whole_file_yes(span: int) -> None:
    said_yes = 0
    for start in range(1, len(LINES) + 1):
        end = min(len(LINES), start + span)
        for new in _templates(LINES[start - 1]):
            if not parses_locally(MODULE, LINES, start, end, new):
                continue
            said_yes += 1
            replacement = "".join(line + "\n" for line in new)
            after = apply_suggestion(MODULE, start, end, replacement)
            assert _parses(after), (start, end, new)
    assert said_yes > 200  # the cut is really used, not always declined


def test_an_edit_inside_a_method_is_decided_without_the_whole_file() -> None:
    new = ["        return self.size * 2"]
    assert parses_locally(MODULE, LINES, AREA_RETURN, AREA_RETURN, new)
    # A broken one is not decided here: the caller parses the whole file.
    assert not parses_locally(MODULE, LINES, AREA_RETURN, AREA_RETURN, ["        return ("])
    # Tabs in the indentation of a cut-out block: their width depends on the column.
    assert not parses_locally(MODULE, LINES, AREA_RETURN, AREA_RETURN, ["        \treturn 1"])
    # A small file is always parsed whole.
    small = split_lines(HEAD)
    assert len(small) < 150
    assert not parses_locally(HEAD, small, AREA_RETURN, AREA_RETURN, new)


def test_a_decorator_waiting_for_its_definition_keeps_it(tmp_path: Path) -> None:
    # "def decorated" follows a multi-line decorator: replacing it by a statement would
    # leave the decorator without a definition.
    line = LINES.index("def decorated(a):\n") + 1
    assert not parses_locally(MODULE, LINES, line, line + 1, ["x = 1"])
    assert not _parses(apply_suggestion(MODULE, line, line + 1, "x = 1\n"))


def test_findings_check_keeps_and_drops_python_suggestions_as_before(tmp_path: Path) -> None:
    before = MODULE.replace("return self.size * self.size", "return self.size")
    change = make_change(tmp_path, {"shapes.py": before}, {"shapes.py": MODULE})
    good = "        return self.size ** 2\n"
    kept, _ = check_quoted(
        [
            finding("shapes.py", AREA_RETURN, suggestion=good, title="square it"),
            finding("shapes.py", AREA_RETURN, suggestion="        return (\n", title="broken"),
        ],
        change,
    )
    by_title = {f.title: f for f in kept}
    assert by_title["square it"].suggestion == good
    assert by_title["broken"].suggestion is None
    assert by_title["broken"].note == "suggestion dropped: the file would no longer parse as Python"
    (changed,) = change.diff.files
    text = apply_suggestion(MODULE, AREA_RETURN, AREA_RETURN, good)
    assert _parses(text) and changed.path == "shapes.py"
    assert replacement_lines(good) == [good.rstrip("\n")]


def test_a_file_with_a_syntax_error_elsewhere_still_gets_its_suggestions_checked(
    tmp_path: Path,
) -> None:
    before = MODULE.replace("return self.size * self.size", "return self.size")
    broken = MODULE.replace("def filler_29(value):", "def filler_29(value:")
    change = make_change(tmp_path, {"shapes.py": before}, {"shapes.py": broken})
    kept, _ = check_quoted(
        [
            finding("shapes.py", AREA_RETURN, suggestion="        return 4\n", title="fine"),
            finding("shapes.py", AREA_RETURN, suggestion="        return (\n", title="open"),
        ],
        change,
    )
    by_title = {f.title: f for f in kept}
    assert by_title["fine"].suggestion == "        return 4\n"
    assert by_title["open"].suggestion is None
    assert by_title["open"].note == "suggestion dropped: it would unbalance brackets"

"""Units read from real TypeScript (ky) and Rust (anyhow) files by the tree-sitter layer.

Ctags gives no end lines for these languages, so the judge here is the files themselves:
every definition line found by a plain pattern is a unit's name line, with the right
kind, and every named unit ends on the ``}`` that closes it, at its own indentation.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bot.code.grammars import available
from bot.code.outline import Outline, Unit, outline
from bot.review.context.enclosing import enclosing_ranges
from tests.support.real_repos import checkout

pytestmark = pytest.mark.skipif(
    not (available("typescript") and available("rust")),
    reason="the parsers extra is not installed: pip install 'gitneural[parsers]'",
)

_TS_DEFINITION = re.compile(
    r"^\s*(?:export\s+)?(?:default\s+)?(?:abstract\s+)?"
    r"(class|interface|enum|function\*?|async function)\s+(\w+)"
)
_RUST_DEFINITION = re.compile(
    r"^\s*(?:pub(?:\([\w:]+\))?\s+)?(?:unsafe\s+)?(?:const\s+)?(?:async\s+)?"
    r"(fn|struct|trait|enum)\s+(\w+)"
)
_KINDS = {"function*": "function", "async function": "function"}


def _files(root: Path, pattern: str) -> list[Path]:
    return sorted(p for p in root.glob(pattern) if p.is_file())


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def _declaration_only(lines: list[str], index: int) -> bool:
    """Whether the definition starting at ``lines[index]`` ends with ";" before any "{"."""
    for text in lines[index : index + 12]:
        body, semicolon = text.find("{"), text.find(";")
        if semicolon >= 0 and (body < 0 or semicolon < body):
            return True
        if body >= 0:
            return False
    return False


def _check_file(path: Path, definition: re.Pattern[str]) -> tuple[Outline, int]:
    data = path.read_bytes()
    lines = data.decode().split("\n")
    # Examples in doc comments are no definitions: blank the comments, keeping the lines.
    code = re.sub(r"/\*.*?\*/", lambda m: "\n" * m[0].count("\n"), data.decode(), flags=re.S)
    found = outline(path.name, data)
    assert found is not None, path
    by_line = {u.line: u for u in found.units if u.kind != "closure"}
    checked = 0
    code_lines = code.split("\n")
    for number, text in enumerate(code_lines, 1):
        match = definition.match(text)
        # A body-less declaration ("fn f();" in a trait, an overload) is no unit.
        if match is None or _declaration_only(code_lines, number - 1):
            continue
        unit = by_line.get(number)
        assert unit is not None, f"{path.name}:{number}: no unit for {text.strip()!r}"
        assert unit.name == match[2], (unit, text)
        expected = _KINDS.get(match[1], match[1])
        assert unit.kind == expected or (expected == "fn" and unit.kind in ("function", "method"))
        checked += 1
    for unit in found.units:
        closing = lines[unit.end - 1]
        if unit.kind != "closure" and lines[unit.line - 1].rstrip().endswith("{"):
            assert closing.strip().startswith("}"), (path.name, unit, closing)
            assert _indent(closing) == _indent(lines[unit.line - 1]), (path.name, unit)
    return found, checked


def _unit(found: Outline, name: str, kind: str) -> Unit:
    return next(u for u in found.units if u.name == name and u.kind == kind)


def test_typescript_units_of_ky() -> None:
    root = checkout("ky")
    checked = 0
    for path in _files(root, "source/**/*.ts"):
        checked += _check_file(path, _TS_DEFINITION)[1]
    assert checked >= 15

    ky, _ = _check_file(root / "source/core/Ky.ts", _TS_DEFINITION)
    assert not ky.has_errors
    cls = _unit(ky, "Ky", "class")
    create = _unit(ky, "create", "method")
    assert create.parent is not None and ky.units[create.parent] == cls
    assert cls.start < create.start <= create.end < cls.end
    # An arrow function bound to a name is a function, known by that name.
    decoder = _unit(ky, "createTextDecoder", "function")
    assert decoder.end > decoder.start

    # The enclosing unit of a line inside the method is the method, not the class.
    text = (root / "source/core/Ky.ts").read_text()
    inside = text.split("\n").index("\t\tconst initHooks = options.hooks?.init ?? [];") + 1
    [(start, end, header)] = enclosing_ranges("source/core/Ky.ts", text, [inside])
    assert (start, end) == (create.start, create.end)
    assert header.startswith("static create(")


def test_rust_units_of_anyhow() -> None:
    root = checkout("anyhow")
    checked = 0
    for path in _files(root, "src/*.rs"):
        checked += _check_file(path, _RUST_DEFINITION)[1]
    assert checked >= 60

    error, _ = _check_file(root / "src/error.rs", _RUST_DEFINITION)
    assert not error.has_errors
    impl = error.units[0]
    assert (impl.kind, impl.name) == ("impl", "Error")
    new = _unit(error, "new", "method")
    assert new.parent == 0
    lines = (root / "src/error.rs").read_text().split("\n")
    # The attributes above a function belong to it; its name line is the "fn" line.
    assert lines[new.start - 1].lstrip().startswith("#[")
    assert lines[new.line - 1].lstrip().startswith("pub fn new<E>")
    names = {(u.kind, u.name) for u in error.definitions}
    assert ("method", "construct_from_std") in names
    assert {"StdError", "backtrace_if_absent"} <= {r.name for r in error.references}

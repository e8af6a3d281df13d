"""A file's outline from its syntax tree: its units, the names it defines, the names it uses.

One parse with the language's tree-sitter grammar, then two queries run by the library
(not a walk in Python, which would cost ten times more on a large file): the unit nodes
of :data:`bot.code.queries.UNITS`, and the references and extra definitions of
:data:`bot.code.queries.QUERIES`. Lines are 1-based. A unit's ``start`` takes in the
decorators or attributes written above it (Python's ``@``, Rust's ``#[...]``); its
``line`` is the line of its name, the one a reader knows it by.

A closure on fewer than :data:`MIN_CLOSURE_LINES` lines is no unit: ``xs.map(x => x + 1)``
says nothing the changed line does not.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from operator import itemgetter
from typing import TYPE_CHECKING

from bot.code.grammars import language_of, load
from bot.code.limits import check_parseable, stop_after
from bot.code.queries import CLASS_KINDS, EXTRA_UNITS, QUERIES, UNITS
from bot.errors import UnparsableError

if TYPE_CHECKING:
    from tree_sitter import Node, Query

__all__ = [
    "MIN_CLOSURE_LINES",
    "Name",
    "Outline",
    "Symbol",
    "Symbols",
    "Unit",
    "outline",
    "parse_tree",
    "symbols",
]

MIN_CLOSURE_LINES = 3
_NAME_TYPES = frozenset(
    {"identifier", "simple_identifier", "type_identifier", "field_identifier", "constant"}
    | {"property_identifier", "name", "word", "scope_resolution", "qualified_identifier"}
)
_IDENT = re.compile(r"[A-Za-z_$][\w$]*")
_MAX_NAME = 80
#: Bytes handed to tree-sitter per read.
_CHUNK = 64 * 1024


@dataclass(frozen=True, slots=True)
class Unit:
    """A function, method, class … of a file; ``parent`` is the index of the unit around
    it in :attr:`Outline.units`."""

    name: str
    kind: str
    start: int
    end: int
    line: int
    parent: int | None


@dataclass(frozen=True, slots=True)
class Name:
    """A name defined or used at a line; ``kind`` is the unit's kind for a definition,
    ``call``, ``type`` or ``import`` for a reference."""

    name: str
    kind: str
    line: int


@dataclass(frozen=True)
class Outline:
    language: str
    #: Sorted by start line, outer units before the units inside them.
    units: tuple[Unit, ...]
    definitions: tuple[Name, ...]
    references: tuple[Name, ...]
    #: The parser met text it could not read (tree-sitter reads on, around it).
    has_errors: bool

    def innermost(self, line: int) -> Unit | None:
        """The smallest unit holding ``line``, or ``None`` at the top level."""
        best: Unit | None = None
        for unit in self.units:
            if unit.start > line:
                break
            if unit.end >= line and (
                best is None or unit.end - unit.start <= best.end - best.start
            ):
                best = unit
        return best


@functools.cache
def _query(language: str) -> Query | None:
    """The language's one query: its units (capture ``unit``), then its references and
    extra definitions. One query, so one walk of the tree by the library (two cost half
    as much again); compiled once per process, since compiling takes milliseconds."""
    grammar = load(language)
    if grammar is None:
        return None
    from tree_sitter import Query

    # Node types a grammar version lacks are left out rather than failing the query.
    kinds = [
        t
        for t in UNITS[language]
        if t != "compound_statement" and grammar.id_for_node_kind(t, True) is not None
    ]
    units = "[" + " ".join(f"({t})" for t in kinds) + "] @unit\n" + EXTRA_UNITS.get(language, "")
    return Query(grammar, units + QUERIES[language])


def parse_tree(language: str, data: bytes) -> Node | None:
    """The root of ``data``'s syntax tree, or ``None`` when the grammar is not installed.

    Raises :class:`UnparsableError` for a file past :mod:`bot.code.limits`' size or
    depth, or whose parse ran past its time (stopped by tree-sitter's progress callback,
    which only the reading-callback form of ``parse`` takes)."""
    grammar = load(language)
    if grammar is None:
        return None
    check_parseable(data)
    from tree_sitter import Parser

    def read(offset: int, _: object) -> bytes:
        return data[offset : offset + _CHUNK]

    try:
        tree = Parser(grammar).parse(read, encoding="utf8", progress_callback=stop_after())
    except (ValueError, MemoryError, RecursionError) as error:
        # tree-sitter answers a parse its callback stopped with ValueError("Parsing failed").
        raise UnparsableError("the parser stopped: it took too long") from error
    return tree.root_node


def _text(node: Node) -> str:
    return (node.text or b"").decode("utf-8", "replace")


def _end_line(node: Node) -> int:
    row, column = node.end_point
    return row if column == 0 and row > node.start_point[0] else row + 1


def _declared_name(node: Node) -> Node | None:
    """The name node of a unit: its ``name`` field, or down C's declarator chain
    (``*f(void)`` → ``f``), or a Rust impl's type, or its first identifier."""
    found = node.child_by_field_name("name")
    if found is not None:
        return found
    current = node.child_by_field_name("declarator")
    while current is not None:
        if current.type in _NAME_TYPES:
            return current
        current = current.child_by_field_name("declarator") or current.child_by_field_name("name")
    if node.type == "impl_item":
        return node.child_by_field_name("type")
    return next((c for c in node.named_children if c.type in _NAME_TYPES), None)


def _closure_name(node: Node) -> str:
    """What an anonymous function is assigned to (``const f = () => …``), if anything."""
    parent = node.parent
    if parent is None:
        return ""
    for field in ("name", "key", "left"):
        target = parent.child_by_field_name(field)
        if target is not None and target != node:
            return _text(target)[:_MAX_NAME]
    return ""


def _macro_call(block: Node) -> Node | None:
    """The ``TEST(group, name)`` statement a top-level C block belongs to, if any."""
    statement = block.prev_named_sibling
    call = statement.named_children[0] if statement and statement.named_children else None
    if statement is None or statement.type != "expression_statement" or call is None:
        return None
    if call.type != "call_expression" or call.end_point[0] + 2 < block.start_point[0] + 1:
        return None
    return statement


def _anonymous_line(node: Node) -> tuple[str, int]:
    """Name and name line of a unit without a name of its own: ``typedef struct {…} T``
    is named by its typedef, and known by the line of its body (as ctags does)."""
    body = node.child_by_field_name("body")
    line = (body or node).start_point[0] + 1
    parent = node.parent
    declarator = parent.child_by_field_name("declarator") if parent is not None else None
    if parent is not None and parent.type == "type_definition" and declarator is not None:
        return _text(declarator)[:_MAX_NAME], line
    return "", line


def _start_line(node: Node, language: str) -> int:
    # Only these grammars have decorators or attributes beside a unit (asked of each
    # grammar): elsewhere the parent and siblings, each a walk in the library, are
    # not looked at.
    if language == "python":
        parent = node.parent
        if parent is not None and parent.type == "decorated_definition":
            node = parent
    elif language == "rust":
        previous = node.prev_named_sibling
        while previous is not None and previous.type == "attribute_item":
            node, previous = previous, previous.prev_named_sibling
    return node.start_point[0] + 1


def _units(language: str, nodes: list[Node]) -> list[Unit]:
    kinds = UNITS[language]
    found: list[tuple[int, int, int, str, str]] = []
    for node in nodes:
        node_type = node.type
        kind = kinds[node_type]
        end = _end_line(node)
        if node_type == "compound_statement":
            statement = _macro_call(node)
            if statement is None:
                continue
            function = statement.named_children[0].child_by_field_name("function")
            name = _text(function)[:_MAX_NAME] if function is not None else ""
            line = statement.start_point[0] + 1
            found.append((line, -end, line, name, kind))
            continue
        if kind == "closure":
            declared = node.parent is not None and node.parent.type == "variable_declarator"
            if declared:
                kind = "function"  # const f = () => …: a function with a name
            elif end - node.start_point[0] < MIN_CLOSURE_LINES:
                continue
            name, line = _closure_name(node), node.start_point[0] + 1
        else:
            if node_type.endswith(("_specifier", "mod_item")) and (
                node.child_by_field_name("body") is None
            ):
                continue  # "struct point p;", "mod tests;": a use, not a definition
            name_node = _declared_name(node)
            if name_node is None:
                name, line = _anonymous_line(node)
                if node_type == "companion_object":
                    name = "Companion"  # what Kotlin calls a companion object without a name
            else:
                name, line = _text(name_node)[:_MAX_NAME], name_node.start_point[0] + 1
            if kind == "type":
                body = node.child_by_field_name("type")
                kind = {"struct_type": "struct", "interface_type": "interface"}.get(
                    body.type if body is not None else "", "type"
                )
        found.append((_start_line(node, language), -end, line, name, kind))
    found.sort()
    units: list[Unit] = []
    stack: list[int] = []
    for start, neg_end, line, name, kind in found:
        end = -neg_end
        while stack and units[stack[-1]].end < end:
            stack.pop()
        parent = stack[-1] if stack else None
        if kind == "function" and parent is not None and units[parent].kind in CLASS_KINDS:
            kind = "method"
        units.append(Unit(name, kind, start, end, line, parent))
        stack.append(len(units) - 1)
    return units


def _import_names(text: str) -> list[str]:
    if text[:1] in "\"'<`":
        # A path ("github.com/gin-gonic/gin/render", <stdio.h>): its last part names it.
        stem = text.strip("\"'<>`").rstrip("/").rpartition("/")[2].partition(".")[0]
        return [stem] if stem else []
    return list(dict.fromkeys(_IDENT.findall(text)))


#: ``(name, kind, line)``: a definition or a reference before it is a :class:`Name`.
Symbol = tuple[str, str, int]


@dataclass(frozen=True)
class Symbols:
    """What :func:`outline` says of a file, its names kept as plain tuples: the symbol
    index stores tuples, and ten thousands of :class:`Name` objects made only to be
    taken apart again would cost it a tenth of its time."""

    language: str
    units: tuple[Unit, ...]
    #: Sorted by line, then name.
    definitions: list[Symbol]
    #: Sorted by line, name and kind.
    references: list[Symbol]
    has_errors: bool


def symbols(path: str, data: bytes) -> Symbols | None:
    """The units and names of a file, or ``None`` when no grammar reads its language.

    Raises :class:`UnparsableError` for a file the parser will not or could not read
    (see :func:`parse_tree`). The query runs without tree-sitter's progress callback:
    with it, py-tree-sitter 0.26.1 crashes the process (a segmentation fault, seen on
    small Go files); the depth checked before parsing is what keeps the query short."""
    language = language_of(path)
    if language is None:
        return None
    query = _query(language)
    root = parse_tree(language, data)
    if query is None or root is None:
        return None
    from tree_sitter import QueryCursor

    captures = QueryCursor(query).captures(root)
    units = _units(language, captures.pop("unit", []))
    definitions = [(u.name, u.kind, u.line) for u in units if u.name and u.kind != "closure"]
    references: list[Symbol] = []
    for capture, nodes in captures.items():
        kind = capture.partition(".")[2]
        # The node's bytes are sliced from ``data``: ``Node.text`` may be None to mypy.
        if capture.startswith("def."):
            definitions += [
                (
                    data[n.start_byte : n.end_byte].decode("utf-8", "replace"),
                    kind,
                    n.start_point[0] + 1,
                )
                for n in nodes
            ]
        elif capture == "ref.import":
            for n in nodes:
                text = data[n.start_byte : n.end_byte].decode("utf-8", "replace")
                line = n.start_point[0] + 1
                references += [(name, kind, line) for name in _import_names(text)]
        else:
            references += [
                (
                    data[n.start_byte : n.end_byte].decode("utf-8", "replace"),
                    kind,
                    n.start_point[0] + 1,
                )
                for n in nodes
            ]
    definitions.sort(key=itemgetter(2, 0))
    references.sort(key=itemgetter(2, 0, 1))
    return Symbols(language, tuple(units), definitions, references, root.has_error)


def outline(path: str, data: bytes) -> Outline | None:
    """The outline of a file, or ``None`` when no grammar reads its language here."""
    found = symbols(path, data)
    if found is None:
        return None
    return Outline(
        found.language,
        found.units,
        tuple(Name(*d) for d in found.definitions),
        tuple(Name(*r) for r in found.references),
        found.has_errors,
    )

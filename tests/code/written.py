"""The check shared by the tests of units in source files written for them (languages
none of the shared repositories is written in): the exact units, definitions and
references :func:`bot.code.outline.outline` finds."""

from __future__ import annotations

from collections.abc import Sequence

from bot.code.outline import Outline, outline
from tests.support.real_repos import require_grammars

#: ``(name, kind, start, end, parent)`` of a unit.
UnitRow = tuple[str, str, int, int, int | None]
#: ``(name, kind, line)`` of a definition or a reference.
NameRow = tuple[str, str, int]


def check_outline(
    path: str,
    language: str,
    source: str,
    units: Sequence[UnitRow],
    defined: Sequence[NameRow],
    used: Sequence[NameRow],
    *,
    misread: frozenset[NameRow] = frozenset(),
) -> Outline:
    """The file's outline, once its units and names are exactly those expected;
    ``misread``: references the grammar is known to read wrongly, left out."""
    require_grammars(language)
    found = outline(path, source.encode())
    assert found is not None
    assert (found.language, found.has_errors) == (language, False)
    # Not a test module, so pytest shows no values unless the message does.
    got_units = [(u.name, u.kind, u.start, u.end, u.parent) for u in found.units]
    assert got_units == list(units), got_units
    got_defined = [(d.name, d.kind, d.line) for d in found.definitions]
    assert got_defined == list(defined), got_defined
    got_used = [(r.name, r.kind, r.line) for r in found.references]
    got_used = [r for r in got_used if r not in misread]
    assert got_used == list(used), got_used
    return found

"""The map in the docs cannot drift from the code: every path a page names exists, and
``docs/architecture.md``'s package map is the one the modules' docstrings make."""

from __future__ import annotations

import re
from pathlib import Path

from tests.support import package_map
from tests.support.paths import ROOT

#: A page names a path of this repository when it starts so.
_PREFIXES = ("bot/", "workers/", "hooks/", "prompts/", "tests/", "benchmarks/", "deploy/", "docs/")
_TOKEN = re.compile(r"`([^`\s]+)`|\]\(([^)\s#]+)")
#: Paths the docs name that a command writes, not the repository: they exist after it ran.
_WRITTEN_BY_A_COMMAND = {
    "benchmarks/results/latest.json": "python -m benchmarks.run",
    "benchmarks/results/latest.md": "python -m benchmarks.run",
    "deploy/gitneural.env": "the user, from deploy/gitneural.env.example (never committed)",
}


def _pages() -> list[Path]:
    return [
        ROOT / "README.md",
        ROOT / "CONTRIBUTING.md",
        ROOT / "SECURITY.md",
        *sorted((ROOT / "docs").rglob("*.md")),
    ]


def _named_paths(page: Path) -> list[tuple[int, str, Path]]:
    """``(line, as written, where it points)`` for each path of the repository ``page``
    names in code spans (from the root) and in relative links (from the page)."""
    named: list[tuple[int, str, Path]] = []
    for number, line in enumerate(page.read_text("utf-8").splitlines(), 1):
        for found in _TOKEN.finditer(line):
            span, link = found.group(1), found.group(2)
            written = re.split(r"::|:(?=\d)", span or link)[0].rstrip(".,;:")
            if link is not None:
                if re.match(r"[a-z]+:", written):
                    continue  # another site, or mailto:
                named.append((number, written, page.parent / written))
            elif written.startswith(_PREFIXES) and not re.search(r"[*{}<>$]|[A-Z]{3,}", written):
                # Globs, templates and placeholders (bench_NAME.py) name no one file.
                named.append((number, written, ROOT / written))
    return named


def test_every_path_a_page_names_exists() -> None:
    missing = [
        f"{page.relative_to(ROOT)}:{number}: {written}"
        for page in _pages()
        for number, written, target in _named_paths(page)
        if not target.exists() and written not in _WRITTEN_BY_A_COMMAND
    ]
    assert missing == []


def test_the_check_sees_a_path_that_is_gone(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("See `bot/gone.py` and [the map](missing.md) and `bot/review/*.py`.\n")
    named = {written: target.exists() for _, written, target in _named_paths(page)}
    assert named == {"bot/gone.py": False, "missing.md": False}


def test_the_package_map_is_the_one_the_code_makes() -> None:
    page = package_map.PAGE.read_text("utf-8")
    assert package_map.on_page(page) == package_map.made(), (
        "docs/architecture.md's package map is stale: run python -m tests.support.package_map"
    )


def test_every_module_the_map_covers_has_a_docstring_to_make_its_line() -> None:
    lines = package_map.entries()
    modules = [
        path
        for top in package_map.ROOTS
        for path in (ROOT / top).rglob("*.py")
        if "__pycache__" not in path.parts
    ]
    assert len([line for line in lines if line.startswith("    - ")]) == len(
        [path for path in modules if path.name != "__init__.py"]
    )

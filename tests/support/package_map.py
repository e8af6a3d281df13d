"""The package map of ``docs/architecture.md``, made from each module's opening docstring.

A map written by hand drifts: it named modules long renamed and left new ones out. This
one is read from the code, so it cannot: each package with its ``__init__``'s first
sentence, each of its modules beneath it with its own. Regenerate it with::

    .venv/bin/python -m tests.support.package_map

``tests/project/test_docs_paths.py`` fails while the page's map is not the one the code
makes (and while a module has no docstring to make it from).
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

from tests.support.paths import ROOT

#: The Python packages the map covers (the layers' order is the page's layer table).
ROOTS = ("bot", "workers", "hooks", "prompts", "benchmarks")
PAGE = ROOT / "docs" / "architecture.md"
BEGIN = "<!-- package map: made by `python -m tests.support.package_map`; do not edit -->"
END = "<!-- end of the package map -->"
_SENTENCE_END = re.compile(r"(?<=[a-z0-9)`'\"])\.(?:\s|$)")
# Docstrings are reStructuredText; the page is Markdown.
_ROLE = re.compile(r":(?:class|mod|func|meth|data|attr|exc):`~?([^`]+)`")


class MissingDocstring(ValueError):
    """A module the map must describe says nothing of itself."""


def first_sentence(path: Path) -> str:
    """The first sentence of ``path``'s module docstring, on one line."""
    doc = ast.get_docstring(ast.parse(path.read_text("utf-8")))
    if not doc or not doc.strip():
        raise MissingDocstring(f"{path.relative_to(ROOT)} has no module docstring")
    paragraph = " ".join(doc.strip().split("\n\n", 1)[0].split())
    found = _SENTENCE_END.search(paragraph)
    sentence = paragraph[: found.start() + 1] if found else paragraph
    return _ROLE.sub(r"`\1`", sentence).replace("``", "`")


def _folders(top: Path) -> list[Path]:
    """Every folder under ``top`` that holds Python files, packages or not (Alembic's
    revisions are plain folders)."""
    found = {path.parent for path in top.rglob("*.py") if "__pycache__" not in path.parts}
    return sorted(found, key=lambda p: p.relative_to(ROOT).as_posix())


def entries() -> list[str]:
    """The map's lines: each package with its first sentence, each of its modules beneath
    it with its own."""
    lines: list[str] = []
    for name in ROOTS:
        for package in _folders(ROOT / name):
            where = f"- **`{package.relative_to(ROOT).as_posix()}/`**"
            init = package / "__init__.py"
            lines.append(f"{where}: {first_sentence(init)}" if init.is_file() else where)
            for module in sorted(package.glob("*.py")):
                if module.name != "__init__.py":
                    lines.append(f"    - `{module.name}`: {first_sentence(module)}")
    return lines


def made() -> str:
    """The map as the page holds it, markers included."""
    return "\n".join([BEGIN, "", *entries(), "", END])


def on_page(text: str) -> str:
    """The map as it stands on the page (empty when the markers are missing)."""
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        return ""
    return text[start : end + len(END)]


def main() -> int:
    text = PAGE.read_text("utf-8")
    current = on_page(text)
    if not current:
        sys.stderr.write(f"{PAGE.name}: the package map's markers are missing\n")
        return 2
    PAGE.write_text(text.replace(current, made()), "utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

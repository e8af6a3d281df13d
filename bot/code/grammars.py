"""Which tree-sitter grammar reads a file, and loading it.

The grammars are the tree-sitter project's own per-language wheels (``tree-sitter-go``,
``tree-sitter-java`` …), each a compiled parser inside the installed package: nothing is
downloaded at run time, so a review works offline and behind a firewall. They come with
the ``parsers`` extra (``gitneural[parsers]``, part of ``app``); without it, or without one
language's wheel, :func:`language_of` still names the language and :func:`load` answers
``None``, and the callers keep their heuristics.

``tree_sitter`` itself is imported on first use: the hook's start-up never pays for it.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
from typing import TYPE_CHECKING, Final

from bot.code import languages

if TYPE_CHECKING:
    from tree_sitter import Language

__all__ = ["GRAMMARS", "available", "family_of", "language_of", "load"]

#: Language → (module of its wheel, function that returns the compiled language).
GRAMMARS: Final[dict[str, tuple[str, str]]] = {
    "python": ("tree_sitter_python", "language"),
    "javascript": ("tree_sitter_javascript", "language"),
    "typescript": ("tree_sitter_typescript", "language_typescript"),
    "tsx": ("tree_sitter_typescript", "language_tsx"),
    "go": ("tree_sitter_go", "language"),
    "java": ("tree_sitter_java", "language"),
    "kotlin": ("tree_sitter_kotlin", "language"),
    "rust": ("tree_sitter_rust", "language"),
    "c": ("tree_sitter_c", "language"),
    "cpp": ("tree_sitter_cpp", "language"),
    "csharp": ("tree_sitter_c_sharp", "language"),
    "ruby": ("tree_sitter_ruby", "language"),
    "php": ("tree_sitter_php", "language_php"),
    "swift": ("tree_sitter_swift", "language"),
    "scala": ("tree_sitter_scala", "language"),
    "bash": ("tree_sitter_bash", "language"),
}


def language_of(path: str) -> str | None:
    """The grammar's language for ``path`` (by its name, from the one table of languages,
    :mod:`bot.code.languages`), or ``None`` when there is none."""
    row = languages.language_of(path)
    return None if row is None else row.grammar


#: Languages whose files use each other's names: C++ includes C headers (and a ``.h`` is
#: read as C), TypeScript imports JavaScript.
_FAMILIES: Final[dict[str, str]] = {"cpp": "c", "typescript": "javascript", "tsx": "javascript"}


@functools.lru_cache(maxsize=1 << 16)
def family_of(path: str) -> str | None:
    """The language family of ``path``: a call in one family never means a function
    defined in another (a Ruby script's ``print`` is not a C function's caller).
    Remembered for the last 65,536 paths: the related code asks it of every site of a
    name, and a name may be used in 20,000 files."""
    language = language_of(path)
    return None if language is None else _FAMILIES.get(language, language)


@functools.cache
def available(language: str) -> bool:
    """Whether ``tree_sitter`` and the language's wheel are installed (asked of the import
    system, without importing them)."""
    if language not in GRAMMARS or importlib.util.find_spec("tree_sitter") is None:
        return False
    return importlib.util.find_spec(GRAMMARS[language][0]) is not None


@functools.cache
def load(language: str) -> Language | None:
    """The compiled grammar of ``language``, or ``None`` when it is not installed."""
    if not available(language):
        return None
    from tree_sitter import Language

    module, function = GRAMMARS[language]
    return Language(getattr(importlib.import_module(module), function)())

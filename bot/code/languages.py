"""The one table of languages: a file's name → the language shown to the model, the
heuristic that finds the unit around a line, the tree-sitter grammar that parses it, and
its line comment.

Parsing (:mod:`bot.code.grammars`), the review's context (:mod:`bot.review.context.languages`)
and the suggestion checks (:mod:`bot.review.findings.suggestions`) all read it, so adding a
language is one row here (and, for a parser, its wheel and its queries in
:mod:`bot.code.queries`).
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from typing import Final, Literal

#: The heuristic that finds the function or class around a line when no parser reads it
#: (:mod:`bot.review.context.enclosing`).
Family = Literal["python", "brace", "indent", "auto", "none"]


@dataclass(frozen=True)
class Language:
    #: The name the model is shown (``shell`` for a Bash script).
    name: str
    family: Family
    #: The key of its tree-sitter grammar in :data:`bot.code.grammars.GRAMMARS`, if any.
    grammar: str | None = None
    #: What starts a line comment (the suggestion checks' bracket scan skips comments).
    comment: str = "//"
    #: Its indentation or blank lines are syntax: the router's formatting check
    #: (:mod:`bot.review.formatting`) lets only trailing whitespace move.
    layout_is_syntax: bool = False


def _lang(
    name: str,
    family: Family,
    grammar: str | None = None,
    comment: str = "//",
    *,
    layout: bool = False,
) -> Language:
    return Language(name, family, grammar, comment, layout)


_PYTHON = _lang("python", "python", "python", "#")
_JS = _lang("javascript", "brace", "javascript")
_TS = _lang("typescript", "brace", "typescript")
_C = _lang("c", "brace", "c")
_CPP = _lang("cpp", "brace", "cpp")
_SHELL = _lang("shell", "brace", "bash", "#")
_RUBY = _lang("ruby", "indent", "ruby", "#")
#: A recipe's lines start with a tab.
_MAKE = _lang("makefile", "none", None, "#", layout=True)

#: By extension (lower case, without the dot).
EXTENSIONS: Final[dict[str, Language]] = {
    **dict.fromkeys(("py", "pyi", "pyw"), _PYTHON),
    **dict.fromkeys(("js", "mjs", "cjs", "jsx"), _JS),
    **dict.fromkeys(("ts", "mts", "cts"), _TS),
    # TSX has a grammar of its own; the model is told it is TypeScript.
    "tsx": _lang("typescript", "brace", "tsx"),
    "go": _lang("go", "brace", "go"),
    "java": _lang("java", "brace", "java"),
    **dict.fromkeys(("kt", "kts"), _lang("kotlin", "brace", "kotlin")),
    **dict.fromkeys(("scala", "sc"), _lang("scala", "brace", "scala")),
    "rs": _lang("rust", "brace", "rust"),
    # A .h file is read as C: C++ headers parse as C well enough for units and names,
    # and C's grammar is the smaller one.
    **dict.fromkeys(("c", "h"), _C),
    **dict.fromkeys(("cc", "cpp", "cxx", "hpp", "hh", "hxx", "ipp", "c++", "h++"), _CPP),
    "cs": _lang("csharp", "brace", "csharp"),
    "swift": _lang("swift", "brace", "swift"),
    "php": _lang("php", "brace", "php"),
    "dart": _lang("dart", "brace"),
    **dict.fromkeys(("m", "mm"), _lang("objective-c", "brace")),
    **dict.fromkeys(("groovy", "gradle"), _lang("groovy", "brace")),
    "proto": _lang("protobuf", "brace"),
    **dict.fromkeys(("sh", "bash"), _SHELL),
    "zsh": _lang("shell", "brace", None, "#"),
    "rb": _RUBY,
    "lua": _lang("lua", "indent", None, "--"),
    **dict.fromkeys(("ex", "exs"), _lang("elixir", "indent", None, "#")),
    "jl": _lang("julia", "indent", None, "#"),
    "nim": _lang("nim", "indent", None, "#", layout=True),
    "cr": _lang("crystal", "indent", None, "#"),
    "coffee": _lang("coffeescript", "indent", None, "#", layout=True),
    **dict.fromkeys(("pl", "pm"), _lang("perl", "auto", None, "#")),
    "r": _lang("r", "auto", None, "#"),
    "ps1": _lang("powershell", "auto", None, "#"),
    "nix": _lang("nix", "auto", None, "#"),
    **dict.fromkeys(("tf", "hcl"), _lang("hcl", "auto", None, "#")),
    **dict.fromkeys(("hs", "lhs"), _lang("haskell", "auto", None, "--", layout=True)),
    "elm": _lang("elm", "auto", None, "--"),
    **dict.fromkeys(("ada", "adb", "ads"), _lang("ada", "auto", None, "--")),
    **dict.fromkeys(("yml", "yaml"), _lang("yaml", "none", None, "#", layout=True)),
    **dict.fromkeys(("json", "jsonc", "json5"), _lang("json", "none")),
    "toml": _lang("toml", "none", None, "#"),
    **dict.fromkeys(("md", "markdown", "rst", "txt"), _lang("text", "none")),
    **dict.fromkeys(("html", "htm", "xml", "svg"), _lang("markup", "none")),
    **dict.fromkeys(("pug", "haml"), _lang("markup", "none", layout=True)),
    **dict.fromkeys(("css", "scss", "less"), _lang("css", "none")),
    "sass": _lang("css", "none", layout=True),
    "sql": _lang("sql", "none", None, "--"),
    **dict.fromkeys(("ini", "cfg", "conf", "env"), _lang("config", "none", None, "#")),
    **dict.fromkeys(("mk",), _MAKE),
    "cmake": _lang("cmake", "none", None, "#"),
    "dockerfile": _lang("dockerfile", "none", None, "#"),
}

#: By whole file name, before the extension is looked at.
FILENAMES: Final[dict[str, Language]] = {
    "Dockerfile": _lang("dockerfile", "none", None, "#"),
    **dict.fromkeys(("Makefile", "GNUmakefile"), _MAKE),
    "CMakeLists.txt": _lang("cmake", "none", None, "#"),
    "Rakefile": _RUBY,
    "Gemfile": _RUBY,
}


def language_of(path: str) -> Language | None:
    """The row for ``path`` (by its name), or None for a file no row names."""
    name = posixpath.basename(path)
    if name in FILENAMES:
        return FILENAMES[name]
    for known, language in FILENAMES.items():
        if name.lower() == known.lower():
            return language
    ext = name.rpartition(".")[2].lower() if "." in name else ""
    return EXTENSIONS.get(ext)

"""Which language a file is in, by its name: the name shown to the model, and the family
of heuristic that finds the function or class around a line (see
:mod:`bot.review.context.enclosing`)."""

from __future__ import annotations

import posixpath
from typing import Literal

Family = Literal["python", "brace", "indent", "auto", "none"]

_EXTENSIONS: dict[str, tuple[str, Family]] = {
    **dict.fromkeys(("py", "pyi", "pyw"), ("python", "python")),
    **dict.fromkeys(("js", "mjs", "cjs", "jsx"), ("javascript", "brace")),
    **dict.fromkeys(("ts", "tsx", "mts", "cts"), ("typescript", "brace")),
    "go": ("go", "brace"),
    "java": ("java", "brace"),
    **dict.fromkeys(("kt", "kts"), ("kotlin", "brace")),
    **dict.fromkeys(("scala", "sc"), ("scala", "brace")),
    "rs": ("rust", "brace"),
    **dict.fromkeys(("c", "h"), ("c", "brace")),
    **dict.fromkeys(("cc", "cpp", "cxx", "hpp", "hh", "hxx", "ipp"), ("cpp", "brace")),
    "cs": ("csharp", "brace"),
    "swift": ("swift", "brace"),
    "php": ("php", "brace"),
    "dart": ("dart", "brace"),
    **dict.fromkeys(("m", "mm"), ("objective-c", "brace")),
    **dict.fromkeys(("groovy", "gradle"), ("groovy", "brace")),
    "proto": ("protobuf", "brace"),
    **dict.fromkeys(("sh", "bash", "zsh"), ("shell", "brace")),
    "rb": ("ruby", "indent"),
    "lua": ("lua", "indent"),
    **dict.fromkeys(("ex", "exs"), ("elixir", "indent")),
    "jl": ("julia", "indent"),
    "nim": ("nim", "indent"),
    "cr": ("crystal", "indent"),
    "coffee": ("coffeescript", "indent"),
    **dict.fromkeys(("yml", "yaml"), ("yaml", "none")),
    **dict.fromkeys(("json", "jsonc", "json5"), ("json", "none")),
    "toml": ("toml", "none"),
    **dict.fromkeys(("md", "markdown", "rst", "txt"), ("text", "none")),
    **dict.fromkeys(("html", "htm", "xml", "svg"), ("markup", "none")),
    **dict.fromkeys(("css", "scss", "less"), ("css", "none")),
    "sql": ("sql", "none"),
    **dict.fromkeys(("ini", "cfg", "conf", "env"), ("config", "none")),
}
_FILENAMES: dict[str, tuple[str, Family]] = {
    "Dockerfile": ("dockerfile", "none"),
    "Makefile": ("makefile", "none"),
    "CMakeLists.txt": ("cmake", "none"),
    "Rakefile": ("ruby", "indent"),
    "Gemfile": ("ruby", "indent"),
}


def language_for(path: str) -> tuple[str, Family]:
    """The language name shown to the model, and the family of the heuristic."""
    name = posixpath.basename(path)
    if name in _FILENAMES:
        return _FILENAMES[name]
    ext = name.rpartition(".")[2].lower() if "." in name else ""
    return _EXTENSIONS.get(ext, ("text", "auto"))

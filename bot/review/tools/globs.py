"""``path_glob`` of the ``search`` tool, matched in linear time.

The glob is a tool argument, so a prompt injection can choose it. Translated naively
into one regex (``*`` as ``[^/]*``), ``*a*a*a*a*a*a*a*a*a*a*a*a*b`` backtracks for
minutes against a long file name, and ``[z-a]`` raises ``re.error``. So the glob is split
into ``/``-separated segments; each segment is translated by :func:`fnmatch.translate`,
whose stars become atomic groups (``(?>.*?a)``) that never backtrack, and ``**``
segments are matched by a small table over path segments. A glob that cannot be used
comes back as a :class:`ToolError` the model can act on.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Iterable

from bot.review.tools.paths import ToolError, normalize, shown

#: Longer globs are refused: a real one is a few dozen characters.
MAX_GLOB_CHARS = 500
#: A ``**`` segment: any number of path segments (none included).
_ANY = None

Segment = re.Pattern[str] | None


def _segment(text: str) -> Segment:
    if text == "**":
        return _ANY
    # Other runs of stars stay within one segment, as in .gitignore.
    while "**" in text:
        text = text.replace("**", "*")
    try:
        return re.compile(fnmatch.translate(text))
    except (re.error, RecursionError, OverflowError) as exc:
        raise ToolError(f"path_glob segment {shown(text)} cannot be used: {exc}") from None


def _matches(segments: list[Segment], parts: list[str]) -> bool:
    """Whether ``parts`` (a path's segments) match ``segments``: a table of which glob
    suffixes match which path suffixes, so each pair is decided once."""
    width = len(parts)
    # ok[j]: segments[i:] match parts[j:], for the current i (built from the end).
    ok = [False] * width + [True]
    for segment in reversed(segments):
        row = [False] * (width + 1)
        for j in range(width, -1, -1):
            if segment is _ANY:
                row[j] = ok[j] or (j < width and row[j + 1])
            else:
                row[j] = j < width and ok[j + 1] and segment.fullmatch(parts[j]) is not None
        ok = row
    return ok[0]


def glob_matcher(path_glob: str | None) -> Callable[[str], bool]:
    """Which paths a ``path_glob`` selects.

    No wildcard: that file or directory (``src``, ``src/app.py``). No ``/``: the file
    name in any directory (``*.py``). Otherwise the whole path, where ``*``, ``?`` and
    ``[…]`` stay within one directory and a ``**`` segment spans any number
    (``src/**/*.ts``); a trailing ``/`` selects everything under a directory.
    """
    if not path_glob or path_glob.strip() in ("", ".", "*", "**"):
        return lambda path: True
    if len(path_glob) > MAX_GLOB_CHARS:
        raise ToolError(
            f"path_glob is {len(path_glob):,} characters; use at most {MAX_GLOB_CHARS} "
            "(a directory such as 'src' or a pattern such as 'src/**/*.py')"
        )
    glob = path_glob.strip().lstrip("/")
    if not any(c in glob for c in "*?["):
        prefix = normalize(glob)
        if not prefix:
            return lambda path: True
        return lambda path: path == prefix or path.startswith(prefix + "/")
    if "/" not in glob.rstrip("/"):
        name = _segment(glob.rstrip("/"))
        assert name is not None  # "**" alone selected everything above
        return lambda path: name.fullmatch(path.rpartition("/")[2]) is not None
    texts = [part for part in glob.split("/") if part]
    if glob.endswith("/"):
        texts.append("**")
    if texts[-1] == "**":
        # ``src/**`` and ``src/``: everything under the directory, one segment at least.
        texts[-1:] = ["*", "**"]
    segments = [_segment(text) for text in texts]
    return lambda path: _matches(segments, path.split("/"))


def any_glob_matcher(globs: Iterable[str]) -> Callable[[str], bool]:
    """Whether a path matches any of ``globs`` (settings' lists: a route's paths, an
    instruction's). A glob that cannot be used matches nothing, so one bad entry does not
    cost the others."""
    tests = []
    for glob in globs:
        try:
            tests.append(glob_matcher(glob))
        except ToolError:
            continue
    return lambda path: any(test(path) for test in tests)

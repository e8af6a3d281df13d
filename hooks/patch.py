"""Suggestions as one patch for ``git apply``: the hook proposes, the developer applies.

Each suggestion replaces lines of the reviewed content (the index, or the pushed head), so
the patch is made against that content, file by file, with git's headers and C-style
quoting of unusual paths. Suggestions that overlap an earlier one in the same file, or no
longer apply, are left out and listed with the reason; nothing is dropped silently.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass, field

from bot.domain.change import Change
from bot.domain.results import Finding
from bot.review import SuggestionError, apply_suggestion, split_lines
from bot.text import decode_text

_NO_EOL = "\\ No newline at end of file\n"
_ESCAPES = {"\a": "\\a", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\v": "\\v", "\f": "\\f"}
_ESCAPES |= {"\r": "\\r", '"': '\\"', "\\": "\\\\"}


@dataclass
class SuggestionPatch:
    #: The unified diff (text decoded with surrogateescape; encode it back the same way).
    text: str = ""
    applied: list[Finding] = field(default_factory=list)
    left_out: list[tuple[Finding, str]] = field(default_factory=list)


def quote_path(path: str) -> str:
    """``path`` as git writes it in a patch header: C-quoted when it must be."""
    raw = path.encode("utf-8", "surrogateescape")
    if not any(b < 0x20 or b >= 0x7F or b in b'"\\' for b in raw):
        return path
    out = []
    for byte in raw:
        ch = chr(byte)
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif byte < 0x20 or byte >= 0x7F:
            out.append(f"\\{byte:03o}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _file_patch(path: str, old: list[str], new: list[str]) -> list[str]:
    a, b = quote_path(f"a/{path}"), quote_path(f"b/{path}")
    lines = [f"diff --git {a} {b}\n", f"--- {a}\n", f"+++ {b}\n"]
    body = list(difflib.unified_diff(old, new, n=3))[2:]  # without difflib's own headers
    for line in body:
        lines.append(line)
        if not line.endswith("\n"):
            lines += ["\n", _NO_EOL]
    return lines


def suggestions_patch(findings: Iterable[Finding], change: Change) -> SuggestionPatch:
    result = SuggestionPatch()
    by_path: dict[str, list[Finding]] = {}
    for finding in findings:
        if finding.suggestion is None:
            continue
        if finding.side != "RIGHT":
            result.left_out.append((finding, "it is anchored on the old file"))
            continue
        by_path.setdefault(finding.path, []).append(finding)
    out: list[str] = []
    for path in sorted(by_path):
        data = change.head.read(path) if change.head is not None else None
        if data is None:
            result.left_out += [
                (f, "the file is not in the reviewed content") for f in by_path[path]
            ]
            continue
        old_text = decode_text(data)
        new_text = old_text
        taken_from = None  # the lowest line already replaced (applied bottom-up)
        for finding in sorted(by_path[path], key=lambda f: (-f.start_line, -f.end_line)):
            assert finding.suggestion is not None
            if taken_from is not None and finding.end_line >= taken_from:
                result.left_out.append((finding, "it overlaps another suggestion"))
                continue
            try:
                new_text = apply_suggestion(
                    new_text, finding.start_line, finding.end_line, finding.suggestion
                )
            except SuggestionError as exc:
                result.left_out.append((finding, str(exc)))
                continue
            taken_from = finding.start_line
            result.applied.append(finding)
        if new_text != old_text:
            out += _file_patch(path, split_lines(old_text), split_lines(new_text))
    result.applied.sort(key=lambda f: (f.path, f.start_line))
    result.text = "".join(out)
    return result

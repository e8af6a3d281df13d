"""The diff model: what changed, and on which lines GitHub accepts a review comment.

GitHub accepts a comment with ``side: RIGHT`` on an added or context line of a hunk
(numbered in the new file), and with ``side: LEFT`` on a deleted or context line
(numbered in the old file). A multi-line comment must start and end inside one hunk.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import Literal

from unidiff.errors import UnidiffParseError
from unidiff.patch import Hunk as RawHunk
from unidiff.patch import PatchedFile, PatchSet

from bot.errors import UsageError
from bot.text import decode_text, encode_text, one_line, printable

Side = Literal["RIGHT", "LEFT"]
SIDES: tuple[Side, ...] = ("RIGHT", "LEFT")

_DEV_NULL = "/dev/null"


class FileStatus(enum.StrEnum):
    ADDED = "added"
    MODIFIED = "modified"
    DELETED = "deleted"
    RENAMED = "renamed"
    #: Only the file mode changed (for instance ``chmod +x``): nothing to comment on.
    MODE_CHANGED = "mode-changed"


@dataclass(frozen=True, slots=True)
class DiffLine:
    kind: Literal["+", "-", " "]
    old_no: int | None
    new_no: int | None
    #: The line without its ending.
    text: str
    #: ``"\n"``, ``"\r\n"`` or ``""`` when the file has no newline at its end.
    eol: str


@dataclass(frozen=True)
class Hunk:
    old_start: int
    old_len: int
    new_start: int
    new_len: int
    #: The text git prints after ``@@ ... @@`` (often the enclosing function).
    section: str
    lines: tuple[DiffLine, ...]

    @cached_property
    def right_lines(self) -> frozenset[int]:
        return frozenset(ln.new_no for ln in self.lines if ln.new_no is not None)

    @cached_property
    def left_lines(self) -> frozenset[int]:
        return frozenset(ln.old_no for ln in self.lines if ln.old_no is not None)

    @cached_property
    def added_lines(self) -> frozenset[int]:
        return frozenset(ln.new_no for ln in self.lines if ln.kind == "+" and ln.new_no)

    def lines_on(self, side: Side) -> frozenset[int]:
        return self.right_lines if side == "RIGHT" else self.left_lines

    def header(self) -> str:
        head = f"@@ -{self.old_start},{self.old_len} +{self.new_start},{self.new_len} @@"
        return f"{head} {self.section}" if self.section else head


@dataclass
class FileDiff:
    #: The path in the new tree (the old path for a deleted file).
    path: str
    #: The path in the old tree; differs from ``path`` only for a rename.
    old_path: str
    status: FileStatus
    binary: bool = False
    old_mode: str | None = None
    new_mode: str | None = None
    hunks: list[Hunk] = field(default_factory=list)

    @cached_property
    def right_lines(self) -> frozenset[int]:
        return frozenset().union(*(h.right_lines for h in self.hunks))

    @cached_property
    def left_lines(self) -> frozenset[int]:
        return frozenset().union(*(h.left_lines for h in self.hunks))

    @cached_property
    def added_lines(self) -> frozenset[int]:
        return frozenset().union(*(h.added_lines for h in self.hunks))

    @cached_property
    def touched_lines(self) -> frozenset[int]:
        """New-file lines whose enclosing unit changed: the added lines, and the line
        where a removal was (a pure deletion changes the function it was in)."""
        touched = set(self.added_lines)
        for hunk in self.hunks:
            pending = False
            last: int | None = None
            for line in hunk.lines:
                if line.kind == "-":
                    pending = True
                elif line.new_no is not None:
                    if pending:
                        touched.add(line.new_no)
                        pending = False
                    last = line.new_no
            if pending and last is not None:
                touched.add(last)
        return frozenset(touched)

    @property
    def lines_added(self) -> int:
        return sum(1 for h in self.hunks for ln in h.lines if ln.kind == "+")

    @property
    def lines_deleted(self) -> int:
        return sum(1 for h in self.hunks for ln in h.lines if ln.kind == "-")

    def lines_on(self, side: Side) -> frozenset[int]:
        return self.right_lines if side == "RIGHT" else self.left_lines

    def hunk_at(self, side: Side, line: int) -> Hunk | None:
        for hunk in self.hunks:
            if line in hunk.lines_on(side):
                return hunk
        return None

    def commentable(self, side: Side, start: int, end: int) -> bool:
        """Whether GitHub accepts a comment on ``start..end`` of ``side``."""
        if start > end:
            return False
        hunk = self.hunk_at(side, end)
        return hunk is not None and start in hunk.lines_on(side)

    @property
    def reviewable(self) -> bool:
        """Text with at least one line GitHub can take a comment on."""
        return not self.binary and bool(self.hunks)


@dataclass
class Diff:
    files: list[FileDiff] = field(default_factory=list)

    def __iter__(self) -> Iterator[FileDiff]:
        return iter(self.files)

    def __len__(self) -> int:
        return len(self.files)

    @cached_property
    def _by_path(self) -> dict[str, FileDiff]:
        return {f.path: f for f in self.files}

    def get(self, path: str) -> FileDiff | None:
        return self._by_path.get(path)

    @property
    def lines_changed(self) -> int:
        return sum(f.lines_added + f.lines_deleted for f in self.files)


# git prints a path holding a quote, a backslash, a control or a non-ASCII character
# C-style: "caf\303\251.py". These undo that, byte for byte.
_QUOTED_ESCAPE = re.compile(rb"\\([0-7]{3}|.)", re.DOTALL)
_ESCAPED_BYTES = {
    b"a": b"\a",
    b"b": b"\b",
    b"t": b"\t",
    b"n": b"\n",
    b"v": b"\v",
    b"f": b"\f",
    b"r": b"\r",
}


def _unescape(match: re.Match[bytes]) -> bytes:
    code = match.group(1)
    if len(code) == 3:
        return bytes([int(code, 8)])
    return _ESCAPED_BYTES.get(code, code)


def _unquote(name: str) -> str:
    if len(name) < 2 or not (name.startswith('"') and name.endswith('"')):
        return name
    return decode_text(_QUOTED_ESCAPE.sub(_unescape, encode_text(name[1:-1])))


def _strip_prefix(name: str | None) -> str | None:
    if name is None:
        return None
    name = _unquote(name)
    if name == _DEV_NULL:
        return None
    if name.startswith(("a/", "b/")):
        return name[2:]
    return name


def _split_eol(value: str) -> tuple[str, str]:
    if value.endswith("\r\n"):
        return value[:-2], "\r\n"
    if value.endswith("\n"):
        return value[:-1], "\n"
    return value, ""


_LINE_KINDS: dict[str, Literal["+", "-", " "]] = {"+": "+", "-": "-", " ": " "}


def _header(raw: RawHunk) -> str:
    return f"@@ -{raw.source_start},{raw.source_length} +{raw.target_start},{raw.target_length} @@"


def _hunk(raw: RawHunk) -> Hunk:
    lines: list[DiffLine] = []
    for ln in raw:
        if ln.line_type == "\\":
            # "\ No newline at end of file" applies to the line before it.
            if lines:
                prev = lines[-1]
                lines[-1] = DiffLine(prev.kind, prev.old_no, prev.new_no, prev.text, "")
            continue
        kind = _LINE_KINDS.get(ln.line_type)
        if kind is None:
            continue
        if ln.source_line_no == 0 or ln.target_line_no == 0:
            # "@@ -0,0 +0,1 @@": git starts at 0 only for an empty side.
            raise UsageError(f"not a unified diff: hunk {_header(raw)} numbers a line 0")
        text, eol = _split_eol(ln.value)
        lines.append(DiffLine(kind, ln.source_line_no, ln.target_line_no, text, eol))
    return Hunk(
        raw.source_start,
        raw.source_length,
        raw.target_start,
        raw.target_length,
        (raw.section_header or "").strip(),
        tuple(lines),
    )


def _file(raw: PatchedFile) -> FileDiff:
    old = _strip_prefix(raw.source_file)
    new = _strip_prefix(raw.target_file)
    # git says "new file" / "deleted file" in its headers; unidiff's guess from the hunk
    # (old side empty) would also call a once-empty file "added". Guess only without them.
    git = any(info.startswith("diff --git ") for info in raw.patch_info or ())
    if old is None or (not git and raw.is_added_file):
        status = FileStatus.ADDED
    elif new is None or (not git and raw.is_removed_file):
        status = FileStatus.DELETED
    elif old != new:
        status = FileStatus.RENAMED
    elif not len(raw) and not raw.is_binary_file and raw.source_mode != raw.target_mode:
        status = FileStatus.MODE_CHANGED
    else:
        status = FileStatus.MODIFIED
    path = new or old or raw.path
    if not path:
        # "diff --git a/ b/", or difflib's bare "--- "/"+++ ": nothing a finding could name.
        raise UsageError("not a unified diff: a file in it has no name on its ---/+++ lines")
    return FileDiff(
        path=path,
        old_path=old or path,
        status=status,
        binary=bool(raw.is_binary_file),
        old_mode=raw.source_mode,
        new_mode=raw.target_mode,
        hunks=[_hunk(h) for h in raw],
    )


def parse_diff(data: bytes | str) -> Diff:
    """Parse a unified diff (``git diff`` output, with or without git headers)."""
    text = decode_text(data) if isinstance(data, bytes) else data
    try:
        patch = PatchSet(text)
    except UnidiffParseError as exc:
        # unidiff quotes the offending line, ending included: keep the message one
        # short line whatever the input held.
        reason = one_line(str(exc), 200)
        raise UsageError(f"not a unified diff: {printable(reason)}") from None
    if not patch and text.strip():
        # Anything else (a log, a traceback) would otherwise read as "nothing changed".
        raise UsageError("not a unified diff: no '---'/'+++' or 'diff --git' header found")
    return Diff([_file(f) for f in patch])

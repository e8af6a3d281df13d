"""Paths the model asks for, checked and resolved inside one snapshot.

The model's arguments are untrusted (a prompt injection in the diff can ask for
``/etc/passwd``), so every path is normalised lexically and resolved entry by entry
through the :class:`~bot.domain.change.Snapshot`, never through the file system. A
symlink is followed only when its target stays inside the snapshot; a submodule, a
``.git`` component, an absolute path or a ``..`` that climbs out is refused with a
message the model can act on.
"""

from __future__ import annotations

import posixpath
import re

from bot.domain.change import EntryKind, Snapshot
from bot.errors import GitNeuralError

_MAX_SYMLINK_HOPS = 8
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_WINDOWS_ABSOLUTE = re.compile(r"[A-Za-z]:[\\/]")


class ToolError(GitNeuralError):
    """A tool call the model made that cannot be answered; the message is for the model."""


def shown(value: str, limit: int = 200) -> str:
    """``value`` quoted for a message: control characters escaped, long values cut."""
    text = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", value)
    if len(text) > limit:
        text = text[:limit] + "…"
    return f"'{text}'"


def normalize(path: str) -> str:
    """``path`` as ``a/b/c`` relative to the root (``""`` for the root itself)."""
    if "\0" in path:
        raise ToolError("paths cannot contain NUL characters")
    raw = path.strip()
    if raw.startswith(("/", "~", "\\")) or _WINDOWS_ABSOLUTE.match(raw):
        raise ToolError(
            f"absolute path {shown(path)} refused: use a path relative to the repository "
            "root, such as 'src/app.py'"
        )
    norm = posixpath.normpath(raw) if raw else "."
    if norm == ".":
        return ""
    if norm == ".." or norm.startswith("../"):
        raise ToolError(f"path {shown(path)} leaves the repository: only its files can be read")
    if any(part.lower() == ".git" for part in norm.split("/")):
        raise ToolError(f"path {shown(path)} is inside .git, which is not part of the review")
    return norm


def _follow(snapshot: Snapshot, link: str) -> str:
    target = snapshot.symlink_target(link)
    if target is None:
        raise ToolError(f"symlink {shown(link)} has no readable target")
    if target.startswith("/") or _WINDOWS_ABSOLUTE.match(target):
        raise ToolError(
            f"{shown(link)} is a symlink to an absolute path outside the repository; "
            "it is not followed"
        )
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(link), target))
    if joined == ".." or joined.startswith("../"):
        raise ToolError(
            f"{shown(link)} is a symlink that leaves the repository ({shown(target)}); "
            "it is not followed"
        )
    if any(part.lower() == ".git" for part in joined.split("/")):
        raise ToolError(f"{shown(link)} is a symlink into .git; it is not followed")
    return "" if joined == "." else joined


def resolve(snapshot: Snapshot, path: str) -> tuple[str, EntryKind]:
    """The real path and kind of ``path``, following symlinks only inside the snapshot."""
    parts = [p for p in normalize(path).split("/") if p]
    done: list[str] = []
    hops = 0
    kind: EntryKind = "dir"
    while parts:
        current = "/".join([*done, parts[0]])
        found = snapshot.kind(current)
        if found is None:
            where = "/".join(done) or "the repository root"
            raise ToolError(
                f"{shown(current)} does not exist in {snapshot.label or 'the reviewed tree'} "
                f"(list_dir {shown('/'.join(done))} shows what {where} holds)"
            )
        if found == "submodule":
            raise ToolError(
                f"{shown(current)} is a submodule (a separate repository); its files are "
                "not part of this review"
            )
        if found == "symlink":
            hops += 1
            if hops > _MAX_SYMLINK_HOPS:
                raise ToolError(f"too many symlinks while resolving {shown(path)}")
            parts = [p for p in _follow(snapshot, current).split("/") if p] + parts[1:]
            done = []
            continue
        if found == "file" and len(parts) > 1:
            raise ToolError(f"{shown(current)} is a file, not a directory")
        kind = found
        done.append(parts.pop(0))
    if not done:
        # Every symlink led back to the root.
        return "", "dir"
    return "/".join(done), kind

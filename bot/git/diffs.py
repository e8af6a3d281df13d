"""The one diff configuration every entrance uses: what ``git diff -M`` prints.

GitHub anchors review comments on the diff git computes, so every diff GitNeural reviews
is made the way git makes it: 3 context lines, no merging of nearby hunks, git's indent
heuristic (on by default since git 2.14; without it libgit2's hunks differ from git's by
a line or more around blocks that look alike), and renames found by git's own algorithm
at 50% (:mod:`bot.git.renames`), not libgit2's, whose scores differ.

libgit2 computes the diff without renames; the renamed pairs are then printed as git
prints them (mode lines, ``similarity index``, ``rename from``/``rename to``, then the
content diff of the two blobs with the same options).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pygit2
from pygit2.enums import DeltaStatus, DiffFlag, DiffOption

from bot.git.renames import MAX_SCORE, Candidate, Rename, find_renames

__all__ = ["CONTEXT_LINES", "DIFF_FLAGS", "diff_to_bytes", "git_bytes", "quote_path"]

CONTEXT_LINES = 3
DIFF_FLAGS = DiffOption.INDENT_HEURISTIC
_ABBREV = 7
_TYPE_MASK = 0o170000
_REGULAR = 0o100000
_LINK = 0o120000
_ZERO = "0" * 40
_ESCAPES = {
    7: b"\\a",
    8: b"\\b",
    9: b"\\t",
    10: b"\\n",
    11: b"\\v",
    12: b"\\f",
    13: b"\\r",
    34: b'\\"',
    92: b"\\\\",
}

#: Reads the new side of a created file when it is not in the object database.
NewReader = Callable[[pygit2.DiffFile], bytes]


def quote_path(raw: bytes) -> bytes:
    """A path as git prints it in diff headers (``core.quotePath``'s default)."""
    if not any(b < 0x20 or b >= 0x7F or b in (34, 92) for b in raw):
        return raw
    out = bytearray(b'"')
    for b in raw:
        if b in _ESCAPES:
            out += _ESCAPES[b]
        elif b < 0x20 or b >= 0x7F:
            out += b"\\%03o" % b
        else:
            out.append(b)
    out += b'"'
    return bytes(out)


def diff_to_bytes(diff: pygit2.Diff) -> bytes:
    """The diff as libgit2 prints it, bytes kept as they are in the files."""
    # Diff.patch is a str decoded lossily; each Patch.data keeps the raw bytes.
    return b"".join(patch.data for patch in diff if patch is not None)


def _blob_reader(repo: pygit2.Repository, file: pygit2.DiffFile) -> Callable[[], bytes]:
    def load() -> bytes:
        if file.mode & _TYPE_MASK not in (_REGULAR, _LINK):
            return b""
        blob = repo.get(file.id)
        return blob.data if isinstance(blob, pygit2.Blob) else b""

    return load


def read_worktree_file(repo: pygit2.Repository) -> NewReader:
    """A reader of created files' content from ``repo``'s work tree."""
    root = Path(repo.workdir or ".")

    def read(file: pygit2.DiffFile) -> bytes:
        path = root / os.fsdecode(file.raw_path)
        if file.mode & _TYPE_MASK == _LINK:
            return os.fsencode(path.readlink())
        if file.mode & _TYPE_MASK != _REGULAR:
            return b""
        return path.read_bytes()

    return read


def _candidate(
    repo: pygit2.Repository, file: pygit2.DiffFile, read_new: NewReader | None
) -> Candidate:
    known = bool(file.flags & DiffFlag.VALID_ID) and str(file.id) != _ZERO
    if known or read_new is None:
        return Candidate(file.path, file.mode, str(file.id), _blob_reader(repo, file))
    data = read_new(file)
    oid = str(file.id) if file.mode & _TYPE_MASK not in (_REGULAR, _LINK) else None
    return Candidate(file.path, file.mode, oid or str(pygit2.hash(data)), lambda: data)


def _abbrev(oid: str) -> bytes:
    return oid[:_ABBREV].encode("ascii")


def _renamed(
    old: pygit2.DiffFile, source: Candidate, new: pygit2.DiffFile, dest: Candidate, found: Rename
) -> bytes:
    head = [
        b"diff --git " + quote_path(b"a/" + old.raw_path) + b" " + quote_path(b"b/" + new.raw_path)
    ]
    if old.mode != new.mode:
        head += [b"old mode %o" % old.mode, b"new mode %o" % new.mode]
    head += [
        b"similarity index %d%%" % found.similarity,
        b"rename from " + quote_path(old.raw_path),
        b"rename to " + quote_path(new.raw_path),
    ]
    if found.score >= MAX_SCORE:
        return b"\n".join(head) + b"\n"
    index = b"index " + _abbrev(source.oid) + b".." + _abbrev(dest.oid)
    head.append(index + (b" %o" % old.mode if old.mode == new.mode else b""))
    patch = pygit2.Patch.create_from(
        source.data,
        dest.data,
        old_as_path=old.path,
        new_as_path=new.path,
        flag=DIFF_FLAGS,
        context_lines=CONTEXT_LINES,
        interhunk_lines=0,
    )
    body = patch.data
    # create_from prints its own "diff --git", "index" and ---/+++ lines (from str
    # paths): git's, made here from the raw paths, replace them; the hunks (or "Binary
    # files ... differ") stay.
    for prefix in (b"diff --git ", b"index "):
        if body.startswith(prefix):
            body = body.partition(b"\n")[2]
    if body.startswith(b"--- "):
        body = body.partition(b"\n")[2].partition(b"\n")[2]
        head += [_label(b"--- ", b"a/", old.raw_path), _label(b"+++ ", b"b/", new.raw_path)]
    return b"\n".join(head) + b"\n" + body


def _label(marker: bytes, prefix: bytes, raw: bytes) -> bytes:
    # git ends a name holding a space with a tab, so that tools know where it ends.
    return marker + quote_path(prefix + raw) + (b"\t" if b" " in raw else b"")


def _as_git(patch: pygit2.Patch) -> bytes:
    """One of libgit2's patches as git prints it."""
    data = patch.data
    delta = patch.delta
    if delta.status == DeltaStatus.MODIFIED and delta.old_file.id == delta.new_file.id:
        # Only the mode changed: libgit2 adds "Binary files ... differ" for a binary
        # file, git prints the mode lines alone.
        lines = data.splitlines(keepends=True)
        data = b"".join(line for line in lines if not line.startswith(b"Binary files "))
    return data


def git_bytes(
    repo: pygit2.Repository, diff: pygit2.Diff, read_new: NewReader | None = None
) -> bytes:
    """``diff`` (computed without rename detection) as ``git diff -M`` prints it.

    ``read_new`` reads created files that are not in the object database (the work
    tree's); without it every created file's blob is looked up by id.
    """
    patches = [patch for patch in diff if patch is not None]
    deltas = [patch.delta for patch in patches]
    deleted = {d.old_file.path for d in deltas if d.status == DeltaStatus.DELETED}
    created = {d.new_file.path for d in deltas if d.status in _CREATED}
    # A deletion and a creation at one path are a type change (file <-> symlink), which
    # git keeps as one pair: neither takes part in rename detection.
    sources = [
        i
        for i, d in enumerate(deltas)
        if d.status == DeltaStatus.DELETED and d.old_file.path not in created
    ]
    dests = [
        i for i, d in enumerate(deltas) if d.status in _CREATED and d.new_file.path not in deleted
    ]
    if not sources or not dests:
        return b"".join(map(_as_git, patches))
    src = [_candidate(repo, deltas[i].old_file, None) for i in sources]
    dst = [_candidate(repo, deltas[i].new_file, read_new) for i in dests]
    renames = {dests[r.dest]: r for r in find_renames(src, dst)}
    gone = {sources[r.source] for r in renames.values()}
    out: list[bytes] = []
    for i, patch in enumerate(patches):
        if i in gone:
            continue
        found = renames.get(i)
        if found is None:
            out.append(_as_git(patch))
            continue
        old = deltas[sources[found.source]].old_file
        out.append(_renamed(old, src[found.source], deltas[i].new_file, dst[found.dest], found))
    return b"".join(out)


_CREATED = (DeltaStatus.ADDED, DeltaStatus.UNTRACKED)

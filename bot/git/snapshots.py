"""Read-only views of one version of a repository: a commit's tree and the index.

They implement :class:`bot.domain.change.Snapshot`. The reviewer and its read-only tools
see files only through them, so they report entries exactly as git records them: a
symlink is a ``"symlink"`` (its target is never followed), a gitlink is a
``"submodule"`` (never entered), and only regular files have content. Paths are
repository-relative with ``/``; anything that could escape (``..``, an absolute path, a
``.git`` component, a NUL) is treated as absent rather than resolved. The work tree's
view is in :mod:`bot.git.worktree`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import cached_property

import pygit2
from pygit2.enums import FileMode

from bot.domain.change import Entry, EntryKind
from bot.text import decode_text

TREE_MODE = int(FileMode.TREE)
LINK_MODE = int(FileMode.LINK)
GITLINK_MODE = int(FileMode.COMMIT)
_FILE_MODES = frozenset({int(FileMode.BLOB), int(FileMode.BLOB_EXECUTABLE), 0o100664})


def kind_of_mode(mode: int) -> EntryKind | None:
    """The entry kind git's file mode ``mode`` stands for (None for unknown modes)."""
    if mode in _FILE_MODES:
        return "file"
    if mode == TREE_MODE:
        return "dir"
    if mode == LINK_MODE:
        return "symlink"
    if mode == GITLINK_MODE:
        return "submodule"
    return None


def clean_path(path: str) -> str | None:
    """``path`` normalised to ``a/b/c`` (``""`` for the root), or None if it could escape.

    Leading ``./``, repeated and trailing slashes are tolerated; ``..``, absolute paths,
    NUL bytes and ``.git`` components are refused.
    """
    if path.startswith("/") or "\0" in path:
        return None
    parts = [p for p in path.split("/") if p not in ("", ".")]
    if any(p == ".." or p.lower() == ".git" for p in parts):
        return None
    return "/".join(parts)


class TreeSnapshot:
    """A commit's (or any tree's) files, read from the object database."""

    def __init__(
        self, repo: pygit2.Repository, source: pygit2.Commit | pygit2.Tree, label: str = ""
    ) -> None:
        self._repo = repo
        if isinstance(source, pygit2.Commit):
            self.commit_id: str | None = str(source.id)
            self._tree = source.tree
        else:
            self.commit_id = None
            self._tree = source
        self.label = label or str(source.id)

    def _lookup(self, path: str) -> tuple[int, pygit2.Object] | None:
        clean = clean_path(path)
        if clean is None:
            return None
        if clean == "":
            return TREE_MODE, self._tree
        try:
            obj = self._tree[clean]
        except KeyError:
            return None
        return int(obj.filemode), obj

    def read(self, path: str) -> bytes | None:
        found = self._lookup(path)
        if found is None or found[0] not in _FILE_MODES:
            return None
        return _blob_data(self._repo, found[1].id)

    def kind(self, path: str) -> EntryKind | None:
        found = self._lookup(path)
        return None if found is None else kind_of_mode(found[0])

    def size(self, path: str) -> int | None:
        found = self._lookup(path)
        if found is None or not _is_blob_mode(found[0]):
            return None
        return _blob_size(self._repo, found[1].id)

    def list_dir(self, path: str) -> list[Entry]:
        found = self._lookup(path)
        if found is None or found[0] != TREE_MODE or not isinstance(found[1], pygit2.Tree):
            return []
        entries = []
        for child in found[1]:
            mode = int(child.filemode)
            kind = kind_of_mode(mode)
            if kind is None or child.name is None:
                continue
            size = _blob_size(self._repo, child.id) if _is_blob_mode(mode) else None
            entries.append(Entry(child.name, kind, size))
        return entries

    def walk(self) -> Iterator[str]:
        # Depth first in tree order, which is the order `git ls-files` prints.
        stack: list[tuple[str, Iterator[pygit2.Object]]] = [("", iter(self._tree))]
        while stack:
            prefix, children = stack[-1]
            child = next(children, None)
            if child is None:
                stack.pop()
                continue
            mode = int(child.filemode)
            path = f"{prefix}{child.name}"
            if mode == TREE_MODE and isinstance(child, pygit2.Tree):
                stack.append((f"{path}/", iter(child)))
            elif mode in _FILE_MODES:
                yield path

    def symlink_target(self, path: str) -> str | None:
        found = self._lookup(path)
        if found is None or found[0] != LINK_MODE:
            return None
        data = _blob_data(self._repo, found[1].id)
        return None if data is None else decode_text(data)


class FlatSnapshot:
    """Base of snapshots given as a flat ``path -> (mode, blob id)`` map (index, work tree).

    Subclasses provide ``read``, ``size`` and ``symlink_target``, and may refine
    ``_mode`` (the work tree asks the file system).
    """

    label: str

    def __init__(
        self, repo: pygit2.Repository, entries: Mapping[str, tuple[int, pygit2.Oid]]
    ) -> None:
        self._repo = repo
        self._entries = dict(entries)

    @cached_property
    def _dirs(self) -> dict[str, dict[str, int]]:
        """Each directory's children and their modes, derived once from the flat map."""
        dirs: dict[str, dict[str, int]] = {"": {}}
        for full, (file_mode, _) in self._entries.items():
            path, mode = full, file_mode
            while True:
                parent, _, name = path.rpartition("/")
                siblings = dirs.get(parent)
                if siblings is not None:
                    siblings[name] = mode
                    break
                dirs[parent] = {name: mode}
                path, mode = parent, TREE_MODE
        return dirs

    def _mode(self, clean: str) -> int | None:
        entry = self._entries.get(clean)
        if entry is not None:
            return entry[0]
        return TREE_MODE if clean in self._dirs else None

    def kind(self, path: str) -> EntryKind | None:
        clean = clean_path(path)
        mode = None if clean is None else self._mode(clean)
        return None if mode is None else kind_of_mode(mode)

    def walk(self) -> Iterator[str]:
        for path in sorted(self._entries):
            if self.kind(path) == "file":
                yield path

    def list_dir(self, path: str) -> list[Entry]:
        clean = clean_path(path)
        children = None if clean is None else self._dirs.get(clean)
        if clean is None or children is None:
            return []
        entries = []
        for name in sorted(children):
            child = f"{clean}/{name}" if clean else name
            kind = self.kind(child)
            if kind is not None:
                entries.append(Entry(name, kind, self.size(child)))
        return entries

    def size(self, path: str) -> int | None:
        raise NotImplementedError


class IndexSnapshot(FlatSnapshot):
    """The staged content: blobs recorded in the index (not the work tree's files).

    The entries are copied when the snapshot is made, so later changes to the index do
    not show through. Conflicted paths (no stage-0 entry) are absent.
    """

    def __init__(self, repo: pygit2.Repository, index: pygit2.Index | None = None) -> None:
        index = repo.index if index is None else index
        super().__init__(repo, stage0_entries(index))
        self.label = "index"

    def _blob(self, path: str, modes: frozenset[int]) -> pygit2.Oid | None:
        clean = clean_path(path)
        entry = None if clean is None else self._entries.get(clean)
        return entry[1] if entry is not None and entry[0] in modes else None

    def read(self, path: str) -> bytes | None:
        oid = self._blob(path, _FILE_MODES)
        return None if oid is None else _blob_data(self._repo, oid)

    def size(self, path: str) -> int | None:
        oid = self._blob(path, _FILE_MODES | {LINK_MODE})
        return None if oid is None else _blob_size(self._repo, oid)

    def symlink_target(self, path: str) -> str | None:
        oid = self._blob(path, frozenset({LINK_MODE}))
        data = None if oid is None else _blob_data(self._repo, oid)
        return None if data is None else decode_text(data)


def stage0_entries(index: pygit2.Index) -> dict[str, tuple[int, pygit2.Oid]]:
    """``path -> (mode, blob id)`` of the index, without conflicted paths."""
    entries = {str(e.path): (int(e.mode), e.id) for e in index}
    conflicts = index.conflicts
    if conflicts is not None:
        for triple in conflicts:
            for side in triple:
                if side is not None:
                    entries.pop(str(side.path), None)
    return entries


def _is_blob_mode(mode: int) -> bool:
    return mode in _FILE_MODES or mode == LINK_MODE


def _blob_data(repo: pygit2.Repository, oid: pygit2.Oid) -> bytes | None:
    obj = repo.get(oid)
    return obj.data if isinstance(obj, pygit2.Blob) else None


def _blob_size(repo: pygit2.Repository, oid: pygit2.Oid) -> int | None:
    try:
        return repo.odb.read_header(oid)[1]
    except (KeyError, ValueError, pygit2.GitError):
        # A blob missing from a shallow or partial clone: the size is simply unknown.
        return None

"""Read-only views of one version of a repository: a commit's tree, the index, the work tree.

They implement :class:`bot.review.change.Snapshot`. The reviewer and its read-only tools
see files only through them, so they report entries exactly as git records them: a
symlink is a ``"symlink"`` (its target is never followed), a gitlink is a
``"submodule"`` (never entered), and only regular files have content. Paths are
repository-relative with ``/``; anything that could escape (``..``, an absolute path, a
``.git`` component, a NUL) is treated as absent rather than resolved.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator, Mapping
from functools import cached_property
from pathlib import Path

import pygit2
from pygit2.enums import FileMode

from bot.review.change import Entry, EntryKind
from bot.review.diff import decode_text

_TREE = int(FileMode.TREE)
_LINK = int(FileMode.LINK)
_GITLINK = int(FileMode.COMMIT)
_FILE_MODES = frozenset({int(FileMode.BLOB), int(FileMode.BLOB_EXECUTABLE), 0o100664})

# Opening a work-tree file must never follow a symlink swapped in after the check, nor
# block on a FIFO: both flags are no-ops where the platform lacks them.
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)


def kind_of_mode(mode: int) -> EntryKind | None:
    """The entry kind git's file mode ``mode`` stands for (None for unknown modes)."""
    if mode in _FILE_MODES:
        return "file"
    if mode == _TREE:
        return "dir"
    if mode == _LINK:
        return "symlink"
    if mode == _GITLINK:
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
            return _TREE, self._tree
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
        if found is None or found[0] != _TREE or not isinstance(found[1], pygit2.Tree):
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
            if mode == _TREE and isinstance(child, pygit2.Tree):
                stack.append((f"{path}/", iter(child)))
            elif mode in _FILE_MODES:
                yield path

    def symlink_target(self, path: str) -> str | None:
        found = self._lookup(path)
        if found is None or found[0] != _LINK:
            return None
        data = _blob_data(self._repo, found[1].id)
        return None if data is None else decode_text(data)


class _FlatSnapshot:
    """Base of snapshots given as a flat ``path -> (mode, blob id)`` map (index, work tree)."""

    label: str

    def __init__(self, repo: pygit2.Repository, entries: Mapping[str, tuple[int, pygit2.Oid]]):
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
                path, mode = parent, _TREE
        return dirs

    def _mode(self, clean: str) -> int | None:
        entry = self._entries.get(clean)
        if entry is not None:
            return entry[0]
        return _TREE if clean in self._dirs else None

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


class IndexSnapshot(_FlatSnapshot):
    """The staged content: blobs recorded in the index (not the work tree's files).

    The entries are copied when the snapshot is made, so later changes to the index do
    not show through. Conflicted paths (no stage-0 entry) are absent.
    """

    def __init__(self, repo: pygit2.Repository, index: pygit2.Index | None = None) -> None:
        index = repo.index if index is None else index
        super().__init__(repo, _stage0_entries(index))
        self.label = "index"

    def _blob(self, path: str, modes: frozenset[int]) -> pygit2.Oid | None:
        clean = clean_path(path)
        entry = None if clean is None else self._entries.get(clean)
        return entry[1] if entry is not None and entry[0] in modes else None

    def read(self, path: str) -> bytes | None:
        oid = self._blob(path, _FILE_MODES)
        return None if oid is None else _blob_data(self._repo, oid)

    def size(self, path: str) -> int | None:
        oid = self._blob(path, _FILE_MODES | {_LINK})
        return None if oid is None else _blob_size(self._repo, oid)

    def symlink_target(self, path: str) -> str | None:
        oid = self._blob(path, frozenset({_LINK}))
        data = None if oid is None else _blob_data(self._repo, oid)
        return None if data is None else decode_text(data)


class WorkTreeSnapshot(_FlatSnapshot):
    """The work tree's current files, limited to the paths git knows about.

    Only tracked paths (and the untracked ones passed in) are visible, so ignored files
    such as ``.env`` never are. Kinds and content come from the file system via
    ``lstat``: a path whose parent is not a real directory (a symlink swapped in, say)
    is absent, and nothing is ever opened through a symlink.
    """

    def __init__(
        self,
        repo: pygit2.Repository,
        index: pygit2.Index | None = None,
        untracked: tuple[str, ...] = (),
    ) -> None:
        if repo.workdir is None:
            raise ValueError("a bare repository has no work tree")
        index = repo.index if index is None else index
        entries = _stage0_entries(index)
        for path in untracked:
            # Content comes from the file system: the id is never used.
            entries.setdefault(path, (int(FileMode.BLOB), pygit2.Oid(raw=bytes(20))))
        super().__init__(repo, entries)
        self._root = Path(repo.workdir)
        # Directories already seen to be real (not symlinks), so a walk costs one lstat
        # per file rather than one per path component.
        self._real_dirs: set[str] = {""}
        self.label = "work tree"

    def _real_dir(self, rel: str) -> bool:
        """Whether ``rel`` and all its parents are directories, not symlinks to one."""
        if rel in self._real_dirs:
            return True
        if not self._real_dir(rel.rpartition("/")[0]):
            return False
        try:
            is_dir = stat.S_ISDIR((self._root / rel).lstat().st_mode)
        except OSError:
            return False
        if is_dir:
            self._real_dirs.add(rel)
        return is_dir

    def _lstat(self, clean: str) -> os.stat_result | None:
        if not self._real_dir(clean.rpartition("/")[0]):
            return None
        try:
            return (self._root / clean).lstat()
        except OSError:
            return None

    def _mode(self, clean: str) -> int | None:
        known = super()._mode(clean)
        if known is None or known == _GITLINK:
            return known
        if known == _TREE:
            return _TREE if self._real_dir(clean) else None
        st = self._lstat(clean)
        if st is None:
            return None
        if stat.S_ISLNK(st.st_mode):
            return _LINK
        if stat.S_ISREG(st.st_mode):
            return int(FileMode.BLOB_EXECUTABLE if st.st_mode & 0o111 else FileMode.BLOB)
        return None

    def read(self, path: str) -> bytes | None:
        clean = clean_path(path)
        if clean is None or self.kind(clean) != "file":
            return None
        try:
            fd = os.open(self._root / clean, _OPEN_FLAGS)
        except OSError:
            return None
        with os.fdopen(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                return None
            return handle.read()

    def size(self, path: str) -> int | None:
        clean = clean_path(path)
        if clean is None or self.kind(clean) not in ("file", "symlink"):
            return None
        st = self._lstat(clean)
        return None if st is None else st.st_size

    def symlink_target(self, path: str) -> str | None:
        clean = clean_path(path)
        if clean is None or self.kind(clean) != "symlink":
            return None
        try:
            return str((self._root / clean).readlink())
        except OSError:
            return None


def _stage0_entries(index: pygit2.Index) -> dict[str, tuple[int, pygit2.Oid]]:
    entries = {str(e.path): (int(e.mode), e.id) for e in index}
    conflicts = index.conflicts
    if conflicts is not None:
        for triple in conflicts:
            for side in triple:
                if side is not None:
                    entries.pop(str(side.path), None)
    return entries


def _is_blob_mode(mode: int) -> bool:
    return mode in _FILE_MODES or mode == _LINK


def _blob_data(repo: pygit2.Repository, oid: pygit2.Oid) -> bytes | None:
    obj = repo.get(oid)
    return obj.data if isinstance(obj, pygit2.Blob) else None


def _blob_size(repo: pygit2.Repository, oid: pygit2.Oid) -> int | None:
    try:
        return repo.odb.read_header(oid)[1]
    except (KeyError, ValueError, pygit2.GitError):
        # A blob missing from a shallow or partial clone: the size is simply unknown.
        return None

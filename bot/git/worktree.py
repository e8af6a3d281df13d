"""A read-only view of the work tree, for reviewing changes not yet staged.

Only paths git knows about are visible (tracked ones, plus the untracked ones the caller
passes), so ignored files such as ``.env`` never are. Kinds and content come from the
file system through ``lstat``, and nothing is ever opened through a symlink: not a
symlinked file, not a file under a directory that was swapped for a symlink.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pygit2
from pygit2.enums import FileMode

from bot.errors import GitError
from bot.git.snapshots import (
    GITLINK_MODE,
    LINK_MODE,
    TREE_MODE,
    FlatSnapshot,
    clean_path,
    stage0_entries,
)

# A file swapped for a symlink after the check must still not be followed, and a FIFO
# must not block the read: both flags are no-ops where the platform lacks them.
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)


class WorkTreeSnapshot(FlatSnapshot):
    """The work tree's current files at the index's paths (plus ``untracked``)."""

    def __init__(
        self,
        repo: pygit2.Repository,
        index: pygit2.Index | None = None,
        untracked: tuple[str, ...] = (),
    ) -> None:
        if repo.workdir is None:
            raise GitError("a bare repository has no work tree: review a range with --base")
        index = repo.index if index is None else index
        entries = stage0_entries(index)
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
        if known is None or known == GITLINK_MODE:
            return known
        if known == TREE_MODE:
            return TREE_MODE if self._real_dir(clean) else None
        st = self._lstat(clean)
        if st is None:
            return None
        if stat.S_ISLNK(st.st_mode):
            return LINK_MODE
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
            try:
                if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                    return None
                return handle.read()
            except OSError:
                return None

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

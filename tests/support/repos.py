"""Build real git repositories with pygit2 for tests.

    repo = make_repo(tmp_path)                       # branch "main", identity configured
    first = commit(repo, {"app.py": "x = 1\\n"})      # on the checked-out branch
    commit(repo, {"lib.py": "y\\n"}, branch="main")   # same; work tree + index follow
    commit(repo, {"NEWS": "z\\n"}, branch="feature", parents=[first])  # another branch
    stage(repo, {"app.py": "x = 2\\n"})              # `git add`
    write_worktree(repo, {"app.py": "x = 3\\n"})     # an unstaged edit

File values: ``str`` (UTF-8) or ``bytes`` content, ``None`` to delete, ``Executable(...)``
for mode 100755, ``Symlink("target")`` and ``Gitlink("<40-hex commit>")`` for a
submodule entry. A commit on the checked-out branch also resets the index and work tree
to it (uncommitted edits are lost); a commit on any other branch touches neither.
Commit times increase by a minute per commit, so history order is deterministic.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import pygit2
from pygit2.enums import CheckoutStrategy, FileMode

_clock = itertools.count(1_700_000_000, 60)


@dataclass(frozen=True)
class Executable:
    content: bytes | str


@dataclass(frozen=True)
class Symlink:
    target: str


@dataclass(frozen=True)
class Gitlink:
    """A submodule entry pointing at ``commit`` (which need not exist anywhere)."""

    commit: str


FileValue = bytes | str | Executable | Symlink | Gitlink | None
Files = Mapping[str, FileValue]


def make_repo(path: Path | str, *, branch: str = "main", bare: bool = False) -> pygit2.Repository:
    """A new repository at ``path`` whose HEAD is the unborn ``branch``."""
    repo = pygit2.init_repository(str(path), bare=bare, initial_head=branch)
    repo.config["user.name"] = "Test Author"
    repo.config["user.email"] = "author@example.com"
    # A developer's global settings must not change what the tests see.
    repo.config["core.autocrlf"] = "false"
    return repo


def signature() -> pygit2.Signature:
    return pygit2.Signature("Test Author", "author@example.com", next(_clock), 0)


def commit(
    repo: pygit2.Repository,
    files: Files,
    message: str = "change",
    *,
    parents: Iterable[pygit2.Commit | pygit2.Oid | str] | None = None,
    branch: str | None = None,
) -> pygit2.Commit:
    """Commit ``files`` on top of the first parent's tree and move ``branch`` to it.

    ``branch`` defaults to the checked-out one; ``parents`` to the branch's tip (none for
    a branch that does not exist yet).
    """
    ref = f"refs/heads/{branch}" if branch else _head_ref(repo)
    if parents is None:
        tip = repo.references.get(ref)
        parent_ids = [] if tip is None else [tip.peel(pygit2.Commit).id]
    else:
        parent_ids = [_oid(repo, p) for p in parents]
    index = pygit2.Index()
    if parent_ids:
        index.read_tree(repo[parent_ids[0]].peel(pygit2.Tree))
    for path, value in files.items():
        if value is None:
            index.remove(path)
        else:
            index.add(_entry(repo, path, value))
    tree = repo[index.write_tree(repo)].peel(pygit2.Tree)
    checked_out = ref == _head_ref(repo) and not repo.is_bare
    if checked_out:
        # Before the ref moves, so files the commit deletes are removed from disk too.
        # pygit2's type stubs leave checkout_tree unannotated.
        repo.checkout_tree(tree, strategy=CheckoutStrategy.FORCE)  # type: ignore[no-untyped-call]
    sig = signature()
    oid = repo.create_commit(None, sig, sig, message, tree.id, parent_ids)
    repo.references.create(ref, oid, force=True)
    if checked_out:
        # checkout_tree also staged the tree; make the on-disk index say so.
        repo.index.read_tree(tree)
        repo.index.write()
    return repo[oid].peel(pygit2.Commit)


def stage(repo: pygit2.Repository, files: Files) -> None:
    """Write ``files`` into the work tree and add them to the index (``git add``)."""
    write_worktree(repo, files)
    index = repo.index
    index.read(False)
    for path, value in files.items():
        if value is None:
            if path in index:
                index.remove(path)
        else:
            index.add(_entry(repo, path, value))
    index.write()


def write_worktree(repo: pygit2.Repository, files: Files) -> None:
    """Change files in the work tree only (unstaged edits); ``None`` deletes."""
    root = Path(repo.workdir)
    for path, value in files.items():
        target = root / path
        replace = value is None or isinstance(value, Symlink | Gitlink)
        if target.is_symlink() or (replace and target.is_file()):
            target.unlink()
        if value is None:
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(value, Symlink):
            target.symlink_to(value.target)
        elif isinstance(value, Gitlink):
            target.mkdir(exist_ok=True)
        else:
            content = value.content if isinstance(value, Executable) else value
            target.write_bytes(_bytes(content))
            target.chmod(0o755 if isinstance(value, Executable) else 0o644)


def _entry(repo: pygit2.Repository, path: str, value: FileValue) -> pygit2.IndexEntry:
    if isinstance(value, Gitlink):
        return pygit2.IndexEntry(path, pygit2.Oid(hex=value.commit), FileMode.COMMIT)
    if isinstance(value, Symlink):
        return pygit2.IndexEntry(path, _blob(repo, value.target), FileMode.LINK)
    if isinstance(value, Executable):
        return pygit2.IndexEntry(path, _blob(repo, value.content), FileMode.BLOB_EXECUTABLE)
    assert value is not None
    return pygit2.IndexEntry(path, _blob(repo, value), FileMode.BLOB)


def _blob(repo: pygit2.Repository, content: bytes | str) -> pygit2.Oid:
    data = _bytes(content)
    # Writing an object that exists still touches its file; skip that when we can.
    oid = pygit2.hash(data)
    return oid if oid in repo.odb else repo.create_blob(data)


def _bytes(content: bytes | str) -> bytes:
    return content.encode() if isinstance(content, str) else content


def _head_ref(repo: pygit2.Repository) -> str:
    head = repo.references.get("HEAD")
    assert head is not None
    target = head.target
    return target if isinstance(target, str) else "HEAD"


def _oid(repo: pygit2.Repository, rev: pygit2.Commit | pygit2.Oid | str) -> pygit2.Oid:
    if isinstance(rev, pygit2.Commit):
        return rev.id
    if isinstance(rev, pygit2.Oid):
        return rev
    return repo.revparse_single(rev).peel(pygit2.Commit).id

"""Judge GitNeural's diffs against git's own: ``git diff -M --no-color``, line for line.

GitHub shows (and anchors review comments on) the diff git computes. These helpers run
the real ``git`` on a repository and compare what it prints, parsed by the same parser,
with what :mod:`bot.gitrepo` computes with pygit2: per file the paths, status, binary
flag, modes, and every hunk's header and lines.

Trees for generated cases are written straight into the object database with pygit2
(``tree_of``), and the commits are unreferenced, so one repository serves many cases.
"""

from __future__ import annotations

import itertools
import os
import re
import subprocess
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pygit2
import pytest
from pygit2.enums import FileMode

from bot.domain.diff import Diff, FileDiff, parse_diff
from bot.git import renames as gitrenames
from tests.support.repos import Executable, FileValue, Gitlink, Symlink

_clock = itertools.count(1_600_000_000, 60)

#: git run as GitHub runs it: no user or system configuration, no pager, no colour.
GIT_DIFF = ("diff", "-M", "--no-color", "--no-ext-diff", "--full-index")


def git_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        {
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "LC_ALL": "C",
        }
    )
    return env


def git_diff(repo: pygit2.Repository, base: str, head: str, home: Path) -> Diff:
    """What ``git diff -M base head`` prints, parsed."""
    out = subprocess.run(
        ["git", "--git-dir", repo.path, *GIT_DIFF, base, head],
        capture_output=True,
        check=True,
        env=git_env(home),
    ).stdout
    return parse_diff(out)


@dataclass(frozen=True)
class FileView:
    path: str
    old_path: str
    status: str
    binary: bool
    old_mode: str | None
    new_mode: str | None
    hunks: tuple[tuple[str, tuple[tuple[str, int | None, int | None, str, str], ...]], ...]


def view(file: FileDiff) -> FileView:
    return FileView(
        file.path,
        file.old_path,
        str(file.status),
        file.binary,
        file.old_mode,
        file.new_mode,
        tuple(
            (
                h.header(),
                tuple((ln.kind, ln.old_no, ln.new_no, ln.text, ln.eol) for ln in h.lines),
            )
            for h in file.hunks
        ),
    )


@dataclass
class Comparison:
    """One change compared: files in each, and what differed (empty when equal)."""

    files: int
    hunks: int
    same_hunks: int
    differences: list[str]


def compare(ours: Diff, git: Diff) -> Comparison:
    """Every file and hunk of ``ours`` against ``git``'s; the differences in words."""
    # A type change (file <-> symlink) is a deletion and a creation at one path.
    mine = {(f.old_path, f.path, str(f.status)): view(f) for f in ours}
    theirs = {(f.old_path, f.path, str(f.status)): view(f) for f in git}
    differences: list[str] = []
    for key in sorted(set(mine) ^ set(theirs)):
        where = "only ours" if key in mine else "only git's"
        differences.append(f"{where}: {key[0]} -> {key[1]} ({key[2]})")
    hunks = same = 0
    for key in sorted(set(mine) & set(theirs)):
        a, b = mine[key], theirs[key]
        for field in ("binary", "old_mode", "new_mode"):
            if getattr(a, field) != getattr(b, field):
                ours_v, git_v = getattr(a, field), getattr(b, field)
                differences.append(f"{key[1]}: {field} {ours_v!r} != git's {git_v!r}")
        hunks += len(b.hunks)
        same += sum(1 for x, y in zip(a.hunks, b.hunks, strict=False) if x == y)
        if a.hunks != b.hunks:
            differences.append(f"{key[1]}: {_first_difference(a.hunks, b.hunks)}")
    order = [f.path for f in ours] == [f.path for f in git]
    if not differences and not order:
        differences.append("files in another order than git's")
    return Comparison(len(theirs), hunks, same, differences)


def _first_difference(ours: tuple[object, ...], git: tuple[object, ...]) -> str:
    if len(ours) != len(git):
        return f"{len(ours)} hunks, git has {len(git)}"
    for number, (a, b) in enumerate(zip(ours, git, strict=True), start=1):
        if a != b:
            return f"hunk {number}: ours {a!r:.300} != git's {b!r:.300}"
    return "hunks differ"


def _blob(repo: pygit2.Repository, content: bytes | str) -> pygit2.Oid:
    return repo.create_blob(content.encode() if isinstance(content, str) else content)


def tree_of(repo: pygit2.Repository, files: Mapping[str, FileValue]) -> pygit2.Oid:
    """A tree holding ``files`` (``None`` values are left out)."""
    index = pygit2.Index()
    for path, value in files.items():
        if value is None:
            continue
        if isinstance(value, Executable):
            oid, mode = _blob(repo, value.content), FileMode.BLOB_EXECUTABLE
        elif isinstance(value, Symlink):
            oid, mode = _blob(repo, value.target), FileMode.LINK
        elif isinstance(value, Gitlink):
            oid, mode = pygit2.Oid(hex=value.commit), FileMode.COMMIT
        else:
            oid, mode = _blob(repo, value), FileMode.BLOB
        index.add(pygit2.IndexEntry(path, oid, mode))
    return index.write_tree(repo)


def commit_tree(repo: pygit2.Repository, tree: pygit2.Oid, parents: Iterable[str] = ()) -> str:
    """An unreferenced commit of ``tree``."""
    when = next(_clock)
    sig = pygit2.Signature("Test Author", "author@example.com", when, 0)
    return str(
        repo.create_commit(None, sig, sig, "case", tree, [pygit2.Oid(hex=p) for p in parents])
    )


def commit_files(
    repo: pygit2.Repository, files: Mapping[str, FileValue], parents: Iterable[str] = ()
) -> str:
    return commit_tree(repo, tree_of(repo, files), parents)


def tree_files(
    root: Path, prefix: str = "", suffixes: tuple[str, ...] = (".py",)
) -> dict[str, bytes]:
    """The files below ``root`` ending in ``suffixes``, under ``prefix`` in a tree."""
    found: dict[str, bytes] = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and path.suffix in suffixes and "__pycache__" not in path.parts:
            found[prefix + path.relative_to(root).as_posix()] = path.read_bytes()
    return found


def local_git_counts_final_line() -> bool:
    """git 2.43.2 started counting a last line without a newline towards similarity."""
    out = subprocess.run(["git", "--version"], capture_output=True, text=True, check=True).stdout
    found = re.search(r"(\d+)\.(\d+)\.(\d+)", out)
    assert found, out
    return tuple(map(int, found.groups())) >= (2, 43, 2)


def like_the_local_git() -> Iterator[None]:
    """For a module-scoped fixture: GitNeural's rename scores by the local git's rule.

    GitNeural follows today's git (and GitHub); the git compared with here may predate
    its one change since 2.39 (the last line of a file without a newline counts), so the
    comparison uses the local git's rule. tests/test_gitrenames.py checks both rules on
    git's own test case.
    """
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(gitrenames, "COUNT_FINAL_LINE", local_git_counts_final_line())
        yield

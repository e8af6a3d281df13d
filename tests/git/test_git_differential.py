"""GitNeural's diffs are git's: hunks, line labels, renames and file status (issue 10).

GitHub anchors review comments on the diff git computes; one comment on a line outside
it makes GitHub reject the whole review. Every case here runs the real ``git diff -M
--no-color`` and compares it, parsed by the same parser, with what GitNeural computes
with pygit2 (:mod:`tests.support.gitdiff`): generated changes (hypothesis), this
repository's own history, and real packages' source trees committed as history.

The named reproductions also show that libgit2 on its own (no indent heuristic, its own
rename scores), which GitNeural used before, differs from git on them.
"""

from __future__ import annotations

import subprocess
import sysconfig
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pygit2
import pytest
from hypothesis import HealthCheck, given, settings
from pygit2.enums import DiffFind

from bot.domain.diff import Diff, parse_diff
from bot.git.diffs import diff_to_bytes
from bot.git.repo import range_change, staged_change, worktree_change
from tests.support.diffcases import changes
from tests.support.gitdiff import (
    Comparison,
    commit_files,
    compare,
    git_diff,
    git_env,
    like_the_local_git,
    tree_files,
)
from tests.support.paths import ROOT
from tests.support.repos import (
    Executable,
    FileValue,
    Gitlink,
    Symlink,
    commit,
    make_repo,
    stage,
    write_worktree,
)

PURELIB = Path(sysconfig.get_paths()["purelib"])
STDLIB = Path(sysconfig.get_paths()["stdlib"])


@pytest.fixture(scope="module", autouse=True)
def _like_the_local_git() -> Iterator[None]:
    yield from like_the_local_git()


@dataclass
class World:
    repo: pygit2.Repository
    home: Path

    def check(self, base: dict[str, FileValue], head: dict[str, FileValue]) -> Comparison:
        a = commit_files(self.repo, base)
        b = commit_files(self.repo, head, [a])
        return compare(range_change(self.repo, a, b).diff, git_diff(self.repo, a, b, self.home))

    def libgit2_alone(self, base: dict[str, FileValue], head: dict[str, FileValue]) -> Comparison:
        """What the old configuration gave: libgit2's defaults and its rename scores."""
        a = commit_files(self.repo, base)
        b = commit_files(self.repo, head, [a])
        old, new = (self.repo[x].peel(pygit2.Commit).tree for x in (a, b))
        diff = old.diff_to_tree(new, context_lines=3, interhunk_lines=0)
        diff.find_similar(DiffFind.FIND_RENAMES)
        return compare(parse_diff(diff_to_bytes(diff)), git_diff(self.repo, a, b, self.home))


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    root = tmp_path_factory.mktemp("differential")
    return World(pygit2.init_repository(str(root / "repo.git"), bare=True), root)


def _equal(result: Comparison) -> None:
    assert result.differences == [], result.differences


# -- named reproductions ---------------------------------------------------------------


def test_hunks_follow_gits_indent_heuristic(world: World) -> None:
    """Class 2: a function added after one that looks like it, as git shows it."""
    base = {"m.py": "def d():\n    if x:\n    x = 1\n\ndef e():\n    pass\n"}
    head = {
        "m.py": "def d():\n    if x:\n    y = 3\n    x = 1\n\n"
        "def z():\n    if x:\n    x = 1\n\ndef e():\n    pass\n"
    }
    before = world.libgit2_alone(base, head)
    assert before.differences, "libgit2 without the indent heuristic should differ here"
    _equal(world.check(base, head))
    a = commit_files(world.repo, base)
    b = commit_files(world.repo, head, [a])
    [hunk] = range_change(world.repo, a, b).diff.files[0].hunks
    assert hunk.header() == "@@ -1,4 +1,9 @@"  # libgit2 alone: @@ -1,5 +1,10 @@


def test_slid_insertion_labels_lines_as_git_does(world: World) -> None:
    """Class 2, the same header but other lines marked added: git's placement wins."""
    base = {"c.txt": "# c\n}\ndef f():\n"}
    head = {"c.txt": "# c\n\n# c\n}\ndef f():\n"}
    assert world.libgit2_alone(base, head).differences
    _equal(world.check(base, head))


def test_a_moved_edited_requirements_file_is_no_rename_when_git_says_so(world: World) -> None:
    """Class 3: libgit2 scores this a rename; git shows a deletion and a new file."""
    base = {"requirements.txt": "click\nrequests==2.31.0\njinja2~=3.1\njinja2~=3.1\n"}
    head = {"requirements/base.txt": "click\nsix\nrequests==2.31.0\npygit2>=1.15\n"}
    assert world.libgit2_alone(base, head).differences
    _equal(world.check(base, head))
    a = commit_files(world.repo, base)
    b = commit_files(world.repo, head, [a])
    statuses = {(f.old_path, f.path, str(f.status)) for f in range_change(world.repo, a, b).diff}
    assert statuses == {
        ("requirements.txt", "requirements.txt", "deleted"),
        ("requirements/base.txt", "requirements/base.txt", "added"),
    }


@pytest.mark.parametrize("moved_to", ["renamed.py", "other/module.py"])
def test_renames_at_and_around_the_threshold_match_git(world: World, moved_to: str) -> None:
    """Every share of edited lines from 0 to all, same basename (75%) or not (50%)."""
    lines = [
        f"value_{n} = compute({n}, 'some text that makes the line longer')\n" for n in range(20)
    ]
    for edited in range(len(lines) + 1):
        new = [f"changed_{n} = 0\n" if n < edited else line for n, line in enumerate(lines)]
        base = {"pkg/module.py": "".join(lines)}
        head = {f"pkg/{moved_to}" if "/" not in moved_to else moved_to: "".join(new)}
        result = world.check(base, head)
        assert result.differences == [], (edited, result.differences)


def test_copies_modes_links_submodules_and_binaries_match_git(world: World) -> None:
    text = "".join(f"line {n}\n" for n in range(30))
    base: dict[str, FileValue] = {
        "copied.txt": text,
        "tool.sh": "echo hi\n",
        "link": Symlink("copied.txt"),
        "vendor/lib": Gitlink("1" * 40),
        "image.bin": b"\x89PNG\0\0" + bytes(range(256)),
        "was_file": "content\n",
        "empty": b"",
        "moved_exec": Executable("#!/bin/sh\necho run\n"),
    }
    head: dict[str, FileValue] = {
        "copied.txt": text,
        "copy_of.txt": text + "extra\n",
        "tool.sh": Executable("echo hi\n"),
        "link": Symlink("tool.sh"),
        "vendor/lib": Gitlink("2" * 40),
        "image.bin": b"\x89PNG\0\0" + bytes(range(255, -1, -1)),
        "was_file": Symlink("copied.txt"),
        "empty_moved": b"",
        "bin/moved_exec": "#!/bin/sh\necho run\n",
    }
    _equal(world.check(base, head))


def test_crlf_no_final_newline_long_lines_and_foreign_bytes_match_git(world: World) -> None:
    base: dict[str, FileValue] = {
        "win.txt": "one\r\ntwo\r\nthree\r\n",
        "noeol.txt": "a\nb\nc",
        "long.txt": "x" * 5000 + "\n" + "y" * 70 + "\n",
        "latin1.txt": b"caf\xe9\nna\xefve\n",
        "spaces.py": "def f():\n    return 1\n",
    }
    head: dict[str, FileValue] = {
        "win.txt": "one\r\nTWO\r\nthree\r\nfour",
        "noeol.txt": "a\nb\nc\n",
        "long.txt": "x" * 4999 + "z\n" + "y" * 70 + "\n",
        "latin1.txt": b"caf\xe9\nna\xefve\nd\xe9j\xe0\n",
        "spaces.py": "def f():\n\treturn 1  \n",
    }
    _equal(world.check(base, head))


# -- generated changes -----------------------------------------------------------------


@settings(
    max_examples=250,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(case=changes())
def test_generated_changes_match_git(
    world: World, case: tuple[dict[str, FileValue], dict[str, FileValue]]
) -> None:
    base, head = case
    _equal(world.check(base, head))


# -- real history ----------------------------------------------------------------------


def _own_history() -> list[tuple[str, str]]:
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: run the tests from a clone to compare its history")
    repo = pygit2.Repository(str(ROOT))
    pairs = []
    for found in repo.walk(repo.head.target):
        if len(found.parents) == 1:
            pairs.append((str(found.parents[0].id), str(found.id)))
    return pairs


def test_this_repositorys_history_matches_git(tmp_path: Path) -> None:
    pairs = _own_history()
    repo = pygit2.Repository(str(ROOT))
    compared = 0
    for parent, child in pairs:
        result = compare(
            range_change(repo, parent, child).diff, git_diff(repo, parent, child, tmp_path)
        )
        assert result.differences == [], (child[:12], result.differences)
        compared += result.files
    assert compared >= len(pairs)  # a commit changes one file at least


#: Two versions of one real package each: the interpreter's bundled pip and setuptools
#: (fixed by the Python version) and what this project installs.
VENDORED = (
    (STDLIB / "distutils", PURELIB / "setuptools" / "_distutils"),
    (PURELIB / "setuptools" / "_vendor" / "pyparsing", PURELIB / "pip" / "_vendor" / "pyparsing"),
    (PURELIB / "pip" / "_vendor" / "urllib3", PURELIB / "urllib3"),
    (PURELIB / "pip" / "_vendor" / "requests", PURELIB / "requests"),
    (PURELIB / "pip" / "_vendor" / "packaging", PURELIB / "packaging"),
    (PURELIB / "pip" / "_vendor" / "idna", PURELIB / "idna"),
)


@pytest.mark.parametrize("old, new", VENDORED, ids=lambda p: str(p.name))
@pytest.mark.parametrize("moved", [False, True], ids=["upgraded", "moved-and-upgraded"])
def test_real_package_upgrades_match_git(world: World, old: Path, new: Path, moved: bool) -> None:
    """A package's source replaced by another release in place, or under a new folder."""
    if not old.is_dir() or not new.is_dir():
        pytest.skip(f"{old} or {new} is not installed here")
    base = tree_files(old, "lib/")
    head = tree_files(new, "vendor/" if moved else "lib/")
    result = world.check(dict(base), dict(head))
    _equal(result)
    assert result.hunks > 10


# -- the other entrances: staged and work-tree changes ---------------------------------


def _git(repo: pygit2.Repository, home: Path, *args: str) -> Diff:
    out = subprocess.run(
        ["git", "-C", str(repo.workdir), "diff", "-M", "--no-color", "--no-ext-diff", *args],
        capture_output=True,
        check=True,
        env=git_env(home),
    ).stdout
    return parse_diff(out)


def test_staged_and_work_tree_changes_match_git(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    lines = "".join(f"entry {n} with some words\n" for n in range(12))
    commit(repo, {"old/name.txt": lines, "keep.py": "def a():\n    return 1\n"})
    stage(
        repo,
        {
            "old/name.txt": None,
            "new/name.txt": lines.replace("entry 3", "item 3"),
            "keep.py": "def a():\n    return 1\n\ndef b():\n    return 2\n",
        },
    )
    _equal(compare(staged_change(repo).diff, _git(repo, tmp_path, "--cached")))
    write_worktree(repo, {"keep.py": "def a():\n    return 3\n", "new/name.txt": lines})
    _equal(compare(worktree_change(repo).diff, _git(repo, tmp_path, "HEAD")))

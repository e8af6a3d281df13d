"""Git access (bot.git.repo) and snapshots on real repositories built with pygit2."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path

import pygit2
import pytest
from pygit2.enums import FileMode

from bot.domain.change import Entry, Snapshot
from bot.domain.diff import Diff, FileStatus
from bot.errors import GitError
from bot.git.repo import (
    IndexSnapshot,
    TreeSnapshot,
    WorkTreeSnapshot,
    diff_to_bytes,
    has_staged_changes,
    open_repo,
    range_change,
    read_blob,
    resolve_commit,
    staged_change,
    worktree_change,
)
from bot.text import encode_text
from tests.support.repos import (
    Executable,
    Gitlink,
    Symlink,
    commit,
    make_repo,
    stage,
    write_worktree,
)

SUB = "0123456789abcdef0123456789abcdef01234567"


def _state(repo: pygit2.Repository) -> dict[str, str]:
    """Every file under .git with a hash of its content: proves nothing was written."""
    root = Path(repo.path)
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def _added(diff: Diff, path: str) -> list[str]:
    f = diff.get(path)
    assert f is not None, [x.path for x in diff]
    return [ln.text for h in f.hunks for ln in h.lines if ln.kind == "+"]


# Staged changes


def test_staged_before_the_first_commit(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    assert not has_staged_changes(repo)
    assert len(staged_change(repo).diff) == 0
    stage(repo, {"app.py": "print(1)\n", "pkg/mod.py": "x = 1\n"})
    before = _state(repo)
    assert has_staged_changes(repo)
    change = staged_change(repo)
    assert {f.path: f.status for f in change.diff} == {
        "app.py": FileStatus.ADDED,
        "pkg/mod.py": FileStatus.ADDED,
    }
    assert change.base is None and change.trusted is None
    assert (change.head_sha, change.base_sha, change.title) == (None, None, "staged changes")
    assert change.head is not None and change.head.read("pkg/mod.py") == b"x = 1\n"
    # Diffing against the empty tree wrote nothing (no empty-tree object, no index update).
    assert _state(repo) == before


def test_staged_against_head(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    first = commit(repo, {"a.py": "a = 1\n", "b.py": "b = 1\n", "c.py": "c = 1\n"}, "first")
    assert not has_staged_changes(repo)
    write_worktree(repo, {"a.py": "a = 2\n"})  # unstaged only
    assert not has_staged_changes(repo)
    stage(repo, {"a.py": "a = 2\n", "b.py": None, "d.py": "d = 1\n"})
    assert has_staged_changes(repo)
    change = staged_change(repo)
    assert {f.path: f.status for f in change.diff} == {
        "a.py": FileStatus.MODIFIED,
        "b.py": FileStatus.DELETED,
        "d.py": FileStatus.ADDED,
    }
    assert change.base_sha == str(first.id) and change.head_sha is None
    assert change.base is not None and change.base.read("b.py") == b"b = 1\n"
    assert change.trusted is not None and change.trusted.read("a.py") == b"a = 1\n"
    assert change.head is not None and change.head.read("b.py") is None
    assert change.head.label == "index"


def test_partially_staged_file_reviews_the_index(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    commit(repo, {"f.py": "v = 1\n"})
    stage(repo, {"f.py": "v = 2\n"})
    write_worktree(repo, {"f.py": "v = 3  # not staged\n"})
    staged = staged_change(repo)
    assert _added(staged.diff, "f.py") == ["v = 2"]
    assert staged.head is not None and staged.head.read("f.py") == b"v = 2\n"
    assert staged.head.size("f.py") == 6
    work = worktree_change(repo)
    assert _added(work.diff, "f.py") == ["v = 3  # not staged"]
    assert work.head is not None and work.head.read("f.py") == b"v = 3  # not staged\n"


def test_index_snapshot_does_not_follow_later_staging(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    commit(repo, {"f.py": "1\n"})
    stage(repo, {"f.py": "2\n"})
    change = staged_change(repo)
    stage(repo, {"f.py": "3\n"})
    assert change.head is not None and change.head.read("f.py") == b"2\n"


def test_index_snapshot_leaves_out_conflicted_paths(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    commit(repo, {"ok.py": "1\n", "c.py": "base\n"})
    index = repo.index
    entries = [
        pygit2.IndexEntry("c.py", repo.create_blob(text), FileMode.BLOB)
        for text in (b"base\n", b"ours\n", b"theirs\n")
    ]
    index.remove("c.py")
    index.add_conflict(*entries)
    index.write()
    snap = IndexSnapshot(repo)
    assert snap.read("ok.py") == b"1\n"
    assert snap.kind("c.py") is None and snap.read("c.py") is None
    assert list(snap.walk()) == ["ok.py"]


def test_renames_are_detected_in_staged_changes(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    body = "".join(f"line {i}\n" for i in range(30))
    commit(repo, {"old.py": body})
    stage(repo, {"old.py": None, "new.py": body.replace("line 3\n", "line three\n")})
    (f,) = staged_change(repo).diff
    assert (f.status, f.old_path, f.path) == (FileStatus.RENAMED, "old.py", "new.py")


# Work tree


def test_worktree_against_head(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    head = commit(repo, {"a.py": "1\n", "b.py": "1\n", ".gitignore": "*.log\n"})
    stage(repo, {"a.py": "2\n"})  # staged
    write_worktree(repo, {"b.py": None, "new.py": "untracked\n", "debug.log": "ignored\n"})
    before = _state(repo)
    change = worktree_change(repo)
    assert {f.path: f.status for f in change.diff} == {
        "a.py": FileStatus.MODIFIED,
        "b.py": FileStatus.DELETED,
    }
    assert change.base_sha == str(head.id) and change.title == "work tree changes"
    snap = change.head
    assert isinstance(snap, WorkTreeSnapshot) and snap.label == "work tree"
    assert snap.kind("b.py") is None and snap.read("b.py") is None
    assert snap.kind("new.py") is None and snap.kind("debug.log") is None
    assert list(snap.walk()) == [".gitignore", "a.py"]

    with_untracked = worktree_change(repo, include_untracked=True)
    assert {f.path: f.status for f in with_untracked.diff} == {
        "a.py": FileStatus.MODIFIED,
        "b.py": FileStatus.DELETED,
        "new.py": FileStatus.ADDED,
    }
    assert with_untracked.head is not None
    assert with_untracked.head.read("new.py") == b"untracked\n"
    assert with_untracked.head.kind("debug.log") is None  # ignored files never show
    assert _state(repo) == before  # read-only: the index was not refreshed or rewritten


def test_worktree_before_the_first_commit(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    stage(repo, {"a.py": "1\n"})
    write_worktree(repo, {"a.py": "2\n"})
    change = worktree_change(repo)
    assert _added(change.diff, "a.py") == ["2"]
    assert change.base is None and change.base_sha is None


def test_worktree_of_a_bare_repository_is_an_error(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, bare=True)
    with pytest.raises(GitError, match="bare repository"):
        worktree_change(repo)


# Ranges: GitHub's three-dot diff


def _forked(tmp_path: Path) -> tuple[pygit2.Repository, dict[str, pygit2.Commit]]:
    """main: root -> main2 (after the fork); feature: root -> feat1 -> feat2 (checked out)."""
    repo = make_repo(tmp_path)
    root = commit(repo, {"shared.py": "s = 1\n", "AGENTS.md": "old rules\n"}, "root")
    feat1 = commit(
        repo,
        {"feature.py": "f = 1\n"},
        "Add feature\n\nWhy it matters.",
        branch="feature",
        parents=[root],
    )
    feat2 = commit(repo, {"feature.py": "f = 2\n"}, "Tune feature", branch="feature")
    main2 = commit(
        repo, {"shared.py": "s = 2\n", "AGENTS.md": "new rules\n"}, "Main moves on", branch="main"
    )
    repo.set_head("refs/heads/feature")
    return repo, {"root": root, "feat1": feat1, "feat2": feat2, "main2": main2}


def test_range_is_three_dot(tmp_path: Path) -> None:
    repo, c = _forked(tmp_path)
    change = range_change(repo, "main")  # head defaults to HEAD (feature)
    # main's later change to shared.py does not appear: only what the branch did.
    assert [(f.path, f.status) for f in change.diff] == [("feature.py", FileStatus.ADDED)]
    assert _added(change.diff, "feature.py") == ["f = 2"]
    assert change.head_sha == str(c["feat2"].id)
    assert change.base_sha == str(c["root"].id)  # the merge base
    assert change.title == "Tune feature"
    assert change.description.index("Tune feature") < change.description.index("Add feature")
    assert "Why it matters." in change.description
    assert "Main moves on" not in change.description and "root" not in change.description
    assert change.head is not None and change.head.read("shared.py") == b"s = 1\n"
    assert change.base is not None and change.base.read("feature.py") is None
    # Instructions come from the base branch as it is now, not from the fork point.
    assert change.trusted is not None and change.trusted.read("AGENTS.md") == b"new rules\n"


def test_range_with_explicit_head(tmp_path: Path) -> None:
    repo, c = _forked(tmp_path)
    change = range_change(repo, str(c["root"].id), "feature~1")
    assert change.head_sha == str(c["feat1"].id)
    assert _added(change.diff, "feature.py") == ["f = 1"]
    assert change.title == "Add feature"
    same = range_change(repo, "main", "main")
    assert len(same.diff) == 0 and same.description == ""


def test_range_description_is_capped(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    root = commit(repo, {"n": "0\n"}, "root")
    for i in range(1, 61):
        commit(repo, {"n": f"{i}\n"}, f"step {i}\n\n" + "detail " * 20)
    change = range_change(repo, str(root.id))
    assert change.description.startswith("commit ") and "step 60" in change.description
    assert "step 1\n" not in change.description
    assert change.description.endswith("(older commits not shown)")
    assert len(change.description) < 20_000


def test_unrelated_histories_have_no_merge_base(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    commit(repo, {"a": "1\n"}, "main root")
    commit(repo, {"b": "1\n"}, "orphan root", branch="orphan", parents=[])
    with pytest.raises(GitError, match="share no history"):
        range_change(repo, "orphan", "main")


# Errors and discovery


def test_unknown_revisions(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    commit(repo, {"a": "1\n"})
    for rev in ["nope", "HEAD~5", "", "a:", "main\nevil"]:
        with pytest.raises(GitError, match="unknown revision") as info:
            resolve_commit(repo, rev)
        assert "\n" not in str(info.value)
    with pytest.raises(GitError, match="unknown revision 'nope'"):
        range_change(repo, "nope")
    with pytest.raises(GitError, match="unknown revision 'nope'"):
        range_change(repo, "main", "nope")
    with pytest.raises(GitError, match="unknown revision"):
        read_blob(repo, "nope", "a")


def test_open_repo_discovers_upward_and_refuses_plain_dirs(tmp_path: Path) -> None:
    make_repo(tmp_path / "r")
    (tmp_path / "r" / "deep" / "er").mkdir(parents=True)
    repo = open_repo(tmp_path / "r" / "deep" / "er")
    assert Path(repo.workdir).resolve() == (tmp_path / "r").resolve()
    (tmp_path / "plain").mkdir()
    with pytest.raises(GitError, match=r"not a git repository: .*plain"):
        open_repo(tmp_path / "plain")
    with pytest.raises(GitError, match=r"no such directory: .*missing"):
        open_repo(tmp_path / "missing")


def test_read_any_file_at_any_revision(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    one = commit(repo, {"f.txt": b"one\xff\n", "d/x": "x\n", "ln": Symlink("f.txt")})
    commit(repo, {"f.txt": "two\n"})
    assert read_blob(repo, str(one.id), "f.txt") == b"one\xff\n"
    assert read_blob(repo, "HEAD", "f.txt") == b"two\n"
    assert read_blob(repo, "HEAD~1", "d/x") == b"x\n"
    assert read_blob(repo, "main", "missing") is None
    assert read_blob(repo, "main", "d") is None  # a directory
    assert read_blob(repo, "main", "ln") is None  # a symlink is not followed
    assert read_blob(repo, "main", "d/../f.txt") is None
    assert read_blob(repo, "main", "/f.txt") is None


def test_diff_to_bytes_keeps_bytes(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    old = commit(repo, {"l.txt": b"\xe9t\xe9\n"})
    new = commit(repo, {"l.txt": b"\xe9t\xe9 \xe0\n"})
    data = diff_to_bytes(old.tree.diff_to_tree(new.tree))
    assert b"+\xe9t\xe9 \xe0\n" in data and data.startswith(b"diff --git a/l.txt b/l.txt\n")


# Snapshots: one file set, seen through a tree, the index and the work tree

FILES = {
    "README.md": "hello\n",
    "src/app.py": "print('hi')\n",
    "src/run.sh": Executable("#!/bin/sh\n"),
    "src/deep/x.bin": b"\x00\x01\x02",
    "link-in": Symlink("src/app.py"),
    "link-out": Symlink("../../../etc/passwd"),
    "link-dir": Symlink("/"),
    "vendor/lib": Gitlink(SUB),
}


def _tree(repo: pygit2.Repository) -> Snapshot:
    return TreeSnapshot(repo, resolve_commit(repo, "HEAD"))


def _index(repo: pygit2.Repository) -> Snapshot:
    return IndexSnapshot(repo)


def _work(repo: pygit2.Repository) -> Snapshot:
    return WorkTreeSnapshot(repo)


@pytest.fixture(params=[_tree, _index, _work], ids=["tree", "index", "worktree"])
def snap(request: pytest.FixtureRequest, tmp_path: Path) -> Snapshot:
    repo = make_repo(tmp_path / "repo")
    commit(repo, FILES)  # checked out: HEAD, index and work tree agree
    make: Callable[[pygit2.Repository], Snapshot] = request.param
    return make(repo)


def test_snapshot_kinds(snap: Snapshot) -> None:
    assert snap.kind("") == "dir" and snap.kind("src") == "dir" and snap.kind("src/deep") == "dir"
    assert snap.kind("README.md") == "file" and snap.kind("src/run.sh") == "file"
    assert snap.kind("link-in") == "symlink" and snap.kind("link-out") == "symlink"
    assert snap.kind("link-dir") == "symlink"
    assert snap.kind("vendor/lib") == "submodule"
    assert snap.kind("missing") is None
    assert snap.kind("./src//app.py") == "file"  # tolerated spellings


def test_snapshot_reads_only_regular_files(snap: Snapshot) -> None:
    assert snap.read("src/app.py") == b"print('hi')\n"
    assert snap.read("src/deep/x.bin") == b"\x00\x01\x02"
    for path in ["link-in", "link-out", "link-dir", "link-dir/etc/passwd", "vendor/lib", "src"]:
        assert snap.read(path) is None, path
    assert snap.symlink_target("link-out") == "../../../etc/passwd"
    assert snap.symlink_target("link-dir") == "/"
    assert snap.symlink_target("README.md") is None


def test_snapshot_refuses_escaping_paths(snap: Snapshot) -> None:
    for path in ["../x", "src/../../x", "/etc/passwd", ".git/config", ".git", "a\0b"]:
        assert snap.read(path) is None and snap.kind(path) is None, path
        assert snap.list_dir(path) == [] and snap.size(path) is None
    for path in ["link-dir/etc", "vendor/lib/README", "README.md/x"]:
        assert snap.kind(path) is None and snap.list_dir(path) == [], path


def test_snapshot_sizes(snap: Snapshot) -> None:
    assert snap.size("README.md") == 6
    assert snap.size("src/deep/x.bin") == 3
    assert snap.size("link-out") == len("../../../etc/passwd")  # the link's own blob
    assert snap.size("src") is None and snap.size("vendor/lib") is None
    assert snap.size("missing") is None


def test_snapshot_list_dir(snap: Snapshot) -> None:
    assert sorted(snap.list_dir(""), key=lambda e: e.name) == [
        Entry("README.md", "file", 6),
        Entry("link-dir", "symlink", 1),
        Entry("link-in", "symlink", 10),
        Entry("link-out", "symlink", 19),
        Entry("src", "dir", None),
        Entry("vendor", "dir", None),
    ]
    assert sorted(snap.list_dir("src/"), key=lambda e: e.name) == [
        Entry("app.py", "file", 12),
        Entry("deep", "dir", None),
        Entry("run.sh", "file", 10),
    ]
    assert snap.list_dir("vendor") == [Entry("lib", "submodule", None)]
    assert snap.list_dir("README.md") == [] and snap.list_dir("missing") == []


def test_snapshot_walk_yields_regular_files_only(snap: Snapshot) -> None:
    walked = list(snap.walk())
    assert walked == list(snap.walk())  # stable
    assert sorted(walked) == ["README.md", "src/app.py", "src/deep/x.bin", "src/run.sh"]


def test_changes_to_symlinks_and_submodules(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    commit(repo, FILES)
    other = "f" * 40
    stage(repo, {"vendor/lib": Gitlink(other), "link-in": Symlink("README.md")})
    for change in (staged_change(repo), worktree_change(repo)):
        sub, link = change.diff.get("vendor/lib"), change.diff.get("link-in")
        assert sub is not None and link is not None
        assert (sub.status, sub.new_mode) == (FileStatus.MODIFIED, "160000")
        assert _added(change.diff, "vendor/lib") == [f"Subproject commit {other}"]
        assert _added(change.diff, "link-in") == ["README.md"]
        assert change.head is not None and change.head.kind("vendor/lib") == "submodule"
        assert change.head.read("vendor/lib") is None


def test_worktree_snapshot_never_goes_through_a_swapped_in_symlink(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "mod.py").write_text("SECRET = 1\n")
    repo = make_repo(tmp_path / "repo")
    commit(repo, {"pkg/mod.py": "x = 1\n", "top.py": "t\n"})
    work = Path(repo.workdir)
    (work / "pkg" / "mod.py").unlink()
    (work / "pkg").rmdir()
    (work / "pkg").symlink_to(outside)  # a tracked directory replaced by a link out
    (work / "top.py").unlink()
    (work / "top.py").symlink_to(outside / "mod.py")  # a tracked file replaced by a link
    snap = WorkTreeSnapshot(repo)
    assert snap.read("pkg/mod.py") is None and snap.kind("pkg/mod.py") is None
    assert snap.kind("pkg") is None and snap.list_dir("pkg") == []
    assert snap.kind("top.py") == "symlink" and snap.read("top.py") is None
    assert list(snap.walk()) == []


def test_worktree_snapshot_sees_a_fifo_as_nothing(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    commit(repo, {"pipe": "was a file\n"})
    path = Path(repo.workdir) / "pipe"
    path.unlink()
    os.mkfifo(path)
    snap = WorkTreeSnapshot(repo)
    assert snap.kind("pipe") is None and snap.read("pipe") is None  # and did not block


def test_snapshot_of_non_utf8_content(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    commit(repo, {"l.txt": b"caf\xe9\n"})
    change = range_change(repo, "main")
    assert change.head is not None and change.head.read("l.txt") == b"caf\xe9\n"
    assert encode_text("caf\udce9") == b"caf\xe9"


# Scale


def test_a_three_thousand_file_change_is_read_whole(tmp_path: Path) -> None:
    # Its speed is measured in benchmarks/bench_core.py (3,000 files), not timed here.
    repo = make_repo(tmp_path)
    count = 3000
    # Two distinct blobs only: creating 6,000 loose objects would dominate the test's time.
    base = commit(repo, {f"pkg{i % 30}/m{i}.py": "x = 1\ny = 0\n" for i in range(count)})
    edits = {f"pkg{i % 30}/m{i}.py": "x = 1\ny = 1\n" for i in range(count)}
    head = commit(repo, edits, branch="feature", parents=[base])

    change = range_change(repo, str(base.id), "feature")
    assert len(change.diff) == count and change.head_sha == str(head.id)
    assert change.diff.lines_changed == 2 * count

    stage(repo, edits)
    staged = staged_change(repo)
    walked = sum(1 for _ in staged.head.walk()) if staged.head else 0
    assert len(staged.diff) == count and walked == count

    work = worktree_change(repo)
    assert len(work.diff) == count

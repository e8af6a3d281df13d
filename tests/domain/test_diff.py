"""The diff model (bot.domain.diff) on diffs from real git repositories and hand-made ones."""

from __future__ import annotations

import difflib
from pathlib import Path

import pygit2
import pytest

from bot.domain.diff import Diff, FileDiff, FileStatus, parse_diff
from bot.errors import UsageError
from bot.git.repo import range_change
from bot.text import encode_text
from tests.support.repos import Executable, Symlink, commit, make_repo


def _git_diff(tmp_path: Path, before: dict, after: dict) -> Diff:
    """The diff git computes between two commits holding ``before`` and ``after``."""
    repo = make_repo(tmp_path / "repo")
    old = commit(repo, before, "before")
    new = commit(repo, after, "after")
    return range_change(repo, str(old.id), str(new.id)).diff


def _only(diff: Diff) -> FileDiff:
    assert len(diff) == 1, [f.path for f in diff]
    return diff.files[0]


def _numbered(count: int, fmt: str = "line {}") -> str:
    return "".join(fmt.format(i) + "\n" for i in range(1, count + 1))


def test_added_file(tmp_path: Path) -> None:
    f = _only(_git_diff(tmp_path, {"keep": "k\n"}, {"new.py": "a\nb\n"}))
    assert (f.path, f.old_path, f.status) == ("new.py", "new.py", FileStatus.ADDED)
    assert f.right_lines == {1, 2} == f.added_lines
    assert f.left_lines == frozenset()
    assert f.reviewable and (f.lines_added, f.lines_deleted) == (2, 0)


def test_deleted_file(tmp_path: Path) -> None:
    f = _only(_git_diff(tmp_path, {"gone.py": "a\nb\nc\n", "keep": "k\n"}, {"gone.py": None}))
    assert (f.path, f.status) == ("gone.py", FileStatus.DELETED)
    assert f.left_lines == {1, 2, 3}
    assert f.right_lines == frozenset()
    assert f.commentable("LEFT", 1, 3)
    assert not f.commentable("RIGHT", 1, 1)


def test_modified_file_right_and_left_lines(tmp_path: Path) -> None:
    before = _numbered(10)
    after = before.replace("line 5\n", "line five\nline 5b\n").replace("line 6\n", "")
    f = _only(_git_diff(tmp_path, {"m.txt": before}, {"m.txt": after}))
    assert f.status == FileStatus.MODIFIED
    (hunk,) = f.hunks
    assert (hunk.old_start, hunk.old_len, hunk.new_start, hunk.new_len) == (2, 8, 2, 8)
    # RIGHT: context and added lines, numbered in the new file.
    assert f.right_lines == set(range(2, 10))
    assert f.added_lines == {5, 6}
    # LEFT: context and deleted lines, numbered in the old file.
    assert f.left_lines == set(range(2, 10))
    deleted = {ln.old_no for ln in hunk.lines if ln.kind == "-"}
    assert deleted == {5, 6}
    added_text = [ln.text for ln in hunk.lines if ln.kind == "+"]
    assert added_text == ["line five", "line 5b"]
    assert all(ln.eol == "\n" for ln in hunk.lines)
    assert not f.commentable("RIGHT", 1, 3)  # line 1 is outside the hunk
    assert f.commentable("RIGHT", 2, 9)
    assert not f.commentable("RIGHT", 9, 2)


def test_renamed_with_edits(tmp_path: Path) -> None:
    body = _numbered(20)
    diff = _git_diff(
        tmp_path,
        {"old/name.py": body},
        {"old/name.py": None, "new/name.py": body.replace("line 10\n", "line ten\n")},
    )
    f = _only(diff)
    assert (f.path, f.old_path, f.status) == ("new/name.py", "old/name.py", FileStatus.RENAMED)
    assert f.added_lines == {10}
    assert diff.get("new/name.py") is f and diff.get("old/name.py") is None


def test_pure_rename_has_no_hunks(tmp_path: Path) -> None:
    f = _only(_git_diff(tmp_path, {"a.txt": _numbered(5)}, {"a.txt": None, "b.txt": _numbered(5)}))
    assert (f.path, f.old_path, f.status) == ("b.txt", "a.txt", FileStatus.RENAMED)
    assert f.hunks == [] and not f.reviewable


def test_binary_file(tmp_path: Path) -> None:
    diff = _git_diff(
        tmp_path,
        {"img.png": b"\x89PNG\r\n\x1a\n\x00\x00\x01", "k": "k\n"},
        {"img.png": b"\x89PNG\r\n\x1a\n\x00\x00\x02", "new.bin": b"\x00\x01\x02"},
    )
    img, new = diff.get("img.png"), diff.get("new.bin")
    assert img is not None and new is not None
    assert img.binary and img.status == FileStatus.MODIFIED and not img.reviewable
    assert new.binary and new.status == FileStatus.ADDED
    assert img.right_lines == frozenset()


def test_mode_only_change(tmp_path: Path) -> None:
    f = _only(_git_diff(tmp_path, {"run.sh": "echo hi\n"}, {"run.sh": Executable("echo hi\n")}))
    assert f.status == FileStatus.MODE_CHANGED
    assert (f.old_mode, f.new_mode) == ("100644", "100755")
    assert f.hunks == [] and not f.reviewable


def test_symlink_diff_is_its_target(tmp_path: Path) -> None:
    f = _only(_git_diff(tmp_path, {"k": "k\n"}, {"link": Symlink("../outside")}))
    assert (f.status, f.new_mode) == (FileStatus.ADDED, "120000")
    (line,) = f.hunks[0].lines
    assert (line.text, line.eol) == ("../outside", "")


def test_no_newline_at_end_of_file(tmp_path: Path) -> None:
    f = _only(_git_diff(tmp_path, {"n.txt": "a\nb"}, {"n.txt": "a\nc"}))
    lines = f.hunks[0].lines
    assert [(ln.kind, ln.text, ln.eol) for ln in lines] == [
        (" ", "a", "\n"),
        ("-", "b", ""),
        ("+", "c", ""),
    ]
    assert f.right_lines == {1, 2} and f.left_lines == {1, 2}


def test_newline_added_at_end_of_file(tmp_path: Path) -> None:
    f = _only(_git_diff(tmp_path, {"n.txt": "a\nb"}, {"n.txt": "a\nb\n"}))
    assert [(ln.kind, ln.eol) for ln in f.hunks[0].lines] == [(" ", "\n"), ("-", ""), ("+", "\n")]


def test_crlf_lines_keep_their_ending(tmp_path: Path) -> None:
    f = _only(_git_diff(tmp_path, {"w.txt": b"one\r\ntwo\r\n"}, {"w.txt": b"one\r\nTWO\r\n"}))
    lines = f.hunks[0].lines
    assert [(ln.kind, ln.text, ln.eol) for ln in lines] == [
        (" ", "one", "\r\n"),
        ("-", "two", "\r\n"),
        ("+", "TWO", "\r\n"),
    ]


def test_non_utf8_bytes_survive(tmp_path: Path) -> None:
    f = _only(_git_diff(tmp_path, {"l1.txt": b"caf\xe9\n"}, {"l1.txt": b"caf\xe9 cr\xe8me\n"}))
    added = next(ln for ln in f.hunks[0].lines if ln.kind == "+")
    assert encode_text(added.text) == b"caf\xe9 cr\xe8me"
    assert "\ufffd" not in added.text  # not replaced: the original bytes are recoverable


def test_non_ascii_and_odd_paths_are_unquoted(tmp_path: Path) -> None:
    # git quotes such paths C-style ("caf\303\251.py"); the model must see the real name.
    names = ["café.py", "日本/語.txt", "with space.py", 'quo"te.py', "tab\tname.py", "back\\slash"]
    diff = _git_diff(tmp_path, {"k": "k\n"}, {name: "x\n" for name in names})
    assert sorted(f.path for f in diff) == sorted(names)
    assert all(f.status == FileStatus.ADDED and f.right_lines == {1} for f in diff)


def test_renamed_to_non_ascii_path(tmp_path: Path) -> None:
    body = _numbered(8)
    f = _only(_git_diff(tmp_path, {"plain.txt": body}, {"plain.txt": None, "naïve.txt": body}))
    assert (f.path, f.old_path, f.status) == ("naïve.txt", "plain.txt", FileStatus.RENAMED)


def test_emptied_and_filled_files_are_modified_not_deleted(tmp_path: Path) -> None:
    diff = _git_diff(
        tmp_path, {"was_empty": "", "to_empty": "x\n"}, {"was_empty": "y\n", "to_empty": ""}
    )
    assert {f.path: f.status for f in diff} == {
        "was_empty": FileStatus.MODIFIED,
        "to_empty": FileStatus.MODIFIED,
    }


def test_new_empty_file(tmp_path: Path) -> None:
    f = _only(_git_diff(tmp_path, {"k": "k\n"}, {"empty": ""}))
    assert (f.path, f.status, f.hunks) == ("empty", FileStatus.ADDED, [])


def test_three_thousand_line_hunk(tmp_path: Path) -> None:
    f = _only(
        _git_diff(tmp_path, {"big.txt": _numbered(3000)}, {"big.txt": _numbered(3000, "new {}")})
    )
    (hunk,) = f.hunks
    assert len(hunk.lines) == 6000
    assert f.right_lines == set(range(1, 3001)) == f.added_lines
    assert f.left_lines == set(range(1, 3001))
    assert f.commentable("RIGHT", 1, 3000) and f.commentable("LEFT", 1, 3000)
    assert not f.commentable("RIGHT", 1, 3001)


def test_several_hunks_and_ranges_across_them(tmp_path: Path) -> None:
    before = _numbered(100)
    after = before.replace("line 10\n", "ten\n").replace("line 60\n", "sixty\nsixty-one\n")
    f = _only(_git_diff(tmp_path, {"h.txt": before}, {"h.txt": after}))
    first, second = f.hunks
    assert (first.new_start, first.new_len) == (7, 7)
    assert (second.old_start, second.old_len, second.new_start, second.new_len) == (57, 7, 57, 8)
    # git's default section heading: the nearest line above starting with a letter.
    assert (first.section, first.header()) == ("line 6", "@@ -7,7 +7,7 @@ line 6")
    assert f.right_lines == set(range(7, 14)) | set(range(57, 65))
    assert f.left_lines == set(range(7, 14)) | set(range(57, 64))
    assert f.added_lines == {10, 60, 61}
    assert f.hunk_at("RIGHT", 61) is second and f.hunk_at("RIGHT", 30) is None
    assert f.commentable("RIGHT", 7, 13) and f.commentable("RIGHT", 60, 61)
    assert not f.commentable("RIGHT", 10, 60)  # starts and ends in different hunks
    assert not f.commentable("RIGHT", 13, 14)  # ends outside any hunk
    assert not f.commentable("LEFT", 60, 64)  # old file: second hunk ends at 63


def test_several_files_in_one_diff(tmp_path: Path) -> None:
    diff = _git_diff(
        tmp_path,
        {"a.py": "a\n", "b.py": "b\n", "c.py": "c\n"},
        {"a.py": "A\n", "b.py": None, "d.py": "d\n"},
    )
    assert {f.path: f.status for f in diff} == {
        "a.py": FileStatus.MODIFIED,
        "b.py": FileStatus.DELETED,
        "d.py": FileStatus.ADDED,
    }
    assert diff.lines_changed == 4


# Hand-made diffs: what `diff -u` and other tools print, no git headers.

DIFF_U = "\n".join(
    [
        "--- calc.py\t2024-05-01 10:00:00.000000000 +0200",
        "+++ calc.py\t2024-05-02 11:30:00.000000000 +0200",
        "@@ -1,4 +1,4 @@",
        " def add(a, b):",
        "-    return a - b",
        "+    return a + b",
        " ",
        " ",
        "@@ -10,3 +10,4 @@ def mul(a, b):",
        "     x = 1",
        "     y = 2",
        "     return x * y",
        "+# end",
        "",
    ]
)


def test_hand_made_diff_u() -> None:
    diff = parse_diff(DIFF_U)
    f = _only(diff)
    assert (f.path, f.status) == ("calc.py", FileStatus.MODIFIED)
    assert [h.section for h in f.hunks] == ["", "def mul(a, b):"]
    assert f.right_lines == {1, 2, 3, 4, 10, 11, 12, 13}
    assert f.left_lines == {1, 2, 3, 4, 10, 11, 12}
    assert f.added_lines == {2, 13}
    assert not f.commentable("RIGHT", 4, 10)


def test_hand_made_new_file_and_bytes_input() -> None:
    text = "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1,2 @@\n+caf\xe9\n+x\n"
    f = _only(parse_diff(text.encode("latin-1")))
    assert (f.path, f.status) == ("new.txt", FileStatus.ADDED)
    assert encode_text(f.hunks[0].lines[0].text) == b"caf\xe9"


def test_difflib_output_with_crlf() -> None:
    old = ["a\r\n", "b\r\n", "c\r\n"]
    new = ["a\r\n", "B\r\n", "c\r\n"]
    text = "".join(difflib.unified_diff(old, new, "a/w.txt", "b/w.txt"))
    f = _only(parse_diff(text))
    assert [(ln.kind, ln.text, ln.eol) for ln in f.hunks[0].lines] == [
        (" ", "a", "\r\n"),
        ("-", "b", "\r\n"),
        ("+", "B", "\r\n"),
        (" ", "c", "\r\n"),
    ]


FORMAT_PATCH = """\
From 1a2b3c4d5e6f Mon Sep 17 00:00:00 2001
From: Dev <dev@example.com>
Subject: [PATCH] Fix add

---
 calc.py | 2 +-
 1 file changed, 1 insertion(+), 1 deletion(-)

diff --git a/calc.py b/calc.py
index 1111111..2222222 100644
--- a/calc.py
+++ b/calc.py
@@ -1,2 +1,2 @@
 def add(a, b):
-    return a - b
+    return a + b
--\x20
2.39.5
"""


def test_format_patch_mail_around_the_diff_is_ignored() -> None:
    f = _only(parse_diff(FORMAT_PATCH))
    assert (f.path, f.status, f.added_lines, f.left_lines) == (
        "calc.py",
        FileStatus.MODIFIED,
        frozenset({2}),
        frozenset({1, 2}),
    )


def test_empty_input_is_an_empty_diff() -> None:
    assert len(parse_diff(b"")) == 0
    assert len(parse_diff("\n")) == 0


@pytest.mark.parametrize(
    "text",
    [
        "--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\n-b\n",  # hunk shorter than its header
        "+++ b/x\n@@ -1 +1 @@\n-a\n+b\n",  # target without source
        "@@ -1 +1 @@\n-a\n+b\n",  # hunk without a file
        "hello, this is not a diff\n",
        "Traceback (most recent call last):\n  File x\n",
    ],
)
def test_invalid_input_is_a_usage_error(text: str) -> None:
    with pytest.raises(UsageError, match="not a unified diff"):
        parse_diff(text)


def test_git_diff_of_real_repo_matches_git_cli_numbers(tmp_path: Path) -> None:
    # The same repository diffed by pygit2 and parsed: line numbers agree with the files.
    before = _numbered(30)
    after = before.replace("line 3\n", "three\n").replace("line 25\n", "")
    repo = make_repo(tmp_path / "r")
    old = commit(repo, {"f.txt": before})
    new = commit(repo, {"f.txt": after})
    f = _only(range_change(repo, str(old.id), str(new.id)).diff)
    new_lines = after.splitlines()
    old_lines = before.splitlines()
    for hunk in f.hunks:
        for ln in hunk.lines:
            if ln.new_no is not None:
                assert new_lines[ln.new_no - 1] == ln.text
            if ln.old_no is not None:
                assert old_lines[ln.old_no - 1] == ln.text
    assert isinstance(repo, pygit2.Repository)

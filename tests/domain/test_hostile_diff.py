"""The diff parser on random and adversarial input: it raises nothing but ``UsageError``,
and what it accepts is consistent — every line it says GitHub accepts a comment on is a
line of a hunk, numbered as the files number it.

Diffs come from three places: random bytes and text; sequences of the pieces diffs are
made of (headers, hunk headers with lying counts, quoted paths, ``\\ No newline``, CR
line ends, binary markers); and real diffs of random files made by git (pygit2) and by
difflib, whose lines are checked against the files themselves.
"""

from __future__ import annotations

import difflib
import time

import pygit2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.domain.diff import SIDES, Diff, FileDiff, parse_diff
from bot.errors import UsageError

SETTINGS = settings(max_examples=300, deadline=None)


def parse_or_refuse(data: bytes | str) -> Diff | None:
    try:
        return parse_diff(data)
    except UsageError as exc:
        assert str(exc) and "\n" not in str(exc)  # one line, as every message
        return None


def check_consistent(diff: Diff) -> None:
    for file in diff:
        assert isinstance(file.path, str) and file.path
        for hunk in file.hunks:
            for ln in hunk.lines:
                assert (ln.old_no is None) == (ln.kind == "+")
                assert (ln.new_no is None) == (ln.kind == "-")
                # GitHub numbers lines from 1: a line 0 would be a comment it refuses.
                assert all(n is None or n >= 1 for n in (ln.old_no, ln.new_no))
                assert ln.eol in ("\n", "\r\n", "")
            # Numbers run without gaps inside a hunk, as the hunk's lines say.
            for numbers in (
                [ln.new_no for ln in hunk.lines if ln.new_no is not None],
                [ln.old_no for ln in hunk.lines if ln.old_no is not None],
            ):
                first = numbers[0] if numbers else 0
                assert numbers == list(range(first, first + len(numbers)))
        check_commentable(file)


def check_commentable(file: FileDiff) -> None:
    for side in SIDES:
        numbers = (
            ln.new_no if side == "RIGHT" else ln.old_no for h in file.hunks for ln in h.lines
        )
        in_hunks = {n for n in numbers if n is not None}
        assert file.lines_on(side) == in_hunks
        probe = sorted(in_hunks | {0, 1, 2, max(in_hunks, default=0) + 1})[:40]
        for line in probe:
            assert file.commentable(side, line, line) == (line in in_hunks)
        for start in probe[:12]:
            for end in probe[:12]:
                if file.commentable(side, start, end):
                    hunk = file.hunk_at(side, end)
                    assert hunk is not None and start <= end
                    assert {start, end} <= hunk.lines_on(side)


# -- random input -------------------------------------------------------------------------


@SETTINGS
@given(data=st.one_of(st.binary(max_size=3000), st.text(max_size=3000)))
def test_random_input_is_a_diff_or_a_usage_error(data: bytes | str) -> None:
    diff = parse_or_refuse(data)
    if diff is not None:
        check_consistent(diff)


PIECES = [
    "diff --git a/x.py b/x.py", "diff --git a/x.py b/y.py", "diff --git", "diff --git a/ b/",
    "--- a/x.py", "+++ b/x.py", "--- /dev/null", "+++ /dev/null", "--- x.py", "+++ y.py",
    '--- "a/caf\\303\\251.py"', '+++ "b/caf\\303\\251.py"', '+++ "b/\\"q\\\\\\n.py"',
    "--- a/x.py\t2024-01-01 00:00:00", "+++ b/../../etc/passwd",
    "@@ -1,3 +1,4 @@", "@@ -1 +1 @@", "@@ -0,0 +1,2 @@", "@@ -1,2 +0,0 @@",
    "@@ -5,2 +5,2 @@ def f():", "@@ -0,0 +0,1 @@", "@@ -0 +0 @@",
    "@@ -1,99999999 +1,99999999 @@", "@@ -99999999999999999999,1 +1 @@", "@@ -1,-1 +1 @@",
    "@@ -a,b +c,d @@", "@@@ -1 -1 +1 @@@", "@@ -1,1 +1,1 @@\r",
    " context", "+added", "-removed", "+", "-", " ", "", "+@@ -1 +1 @@", "-+++ b/x.py",
    "\\ No newline at end of file", "\\", "Binary files a/x.bin and b/x.bin differ",
    "GIT binary patch", "literal 0", "new file mode 100644", "deleted file mode 100644",
    "old mode 100644", "new mode 100755", "rename from x.py", "rename to y.py",
    "similarity index 90%", "index 0000000..e69de29", "index abc..def 100644",
    "Subject: [PATCH] x", "-- ", "2.40.0", "\x00", "\x1b[31m+red\x1b[0m", "+\udcff",
]  # fmt: skip  # a word list: several to a line


@SETTINGS
@given(
    lines=st.lists(st.sampled_from(PIECES), max_size=40),
    crlf=st.booleans(),
    as_bytes=st.booleans(),
)
def test_diffs_made_of_diff_pieces_are_parsed_consistently_or_refused(
    lines: list[str], crlf: bool, as_bytes: bool
) -> None:
    text = ("\r\n" if crlf else "\n").join(lines) + "\n"
    data: bytes | str = text.encode("utf-8", "surrogateescape") if as_bytes else text
    diff = parse_or_refuse(data)
    if diff is not None:
        check_consistent(diff)


@pytest.mark.parametrize(
    "text",
    [
        "--- a/x\n+++ b/x\n" + "@@ -1 +1 @@\n-a\n+b\n" * 20_000,
        "--- a/x\n+++ b/x\n@@ -1,40000 +1,40000 @@\n" + " same\n" * 40_000,
        "diff --git a/x b/x\n" * 20_000,
        "--- a/x\n+++ b/x\n@@ -1,1 +1,100000 @@\n" + "+x\n" * 50_000,
        "+++ b/x\n" * 30_000,
    ],
    ids=["many-hunks", "long-hunk", "many-headers", "short-hunk", "only-plus-headers"],
)
def test_large_adversarial_diffs_are_fast(text: str) -> None:
    started = time.perf_counter()
    diff = parse_or_refuse(text)
    assert time.perf_counter() - started < 10.0
    if diff is not None:
        check_consistent(diff)


# -- real diffs of random files -----------------------------------------------------------

# Few distinct lines, so the diffs have moves, repeats and several hunks.
file_lines = st.lists(
    st.sampled_from(["a", "b", "c", "def f():", "    return 1", "", "é", "x = 1  "]),
    max_size=30,
)


def _lines(text: str) -> list[str]:
    """The file's lines as git numbers them (a last line may lack its newline)."""
    lines = text.split("\n")
    return lines[:-1] if lines[-1] == "" else lines


def check_against_files(diff: Diff, old: str, new: str) -> None:
    check_consistent(diff)
    old_lines, new_lines = _lines(old), _lines(new)
    for file in diff:
        for hunk in file.hunks:
            for ln in hunk.lines:
                if ln.new_no is not None:
                    assert new_lines[ln.new_no - 1] == ln.text
                if ln.old_no is not None:
                    assert old_lines[ln.old_no - 1] == ln.text


@SETTINGS
@given(
    old=file_lines,
    new=file_lines,
    old_eol=st.booleans(),
    new_eol=st.booleans(),
    context=st.integers(0, 4),
)
def test_git_diffs_of_random_files_number_every_line_as_the_files_do(
    old: list[str], new: list[str], old_eol: bool, new_eol: bool, context: int
) -> None:
    old_text = "\n".join(old) + ("\n" if old_eol and old else "")
    new_text = "\n".join(new) + ("\n" if new_eol and new else "")
    # libgit2 keeps pointers into the buffers: they must outlive the patch's data.
    old_data, new_data = old_text.encode(), new_text.encode()
    patch = pygit2.Patch.create_from(
        old_data,
        new_data,
        old_as_path="dir/f.py",
        new_as_path="dir/f.py",
        context_lines=context,
    )
    diff = parse_or_refuse(patch.data)
    assert diff is not None  # git's own output is always a diff
    if old_text == new_text:
        assert all(not f.hunks for f in diff)
        return
    [file] = diff.files
    assert file.path == "dir/f.py"
    check_against_files(diff, old_text, new_text)
    old_lines = _lines(old_text)
    changed = {i + 1 for i, ln in enumerate(_lines(new_text)) if ln not in old_lines}
    assert changed <= file.right_lines  # every line only in the new file is commentable


@SETTINGS
@given(old=file_lines, new=file_lines, context=st.integers(0, 3))
def test_difflib_diffs_of_random_files_number_every_line_as_the_files_do(
    old: list[str], new: list[str], context: int
) -> None:
    old_text = "".join(line + "\n" for line in old)
    new_text = "".join(line + "\n" for line in new)
    text = "".join(
        difflib.unified_diff(
            old_text.splitlines(keepends=True),
            new_text.splitlines(keepends=True),
            "a/f.py",
            "b/f.py",
            n=context,
        )
    )
    diff = parse_or_refuse(text)
    assert diff is not None
    check_against_files(diff, old_text, new_text)

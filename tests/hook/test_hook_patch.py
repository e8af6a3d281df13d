"""Suggestions as one patch: ``git apply`` takes it and produces exactly the suggested text."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pygit2

from bot.domain.results import Finding, Severity
from bot.git.repo import staged_change
from hooks.patch import quote_path, suggestions_patch
from tests.support.repos import commit, make_repo, stage


def finding(
    path: str, start: int, end: int, suggestion: str | None, side: str = "RIGHT"
) -> Finding:
    return Finding(
        path=path,
        start_line=start,
        end_line=end,
        side="LEFT" if side == "LEFT" else "RIGHT",
        severity=Severity.MINOR,
        category="style",
        title=f"fix {path}:{start}",
        body="",
        suggestion=suggestion,
    )


def apply_to_index(repo: pygit2.Repository, patch: str, tmp_path: Path) -> None:
    file = tmp_path / "s.patch"
    file.write_bytes(patch.encode("utf-8", "surrogateescape"))
    subprocess.run(
        ["git", "apply", "--cached", str(file)],
        cwd=repo.workdir,
        check=True,
        capture_output=True,
    )


def staged(repo: pygit2.Repository, path: str) -> bytes:
    out = subprocess.run(
        ["git", "show", f":{path}"], cwd=repo.workdir, check=True, capture_output=True
    )
    return out.stdout


def test_several_suggestions_in_several_files_apply_with_git(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r")
    commit(repo, {"a.py": "one\ntwo\nthree\nfour\nfive\n", "b.py": "x = 1\n"})
    stage(repo, {"a.py": "one\nTWO\nthree\nFOUR\nfive\n", "b.py": "x = 2\n"})
    change = staged_change(repo)
    patch = suggestions_patch(
        [
            finding("b.py", 1, 1, "x = 3"),
            finding("a.py", 4, 4, "four"),
            finding("a.py", 2, 2, "two\n"),  # a trailing newline is not an extra line
            finding("a.py", 3, 3, None),
        ],
        change,
    )
    assert len(patch.applied) == 3 and patch.left_out == []
    assert patch.text.count("diff --git") == 2
    apply_to_index(repo, patch.text, tmp_path)
    assert staged(repo, "a.py") == b"one\ntwo\nthree\nfour\nfive\n"
    assert staged(repo, "b.py") == b"x = 3\n"


def test_overlapping_and_old_side_suggestions_are_left_out_with_reasons(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r")
    commit(repo, {"a.py": "1\n2\n3\n4\n"})
    stage(repo, {"a.py": "1\n2\n3\n4\n5\n"})
    change = staged_change(repo)
    patch = suggestions_patch(
        [
            finding("a.py", 2, 3, "two-three"),
            finding("a.py", 3, 4, "three-four"),
            finding("a.py", 1, 1, "uno", side="LEFT"),
            finding("a.py", 9, 9, "nine"),
            finding("gone.py", 1, 1, "x"),
        ],
        change,
    )
    reasons = {f.start_line if f.path == "a.py" else -1: why for f, why in patch.left_out}
    assert "overlaps" in reasons[2]
    assert "old file" in reasons[1]
    assert "not in the file" in reasons[9]
    assert "not in the reviewed content" in reasons[-1]
    assert [f.start_line for f in patch.applied] == [3]
    apply_to_index(repo, patch.text, tmp_path)
    assert staged(repo, "a.py") == b"1\n2\nthree-four\n5\n"


def test_no_newline_at_end_and_crlf_survive(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r")
    commit(repo, {"end.txt": "a\nb", "dos.txt": "a\r\nb\r\nc\r\n"})
    stage(repo, {"end.txt": "a\nB", "dos.txt": "a\r\nB\r\nc\r\n"})
    patch = suggestions_patch(
        [finding("end.txt", 2, 2, "b"), finding("dos.txt", 2, 2, "b\nb2")],
        staged_change(repo),
    )
    assert "\\ No newline at end of file\n" in patch.text
    apply_to_index(repo, patch.text, tmp_path)
    assert staged(repo, "end.txt") == b"a\nb"
    assert staged(repo, "dos.txt") == b"a\r\nb\r\nb2\r\nc\r\n"


def test_unusual_paths_are_quoted_as_git_does(tmp_path: Path) -> None:
    name = 'dir with space/café "q".py'
    repo = make_repo(tmp_path / "r")
    commit(repo, {name: "x = 1\n"})
    stage(repo, {name: "x = 2\n"})
    patch = suggestions_patch([finding(name, 1, 1, "x = 3")], staged_change(repo))
    assert '"a/dir with space/caf\\303\\251 \\"q\\".py"' in patch.text
    apply_to_index(repo, patch.text, tmp_path)
    assert staged(repo, name) == b"x = 3\n"
    assert quote_path("plain/path.py") == "plain/path.py"

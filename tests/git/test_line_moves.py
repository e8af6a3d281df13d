"""Following a finding's lines through a push, on real repositories: touched, moved by
lines added or removed above them, untouched by changes below or elsewhere."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.errors import GitError
from bot.git.line_moves import follow_lines
from tests.support.repos import commit, make_repo

LINES = "".join(f"line {n}\n" for n in range(1, 21))


@pytest.mark.parametrize(
    ("new", "expected"),
    [
        (LINES, (5, 7)),  # the same file
        ("top\n" + LINES, (6, 8)),  # a line added above
        (LINES.replace("line 2\n", ""), (4, 6)),  # a line removed above
        (LINES.replace("line 15\n", "line fifteen\n"), (5, 7)),  # a change below
        (LINES.replace("line 6\n", "line six\n"), None),  # a line of the finding changed
        (LINES.replace("line 5\n", ""), None),  # one of its lines removed
        (LINES.replace("line 6\n", "line 6\nnew\n"), None),  # a line inserted inside it
        (LINES.replace("line 7\n", "line 7\nnew\n"), (5, 7)),  # inserted right after it
        (LINES.replace("line 5\n", "new\nline 5\n"), (6, 8)),  # inserted right before it
    ],
)
def test_lines_are_followed_or_found_touched(
    tmp_path: Path, new: str, expected: tuple[int, int] | None
) -> None:
    repo = make_repo(tmp_path / "r")
    old = commit(repo, {"a.py": LINES, "b.py": "x\n"})
    head = commit(repo, {"a.py": new, "b.py": "y\n"})
    assert follow_lines(repo, str(old.id), str(head.id), "a.py", 5, 7) == expected


def test_a_removed_file_touches_everything_and_a_missing_one_is_an_error(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r")
    old = commit(repo, {"a.py": LINES})
    head = commit(repo, {"a.py": None, "b.py": LINES})
    assert follow_lines(repo, str(old.id), str(head.id), "a.py", 1, 1) is None
    with pytest.raises(GitError):
        follow_lines(repo, str(old.id), str(head.id), "b.py", 1, 1)
    with pytest.raises(GitError):
        follow_lines(repo, "0" * 40, str(head.id), "a.py", 1, 1)

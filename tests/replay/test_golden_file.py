"""Golden files: GitNeural's format and Martian's Code Review Bench as published."""

from __future__ import annotations

import json
from pathlib import Path

import pygit2
import pytest

from bot.replay.golden_file import GoldenFileError, read_golden_file
from tests.support.repos import commit, make_repo

# The shape of withmartian/code-review-benchmark's offline/golden_comments/*.json.
MARTIAN = [
    {
        "pr_title": "Anonymous: Add configurable device limit",
        "url": "https://github.com/example/app/pull/7",
        "comments": [
            {
                "comment": "Race condition: the limit check and the insert are apart.",
                "severity": "High",
            },
            {
                "comment": "Zero rows affected does not mean the limit was reached.",
                "severity": "Low",
            },
        ],
    }
]


def _bare_with_pull(tmp_path: Path) -> tuple[pygit2.Repository, pygit2.Commit, pygit2.Commit]:
    repo = make_repo(tmp_path / "fork.git", bare=True)
    base = commit(repo, {"a.go": "package a\n"}, "start", branch="main")
    commit(repo, {"b.go": "package a\n"}, "later on main", branch="main")
    head = commit(
        repo, {"a.go": "package a\n\nvar n = 1\n"}, "the pull", branch="pr", parents=[base]
    )
    repo.references.create("refs/pull/7/head", head.id)
    return repo, base, head


def test_a_martian_golden_file_names_the_pull_from_its_merge_base(tmp_path: Path) -> None:
    repo, base, head = _bare_with_pull(tmp_path)
    golden = tmp_path / "golden_comments"
    golden.mkdir()
    (golden / "app.json").write_text(json.dumps(MARTIAN))

    found = read_golden_file(golden, Path(repo.path))

    key = f"{base.id}..{head.id}"
    assert list(found) == [key]
    assert [(i.path, i.lines, i.severity, i.source) for i in found[key]] == [
        (None, None, "high", "file"),
        (None, None, "low", "file"),
    ]
    assert found[key][0].text.startswith("Race condition")


def test_a_pull_missing_from_the_clone_says_how_to_fetch_it(tmp_path: Path) -> None:
    repo, _, _ = _bare_with_pull(tmp_path)
    missing = [dict(MARTIAN[0], url="https://github.com/example/app/pull/8")]
    source = tmp_path / "g.json"
    source.write_text(json.dumps(missing))
    with pytest.raises(GoldenFileError, match=r"refs/pull/8/head is not in .*git fetch"):
        read_golden_file(source, Path(repo.path))


def test_gitneurals_format_with_ranges_shas_and_text_only_items(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r")
    base = commit(repo, {"a.py": "x = 1\n"})
    head = commit(repo, {"a.py": "x = 1\ny = 2\nz = 3\n"})
    source = tmp_path / "g.json"
    data = [
        {
            "change": f"{str(base.id)[:8]}..{str(head.id)[:8]}",
            "comments": [
                {"path": "a.py", "line": 2, "text": "y is wrong", "severity": "Major"},
                {"path": "a.py", "line": [2, 3], "text": "both"},
                {"text": "the change needs a test"},
            ],
        },
        {"change": str(head.id), "comments": [{"path": "a.py", "line": 3, "text": "z"}]},
    ]
    source.write_text(json.dumps(data))
    found = read_golden_file(source, Path(repo.workdir))
    key = f"{base.id}..{head.id}"
    assert list(found) == [key]  # a bare sha is sha^..sha: the same change
    assert [(i.path, i.lines, i.severity) for i in found[key]] == [
        ("a.py", (2, 2), "major"),
        ("a.py", (2, 3), None),
        (None, None, None),
        ("a.py", (3, 3), None),
    ]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "not JSON"),
        ('{"change": "x"}', "must be a list of changes"),
        ('[{"comments": []}]', 'needs "change"'),
        ('[{"change": "nosuch..HEAD", "comments": []}]', "'nosuch' is not a commit"),
        ('[{"change": "HEAD", "comments": [{"path": "a.py", "line": 0}]}]', '"line" must be'),
        ('[{"change": "HEAD", "comments": [{"path": "a.py"}]}]', 'give both "path" and "line"'),
        ('[{"url": "https://example.com/x", "comments": []}]', "pull request's URL"),
    ],
)
def test_a_malformed_file_is_one_line_saying_where(
    tmp_path: Path, content: str, message: str
) -> None:
    repo = make_repo(tmp_path / "r")
    commit(repo, {"a.py": "x\n"})
    commit(repo, {"a.py": "y\n"})
    source = tmp_path / "g.json"
    source.write_text(content)
    with pytest.raises(GoldenFileError, match=message) as raised:
        read_golden_file(source, Path(repo.workdir))
    assert "\n" not in str(raised.value) and str(source) in str(raised.value)

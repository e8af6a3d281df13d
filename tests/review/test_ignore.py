"""Which files are reviewed: default and custom ignore globs, and the kinds git cannot review."""

from __future__ import annotations

from pathlib import Path

import pygit2
import pytest

from bot.domain.diff import Diff, parse_diff
from bot.review.selection import select_files
from bot.settings.repository import DEFAULT_IGNORES, Config
from tests.support.repos import Executable, Files, commit, make_repo


def _diff(repo: pygit2.Repository, old: pygit2.Commit, new: pygit2.Commit) -> Diff:
    """The diff `git diff old new` prints (with rename detection), through the diff model."""
    diff = repo.diff(old, new, context_lines=3)
    diff.find_similar()
    return parse_diff(diff.patch or "")


def _change(tmp_path: Path, before: Files, after: Files) -> Diff:
    repo = make_repo(tmp_path)
    first = commit(repo, {"README": "base\n", **before})
    second = commit(repo, after)
    return _diff(repo, first, second)


def _reasons(diff: Diff, globs: tuple[str, ...] | list[str] = DEFAULT_IGNORES) -> dict[str, str]:
    reviewed, skipped = select_files(diff, globs)
    result = {f.path: "reviewed" for f in reviewed}
    result.update({s.path: s.reason for s in skipped})
    assert len(result) == len(diff), "every file is either reviewed or skipped, once"
    return result


def test_default_ignores_skip_lock_vendored_minified_generated(tmp_path: Path) -> None:
    paths = {
        "package-lock.json": "ignored by '*-lock.json'",  # the first glob that matches
        "web/yarn.lock": "ignored by '*.lock'",
        "go.sum": "ignored by 'go.sum'",
        "vendor/lib/x.go": "ignored by 'vendor/*'",
        "app/node_modules/pkg/index.js": "ignored by '*/node_modules/*'",
        "static/app.min.js": "ignored by '*.min.js'",
        "proto/api_pb2.py": "ignored by '*_pb2.py'",
        "src/gen/types.generated.ts": "ignored by '*.generated.*'",
        "src/app.py": "reviewed",
        "src/vendors.py": "reviewed",
        "docs/guide.md": "reviewed",
    }
    diff = _change(tmp_path, {}, {p: f"// {p}\n" for p in paths})
    assert _reasons(diff) == paths


def test_config_ignores_extend_or_replace_the_defaults(tmp_path: Path) -> None:
    diff = _change(
        tmp_path,
        {},
        {"yarn.lock": "x\n", "docs/a.md": "x\n", "src/notes.md": "x\n", "src/gen/m.py": "x\n"},
    )
    config = Config()
    config.review.ignore = ["docs/*", "gen/*.py"]
    reasons = _reasons(diff, config.ignore_globs())
    assert reasons["yarn.lock"].startswith("ignored by")
    assert reasons["docs/a.md"] == "ignored by 'docs/*'"
    # A glob with "/" matches the whole path only: src/gen/m.py is not under gen/.
    assert reasons["src/gen/m.py"] == "reviewed"
    assert reasons["src/notes.md"] == "reviewed"

    config.review.default_ignores = False
    config.review.ignore = ["*.md"]
    reasons = _reasons(diff, config.ignore_globs())
    # A glob without "/" matches basenames at any depth; the defaults are gone.
    assert reasons == {
        "yarn.lock": "reviewed",
        "docs/a.md": "ignored by '*.md'",
        "src/notes.md": "ignored by '*.md'",
        "src/gen/m.py": "reviewed",
    }


def test_globs_are_case_sensitive_everywhere(tmp_path: Path) -> None:
    diff = _change(tmp_path, {}, {"Yarn.LOCK": "x\n"})
    assert _reasons(diff) == {"Yarn.LOCK": "reviewed"}


def test_files_git_cannot_review_are_listed_with_a_reason(tmp_path: Path) -> None:
    before = {
        "img.png": b"\x89PNG\r\n\x1a\n\0\0\1",
        "run.sh": "echo hi\n",
        "gone.py": "print('bye')\n",
        "old_name.py": "a = 1\nb = 2\nc = 3\nd = 4\n",
        "edit.py": "x = 1\n",
    }
    after = {
        "img.png": b"\x89PNG\r\n\x1a\n\0\0\2",
        "run.sh": Executable("echo hi\n"),
        "gone.py": None,
        "old_name.py": None,
        "new_name.py": "a = 1\nb = 2\nc = 3\nd = 4\n",
        "edit.py": "x = 2\n",
        "empty.txt": "",
    }
    assert _reasons(_change(tmp_path, before, after), []) == {
        "img.png": "binary",
        "run.sh": "mode change only",
        "gone.py": "deleted (listed, not reviewed)",
        "new_name.py": "renamed without changes",
        "edit.py": "reviewed",
        "empty.txt": "no changed lines",
    }


def test_ignore_globs_win_over_other_reasons_and_keep_diff_order(tmp_path: Path) -> None:
    diff = _change(
        tmp_path,
        {"vendor/blob.bin": b"\0\1", "b.py": "1\n"},
        {"vendor/blob.bin": b"\0\2", "a.py": "1\n", "b.py": "2\n", "c.lock": "x\n"},
    )
    reviewed, skipped = select_files(diff)
    assert [f.path for f in reviewed] == ["a.py", "b.py"]
    assert [(s.path, s.reason) for s in skipped] == [
        ("c.lock", "ignored by '*.lock'"),
        ("vendor/blob.bin", "ignored by 'vendor/*'"),
    ]


@pytest.mark.parametrize("path", ["x.lock", "a/b/c/d.lock", "dist/bundle.js", "q/r.pb.go"])
def test_every_default_glob_family_matches_nested_paths(path: str) -> None:
    text = f"--- /dev/null\n+++ b/{path}\n@@ -0,0 +1 @@\n+x\n"
    reviewed, skipped = select_files(parse_diff(text))
    assert not reviewed
    assert skipped[0].reason.startswith("ignored by ")

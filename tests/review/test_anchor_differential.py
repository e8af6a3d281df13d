"""Anchoring judged by git's diff (issue 10): whatever line a model names, a finding goes
inline only on a line GitHub's diff of that change has, and a suggestion only where it
applies to what the model was shown.

Changes come from :mod:`tests.support.diffcases` (renames, binaries, certificate-like runs that are
redacted, ...); findings name any line of any file: in a hunk, near one, far away, past
the end of the file, absurdly large, on a renamed file's old name or side.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pygit2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.domain.diff import Diff
from bot.domain.results import Finding, Placement, Severity
from bot.git.repo import range_change
from bot.review.findings.side_text import split_lines
from bot.review.secrets.redaction import redact_diff, redact_text
from tests.support.diffcases import changes
from tests.support.evidence import check_quoted
from tests.support.gitdiff import commit_files, git_diff, like_the_local_git
from tests.support.repos import FileValue


@pytest.fixture(scope="module", autouse=True)
def _like_the_local_git() -> Iterator[None]:
    yield from like_the_local_git()


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[pygit2.Repository, Path]:
    root = tmp_path_factory.mktemp("anchor")
    return pygit2.init_repository(str(root / "repo.git"), bare=True), root


@st.composite
def _findings(draw: st.DrawFn, paths: list[str], lines: list[int]) -> list[Finding]:
    line = st.sampled_from(lines) | st.integers(-2, 200) | st.sampled_from([10**6, 10**12])
    found = []
    for _ in range(draw(st.integers(1, 8))):
        start = draw(line)
        end = draw(st.sampled_from([start, start + 1, start + 3]) | line)
        found.append(
            Finding(
                path=draw(st.sampled_from(paths)),
                start_line=start,
                end_line=end,
                side=draw(st.sampled_from(["RIGHT", "LEFT"])),
                severity=Severity.MINOR,
                category="correctness",
                title=f"problem {len(found)}",
                body="Something is off here.",
                suggestion=draw(st.none() | st.sampled_from(["x = 2\n", "pass\n", ""])),
            )
        )
    return found


def _shown_lines(diff: Diff, head: pygit2.Tree, path: str) -> dict[int, str | None]:
    """New-file lines as the model saw them: the redacted file and the redacted hunks;
    ``None`` where the two disagree with the real file."""
    try:
        data = head[path].data
    except KeyError:
        return {}
    real = split_lines(data.decode("utf-8", "surrogateescape"))
    seen = split_lines(redact_text("".join(real))[0])
    shown: dict[int, str | None] = {
        n: (a if a == b else None) for n, (a, b) in enumerate(zip(real, seen, strict=True), 1)
    }
    file = next((f for f in redact_diff(diff) if f.path == path), None)
    for hunk in file.hunks if file else ():
        for ln in hunk.lines:
            number = ln.new_no
            if number is not None and shown.get(number) not in (None, ln.text + ln.eol):
                shown[number] = None
    return shown


@settings(
    max_examples=200,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(case=changes(), data=st.data())
def test_findings_land_only_on_gits_lines(
    repo: tuple[pygit2.Repository, Path],
    case: tuple[dict[str, FileValue], dict[str, FileValue]],
    data: st.DataObject,
) -> None:
    git_repo, home = repo
    base, head = case
    a = commit_files(git_repo, base)
    b = commit_files(git_repo, head, [a])
    change = range_change(git_repo, a, b)
    github = {f.path: f for f in git_diff(git_repo, a, b, home)}
    if not github:
        return
    paths = sorted({f.path for f in github.values()} | {f.old_path for f in github.values()})
    lines = sorted({n for f in github.values() for h in f.hunks for n in h.right_lines} | {1})
    raw = data.draw(_findings([*paths, "not/in/change.py"], lines))
    kept, dropped = check_quoted(raw, change)
    assert len(kept) + len(dropped) <= len(raw)
    head_tree = git_repo[b].peel(pygit2.Commit).tree
    for finding in kept:
        file = github[finding.path]
        if finding.placement == Placement.INLINE:
            assert file.commentable(finding.side, finding.start_line, finding.end_line), finding
        if finding.suggestion is None:
            continue
        # Inline it is committable; in the body it is shown as plain code. Either way:
        assert finding.side == "RIGHT"
        shown = _shown_lines(change.diff, head_tree, finding.path)
        for number in range(finding.start_line, finding.end_line + 1):
            # Each replaced line exists and the model saw it as it is.
            assert shown.get(number) is not None, (finding, number)

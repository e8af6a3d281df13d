"""The findings check on real git repositories: anchoring, suggestions, merges, cap."""

from __future__ import annotations

import dataclasses
import hashlib
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.domain.change import Change
from bot.domain.diff import parse_diff
from bot.domain.results import QUOTE_NOT_FOUND, Finding, Placement, Severity
from bot.git.repo import range_change
from bot.review.findings.anchor import NEAR_LINES, find_file
from bot.review.findings.check import (
    PATH_NOT_IN_CHANGE,
    apply_suggestion,
    order_key,
)
from bot.review.findings.suggestions import SuggestionError, bracket_balance
from tests.support.evidence import check_quoted
from tests.support.repos import commit, make_repo

BASE_APP = "".join(f"value_{i} = {i}\n" for i in range(1, 61))


def make_change(tmp_path: Path, before: dict[str, object], after: dict[str, object]) -> Change:
    """A real repository: ``before`` on main, ``after`` on a feature branch; main..feature."""
    repo = make_repo(tmp_path / "repo")
    first = commit(repo, before)  # type: ignore[arg-type]
    commit(repo, after, branch="feature", parents=[first])  # type: ignore[arg-type]
    return range_change(repo, "main", "feature")


def finding(
    path: str,
    start: int,
    end: int | None = None,
    *,
    side: str = "RIGHT",
    severity: str = "minor",
    title: str = "a problem",
    suggestion: str | None = None,
    source: str = "model",
) -> Finding:
    return Finding(
        path=path,
        start_line=start,
        end_line=start if end is None else end,
        side=side,  # type: ignore[arg-type]
        severity=Severity(severity),
        category="bug",
        title=title,
        body="Because.",
        suggestion=suggestion,
        source=source,
    )


def distinct_title(i: int) -> str:
    """Titles no two of which look alike (so they are never merged as duplicates)."""
    return hashlib.sha256(str(i).encode()).hexdigest()[:16]


def one(kept: list[Finding]) -> Finding:
    assert len(kept) == 1, kept
    return kept[0]


@pytest.fixture
def app_change(tmp_path: Path) -> Change:
    """app.py with line 30 changed: one hunk, RIGHT lines 27-33."""
    lines = BASE_APP.splitlines(keepends=True)
    lines[29] = "value_30 = compute(30)\n"
    return make_change(tmp_path, {"app.py": BASE_APP}, {"app.py": "".join(lines)})


# --- anchoring ---------------------------------------------------------------------


def test_finding_on_a_changed_line_stays_inline(app_change: Change) -> None:
    kept, dropped = check_quoted([finding("app.py", 30)], app_change)
    got = one(kept)
    assert (got.placement, got.start_line, got.end_line, got.note) == (Placement.INLINE, 30, 30, "")
    assert dropped == []


@pytest.mark.parametrize("path", ["./app.py", "a/app.py", "b/app.py", " app.py "])
def test_path_prefixes_are_normalised(app_change: Change, path: str) -> None:
    got = one(check_quoted([finding(path, 30)], app_change)[0])
    assert got.path == "app.py"
    assert got.placement == Placement.INLINE


def test_path_not_in_the_change_is_dropped_with_a_reason(app_change: Change) -> None:
    kept, dropped = check_quoted([finding("other.py", 3)], app_change)
    assert kept == []
    assert [(f.path, reason) for f, reason in dropped] == [("other.py", PATH_NOT_IN_CHANGE)]


def test_line_just_outside_a_hunk_is_reanchored_to_the_nearest_line(app_change: Change) -> None:
    above = one(check_quoted([finding("app.py", 27 - NEAR_LINES)], app_change)[0])
    assert (above.placement, above.start_line, above.end_line) == (Placement.INLINE, 27, 27)
    assert f"from line {27 - NEAR_LINES} to line 27" in above.note
    below = one(check_quoted([finding("app.py", 35)], app_change)[0])
    assert (below.start_line, below.end_line) == (33, 33)
    assert app_change.diff.files[0].commentable("RIGHT", 33, 33)


def test_line_far_from_the_diff_is_kept_for_the_summary(app_change: Change) -> None:
    kept, dropped = check_quoted([finding("app.py", 3)], app_change)
    got = one(kept)
    assert (got.placement, got.start_line) == (Placement.SUMMARY, 3)
    assert "outside the diff" in got.note
    assert dropped == []


def test_lines_are_clamped(app_change: Change) -> None:
    got = one(check_quoted([finding("app.py", 31, 29)], app_change)[0])
    assert (got.start_line, got.end_line, got.placement) == (29, 31, Placement.INLINE)
    zero = one(check_quoted([finding("app.py", 0, -4)], app_change)[0])
    assert (zero.start_line, zero.end_line) == (1, 1)
    overlong = one(check_quoted([finding("app.py", 58, 900)], app_change)[0])
    assert (overlong.start_line, overlong.end_line) == (58, 60)
    assert "clamped" in overlong.note


def test_a_line_past_the_end_of_the_file_is_never_placed(tmp_path: Path) -> None:
    """Issue 10, class 1: line 1,000,000 of a 3-line file is not moved onto line 3."""
    change = make_change(
        tmp_path, {"app.py": "a = 1\nb = 2\nc = 3\n"}, {"app.py": "a = 1\nb = 2\nc = 4\n"}
    )
    assert change.diff.files[0].commentable("RIGHT", 3, 3)  # where clamping put it
    for start, end in ((1_000_000, 1_000_000), (500, 900), (4, 4)):
        kept, dropped = check_quoted([finding("app.py", start, end)], change)
        assert kept == []
        [(_, reason)] = dropped
        assert "past the end of the file (3 lines)" in reason


def test_range_crossing_hunks_is_moved_into_one_hunk(tmp_path: Path) -> None:
    lines = BASE_APP.splitlines(keepends=True)
    lines[9] = "value_10 = 'ten'\n"
    lines[49] = "value_50 = 'fifty'\n"
    change = make_change(tmp_path, {"app.py": BASE_APP}, {"app.py": "".join(lines)})
    file = change.diff.files[0]
    assert len(file.hunks) == 2
    assert not file.commentable("RIGHT", 10, 50)
    got = one(check_quoted([finding("app.py", 10, 50)], change)[0])
    assert got.placement == Placement.INLINE
    assert file.commentable("RIGHT", got.start_line, got.end_line)
    assert (got.start_line, got.end_line) == (10, 13)
    assert "re-anchored from lines 10-50 to lines 10-13" in got.note


def test_range_partly_outside_a_hunk_is_trimmed_to_it(app_change: Change) -> None:
    got = one(check_quoted([finding("app.py", 20, 30)], app_change)[0])
    assert (got.start_line, got.end_line, got.placement) == (27, 30, Placement.INLINE)


def test_rename_with_edits(tmp_path: Path) -> None:
    body = "".join(f"line_{i} = {i}\n" for i in range(1, 41))
    edited = body.replace("line_10 = 10\n", "line_10 = 'changed'\n")
    change = make_change(
        tmp_path, {"old_name.py": body}, {"old_name.py": None, "new_name.py": edited}
    )
    file = change.diff.files[0]
    assert (file.path, file.old_path, str(file.status)) == ("new_name.py", "old_name.py", "renamed")
    kept, dropped = check_quoted(
        [
            finding("new_name.py", 10, title="new side"),
            finding("old_name.py", 10, side="LEFT", title="old side"),
            finding("new_name.py", 30, title="far away"),
        ],
        change,
    )
    assert dropped == []
    by_title = {f.title: f for f in kept}
    assert by_title["new side"].placement == Placement.INLINE
    old = by_title["old side"]
    assert (old.path, old.side, old.placement) == ("new_name.py", "LEFT", Placement.INLINE)
    assert "old_name.py is the old name of new_name.py" in old.note
    assert by_title["far away"].placement == Placement.SUMMARY


def test_deleted_file_is_commented_on_the_left_only(tmp_path: Path) -> None:
    change = make_change(
        tmp_path, {"gone.py": "a = 1\nb = 2\nc = 3\n", "keep.py": "k\n"}, {"gone.py": None}
    )
    kept, _ = check_quoted(
        [finding("gone.py", 2, title="right"), finding("gone.py", 3, side="LEFT", title="left")],
        change,
    )
    assert {(f.title, f.side, f.placement) for f in kept} == {
        ("right", "LEFT", Placement.INLINE),
        ("left", "LEFT", Placement.INLINE),
    }
    moved = next(f for f in kept if f.title == "right")
    assert "moved to side LEFT" in moved.note


def test_new_file_is_commented_on_the_right_only(tmp_path: Path) -> None:
    change = make_change(tmp_path, {"keep.py": "k\n"}, {"fresh.py": "x = 1\ny = 2\n"})
    kept, _ = check_quoted(
        [finding("fresh.py", 2, side="LEFT", title="left"), finding("fresh.py", 1, title="ok")],
        change,
    )
    assert all(f.side == "RIGHT" and f.placement == Placement.INLINE for f in kept)


def test_binary_file_findings_go_to_the_summary(tmp_path: Path) -> None:
    change = make_change(tmp_path, {"img.bin": b"\x00\x01"}, {"img.bin": b"\x00\x02\x03"})
    got = one(check_quoted([finding("img.bin", 1)], change)[0])
    assert got.placement == Placement.SUMMARY
    assert "binary" in got.note


def test_three_thousand_line_hunk(tmp_path: Path) -> None:
    big = "".join(f"n{i} = {i}\n" for i in range(3000))
    change = make_change(tmp_path, {"keep.py": "k\n"}, {"big.py": big})
    # Its speed is the benchmarks' business (bench_core); here: a hunk this long is whole.
    kept, dropped = check_quoted(
        [
            finding("big.py", 1, 3000, title="whole file"),
            finding("big.py", 2999, 3000, suggestion="n2998 = 0\nn2999 = 0\n", title="end"),
            finding("big.py", 3001, title="past the end"),
        ],
        change,
    )
    by_title = {f.title: f for f in kept}
    assert (by_title["whole file"].start_line, by_title["whole file"].end_line) == (1, 3000)
    assert by_title["end"].suggestion == "n2998 = 0\nn2999 = 0\n"
    assert [(f.title, reason) for f, reason in dropped] == [
        ("past the end", "line 3001 past the end of the file (3000 lines)")
    ]
    assert all(f.placement == Placement.INLINE for f in kept)


# --- suggestions -------------------------------------------------------------------


def test_suggestion_that_applies_is_kept(app_change: Change) -> None:
    got = one(
        check_quoted([finding("app.py", 30, suggestion="value_30 = compute(31)\n")], app_change)[0]
    )
    assert got.suggestion == "value_30 = compute(31)\n"
    assert got.note == ""


@pytest.mark.parametrize(
    ("suggestion", "reason"),
    [
        ("value_30 = compute(30)\n", "it changes nothing"),
        ("value_30 = compute(30)", "it changes nothing"),
        ("value_30 = compute(30\n", "the file would no longer parse as Python"),
        ("def broken(:\n", "the file would no longer parse as Python"),
    ],
)
def test_suggestion_refused(app_change: Change, suggestion: str, reason: str) -> None:
    got = one(check_quoted([finding("app.py", 30, suggestion=suggestion)], app_change)[0])
    assert got.suggestion is None
    assert got.note == f"suggestion dropped: {reason}"
    assert got.placement == Placement.INLINE


def test_unbalanced_brackets_refused_for_other_languages(tmp_path: Path) -> None:
    # Dart has no grammar here: the bracket check judges (JavaScript's parser would).
    before = "int f(a) {\n  return g(a);\n}\n"
    after = "int f(a) {\n  return g(a, 1);\n}\n"
    change = make_change(tmp_path, {"f.dart": before}, {"f.dart": after})
    kept, _ = check_quoted(
        [
            finding("f.dart", 2, suggestion="  return g(a, 2;\n", title="unbalanced"),
            finding("f.dart", 2, suggestion="  return g(a, ')');\n", title="string paren"),
            finding("f.dart", 2, suggestion="  return g(a, 2); // )\n", title="comment paren"),
        ],
        change,
    )
    by_title = {f.title: f for f in kept}
    assert by_title["unbalanced"].suggestion is None
    assert "unbalance brackets" in by_title["unbalanced"].note
    assert by_title["string paren"].suggestion is not None
    assert by_title["comment paren"].suggestion is not None


def test_python_file_that_did_not_parse_falls_back_to_brackets(tmp_path: Path) -> None:
    change = make_change(tmp_path, {"t.py": "x = (\n"}, {"t.py": "x = (\ny = 1\n"})
    kept, _ = check_quoted(
        [
            finding("t.py", 2, suggestion="y = 2\n", title="fine"),
            finding("t.py", 2, suggestion="y = [2\n", title="unbalanced"),
        ],
        change,
    )
    by_title = {f.title: f for f in kept}
    assert by_title["fine"].suggestion == "y = 2\n"
    assert by_title["unbalanced"].suggestion is None


def test_reanchored_finding_loses_its_suggestion(app_change: Change) -> None:
    got = one(check_quoted([finding("app.py", 25, suggestion="value_25 = 0\n")], app_change)[0])
    assert got.placement == Placement.INLINE and got.start_line == 27
    assert got.suggestion is None
    assert "suggestion dropped: the finding was moved to other lines" in got.note


def test_left_side_suggestion_is_dropped(app_change: Change) -> None:
    got = one(
        check_quoted([finding("app.py", 30, side="LEFT", suggestion="x = 1\n")], app_change)[0]
    )
    assert got.suggestion is None
    assert "old side" in got.note


def test_suggestion_on_a_bare_diff_uses_the_lines_the_diff_shows(app_change: Change) -> None:
    bare = Change(diff=app_change.diff)
    kept, dropped = check_quoted(
        [
            finding("app.py", 30, suggestion="value_30 = 1\n", title="shown"),
            finding("app.py", 5, suggestion="value_5 = 1\n", title="not shown"),
        ],
        bare,
    )
    by_title = {f.title: f for f in kept}
    assert by_title["shown"].suggestion == "value_30 = 1\n"
    # Line 5 is not in the diff, so a bare diff does not know it: nothing the model
    # quotes there can be verified, and the finding is held back (evidence rule).
    assert "not shown" not in by_title
    [(held, reason)] = dropped
    assert held.title == "not shown" and reason.startswith(QUOTE_NOT_FOUND)


def test_no_newline_at_end_of_file(tmp_path: Path) -> None:
    change = make_change(tmp_path, {"n.py": "a = 1\nb = 2"}, {"n.py": "a = 1\nb = 3"})
    assert change.diff.files[0].hunks[-1].lines[-1].eol == ""
    got = one(check_quoted([finding("n.py", 2, suggestion="b = 4\n")], change)[0])
    assert got.placement == Placement.INLINE and got.suggestion == "b = 4\n"
    assert apply_suggestion("a = 1\nb = 3", 2, 2, got.suggestion) == "a = 1\nb = 4"


def test_crlf_file_suggestion_keeps_crlf(tmp_path: Path) -> None:
    before = "a = 1\r\nb = 2\r\nc = 3\r\n"
    after = "a = 1\r\nb = 20\r\nc = 3\r\n"
    change = make_change(tmp_path, {"w.py": before}, {"w.py": after})
    got = one(check_quoted([finding("w.py", 2, suggestion="b = 21\nb2 = 22\n")], change)[0])
    assert got.suggestion is not None and got.placement == Placement.INLINE
    assert (
        apply_suggestion(after, 2, 2, got.suggestion) == "a = 1\r\nb = 21\r\nb2 = 22\r\nc = 3\r\n"
    )
    noop = one(check_quoted([finding("w.py", 2, suggestion="b = 20\r\n")], change)[0])
    assert noop.suggestion is None


def test_apply_suggestion_edges() -> None:
    assert apply_suggestion("a\nb\nc\n", 2, 2, "") == "a\nc\n"
    assert apply_suggestion("a\nb\nc\n", 1, 3, "z") == "z\n"
    assert apply_suggestion("a\x0cb\nc\n", 2, 2, "d\n") == "a\x0cb\nd\n"  # split on \n only
    with pytest.raises(SuggestionError):
        apply_suggestion("a\n", 2, 2, "b")


def test_bracket_balance_skips_strings_and_comments() -> None:
    assert bracket_balance("f(a, '(', \"[\") // {") == (0, 0, 0)
    assert bracket_balance("f(a /* ) */") == (1, 0, 0)
    assert bracket_balance("x = [1, # ]\n", "#") == (0, 1, 0)


# --- duplicates, cap, secrets ------------------------------------------------------


def merged_count(f: Finding) -> int:
    match = re.search(r"merged (\d+) duplicates?", f.note)
    return int(match.group(1)) if match else 0


def test_duplicates_are_merged_keeping_the_most_severe(app_change: Change) -> None:
    kept, dropped = check_quoted(
        [
            finding("app.py", 29, 30, severity="minor", title="Off-by-one in loop"),
            finding("app.py", 30, severity="major", title="off by one in loop!"),
            finding("app.py", 30, severity="nit", title="Off by one in the loop"),
            finding("app.py", 30, severity="nit", title="Unrelated naming issue"),
        ],
        app_change,
    )
    assert dropped == []
    assert len(kept) == 2
    top = kept[0]
    assert (top.severity, top.title) == (Severity.MAJOR, "off by one in loop!")
    assert merged_count(top) == 2
    assert kept[1].title == "Unrelated naming issue"


def test_same_fingerprint_is_a_duplicate_even_far_apart(tmp_path: Path) -> None:
    body = "".join(f"x{i} = {i}\n" for i in range(40))
    after = body.replace("x5 = 5\n", "risky()\n").replace("x35 = 35\n", "risky()\n")
    change = make_change(tmp_path, {"r.py": body}, {"r.py": after})
    kept, _ = check_quoted(
        [finding("r.py", 6, title="Risky call"), finding("r.py", 36, title="risky call")], change
    )
    assert len(one(kept).note) > 0 and merged_count(kept[0]) == 1


def test_cap_keeps_the_most_severe(app_change: Change) -> None:
    raw = [finding("app.py", 27 + i % 7, title=distinct_title(i)) for i in range(24)]
    raw[5] = dataclasses.replace(raw[5], severity=Severity.CRITICAL)
    raw[17] = dataclasses.replace(raw[17], severity=Severity.MAJOR)
    raw.append(finding("app.py", 2, severity="minor", title="summary only zz"))
    kept, dropped = check_quoted(raw, app_change, max_comments=20)
    assert len(kept) == 20 and len(dropped) == 5
    assert [kept[0].title, kept[1].title] == [distinct_title(5), distinct_title(17)]
    assert all(reason == "over max_comments (20)" for _, reason in dropped)
    # Ties: inline before summary, so the summary-only minor finding is capped first.
    assert "summary only zz" in [f.title for f, _ in dropped]
    assert kept == sorted(kept, key=order_key)


def test_secret_findings_survive_merges_and_the_cap(app_change: Change) -> None:
    secret = finding(
        "app.py", 30, severity="critical", title="Secret committed", source="secret-scan"
    )
    second = finding(
        "app.py", 30, severity="critical", title="Secret committed", source="secret-scan"
    )
    model = [finding("app.py", 30, severity="critical", title=distinct_title(i)) for i in range(5)]
    echo = finding("app.py", 30, severity="critical", title="secret committed")
    kept, dropped = check_quoted([*model, echo, secret, second], app_change, max_comments=2)
    secrets = [f for f in kept if f.source == "secret-scan"]
    assert len(secrets) == 2
    assert len(kept) == 2  # both slots are taken by the secrets
    assert merged_count(secrets[0]) + merged_count(secrets[1]) == 1  # the model's echo
    assert len(dropped) == 5


def test_fingerprint_stable_when_code_moves_and_different_when_it_changes(tmp_path: Path) -> None:
    lines = BASE_APP.splitlines(keepends=True)
    lines[29] = "value_30 = compute(30)\n"
    head = "".join(lines)
    shifted = "".join(["# a new header\n", "import os\n", *lines])
    changed = head.replace("compute(30)", "compute(31)")
    fingerprints = []
    for name, content, line in (("a", head, 30), ("b", shifted, 32), ("c", changed, 30)):
        change = make_change(tmp_path / name, {"app.py": BASE_APP}, {"app.py": content})
        got = one(check_quoted([finding("app.py", line, title="Bad call")], change)[0])
        assert got.placement == Placement.INLINE
        fingerprints.append(got.fingerprint)
    assert fingerprints[0] == fingerprints[1]
    assert fingerprints[0] != fingerprints[2]
    assert re.fullmatch(r"[0-9a-f]{20}", fingerprints[0])


def test_summary_findings_get_a_fingerprint(app_change: Change) -> None:
    got = one(check_quoted([finding("app.py", 3)], app_change)[0])
    assert got.placement == Placement.SUMMARY and got.fingerprint


def test_secret_fingerprint_does_not_depend_on_the_secret(tmp_path: Path) -> None:
    prints = []
    for name, value in (("a", "hunter2"), ("b", "correct horse")):
        change = make_change(tmp_path / name, {"k": "k\n"}, {"cfg.py": f"password = '{value}'\n"})
        secret = finding(
            "cfg.py", 1, severity="critical", title="Secret committed", source="secret-scan"
        )
        prints.append(one(check_quoted([secret], change)[0]).fingerprint)
    assert prints[0] == prints[1]


def test_secret_scan_fingerprint_is_kept(app_change: Change) -> None:
    secret = finding(
        "app.py", 30, severity="critical", title="secret committed", source="secret-scan"
    )
    secret.fingerprint = "0123456789abcdef"
    assert one(check_quoted([secret], app_change)[0]).fingerprint == "0123456789abcdef"


def test_input_findings_are_not_modified(app_change: Change) -> None:
    raw = [finding("./app.py", 25, suggestion="x\n"), finding("nope", 1)]
    before = [dataclasses.replace(f) for f in raw]
    check_quoted(raw, app_change)
    assert raw == before


# --- properties: never a 422, nothing lost -------------------------------------------


@pytest.fixture(scope="module")
def mixed_change(tmp_path_factory: pytest.TempPathFactory) -> Change:
    base = tmp_path_factory.mktemp("mixed")
    lines = BASE_APP.splitlines(keepends=True)
    lines[9] = "value_10 = 'ten'\n"
    lines[45:47] = ["value_46 = 46.0\n", "new_line = 1\n", "value_47 = 47\n"]
    renamed = "".join(f"r{i} = {i}\n" for i in range(30))
    return make_change(
        base,
        {
            "app.py": BASE_APP,
            "old.py": renamed,
            "gone.py": "g = 1\ng2 = 2\n",
            "w.txt": "a\r\nb\r\n",
        },
        {
            "app.py": "".join(lines),
            "old.py": None,
            "new.py": renamed.replace("r15 = 15", "r15 = 'x'"),
            "gone.py": None,
            "fresh.js": "f(1);\nf(2);\n",
            "w.txt": "a\r\nc\r\n",
        },
    )


findings_strategy = st.lists(
    st.builds(
        finding,
        path=st.sampled_from(
            ["app.py", "./new.py", "old.py", "gone.py", "fresh.js", "w.txt", "b/app.py", "nope.py"]
        ),
        start=st.integers(-3, 80),
        end=st.integers(-3, 80),
        side=st.sampled_from(["RIGHT", "LEFT"]),
        severity=st.sampled_from([s.value for s in Severity]),
        title=st.sampled_from(["Null deref", "null deref!", "Leak", "Secret committed", "Typo"]),
        suggestion=st.none() | st.sampled_from(["x = 1\n", "f(3);\n", "(", ""]),
        source=st.sampled_from(["model", "model", "secret-scan"]),
    ),
    max_size=30,
)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(raw=findings_strategy, cap=st.integers(0, 25))
def test_property_inline_is_commentable_and_nothing_is_lost(
    mixed_change: Change, raw: list[Finding], cap: int
) -> None:
    kept, dropped = check_quoted(raw, mixed_change, max_comments=cap)
    for f in kept:
        file = mixed_change.diff.get(f.path)
        assert file is not None
        assert 1 <= f.start_line <= f.end_line
        if f.placement == Placement.INLINE:
            assert file.commentable(f.side, f.start_line, f.end_line), f
        if f.suggestion is not None:
            assert f.side == "RIGHT"
        assert f.fingerprint
    survivors = kept + [f for f, _ in dropped]
    assert len(kept) + len(dropped) + sum(merged_count(f) for f in survivors) == len(raw)
    assert kept == sorted(kept, key=order_key)
    assert sum(f.source != "secret-scan" for f in kept) <= cap
    in_change = [f for f in raw if find_file(mixed_change.diff, f.path) is not None]
    assert sum(f.source == "secret-scan" for f in kept) == sum(
        f.source == "secret-scan" for f in in_change
    )


def test_bare_diff_change_from_git_diff_text(app_change: Change) -> None:
    """A Change with no snapshots (``--diff FILE``) anchors the same way."""
    text = (
        "diff --git a/app.py b/app.py\n--- a/app.py\n+++ b/app.py\n@@ -29,3 +29,3 @@\n"
        " value_29 = 29\n-value_30 = 30\n+value_30 = compute(30)\n value_31 = 31\n"
    )
    bare = Change(diff=parse_diff(text))
    # Line 33 is not in the diff: its finding quotes line 31, the nearest it could see.
    near = dataclasses.replace(finding("app.py", 33), evidence="value_31 = 31")
    kept, _ = check_quoted([finding("app.py", 30, suggestion="value_30 = 2\n"), near], bare)
    assert [(f.start_line, f.placement) for f in kept] == [
        (30, Placement.INLINE),
        (31, Placement.INLINE),
    ]
    assert kept[0].suggestion == "value_30 = 2\n"

"""The evidence rule on real git repositories: a finding is shown only if the code it
quotes is near its lines (whitespace aside); the rest are dropped and counted."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.domain.change import Change
from bot.domain.diff import FileDiff
from bot.domain.results import (
    QUOTE_NOT_FOUND,
    Coverage,
    Finding,
    Placement,
    ReviewResult,
    Severity,
)
from bot.git.repo import range_change
from bot.review.findings.check import check_findings
from bot.review.findings.evidence import EVIDENCE_WINDOW, Quoted, check_evidence
from bot.review.findings.fingerprint import SECRET_SOURCE
from bot.review.findings.quotes import Quote, occurrences
from bot.review.findings.side_text import side_text
from tests.support.repos import commit, make_repo

BASE_APP = "".join(f"value_{i} = compute({i})\n" for i in range(1, 41))
#: Line 20 of the head: the only changed line of app.py (RIGHT 17-23 are in its hunk).
HEAD_APP = BASE_APP.replace("value_20 = compute(20)\n", "value_20 = compute(20) + offset\n")
GUARD_BASE = (
    "def is_adult(age):\n    if age < 0:\n        raise ValueError(age)\n    return age >= 18\n"
)
GUARD_HEAD = "def is_adult(age):\n    return age >= 18\n"
TOKEN = "ghp_" + "".join(chr(ord("A") + (i * 5) % 26) for i in range(18)) + "q8Zr2Lm4Xw7Tn1Ks"


@pytest.fixture(scope="module")
def change(tmp_path_factory: pytest.TempPathFactory) -> Change:
    repo = make_repo(tmp_path_factory.mktemp("evidence") / "repo")
    base = {
        "app.py": BASE_APP,
        "guard.py": GUARD_BASE,
        "gone.py": "a = 1\nb = 2\n",
        "img.bin": b"\x89PNG\r\n\x1a\n\x00\x01",
        "settings.py": "DEBUG = False\n",
    }
    first = commit(repo, base)  # type: ignore[arg-type]
    head = {
        **base,
        "app.py": HEAD_APP,
        "guard.py": GUARD_HEAD,
        "gone.py": None,
        "img.bin": b"\x89PNG\r\n\x1a\n\x00\x02",
        "settings.py": f'DEBUG = False\nGITHUB_TOKEN = "{TOKEN}"\n',
    }
    commit(repo, head, branch="feature", parents=[first])  # type: ignore[arg-type]
    return range_change(repo, "main", "feature")


def finding(
    path: str,
    start: int,
    evidence: str | None,
    *,
    end: int | None = None,
    side: str = "RIGHT",
    suggestion: str | None = None,
    title: str = "a problem",
    source: str = "model",
) -> Finding:
    return Finding(
        path=path,
        start_line=start,
        end_line=start if end is None else end,
        side=side,  # type: ignore[arg-type]
        severity=Severity.MAJOR,
        category="bug",
        title=title,
        body="Because.",
        suggestion=suggestion,
        source=source,
        evidence=evidence,
    )


def check(change: Change, *findings: Finding) -> tuple[list[Finding], list[tuple[Finding, str]]]:
    return check_findings(list(findings), change)


def app_file(change: Change) -> FileDiff:
    file = change.diff.get("app.py")
    assert file is not None
    return file


# -- what is dropped, and counted --------------------------------------------------------


def test_an_invented_quote_is_not_shown_and_is_counted(change: Change) -> None:
    real = finding("app.py", 20, "value_20 = compute(20) + offset", title="real")
    invented = finding("app.py", 20, "value_20 = eval(user_input)", title="invented")
    kept, dropped = check(change, real, invented)
    assert [f.title for f in kept] == ["real"]
    [(held, reason)] = dropped
    assert held.title == "invented"
    assert reason == f"{QUOTE_NOT_FOUND} in new-file lines 17-23"
    assert ReviewResult("", kept, Coverage(), dropped=dropped).unquoted() == 1


def test_a_finding_that_quotes_nothing_is_held_back_like_an_invented_one(change: Change) -> None:
    for evidence in (None, "", "   \n\t"):
        kept, [(_, reason)] = check(change, finding("app.py", 20, evidence))
        assert kept == [] and reason.startswith(QUOTE_NOT_FOUND), evidence
        assert "quotes no code" in reason
    # A quote of placeholders only is looked for in the lines as the model saw them:
    # app.py has no redacted line, so it is not found.
    kept, [(_, reason)] = check(change, finding("app.py", 20, "[REDACTED:GitHub token]"))
    assert kept == [] and reason.startswith(QUOTE_NOT_FOUND) and "not found in" in reason


def test_real_code_elsewhere_in_the_file_is_not_evidence_for_these_lines(change: Change) -> None:
    far = EVIDENCE_WINDOW + 1
    kept, [(_, reason)] = check(
        change, finding("app.py", 20, f"value_{20 + far} = compute({20 + far})")
    )
    assert kept == [] and reason.startswith(QUOTE_NOT_FOUND)
    edge = EVIDENCE_WINDOW
    [got] = check(change, finding("app.py", 20, f"value_{20 + edge} = compute({20 + edge})"))[0]
    assert got.start_line == 20 + edge  # found at the window's edge, and moved onto it


def test_the_quote_must_be_consecutive_code(change: Change) -> None:
    # Two real lines, but not one after the other in the file.
    kept, dropped = check(
        change, finding("app.py", 20, "value_19 = compute(19)\nvalue_21 = compute(21)")
    )
    assert kept == [] and dropped[0][1].startswith(QUOTE_NOT_FOUND)


# -- what is shown -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "evidence",
    [
        "value_20 = compute(20) + offset",
        "        value_20 = compute(20) + offset",  # other indentation
        "\tvalue_20=compute( 20 )+offset   ",  # tabs, other spacing
        "value_20 = compute(20) + offset\r\n",  # CRLF
        "compute(20) + offset",  # part of the line
        "value_19 = compute(19)\nvalue_20 = compute(20) + offset\n",  # two lines
        "\nvalue_19 = compute(19)\n\n   value_20 = compute(20) + offset\n\n",  # blank lines
        "R20 +value_20 = compute(20) + offset",  # the prompt's label and marker copied
        "  20| value_20 = compute(20) + offset",  # the enclosing code's label copied
        "```python\nvalue_20 = compute(20) + offset\n```",  # fenced
        "`value_20 = compute(20) + offset`",  # in backticks
    ],
)
def test_a_real_quote_is_shown_whatever_its_whitespace(change: Change, evidence: str) -> None:
    kept, dropped = check(change, finding("app.py", 20, evidence, suggestion="value_20 = 1\n"))
    assert dropped == []
    [got] = kept
    assert (got.start_line, got.placement, got.suggestion) == (
        20,
        Placement.INLINE,
        "value_20 = 1\n",
    )


def test_a_quote_on_a_nearby_changed_line_moves_the_finding_onto_it(change: Change) -> None:
    # The model's numbers are off by two; its quote, verified, says which line it meant.
    kept, dropped = check(
        change, finding("app.py", 18, "value_20 = compute(20) + offset", suggestion="x = 1\n")
    )
    assert dropped == []
    [got] = kept
    assert (got.start_line, got.end_line, got.placement) == (20, 20, Placement.INLINE)
    assert "moved from line 18 to line 20, the code it quotes" in got.note
    assert got.suggestion is None and "suggestion dropped" in got.note


def test_a_quote_off_the_diff_does_not_move_a_finding_off_it(change: Change) -> None:
    # Line 23 is the hunk's last line; the quoted line 25 is outside the diff.
    kept, _ = check(change, finding("app.py", 23, "value_25 = compute(25)"))
    [got] = kept
    assert (got.start_line, got.placement) == (23, Placement.INLINE) and "moved" not in got.note
    # Off the diff both: the finding goes where its verified code is (listed in the summary).
    [far] = check(change, finding("app.py", 35, "value_33 = compute(33)"))[0]
    assert (far.start_line, far.placement) == (33, Placement.SUMMARY)


def test_a_redacted_secret_in_the_quote_matches_the_real_line(change: Change) -> None:
    kept, dropped = check(
        change, finding("settings.py", 2, 'GITHUB_TOKEN = "[REDACTED:github-token]"')
    )
    assert dropped == [] and len(kept) == 1
    wrong = finding("settings.py", 2, 'API_TOKEN = "[REDACTED:github-token]"')
    assert check(change, wrong)[1][0][1].startswith(QUOTE_NOT_FOUND)


# -- LEFT: the removed lines ---------------------------------------------------------------


def test_left_side_evidence_comes_from_the_removed_lines(change: Change) -> None:
    removed = finding(
        "guard.py", 2, "if age < 0:\n    raise ValueError(age)", end=3, side="LEFT", title="removed"
    )
    kept, dropped = check(change, removed)
    assert dropped == []
    [got] = kept
    assert (got.side, got.start_line, got.end_line, got.placement) == (
        "LEFT",
        2,
        3,
        Placement.INLINE,
    )


@pytest.mark.parametrize(
    "evidence",
    ["return age >= 18", "def is_adult(age):", "if age <= 0:"],  # kept, not removed; invented
)
def test_left_side_evidence_that_is_not_removed_code_is_dropped(
    change: Change, evidence: str
) -> None:
    kept, [(_, reason)] = check(change, finding("guard.py", 2, evidence, side="LEFT"))
    assert kept == []
    assert reason == f"{QUOTE_NOT_FOUND} in the removed lines near old-file lines 1-5"


def test_a_right_side_finding_cannot_quote_removed_code(change: Change) -> None:
    kept, [(_, reason)] = check(change, finding("guard.py", 2, "if age < 0:"))
    assert kept == [] and reason.startswith(QUOTE_NOT_FOUND)


# -- exempt --------------------------------------------------------------------------------


def test_secret_scan_findings_are_exempt(change: Change) -> None:
    secret = finding("settings.py", 2, None, source=SECRET_SOURCE, title="Secret committed")
    kept, dropped = check(change, secret)
    assert dropped == [] and [f.source for f in kept] == [SECRET_SOURCE]


def test_findings_on_deleted_and_binary_files_are_exempt(change: Change) -> None:
    deleted = finding("gone.py", 1, None, side="LEFT", title="deleted")
    invented = finding("gone.py", 2, "c = 3", side="LEFT", title="deleted, any quote")
    binary = finding("img.bin", 1, None, title="binary")
    kept, dropped = check(change, deleted, invented, binary)
    assert dropped == []
    assert {f.title for f in kept} == {"deleted", "deleted, any quote", "binary"}


# -- properties ----------------------------------------------------------------------------

WHITESPACE = st.text(alphabet=" \t\u00a0", max_size=4)


@st.composite
def requoted(draw: st.DrawFn, lines: list[str]) -> str:
    """``lines`` with random whitespace: other indentation, spaces anywhere, line endings."""
    out = []
    for line in lines:
        chars = list(line)
        for _ in range(draw(st.integers(0, 4))):
            at = draw(st.integers(0, len(chars)))
            chars.insert(at, draw(WHITESPACE))
        out.append(draw(WHITESPACE) + "".join(chars) + draw(WHITESPACE))
    return draw(st.sampled_from(["\n", "\r\n", "\n\n"])).join(out)


def head_lines(change: Change) -> dict[int, str]:
    return dict(side_text(change, app_file(change), "RIGHT").lines)


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_property_a_real_quote_near_the_finding_is_found(
    change: Change, data: st.DataObject
) -> None:
    lines = head_lines(change)
    line = data.draw(st.integers(1, 40), label="finding's line")
    height = data.draw(st.integers(1, 3), label="quoted lines")
    first = data.draw(
        st.integers(
            max(1, line - EVIDENCE_WINDOW - height + 1),
            min(40 - height + 1, line + EVIDENCE_WINDOW),
        ),
        label="first quoted line",
    )
    quote = data.draw(requoted([lines[n].rstrip("\n") for n in range(first, first + height)]))
    file = app_file(change)
    got = check_evidence(finding("app.py", line, quote), file, lambda: lines)
    assert isinstance(got, Quoted), got
    last = first + height - 1
    if first <= line <= last:
        assert (got.start, got.end, got.moves) == (line, line, False)
    else:
        expected = file.commentable("RIGHT", first, last) or not file.commentable(
            "RIGHT", line, line
        )
        assert got.moves == expected
        assert (got.start, got.end) == ((first, last) if expected else (line, line))
    kept, dropped = check(change, finding("app.py", line, quote))
    assert len(kept) == 1 and dropped == []


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_property_a_quote_with_one_invented_character_is_not_found(
    change: Change, data: st.DataObject
) -> None:
    lines = head_lines(change)
    line = data.draw(st.integers(1, 40))
    height = data.draw(st.integers(1, 3))
    first = data.draw(st.integers(max(1, line - EVIDENCE_WINDOW), min(40 - height + 1, line)))
    real = [lines[n].rstrip("\n") for n in range(first, first + height)]
    which = data.draw(st.integers(0, height - 1))
    at = data.draw(st.integers(0, len(real[which])))
    # A character app.py does not contain, anywhere in one quoted line.
    invented = data.draw(st.sampled_from("$@!?;#"))
    real[which] = real[which][:at] + invented + real[which][at:]
    quote = data.draw(requoted(real))
    kept, [(_, reason)] = check(change, finding("app.py", line, quote))
    assert kept == [] and reason.startswith(QUOTE_NOT_FOUND)


@settings(max_examples=100, deadline=None)
@given(line=st.integers(1, 40), target=st.integers(1, 40))
def test_property_a_real_line_too_far_away_is_not_evidence(
    change: Change, line: int, target: int
) -> None:
    quote = head_lines(change)[target]
    kept, dropped = check(change, finding("app.py", line, quote))
    if abs(target - line) <= EVIDENCE_WINDOW:
        assert len(kept) == 1 and dropped == []
    else:
        assert kept == [] and dropped[0][1].startswith(QUOTE_NOT_FOUND)


@settings(max_examples=200, deadline=None)
@given(evidence=st.one_of(st.none(), st.text(max_size=300)), line=st.integers(-5, 10**6))
def test_property_any_evidence_is_either_kept_or_dropped_with_a_reason(
    change: Change, evidence: str | None, line: int
) -> None:
    raw = [finding("app.py", line, evidence), finding("guard.py", line, evidence, side="LEFT")]
    kept, dropped = check_findings(raw, change)
    assert len(kept) + len(dropped) == 2
    assert all(reason for _, reason in dropped)


def test_a_hostile_quote_against_a_hostile_line_is_checked_in_linear_time() -> None:
    """Both texts come from the pull request's author (a quote can be steered by prompt
    injection): placeholders between pieces must not make the check backtrack. With a
    regular expression this input takes longer than the suite's timeout."""
    lines = {1: "a" * 20_000, 2: "a" * 20_000}
    hostile = Quote.of("a[REDACTED:x]" * 60 + "b")
    assert hostile is not None
    assert occurrences(hostile, lines, 1, 2) == []
    two_lines = Quote.of("a[REDACTED:x]" * 30 + "\n" + "a[REDACTED:x]" * 30 + "b")
    assert two_lines is not None and occurrences(two_lines, lines, 1, 2) == []
    found = Quote.of("a[REDACTED:x]" * 60)
    assert found is not None and occurrences(found, lines, 1, 2) == [(1, 1), (2, 2)]

"""submit_review arguments: valid answers, invalid JSON, schema violations, answers
written in ``content`` with text around them, and the repair message."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bot.domain.results import Finding, Placement, Severity
from bot.errors import ModelOutputError
from bot.review.findings.submission import (
    Submission,
    SubmissionError,
    extract_submission,
    parse_submission,
    repair_message,
)


def _finding(**changes: Any) -> dict[str, Any]:
    item: dict[str, Any] = {
        "path": "src/app.py",
        "start_line": 12,
        "end_line": 13,
        "side": "RIGHT",
        "severity": "major",
        "category": "bug",
        "title": "Off-by-one in the loop bound",
        "body": "`range(n + 1)` reads one element past the end.",
        "suggestion": "    for i in range(n):\n        total += items[i]\n",
    }
    item.update(changes)
    return {k: v for k, v in item.items() if v is not ...}


def _args(*findings: dict[str, Any], summary: str = "One bug.") -> str:
    return json.dumps({"summary": summary, "findings": list(findings)})


def test_valid_arguments_become_findings() -> None:
    plain = _finding(path="b.py", start_line=3, end_line=3, side="LEFT", suggestion=...)
    result = parse_submission(_args(_finding(), plain))
    assert result == Submission(
        summary="One bug.",
        findings=[
            Finding(
                path="src/app.py",
                start_line=12,
                end_line=13,
                side="RIGHT",
                severity=Severity.MAJOR,
                category="bug",
                title="Off-by-one in the loop bound",
                body="`range(n + 1)` reads one element past the end.",
                suggestion="    for i in range(n):\n        total += items[i]\n",
            ),
            Finding("b.py", 3, 3, "LEFT", Severity.MAJOR, "bug", plain["title"], plain["body"]),
        ],
    )
    assert result.findings[0].placement is Placement.INLINE
    assert result.findings[1].suggestion is None


def test_no_findings_is_a_valid_review() -> None:
    assert parse_submission(_args(summary="Looks fine.")) == Submission("Looks fine.", [])


def test_small_slips_are_forgiven_rather_than_costing_a_repair_turn() -> None:
    result = parse_submission(_args(_finding(start_line=9, end_line=4, suggestion=None)))
    (finding,) = result.findings
    assert (finding.start_line, finding.end_line, finding.suggestion) == (4, 9, None)
    assert finding.note == "start_line and end_line were given in reverse order"


@pytest.mark.parametrize(
    "arguments",
    ['{"summary": "x", "findings": [', "", "not json at all", '{"summary": "x"}}', "[" * 100_000],
)
def test_invalid_json_is_a_submission_error(arguments: str) -> None:
    with pytest.raises(SubmissionError, match=r"^submit_review arguments are not valid JSON: "):
        parse_submission(arguments)


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        (json.dumps({"findings": []}), "arguments: 'summary' is a required property"),
        (_args(_finding(title=...)), "arguments.findings[0]: 'title' is a required property"),
        (
            _args(_finding(side="MIDDLE")),
            "arguments.findings[0].side: 'MIDDLE' is not one of ['RIGHT', 'LEFT']",
        ),
        (
            _args(_finding(), _finding(severity="blocker")),
            "arguments.findings[1].severity: 'blocker' is not one of "
            "['critical', 'major', 'minor', 'nit']",
        ),
        (
            _args(_finding(fix="x")),
            "arguments.findings[0]: Additional properties are not allowed ('fix' was unexpected)",
        ),
        (
            json.dumps({"summary": "x", "findings": [], "approve": True}),
            "Additional properties are not allowed ('approve' was unexpected)",
        ),
        (_args(_finding(start_line=0)), "arguments.findings[0].start_line: 0 is less than"),
        (_args(_finding(end_line="7")), "arguments.findings[0].end_line: '7' is not of type"),
        (json.dumps([1, 2]), "arguments: [1, 2] is not of type 'object'"),
    ],
)
def test_schema_violations_are_named_precisely(arguments: str, problem: str) -> None:
    with pytest.raises(SubmissionError) as caught:
        parse_submission(arguments)
    message = str(caught.value)
    assert message.startswith("submit_review arguments do not match the schema: ")
    assert problem in message
    assert "\n" not in message
    assert isinstance(caught.value, ModelOutputError)


def test_many_problems_are_counted_and_huge_values_cut() -> None:
    bad = [_finding(side="X" * 10_000) for _ in range(9)]
    with pytest.raises(SubmissionError) as caught:
        parse_submission(_args(*bad))
    message = str(caught.value)
    assert message.endswith("; and 4 more")
    assert len(message) < 1200


def test_an_answer_in_content_with_reasoning_around_it_is_found() -> None:
    good = _args(_finding())
    content = (
        "Let me think. The loop {clearly} reads past the end, so I will report it.\n"
        '```json\n{"summary": "draft", "findings": [{"path": "x"}]}\n```\n'
        f"Final answer:\n```json\n{good}\n```\nDone."
    )
    found = extract_submission(content)
    assert found == parse_submission(good)


def test_the_last_valid_object_wins() -> None:
    first = _args(summary="draft")
    second = _args(_finding(), summary="final")
    found = extract_submission(f"{first}\nOn reflection:\n{second}")
    assert found is not None and found.summary == "final"


def test_a_tool_call_written_out_in_content_is_unwrapped() -> None:
    arguments = _args(_finding())
    as_string = json.dumps({"name": "submit_review", "arguments": arguments})
    as_object = json.dumps({"name": "submit_review", "arguments": json.loads(arguments)})
    expected = parse_submission(arguments)
    assert extract_submission(f"submit_review({as_string})") == expected
    assert extract_submission(as_object) == expected


@pytest.mark.parametrize(
    "content",
    [
        "",
        "I found no problems in this change.",
        '{"summary": "no findings key"}',
        '{"summary": "x", "findings": [{"path": "a.py"}]}',
        "{" * 5000,
        '{"a":' * 20_000,
        '{"summary": "unterminated',
    ],
)
def test_content_without_a_valid_submission_gives_none(content: str) -> None:
    assert extract_submission(content) is None


def test_the_repair_message_quotes_the_problem_and_asks_for_the_tool() -> None:
    with pytest.raises(SubmissionError) as caught:
        parse_submission(_args(_finding(side="MIDDLE")))
    message = repair_message(caught.value)
    assert "'MIDDLE' is not one of ['RIGHT', 'LEFT']" in message
    assert "Call `submit_review` again" in message
    assert "Do not answer in text." in message

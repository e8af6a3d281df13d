"""Text, JSON and SARIF output of a checked review on a real repository."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from bot.domain.change import Change
from bot.domain.results import Coverage, Finding, ReviewResult, Severity, SkippedFile
from bot.domain.route import Route
from bot.errors import UsageError
from bot.git.repo import range_change
from bot.render.json_report import load_json, render_json
from bot.render.sarif import render_sarif, rule_id
from bot.render.text import render_text
from bot.review.findings.check import apply_suggestion
from bot.usage import Usage
from tests.support.evidence import check_quoted
from tests.support.paths import FIXTURES
from tests.support.repos import commit, make_repo

SCHEMA = FIXTURES / "sarif" / "sarif-schema-2.1.0.json"
HEADLINE = re.compile(
    r"^(?P<path>[^\s:][^:]*):(?P<line>\d+): (?P<severity>critical|major|minor|nit): (?P<title>.+)$"
)

CALC = "".join(f"v{i} = {i}\n" for i in range(1, 41))
CALC_HEAD = CALC.replace("v20 = 20\n", "v20 = divide(20, 0)\n").replace(
    "v21 = 21\n", "v21 = 21.0\n"
)
OLD = "".join(f"o{i} = {i}\n" for i in range(1, 31))


@pytest.fixture
def change(tmp_path: Path) -> Change:
    repo = make_repo(tmp_path / "repo")
    first = commit(repo, {"calc.py": CALC, "old name.py": OLD, "bin.dat": b"\x00\x01"})
    commit(
        repo,
        {
            "calc.py": CALC_HEAD,
            "old name.py": None,
            "new name.py": OLD.replace("o15 = 15\n", "o15 = 'x'\n"),
            "bin.dat": b"\x00\x02",
        },
        branch="feature",
        parents=[first],
    )
    return range_change(repo, "main", "feature")


def raw_findings() -> list[Finding]:
    def f(
        path: str,
        start: int,
        end: int,
        severity: str,
        category: str,
        title: str,
        body: str,
        **kw: Any,
    ) -> Finding:
        side = kw.pop("side", "RIGHT")
        return Finding(path, start, end, side, Severity(severity), category, title, body, **kw)

    return [
        f(
            "calc.py",
            20,
            20,
            "critical",
            "correctness",
            "Division by zero",
            "`divide(20, 0)` always raises.\nUse a non-zero divisor.",
            suggestion="v20 = divide(20, 1)\n",
        ),
        f(
            "calc.py",
            20,
            21,
            "minor",
            "Style & naming",
            "Mixed number types",
            "int and float mixed",
        ),
        f(
            "old name.py",
            15,
            15,
            "major",
            "correctness",
            "Removed value still used",
            "callers read o15",
            side="LEFT",
        ),
        f("calc.py", 2, 2, "nit", "docs", "Missing module docstring", "Add one."),
        f("nowhere.py", 1, 1, "major", "correctness", "Ghost", "not in the change"),
    ]


@pytest.fixture
def result(change: Change) -> ReviewResult:
    kept, dropped = check_quoted(raw_findings(), change)
    return ReviewResult(
        summary="Two bugs; one of them crashes.\nSee inline comments.",
        findings=kept,
        coverage=Coverage(["calc.py", "new name.py"], [SkippedFile("bin.dat", "binary")]),
        usage=Usage(prompt_tokens=12_345, completion_tokens=678, cached_tokens=10_000, requests=2),
        model="kimi-k3",
        effort="max",
        duration_s=42.25,
        dropped=dropped,
        route=Route("sensitive", "max", reason="sensitive: auth/x.py (authentication)"),
    )


# --- text ----------------------------------------------------------------------------


def test_text_headlines_are_compiler_style(result: ReviewResult, change: Change) -> None:
    out = render_text(result, change)
    headlines = [m.groupdict() for line in out.splitlines() if (m := HEADLINE.match(line))]
    assert headlines == [
        {"path": "calc.py", "line": "20", "severity": "critical", "title": "Division by zero"},
        {
            "path": "new name.py",
            "line": "15",
            "severity": "major",
            "title": "Removed value still used",
        },
        {"path": "calc.py", "line": "20", "severity": "minor", "title": "Mixed number types"},
        {"path": "calc.py", "line": "2", "severity": "nit", "title": "Missing module docstring"},
    ]
    assert "\x1b[" not in out


def test_text_details(result: ReviewResult, change: Change) -> None:
    out = render_text(result, change)
    block = out.split("\n\n")[0].splitlines()
    assert block == [
        "calc.py:20: critical: Division by zero",
        "    [correctness]",
        "    `divide(20, 0)` always raises.",
        "    Use a non-zero divisor.",
        "    suggestion:",
        "    @@ -20,1 +20,1 @@",
        "    -v20 = divide(20, 0)",
        "    +v20 = divide(20, 1)",
    ]
    assert "    [correctness] old file" in out
    assert "    [Style & naming] lines 20-21" in out
    assert "    [docs] outside the diff" in out
    assert "4 findings: 1 critical, 1 major, 1 minor, 1 nit" in out
    assert "Summary:\n    Two bugs; one of them crashes.\n    See inline comments." in out
    assert "Coverage: 2 reviewed, 1 skipped\n    bin.dat: binary" in out
    assert "Dropped: 1\n    nowhere.py:1: major: Ghost (path not in this change)" in out
    assert (
        "Usage: 12,345 prompt tokens (10,000 cached), 678 completion tokens, 2 requests, "
        "42.2 s (model kimi-k3, effort max)" in out
    )


def test_text_without_a_change_shows_only_the_new_lines(result: ReviewResult) -> None:
    out = render_text(result)
    assert "    @@ +20,1 @@\n    +v20 = divide(20, 1)\n" in out
    assert "-v20" not in out


def test_text_colour_and_hostile_text(change: Change) -> None:
    nasty = Finding(
        "calc.py", 20, 20, "RIGHT", Severity.MAJOR, "x", "Title\x1b[2J", "body \x1b]0;t\x07 \udcff"
    )
    out = render_text(ReviewResult("", [nasty], Coverage()), change, color=True)
    assert "\x1b[2J" not in out and "\x1b]0" not in out
    assert "\ufffd" in out
    assert "\x1b[31mmajor\x1b[0m" in out
    assert render_text(ReviewResult("", [], Coverage())).startswith("No findings.\n")


# --- JSON ----------------------------------------------------------------------------


def test_json_round_trip(result: ReviewResult) -> None:
    text = render_json(result)
    data = json.loads(text)
    assert data["version"] == 1
    assert set(data) == {
        "version",
        "summary",
        "model",
        "effort",
        "duration_s",
        "usage",
        "coverage",
        "findings",
        "dropped",
        "evidence_not_found",
        "refuted",
        "no_majority",
        "walkthrough",
        "route",
    }
    assert set(data["findings"][0]) == {
        "path",
        "start_line",
        "end_line",
        "side",
        "severity",
        "category",
        "title",
        "body",
        "suggestion",
        "placement",
        "note",
        "fingerprint",
        "source",
        "evidence",
    }
    assert data["usage"] == {
        "prompt_tokens": 12345,
        "completion_tokens": 678,
        "cached_tokens": 10000,
        "requests": 2,
    }
    assert data["dropped"][0]["reason"] == "path not in this change"
    assert data["route"] == {
        "name": "sensitive",
        "effort": "max",
        "endpoint": "main",
        "reason": "sensitive: auth/x.py (authentication)",
    }
    assert load_json(text) == result


def test_json_replaces_undecodable_bytes() -> None:
    odd = ReviewResult("sum \udcff", [], Coverage(["caf\udce9.py"]))
    data = json.loads(render_json(odd))
    assert data["summary"] == "sum \ufffd" and data["coverage"]["reviewed"] == ["caf\ufffd.py"]


@pytest.mark.parametrize("text", ["[]", "{}", '{"version": 2}', "not json", '{"version": 1}'])
def test_load_json_rejects_other_documents(text: str) -> None:
    with pytest.raises(UsageError):
        load_json(text)


# --- SARIF ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft7Validator:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    return jsonschema.Draft7Validator(schema)


def test_sarif_validates_against_the_schema(
    result: ReviewResult, change: Change, validator: jsonschema.Draft7Validator
) -> None:
    log = render_sarif(result, tool_version="0.1.0", change=change)
    errors = sorted(validator.iter_errors(json.loads(json.dumps(log))), key=str)
    assert errors == []
    empty = render_sarif(ReviewResult("", [], Coverage()), tool_version="0.1.0")
    assert list(validator.iter_errors(empty)) == []


def test_sarif_content(result: ReviewResult, change: Change) -> None:
    log = render_sarif(result, tool_version="1.2.3", change=change)
    assert log["version"] == "2.1.0" and log["$schema"].endswith("sarif-schema-2.1.0.json")
    run = log["runs"][0]
    driver = run["tool"]["driver"]
    assert (driver["name"], driver["version"]) == ("GitNeural", "1.2.3")
    assert [r["id"] for r in driver["rules"]] == ["correctness", "style-naming", "docs"]
    results = run["results"]
    assert [(r["ruleId"], r["level"]) for r in results] == [
        ("correctness", "error"),
        ("correctness", "error"),
        ("style-naming", "warning"),
        ("docs", "note"),
    ]
    for r in results:
        assert driver["rules"][r["ruleIndex"]]["id"] == r["ruleId"]
    crash = results[0]
    assert crash["message"]["text"].startswith("Division by zero\n\n`divide(20, 0)`")
    location = crash["locations"][0]["physicalLocation"]
    assert location == {
        "artifactLocation": {"uri": "calc.py"},
        "region": {"startLine": 20, "endLine": 20},
    }
    assert crash["partialFingerprints"] == {"gitneural/v1": result.findings[0].fingerprint}
    replacement = crash["fixes"][0]["artifactChanges"][0]["replacements"][0]
    assert replacement == {
        "deletedRegion": {"startLine": 20, "endLine": 20},
        "insertedContent": {"text": "v20 = divide(20, 1)"},
    }
    old = results[1]
    assert old["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "old%20name.py"
    assert old["properties"]["oldFile"] is True and old["properties"]["side"] == "LEFT"
    assert "fixes" not in old
    assert run["properties"]["usage"]["cached_tokens"] == 10_000


def test_sarif_fix_applies_like_the_suggestion(result: ReviewResult) -> None:
    log = render_sarif(result, tool_version="0")
    fix = log["runs"][0]["results"][0]["fixes"][0]["artifactChanges"][0]["replacements"][0]
    region = fix["deletedRegion"]
    lines = CALC_HEAD.split("\n")
    lines[region["startLine"] - 1 : region["endLine"]] = fix["insertedContent"]["text"].split("\n")
    suggestion = result.findings[0].suggestion
    assert suggestion is not None
    assert "\n".join(lines) == apply_suggestion(CALC_HEAD, 20, 20, suggestion)


def test_rule_ids() -> None:
    assert rule_id("Error handling") == "error-handling"
    assert rule_id("") == rule_id("!!") == "general"

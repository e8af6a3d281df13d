"""The evidence rule through the review core with the K3 stub: what K3 is told, how its
answer is read (a missing quote costs no repair turn), and what the review keeps."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import prompts
from bot.domain.change import Change
from bot.git.repo import range_change
from bot.render.text import render_text
from bot.review.findings.submission import SubmissionError, parse_submission, repair_message
from bot.review.pipeline import review
from bot.review.prompt import submit_review_tool
from tests.fakes.k3 import K3Stub
from tests.fakes.k3.brain import client_for, config, notices, submit
from tests.support.planted import INVENTED_EVIDENCE, ORIGINAL, PLANTED, PLANTED_BUG
from tests.support.repos import commit, make_repo

INVENTED = dict(PLANTED_BUG, title="eval on the age", evidence=INVENTED_EVIDENCE, suggestion=None)
UNQUOTED = {k: v for k, v in PLANTED_BUG.items() if k not in ("evidence", "suggestion")}
UNQUOTED["title"] = "Adulthood starts at 19 now"


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> Change:
    repo = make_repo(tmp_path_factory.mktemp("planted") / "repo")
    commit(repo, {"people.py": ORIGINAL}, "base")
    commit(repo, {"people.py": PLANTED}, "tighten is_adult")
    return range_change(repo, "HEAD~1", "HEAD")


def test_k3_is_told_to_quote_its_evidence() -> None:
    item = submit_review_tool()["function"]["parameters"]["properties"]["findings"]["items"]
    assert "evidence" in item["required"]
    assert "One to three lines copied exactly" in item["properties"]["evidence"]["description"]
    assert "`evidence`" in prompts.read_text("system.md.j2")


def test_a_missing_quote_is_read_not_refused() -> None:
    [read] = parse_submission(json.dumps({"summary": "s", "findings": [UNQUOTED]})).findings
    assert read.evidence is None


@pytest.mark.parametrize(
    ("given", "read"),
    [
        ("    return age > 18", "    return age > 18"),
        (["def is_adult(age):", "    return age > 18"], "def is_adult(age):\n    return age > 18"),
        (None, None),
        ("", None),
        ("  \n ", None),
    ],
)
def test_evidence_is_read_leniently(given: Any, read: str | None) -> None:
    answer = {"summary": "s", "findings": [dict(PLANTED_BUG, evidence=given)]}
    assert parse_submission(json.dumps(answer)).findings[0].evidence == read


def test_evidence_of_the_wrong_type_is_refused_and_the_repair_turn_asks_for_it() -> None:
    answer = {"summary": "s", "findings": [dict(PLANTED_BUG, evidence={"line": 2})]}
    with pytest.raises(SubmissionError, match=r"findings\[0\]\.evidence") as caught:
        parse_submission(json.dumps(answer))
    assert "evidence (one to three lines quoted exactly" in repair_message(caught.value)


def test_the_review_keeps_only_quoted_findings_and_counts_the_rest(planted: Change) -> None:
    with K3Stub() as stub:
        stub.push(submit("One bug.", [PLANTED_BUG, INVENTED, UNQUOTED]))
        result = review(planted, config(), client_for(stub, "low"))
        requests = stub.chat_requests
    assert len(requests) == 1  # no repair turn for a missing quote
    assert [f.title for f in result.findings] == [PLANTED_BUG["title"]]
    assert result.findings[0].suggestion == PLANTED_BUG["suggestion"]
    assert result.unquoted() == 2
    reasons = {f.title: reason for f, reason in result.dropped}
    assert reasons == {
        "eval on the age": "quoted code not found in new-file lines 1-5",
        UNQUOTED["title"]: "quoted code not found: the finding quotes no code as its evidence",
    }
    text = render_text(result, planted)
    assert "1 finding: 1 critical\n2 findings dropped: quoted code not found\n" in text
    assert "people.py:2: critical: eval on the age (quoted code not found in new-file" in text


def test_a_repair_turn_for_another_reason_asks_for_the_evidence(planted: Change) -> None:
    broken = dict(PLANTED_BUG, side="MIDDLE")
    with K3Stub() as stub:
        stub.push(submit("draft", [broken]), submit("One bug.", [PLANTED_BUG]))
        result = review(planted, config(), client_for(stub, "low"))
        second = stub.chat_requests[1].body
    [repair] = [m["content"] for m in second["messages"] if m["role"] == "tool"]
    assert "evidence (one to three lines quoted exactly from the code" in repair
    assert notices(second) == []  # asked in the tool result, not in a user message
    assert [f.title for f in result.findings] == [PLANTED_BUG["title"]]


def test_a_quote_indented_otherwise_than_the_file_is_kept(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    commit(repo, {"people.py": ORIGINAL}, "base")
    commit(repo, {"people.py": PLANTED.replace("    return", "\treturn")}, "tabs")
    change = range_change(repo, "HEAD~1", "HEAD")
    with K3Stub() as stub:
        stub.push(submit("One bug.", [PLANTED_BUG]))  # quoted with four spaces
        result = review(change, config(), client_for(stub, "low"))
    assert [f.start_line for f in result.findings] == [2] and result.dropped == []

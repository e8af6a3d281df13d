"""The judges: by location, and the model judge against the K3 stub."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from bot.domain.results import Finding, Severity
from bot.errors import ModelError
from bot.replay.items import GoldenItem, Match, PastChange
from bot.replay.judges import judge_location, judge_with_model, parse_answer
from tests.fakes.k3 import K3Stub, Reply
from tests.fakes.k3.brain import client_for
from tests.fakes.k3.judge import judge_reply

CHANGE = PastChange(base="a" * 40, head="b" * 40, title="add the parser")


def finding(path: str, start: int, end: int | None = None, title: str = "a problem") -> Finding:
    return Finding(
        path=path,
        start_line=start,
        end_line=start if end is None else end,
        side="RIGHT",
        severity=Severity.MAJOR,
        category="bug",
        title=title,
        body="Because.",
    )


def golden(path: str | None, lines: tuple[int, int] | None, text: str = "") -> GoldenItem:
    return GoldenItem(change=CHANGE.key, path=path, lines=lines, text=text, source="file")


def test_location_matches_same_file_within_three_lines() -> None:
    findings = [
        finding("a.py", 10),  # 3 below the item: matches
        finding("a.py", 2, 3),  # its end 3 above the item's first line: matches
        finding("a.py", 1, 2),  # 4 above: no
        finding("b.py", 7),  # another file: no
        finding("a.py", 11),  # 4 below: no
    ]
    items = [golden("a.py", (6, 7)), golden(None, None, "something")]
    judged = judge_location(findings, items)
    assert judged.matches == [Match(0, 0), Match(1, 0)]
    assert judged.found(0) and not judged.found(1)
    assert judged.matched(1) and not judged.matched(2)


@pytest.fixture
def stub() -> Iterator[K3Stub]:
    with K3Stub(brain=judge_reply) as running:
        yield running


def test_the_model_judge_asks_once_and_returns_its_answer(stub: K3Stub) -> None:
    findings = [finding("a.py", 12, title="divides by zero"), finding("c.py", 40, title="decoy")]
    items = [golden(None, None, "a.py:12 divides by zero"), golden("b.py", (3, 3))]

    judged = judge_with_model(client_for(stub), CHANGE, findings, items)

    assert [(m.finding, m.golden, m.judge) for m in judged.matches] == [(0, 0, "model")]
    assert "divides by zero" in judged.matches[0].reason
    assert len(stub.chat_requests) == 1
    assert json.loads(judged.answer)["matches"][0]["golden"] == 0
    # The answer kept is enough to judge again without the model.
    assert parse_answer(judged.answer, 2, 2) == judged.matches
    # The findings reach the model as fenced data.
    user = stub.chat_requests[0].body["messages"][1]["content"]
    assert "```json" in user and "divides by zero" in user


def test_the_model_judge_keeps_only_pairs_that_exist(stub: K3Stub) -> None:
    answer = {"matches": [{"finding": 0, "golden": 0}, {"finding": 5, "golden": 0}, "x"]}
    stub.push(Reply(content="Here: " + json.dumps(answer)))
    judged = judge_with_model(
        client_for(stub), CHANGE, [finding("a.py", 1)], [golden("a.py", (1, 1))]
    )
    assert [(m.finding, m.golden) for m in judged.matches] == [(0, 0)]
    stub.push(Reply(content="no idea"))
    with pytest.raises(ModelError, match="no JSON object"):
        judge_with_model(client_for(stub), CHANGE, [finding("a.py", 1)], [golden("a.py", (1, 1))])

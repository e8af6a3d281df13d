"""The walkthrough in the core: the strict Mermaid checker (what it accepts is what the
subset promises; anything else is refused, never passed on), the lenient reading of
``submit_review``'s ``walkthrough``, and what the review keeps of it."""

from __future__ import annotations

import json

import pytest

from bot.review.findings.submission import parse_submission
from bot.review.walkthrough.mermaid import (
    MAX_LINES,
    MAX_PARTICIPANTS,
    DiagramError,
    check_sequence_diagram,
)
from bot.review.walkthrough.reading import read_walkthrough, settle_walkthrough

VALID = """sequenceDiagram
autonumber
participant W as Webhook handler
actor U
%% the queue hands the job on
U->>W: comment /review
W->>+Q: enqueue(job)
Q-->>-W: ok
loop every turn
  Q-)Worker: run
  activate Worker
  alt model answers
    Worker->>K3: chat/completions
  else overloaded
    Worker--xQ: retry later
  end
  deactivate Worker
end
Note over W,Q: ids only
Note right of U: waits
par post
  Worker->>GitHub: POST review
and check
  Worker->>GitHub: PATCH check run
end"""


def test_the_whole_subset_is_accepted_and_normalised() -> None:
    checked = check_sequence_diagram(VALID)
    lines = checked.split("\n")
    assert lines[0] == "sequenceDiagram"
    assert all(line.startswith("    ") for line in lines[1:])
    assert "    W->>+Q: enqueue(job)" in lines
    # A fenced diagram is accepted without its fence; the result is stable.
    assert check_sequence_diagram(f"```mermaid\n{VALID}\n```") == checked
    assert check_sequence_diagram(checked) == checked


@pytest.mark.parametrize(
    ("diagram", "why"),
    [
        ("graph TD\nA-->B", "does not start with sequenceDiagram"),
        ("sequenceDiagram\nparticipant A", "no message"),
        ("sequenceDiagram\nA->>B: hi; click A call alert()", "not in the accepted subset"),
        ("sequenceDiagram\nA->>B: <img src=x>", "not in the accepted subset"),
        ("sequenceDiagram\nA->>B: #amp; entity", "not in the accepted subset"),
        ("sequenceDiagram\nA->>B: `code`", "not in the accepted subset"),
        ("sequenceDiagram\n%%{init: {'theme': 'dark'}}%%\nA->>B: hi", "a directive"),
        ("sequenceDiagram\nA=>>B: hi", "not in the accepted subset"),
        ("sequenceDiagram\nA->>B hi", "not in the accepted subset"),
        ("sequenceDiagram\nloop x\nA->>B: hi", "loop without end"),
        ("sequenceDiagram\nA->>B: hi\nend", "end without a block"),
        ("sequenceDiagram\nopt x\nA->>B: hi\nelse y\nend", "else outside alt"),
        ("sequenceDiagram\nA->>+B: hi", "a participant left active"),
        ("sequenceDiagram\nxa->>+B: hi\nB-->>-xa: ok", "before an id starting with x"),
        ("sequenceDiagram\nnote->>B: hi", "note is a Mermaid keyword"),
        ("sequenceDiagram\nA->>B: hi\ndeactivate B", "B deactivated while inactive"),
        ("sequenceDiagram\nA->>B: hi\nparticipant A", "declared twice or after use"),
        ("sequenceDiagram\nautonumber\nautonumber\nA->>B: x", "autonumber twice"),
        ("sequenceDiagram\nA->>B: " + "x" * 121, "text over 120 characters"),
        ("sequenceDiagram\n" + "A->>B: x\n" * MAX_LINES, f"over {MAX_LINES} lines"),
        (
            "sequenceDiagram\n" + "\n".join(f"P{i}->>Q: x" for i in range(MAX_PARTICIPANTS)),
            f"over {MAX_PARTICIPANTS} participants",
        ),
        ("```js\nsequenceDiagram\nA->>B: x\n```", "a fence other than"),
        ("sequenceDiagram\nA->>B: x\n```\n# a heading", "a fence inside"),
        ("sequenceDiagram\nparticipant A as Alias: x\nA->>B: y", "not in the accepted subset"),
    ],
)
def test_anything_outside_the_subset_is_refused_with_its_reason(diagram: str, why: str) -> None:
    with pytest.raises(DiagramError, match=why):
        check_sequence_diagram(diagram)


def _arguments(**walkthrough: object) -> str:
    data = {"summary": "Fine.", "findings": [], "walkthrough": walkthrough}
    return json.dumps(data)


def test_submission_carries_the_walkthrough_with_its_diagram_checked() -> None:
    arguments = _arguments(
        summary="Adds a queue.",
        files=[{"path": "a.py", "note": "New."}],
        focus=["a.py: locking"],
        diagram="sequenceDiagram\nA->>B: hi",
        issues=[{"number": 4, "verdict": "yes", "why": "does it"}],
    )
    found = parse_submission(arguments).walkthrough
    assert found is not None
    assert (found.summary, found.files[0].path, found.focus) == (
        "Adds a queue.",
        "a.py",
        ["a.py: locking"],
    )
    assert found.diagram == "sequenceDiagram\n    A->>B: hi"
    broken = parse_submission(_arguments(summary="S.", files=[], diagram="graph TD")).walkthrough
    assert broken is not None and broken.diagram is None
    assert broken.diagram_dropped == "it does not start with sequenceDiagram"


def test_an_invalid_walkthrough_is_left_out_never_a_repair_turn() -> None:
    for bad in (
        {"files": []},  # no summary
        {"summary": "S.", "files": [{"path": "a.py"}]},
        {"summary": "S.", "files": [], "issues": [{"number": 1, "verdict": "maybe", "why": "x"}]},
        {"summary": "S.", "files": [], "extra": 1},
        {"summary": "   ", "files": []},
    ):
        submission = parse_submission(_arguments(**bad))
        assert submission.walkthrough is None and submission.summary == "Fine."
    assert read_walkthrough("not an object") is None


def test_the_review_keeps_verdicts_on_shown_issues_and_a_diagram_only_when_asked() -> None:
    found = read_walkthrough(
        {
            "summary": "S.",
            "files": [],
            "diagram": "sequenceDiagram\nA->>B: hi",
            "issues": [
                {"number": 4, "verdict": "no", "why": "a"},
                {"number": 4, "verdict": "yes", "why": "again"},
                {"number": 9, "verdict": "yes", "why": "never shown"},
            ],
        }
    )
    kept = settle_walkthrough(found, diagram=False, issues={4}, since="abc")
    assert kept is not None and kept.diagram is None and kept.since == "abc"
    assert [(v.number, v.verdict) for v in kept.issues] == [(4, "no")]
    assert settle_walkthrough(None, diagram=True, issues=(), since=None) is None

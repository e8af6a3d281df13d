"""The agentic review end to end: the K3 stub over HTTP calls the read-only tools on a
real repository, hostile arguments included, within the loop's budget."""

from __future__ import annotations

import json
from typing import Any

import pygit2
import pytest

from bot.domain.change import Change
from bot.errors import ModelOutputError
from bot.git.repo import range_change
from bot.review.pipeline import review
from bot.review.tools.toolbox import ToolLimits
from tests.fakes.k3 import K3Stub, Reply
from tests.fakes.k3.brain import (
    call,
    client_for,
    config,
    notices,
    results_by_call,
    submit,
    tools_reply,
)
from tests.support.repos import Gitlink, Symlink, commit, make_repo

BIG = 50 * 1024 * 1024
APP = "from src.lib import helper\n\n\ndef main(argv):\n    return helper(argv, 1)\n"
APP2 = "from src.lib import helper\n\n\ndef main(argv):\n    return helper(argv, 2)\n"
LIB = "def helper(a, b):\n    return a\n"
TOOL_NAMES = {
    "submit_review",
    "read_file",
    "search",
    "list_dir",
    "find_definition",
    "find_references",
}


@pytest.fixture(scope="module")
def hostile_repo(tmp_path_factory: pytest.TempPathFactory) -> pygit2.Repository:
    repo = make_repo(tmp_path_factory.mktemp("hostile") / "repo")
    commit(
        repo,
        {
            "src/app.py": APP,
            "src/lib.py": LIB,
            "big.txt": (b"y" * 99 + b"\n") * (BIG // 100),
            "cat.txt": "a" * 30_000 + "b\n",
            "links/root": Symlink("/"),
            "links/up": Symlink("../../.."),
            "vendor/sub": Gitlink("1" * 40),
        },
        "base",
    )
    commit(repo, {"src/app.py": APP2}, "change helper's argument")
    return repo


@pytest.fixture
def change(hostile_repo: pygit2.Repository) -> Change:
    return range_change(hostile_repo, "HEAD~1", "HEAD")


HOSTILE_CALLS = [
    call("read_file", path="../../etc/passwd"),
    call("read_file", path="/etc/passwd"),
    call("read_file", path="links/root/etc/passwd"),
    call("list_dir", path="links/up"),
    call("read_file", path=".git/config"),
    call("list_dir", path="vendor/sub"),
    call("read_file", path="big.txt"),
    call("search", pattern="(a+)+$", regex=True, path_glob="cat.txt"),
    call("search", pattern="yyy"),
    call("find_definition", symbol="helper"),
    call("read_file", path="src/lib.py"),
    call("search", pattern="helper("),
    call("list_dir"),
]


def _check_results(results: list[tuple[str, dict[str, Any], str]]) -> None:
    by_args = {json.dumps([name, args], sort_keys=True): out for name, args, out in results}

    def result(name: str, **args: Any) -> str:
        return by_args[json.dumps([name, args], sort_keys=True)]

    assert result("read_file", path="../../etc/passwd").startswith(
        "error: path '../../etc/passwd' leaves the repository"
    )
    assert result("read_file", path="/etc/passwd").startswith(
        "error: absolute path '/etc/passwd' refused"
    )
    assert "symlink to an absolute path outside the repository" in result(
        "read_file", path="links/root/etc/passwd"
    )
    assert "symlink that leaves the repository" in result("list_dir", path="links/up")
    assert "inside .git" in result("read_file", path=".git/config")
    assert "is a submodule" in result("list_dir", path="vendor/sub")
    big = result("read_file", path="big.txt")
    assert big.startswith("big.txt: lines 1-") and "[truncated" in big
    assert len(big.encode()) <= ToolLimits().max_bytes + 200
    regex = result("search", pattern="(a+)+$", regex=True, path_glob="cat.txt")
    assert "[search stopped after 0.5 s: results are partial" in regex
    assert "over 2,000,000 bytes not searched" in result("search", pattern="yyy")
    assert "src/lib.py:1: def helper(a, b):" in result("find_definition", symbol="helper")
    assert "1 | def helper(a, b):" in result("read_file", path="src/lib.py")
    found = result("search", pattern="helper(")
    assert "src/app.py:5:     return helper(argv, 2)" in found
    root = result("list_dir")
    assert "src/" in root and "links/" in root and ".git" not in root


def test_hostile_tool_calls_are_answered_or_refused(change: Change) -> None:
    replies = [tools_reply(*HOSTILE_CALLS, reasoning="Let me probe everything."), submit()]
    with K3Stub(replies) as stub:
        result = review(
            change,
            config(agent__max_tool_calls=20),
            client_for(stub),
            related=False,
            tool_limits=ToolLimits(search_timeout_s=0.5),
        )
        requests = stub.chat_requests
    assert [r.status for r in requests] == [200, 200]
    assert requests[1].assistant_checked == 1  # the reasoning came back exactly
    assert {t["function"]["name"] for t in requests[0].body["tools"]} == TOOL_NAMES
    results = results_by_call(requests[1].body)
    assert len(results) == len(HOSTILE_CALLS)
    _check_results(results)
    for request in requests:
        assert "root:x:0:0" not in request.raw  # nothing of the host's files
    assert result.findings == [] and result.usage.requests == 2


def test_tool_calls_of_several_turns_keep_thinking_preserved(change: Change) -> None:
    """One call per turn: every later request sends each earlier assistant message back."""
    replies = [
        tools_reply(call, reasoning=f"Step {i}: next I check {call[0]}.")
        for i, call in enumerate(HOSTILE_CALLS[:5])
    ]
    with K3Stub([*replies, submit()]) as stub:
        review(change, config(), client_for(stub), related=False)
        requests = stub.chat_requests
    assert [r.status for r in requests] == [200] * 6
    assert [r.assistant_checked for r in requests] == [0, 1, 2, 3, 4, 5]
    last = requests[-1].body["messages"]
    reasoning = [m["reasoning_content"] for m in last if m["role"] == "assistant"]
    assert reasoning == [f"Step {i}: next I check {c[0]}." for i, c in enumerate(HOSTILE_CALLS[:5])]


# -- budget --------------------------------------------------------------------------------


def _persistent(*, submit_on_notice: bool = True, per_turn: int = 1) -> Any:
    """A brain that keeps reading until it is told to submit (or forever)."""

    def brain(body: dict[str, Any]) -> Reply:
        told = any("Call submit_review now" in n for n in notices(body))
        if told and submit_on_notice:
            return submit("Budget spent; submitting what I have.")
        turn = sum(1 for m in body["messages"] if m["role"] == "assistant")
        calls = [call("search", pattern=f"helper{turn}{i}") for i in range(per_turn)]
        return tools_reply(*calls, reasoning=f"Turn {turn}: reading more.")

    return brain


def _notice_index(requests: list[Any]) -> int:
    for i, request in enumerate(requests):
        if any("Call submit_review now" in n for n in notices(request.body)):
            return i
    raise AssertionError("no budget notice was sent")


def test_turn_budget_ends_with_notice_then_submission(change: Change) -> None:
    with K3Stub(brain=_persistent()) as stub:
        result = review(change, config(agent__max_turns=3), client_for(stub), related=False)
        requests = stub.chat_requests
    assert len(requests) == 3
    first = _notice_index(requests)
    assert first == 2
    assert "the turn budget (3)" in notices(requests[2].body)[0]
    assert requests[2].body["tool_choice"] == "required"
    assert requests[0].body["tool_choice"] == "auto"
    assert result.summary == "Budget spent; submitting what I have."
    assert all(r.status == 200 for r in requests) and stub.brain_errors == []


def test_tool_call_budget_refuses_calls_over_it(change: Change) -> None:
    with K3Stub(brain=_persistent(per_turn=2)) as stub:
        review(change, config(agent__max_tool_calls=3), client_for(stub), related=False)
        requests = stub.chat_requests
    second_turn = results_by_call(requests[2].body)[2:4]
    assert second_turn[0][2].startswith("no matches for 'helper10'")
    assert second_turn[1][2] == "error: the tool-call budget is spent; call submit_review now"
    assert _notice_index(requests) == 2
    assert "the tool-call budget (3)" in notices(requests[2].body)[0]
    assert len(requests) == 3


def test_token_budget_ends_with_notice(change: Change) -> None:
    with K3Stub(brain=_persistent()) as stub:
        review(change, config(agent__max_tokens=10), client_for(stub), related=False)
        requests = stub.chat_requests
    assert _notice_index(requests) == 1
    assert "the token budget (10)" in notices(requests[1].body)[0]
    assert len(requests) == 2


def test_time_budget_ends_with_notice(change: Change) -> None:
    """4 s budget keeps 1 s for the last turn; a first turn of 3.2 s leaves less."""

    def brain(body: dict[str, Any]) -> Reply:
        reply = _persistent()(body)
        if len(body["messages"]) == 2:
            reply.delay = 3.2
        return reply

    with K3Stub(brain=brain) as stub:
        result = review(change, config(agent__max_seconds=4.0), client_for(stub), related=False)
        requests = stub.chat_requests
    assert _notice_index(requests) == 1
    assert "the time budget" in notices(requests[1].body)[0]
    assert result.summary.startswith("Budget spent")


def test_a_model_that_never_submits_fails_once_clearly(change: Change) -> None:
    with (
        K3Stub(brain=_persistent(submit_on_notice=False)) as stub,
        pytest.raises(ModelOutputError) as caught,
    ):
        review(change, config(agent__max_turns=3), client_for(stub), related=False)
    requests = stub.chat_requests
    # Two turns, the notice, then two grace turns: four requests, then one clear error.
    assert len(requests) == 4
    message = str(caught.value)
    assert "did not submit a review" in message and "\n" not in message
    assert all(
        r.startswith("error: you have used the turn budget")
        for _, _, r in results_by_call(requests[-1].body)[2:]
    )

"""Tool arguments chosen by an attacker end as one-line tool results (issue 19, part 1).

K3 chooses the tools' arguments and text in a pull request can steer it. On the code
before this fix each call below crashed the review (``re.error``, ``MemoryError``), hung
it for minutes, or cost a 50 MB read per window. Here every one is a single line the
model can read and correct, and a window of a large file costs what the window costs.
The real tools run on real repositories; the time ceilings below are hang detectors
(minutes before the fix), far above the 1 s search limit; the durations themselves are
measured in ``benchmarks/bench_tools.py``.
"""

from __future__ import annotations

import base64
import json
import os
import re
import time
import tracemalloc
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.domain.change import Change
from bot.domain.conversation import PostedFinding, PullQuestion, ThreadEntry, ThreadQuestion
from bot.git.repo import TreeSnapshot, range_change
from bot.review import answer_question, answer_thread
from bot.review.tools.globs import glob_matcher
from bot.review.tools.toolbox import RepoTools, ToolLimits
from bot.settings.repository import Config
from tests.fakes.k3 import K3Stub, Reply
from tests.fakes.k3.brain import call, client_for, results_by_call, tools_reply
from tests.support.repos import commit, make_repo

LONG_NAME = "a" * 120
#: A hang detector, not a measure: the search limit is 1 s; before the fix the glob ran
#: for minutes.
CEILING_S = 30
BIG_LINES = 600_000
#: Filler lines either side of the key in a file large enough to be cached.
LARGE_PAD = 100_000
KEY_BODY_LINES = 430
MARK = "[REDACTED:private key]"


def _key_block() -> list[str]:
    """A private key block of made-up material, wrapped at 44 characters: long (430
    lines, under redaction's 20,000 characters), and no line is long enough for a bare
    base64 run, so only the block's markers say that its middle is a key."""
    body = base64.b64encode(os.urandom(KEY_BODY_LINES * 33)).decode()
    lines = [body[i : i + 44] for i in range(0, len(body), 44)]
    return ["-----BEGIN RSA PRIVATE KEY-----", *lines, "-----END RSA PRIVATE KEY-----"]


@pytest.fixture(scope="module")
def key() -> list[str]:
    return _key_block()


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory: pytest.TempPathFactory, key: list[str]) -> TreeSnapshot:
    repo = make_repo(tmp_path_factory.mktemp("hostile") / "repo")
    filler = [f"value_{i} = {i}" for i in range(100)]
    files: dict[str, str | bytes] = {
        f"src/{LONG_NAME}": "x = 1\n",
        "src/app.py": "def main():\n    return 1\n",
        "cat.txt": "a" * 30_000 + "b\n",
        "keys/small.txt": "\n".join([*filler, *key, *filler]) + "\n",
    }
    first = commit(repo, files)
    # Files over the cache threshold, on another branch (no work tree copy).
    line = b"    total = compute(alpha, beta, gamma)  # an ordinary line of code\n"
    pad = ["x = 1  # a filler line"] * LARGE_PAD
    large = "\n".join([*pad, *key, *pad]) + "\n"
    big: dict[str, str | bytes] = {"huge.py": line * BIG_LINES, "keys/large.txt": large}
    tip = commit(repo, big, branch="big", parents=[first])
    return TreeSnapshot(repo, tip)


@pytest.fixture
def tools(snapshot: TreeSnapshot) -> RepoTools:
    return RepoTools(snapshot, limits=ToolLimits(search_timeout_s=1.0))


def _call(tools: RepoTools, name: str, **arguments: object) -> tuple[str, float]:
    started = time.monotonic()
    out = tools.call(name, json.dumps(arguments))
    return out, time.monotonic() - started


def _one_line(out: str) -> str:
    assert out and "\n" not in out, out
    return out


def test_a_reversed_range_in_the_glob_is_a_result_not_a_crash(tools: RepoTools) -> None:
    out, _ = _call(tools, "search", pattern="x", path_glob="[z-a]")
    assert _one_line(out).startswith("no matches for 'x' in '[z-a]'"), out
    out, _ = _call(tools, "search", pattern="x", path_glob="src/[z-a]*.py")
    assert _one_line(out).startswith("no matches"), out


def test_an_exponential_glob_against_a_long_name_ends_in_time(tools: RepoTools) -> None:
    glob = "*a" * 12 + "*b"
    out, elapsed = _call(tools, "search", pattern="x", path_glob=glob)
    assert _one_line(out).startswith(f"no matches for 'x' in '{glob}'"), out
    assert elapsed < CEILING_S, elapsed
    # The same glob in a path selects what it should, still linearly.
    out, elapsed = _call(tools, "search", pattern="x = 1", path_glob="src/" + "*a" * 12 + "*")
    assert out == f"src/{LONG_NAME}:1: x = 1", out
    assert elapsed < CEILING_S, elapsed


def test_a_compile_bomb_is_refused_before_compiling(tools: RepoTools) -> None:
    out, elapsed = _call(tools, "search", pattern="(?:x{10000}){10000}", regex=True)
    assert _one_line(out).startswith(
        "error: regex '(?:x{10000}){10000}' is too large once compiled"
    ), out
    assert elapsed < CEILING_S, elapsed
    # Ordinary counted repeats still work.
    out, _ = _call(tools, "search", pattern=r"a{3}b{1,2}$", regex=True, path_glob="*.txt")
    assert out.startswith("cat.txt:1: aaa"), out


def test_a_catastrophic_match_gives_up_as_one_line(tools: RepoTools) -> None:
    out, elapsed = _call(tools, "search", pattern="(a+)+$", regex=True, path_glob="cat.txt")
    assert _one_line(out).startswith("[search stopped after 1 s: results are partial"), out
    assert elapsed < CEILING_S, elapsed


@pytest.mark.parametrize(
    ("arguments", "start"),
    [
        ({"pattern": r"\p{L}+", "regex": True}, "error: invalid regex"),
        ({"pattern": "(" * 5000, "regex": True}, "error: the search pattern is 5,000"),
        ({"pattern": "x", "path_glob": "*" * 600}, "error: path_glob is 600 characters"),
        ({"pattern": "x", "path_glob": "[" * 100 + "]"}, "no matches"),
    ],
)
def test_other_hostile_arguments_are_one_line(
    tools: RepoTools, arguments: dict[str, object], start: str
) -> None:
    out, _ = _call(tools, "search", **arguments)
    assert _one_line(out).startswith(start), out


def test_a_window_of_a_huge_file_does_not_read_or_redact_the_whole_file(
    tools: RepoTools,
) -> None:
    first, _ = _call(tools, "read_file", path="huge.py", start_line=1, end_line=1)
    assert first.startswith(f"huge.py: lines 1-1 of {BIG_LINES:,}"), first
    tracemalloc.start()
    try:
        out, _ = _call(tools, "read_file", path="huge.py", start_line=400_000, end_line=400_001)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert out.splitlines()[1].startswith("400000 |     total = compute("), out
    # The file is 40 MB; the window with its margin is a few hundred lines.
    assert peak < 2_000_000, peak


@pytest.mark.parametrize("path", ["keys/small.txt", "keys/large.txt"])
def test_a_key_block_crossing_the_window_edge_stays_redacted(
    tools: RepoTools, path: str, key: list[str]
) -> None:
    begin = 101 if path == "keys/small.txt" else LARGE_PAD + 1
    end = begin + len(key) - 1
    windows = [
        # Deep inside: no marker within the 200-line margin either side.
        (begin + 215, begin + 216),
        (begin - 2, begin + 1),  # across the BEGIN line
        (end - 1, end + 2),  # across the END line
        (begin + 150, begin + 290),
    ]
    for start, stop in windows:
        out, _ = _call(tools, "read_file", path=path, start_line=start, end_line=stop)
        rows = out.splitlines()[1:]
        assert len(rows) == stop - start + 1, out
        for number, row in zip(range(start, stop + 1), rows, strict=True):
            text = row.split(" | ", 1)[1]
            if begin <= number <= end:
                assert text == MARK, (number, out)
            else:
                assert MARK not in text, (number, out)
        assert not any(piece in out for piece in key[1:-1]), out


def test_call_catches_what_a_pattern_can_raise(tools: RepoTools) -> None:
    # Nested groups past the parser's recursion, and a repeat count past what re takes.
    for pattern in ["(?:" * 300 + "x" + ")" * 300, "x{99999999999}"]:
        out, _ = _call(tools, "search", pattern=pattern, regex=True)
        assert _one_line(out).startswith("error: "), out


# -- the conversation's tools: a reply in a thread and /ask ----------------------------------


HOSTILE_CALLS = [
    call("search", pattern="x", path_glob="[z-a]"),
    call("search", pattern="x", path_glob="*a" * 12 + "*b"),
    call("search", pattern="(?:x{10000}){10000}", regex=True),
]


@pytest.fixture(scope="module")
def pull(tmp_path_factory: pytest.TempPathFactory) -> Change:
    repo = make_repo(tmp_path_factory.mktemp("answers") / "repo")
    commit(repo, {"calc.py": "def half(n):\n    return n // 2\n", f"src/{LONG_NAME}": "x\n"})
    commit(repo, {"calc.py": "def half(n):\n    return n / 2\n"})
    change = range_change(repo, "HEAD~1", "HEAD")
    change.trusted = change.base
    return change


def _one_line_results(body: dict[str, Any]) -> list[str]:
    results = [result for _, _, result in results_by_call(body)]
    assert len(results) == len(HOSTILE_CALLS), results
    assert all(r and "\n" not in r for r in results), results
    return results


def test_ask_with_hostile_tool_calls_answers(pull: Change) -> None:
    replies = [
        tools_reply(*HOSTILE_CALLS),
        Reply(tool_calls=[("submit_answer", {"body": "It halves with a float now."})]),
    ]
    with K3Stub(replies) as stub:
        question = PullQuestion("What changed?", "bob")
        answer = answer_question(pull, question, Config(), client_for(stub, "high"))
        requests = stub.chat_requests
    assert answer.body == "It halves with a float now." and answer.tool_calls == 3
    results = _one_line_results(requests[1].body)
    assert results[2].startswith("error: regex '(?:x{10000}){10000}' is too large"), results


def test_a_reply_with_hostile_tool_calls_answers(pull: Change) -> None:
    finding = PostedFinding(
        path="calc.py",
        side="RIGHT",
        start_line=2,
        end_line=2,
        text="🟠 **major** · bug: **Float division**",
        severity="major",
        fingerprint="fp1",
    )
    thread = ThreadQuestion(finding, (ThreadEntry("alice", False, "Is it?"),), "alice")
    replies = [
        tools_reply(*HOSTILE_CALLS),
        Reply(tool_calls=[("submit_reply", {"body": "It stands.", "withdraw": False})]),
    ]
    with K3Stub(replies) as stub:
        answer = answer_thread(pull, thread, Config(), client_for(stub, "high"))
        requests = stub.chat_requests
    assert answer.body == "It stands."
    results = _one_line_results(requests[1].body)
    assert results[0].startswith("no matches for 'x' in '[z-a]'"), results


# -- globs keep their meaning ------------------------------------------------------------------


def _reference(glob: str) -> re.Pattern[str]:
    """The glob as one backtracking regex (fine on these small inputs): ``*`` and ``?``
    within a segment, a ``**`` segment any number of directories."""
    out = []
    for i, part in enumerate(glob.split("/")):
        last = i == glob.count("/")
        if part == "**":
            out.append(".*" if last else "(?:[^/]+/)*")
            continue
        text = "".join("[^/]*" if c == "*" else "[^/]" if c == "?" else re.escape(c) for c in part)
        out.append(text if last else text + "/")
    return re.compile("".join(out))


SEGMENTS = st.sampled_from(["a", "b", "ab", "*", "?", "a*", "*b", "?b", "**"])


@settings(max_examples=300, deadline=None)
@given(
    # With a wildcard: a glob without one selects a file or directory by its path.
    glob=st.lists(SEGMENTS, min_size=2, max_size=4)
    .map("/".join)
    .filter(lambda g: any(c in g for c in "*?")),
    path=st.lists(st.sampled_from(["a", "b", "ab", "ba", "aab"]), min_size=1, max_size=5).map(
        "/".join
    ),
)
def test_path_globs_match_as_before(glob: str, path: str) -> None:
    expected = _reference(glob).fullmatch(path) is not None
    assert glob_matcher(glob)(path) == expected, (glob, path)

"""Hostile tool arguments do not stop a review (issue 19, part 1), end to end.

The K3 stub plays a model steered by a prompt injection: its first turn calls ``search``
with the arguments that crashed or hung a review before (a reversed range in a glob, an
exponential glob against a 120-character file name, a regex that expands to 10^8 nodes
when compiled, one that backtracks catastrophically) and reads one line of a large file;
its second turn submits. The App's review job (fake GitHub, real git) posts its review
and completes its check run; ``gitneural review`` exits normally with its report. Each
tool result the model got back is one line.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bot.usecases.review.run import run_review_job
from tests.cli.test_cli_review import run_cli, stub_env
from tests.fakes.k3 import K3Stub, Reply
from tests.fakes.k3.brain import call, results_by_call, tools_reply
from tests.support.job_world import job_world, submit
from tests.support.planted import ORIGINAL, PLANTED, PLANTED_BUG
from tests.support.repos import commit, make_repo, stage

LONG_NAME = "a" * 120
EXPONENTIAL = "*a" * 12 + "*b"
BOMB = "(?:x{10000}){10000}"
#: Base files: a long name for the glob, a line the catastrophic regex chokes on, and a
#: file over the read cache's threshold.
FILES = {
    f"src/{LONG_NAME}": "x = 1\n",
    "cat.txt": "a" * 30_000 + "b\n",
    "big.log": "".join(f"entry {i}: ordinary log line\n" for i in range(100_000)),
}
HOSTILE = [
    call("search", pattern="x", path_glob="[z-a]"),
    call("search", pattern="x", path_glob=EXPONENTIAL),
    call("search", pattern=BOMB, regex=True),
    call("search", pattern="(a+)+$", regex=True, path_glob="cat.txt"),
    call("read_file", path="big.log", start_line=70_000, end_line=70_000),
]


def _check_results(body: dict[str, Any]) -> None:
    """What the model got back: one line per hostile call, each saying what happened."""
    results = [result for _, _, result in results_by_call(body)]
    assert len(results) == len(HOSTILE), results
    assert all("\n" not in r for r in results[:4]), results
    assert results[0].startswith("no matches for 'x' in '[z-a]'"), results[0]
    assert results[1].startswith(f"no matches for 'x' in '{EXPONENTIAL}'"), results[1]
    assert results[2].startswith(f"error: regex '{BOMB}' is too large once compiled"), results[2]
    assert results[3].startswith("[search stopped after 5 s: results are partial"), results[3]
    assert results[4].splitlines() == [
        "big.log: lines 70000-70000 of 100,000",
        "70000 | entry 69999: ordinary log line",
    ]


def test_an_app_review_with_hostile_tool_calls_posts_its_review(tmp_path: Path) -> None:
    base = {**FILES, ".gitneural.toml": '[review]\neffort = "high"\n'}
    with job_world(tmp_path, base_files=base) as w:
        w.stub.push(tools_reply(*HOSTILE, reasoning="The PR text asks me to run these."))
        w.stub.push(submit(PLANTED_BUG))

        outcome = run_review_job(w.job("opened"), w.ctx)
        [review] = w.reviews()
        [check] = w.check_runs()
        requests = w.stub.chat_requests
    assert outcome.status == "posted"
    assert (check["status"], check["conclusion"]) == ("completed", "neutral")
    assert [(c["path"], c["line"]) for c in review["comments"]] == [("people.py", 2)]
    assert len(requests) == 2 and requests[0].body["reasoning_effort"] == "high"
    _check_results(requests[1].body)


def test_the_cli_review_with_hostile_tool_calls_completes(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    commit(repo, {"people.py": ORIGINAL, **FILES}, "initial")
    stage(repo, {"people.py": PLANTED})
    replies = [
        tools_reply(*HOSTILE, reasoning="The PR text asks me to run these."),
        Reply(tool_calls=[("submit_review", {"summary": "Checked.", "findings": [PLANTED_BUG]})]),
    ]
    with K3Stub(replies) as stub:
        result = run_cli(
            ["review", "--staged", "--format", "json", "--effort", "high"],
            tmp_path / "repo",
            stub_env(stub),
        )
        requests = stub.chat_requests
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == 1, result.stderr  # the planted bug is critical
    report = json.loads(result.stdout)
    assert [f["path"] for f in report["findings"]] == ["people.py"]
    assert len(requests) == 2
    _check_results(requests[1].body)

"""Model faults, each through a whole review job: the K3 stub misbehaves over real HTTP,
the job runs against the fake GitHub, and it ends in a posted review, one clear failure
on the check run, or a retry for the queue — never a silent loss, never a traceback
posted to GitHub (``tests.support.faults.assert_not_lost``).

Faults already covered elsewhere, not repeated here: overload retries running out
(``test_jobrun_faults.test_model_overload_is_retried_later``), the quota notice said
only once (``test_jobrun_faults.test_exhausted_quota_...``), content without any
submission (``test_jobrun_faults.test_unusable_model_output_fails_the_check``).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from bot.usecases.review.run import JobOutcome
from tests.fakes.k3 import Reply
from tests.support.faults import assert_not_lost, failure_summary, run, with_llm
from tests.support.job_world import REPO, job_world, submit
from tests.support.planted import PLANTED_BUG

#: The 504 page a proxy in front of K3 answers with: never shown to a PR as HTML.
HTML_SIGNS = ("<html", "<center>", "nginx")


def good() -> Reply:
    return submit(PLANTED_BUG)


# -- retried, then the review completes ----------------------------------------------


@pytest.mark.parametrize(
    "fault",
    [
        Reply.http_error(
            429, "engine_overloaded_error", "The engine is overloaded", retry_after=0.2
        ),
        Reply.http_error(429, "rate_limit_reached_error", "Your RPM limit", retry_after=0.2),
        Reply.http_error(500, "server_error", "internal error", retry_after=0.2),
        Reply.http_error(503, "server_error", "unavailable", retry_after=0.2),
    ],
    ids=["overloaded", "rate-limit", "500", "503"],
)
def test_retryable_errors_are_retried_with_backoff_then_the_review_is_posted(
    tmp_path: Path, fault: Reply
) -> None:
    with job_world(tmp_path) as w:
        with_llm(w, max_retries=3, backoff_base=0.01, backoff_max=1.0)
        w.stub.push(fault, fault, good())
        started = time.monotonic()
        outcome = run(w)
        elapsed = time.monotonic() - started
        assert assert_not_lost(w, outcome) == "posted"
        assert len(w.stub.chat_requests) == 3
        [review] = w.reviews()
    assert elapsed >= 0.4  # both retry-after waits were honoured
    assert "Off-by-one" in json.dumps(review)


@pytest.mark.parametrize(
    "fault",
    [
        Reply.html_error(504),
        Reply(content="partial " * 50, reset_after=3),
        Reply(content="partial " * 50, cut_after=3),
    ],
    ids=["504-html", "reset-mid-stream", "cut-before-done"],
)
def test_broken_answers_are_retried_then_the_review_is_posted(tmp_path: Path, fault: Reply) -> None:
    with job_world(tmp_path) as w:
        w.stub.push(fault, good())
        outcome = run(w)
        assert assert_not_lost(w, outcome) == "posted"
        assert len(w.stub.chat_requests) == 2
        [review] = w.reviews()
    assert review["comments"][0]["path"] == "people.py"
    assert "partial" not in review["body"]  # nothing of the broken answer was used


@pytest.mark.parametrize(
    "fault",
    [
        Reply.http_error(500, "server_error", "internal error"),
        Reply.http_error(503, "server_error", "unavailable"),
        Reply.html_error(504),
        Reply(content="partial " * 50, reset_after=3),
        Reply(content="partial " * 50, cut_after=3),
    ],
    ids=["500", "503", "504-html", "reset-mid-stream", "cut-before-done"],
)
def test_faults_outliving_the_retries_pause_the_check_and_ask_the_queue_to_retry(
    tmp_path: Path, fault: Reply
) -> None:
    with job_world(tmp_path) as w:
        w.stub.push(fault, fault, fault)
        result = run(w)
        assert assert_not_lost(w, result) == "retry"
        assert len(w.stub.chat_requests) == 2  # the worker context allows one retry
        [check] = w.check_runs()
        posted = json.dumps(check)
    assert (check["conclusion"], check["output"]["title"]) == (
        "neutral",
        "GitNeural will try again",
    )
    assert check["output"]["summary"].startswith("Paused: ")
    assert "try again later" in check["output"]["summary"]
    for sign in HTML_SIGNS:
        assert sign not in posted
    assert w.stub.api_key not in posted


# -- failures that retrying cannot fix: one clear report ---------------------------


def test_exhausted_quota_is_one_request_one_failed_check_and_one_short_comment(
    tmp_path: Path,
) -> None:
    quota = Reply.http_error(429, "exceeded_current_quota_error", "Your account is out of credit")
    with job_world(tmp_path) as w:
        with_llm(w, max_retries=5)  # retries allowed, and still none is made
        w.stub.push(quota, good())
        outcome = run(w)
        assert assert_not_lost(w, outcome) == "failed"
        assert len(w.stub.chat_requests) == 1
        summary = failure_summary(w)
        [notice] = w.gh.issue_comments(REPO, w.number)
    assert "quota is exhausted" in summary
    assert "quota is exhausted" in notice["body"] and len(notice["body"]) < 600


def test_length_with_empty_content_fails_saying_which_setting_to_raise(tmp_path: Path) -> None:
    with job_world(tmp_path) as w:
        w.stub.push(Reply(content="", finish_reason="length"), good())
        outcome = run(w)
        assert assert_not_lost(w, outcome) == "failed"
        assert len(w.stub.chat_requests) == 1  # not retried: it would run out again
        summary = failure_summary(w)
    assert "max_completion_tokens" in summary


@pytest.mark.parametrize(
    "arguments",
    [
        '{"summary": "Reviewed", "findings": [{"path": "people.py", ',  # cut short
        "summary: Reviewed\nfindings: []",  # YAML, not JSON
        {"summary": 3, "findings": "none"},  # JSON, wrong types
        {"summary": "ok", "findings": [{"path": "people.py", "start_line": "two"}]},
    ],
    ids=["truncated-json", "not-json", "wrong-types", "finding-missing-keys"],
)
def test_unusable_submissions_get_one_repair_turn_then_fail(
    tmp_path: Path, arguments: str | dict[str, object]
) -> None:
    bad = Reply(reasoning="Submitting.", tool_calls=[("submit_review", arguments)])
    with job_world(tmp_path) as w:
        w.stub.push(bad, bad, good())
        outcome = run(w)
        assert assert_not_lost(w, outcome) == "failed"
        requests = w.stub.chat_requests
        summary = failure_summary(w)
    assert len(requests) == 2  # one repair turn, not more
    repair = requests[1].body["messages"][-1]
    assert repair["role"] == "tool" and "Call `submit_review` again" in repair["content"]
    assert "after one repair turn" in summary and "submit_review arguments" in summary


def test_a_repaired_submission_is_posted(tmp_path: Path) -> None:
    bad = Reply(reasoning="Submitting.", tool_calls=[("submit_review", "{not json")])
    with job_world(tmp_path) as w:
        w.stub.push(bad, good())
        outcome = run(w)
        assert assert_not_lost(w, outcome) == "posted"
        assert len(w.stub.chat_requests) == 2


def test_reasoning_leaked_into_content_is_still_parsed(tmp_path: Path) -> None:
    answer = {"summary": "One bug.", "findings": [PLANTED_BUG]}
    draft = {"summary": "draft", "findings": [dict(PLANTED_BUG, title="A draft title")]}
    content = (
        "<think>The comparison changed from >= to >. Draft: "
        + json.dumps(draft)[:60]  # half an object: must not confuse the parser
        + "</think>\n\nHere is my review:\n```json\n"
        + json.dumps(answer, indent=2)
        + "\n```\nLet me know if you need more."
    )
    with job_world(tmp_path) as w:
        w.stub.push(Reply(reasoning="", content=content), good())
        outcome = run(w)
        assert assert_not_lost(w, outcome) == "posted"
        assert len(w.stub.chat_requests) == 1
        [review] = w.reviews()
    [comment] = review["comments"]
    assert "Off-by-one" in comment["body"] and "<think>" not in review["body"]


# -- the time budget -----------------------------------------------------------------


#: Seconds the late answer takes from its request's arrival at the stub.
LATE = 30.0


@pytest.mark.parametrize(
    "late",
    [Reply(content="late", delay=LATE), Reply(content="late", think_seconds=LATE)],
    ids=["silent-server", "still-streaming"],
)
def test_an_answer_after_the_time_budget_fails_the_review_once(tmp_path: Path, late: Reply) -> None:
    """Out of time is reported once, not retried: the same review would run out again."""
    with job_world(tmp_path) as w:
        # Well under LATE, and long enough for the request to reach the model on a loaded
        # machine (full runs saw 0.6 s, and on a slower machine 2 s, run out before the
        # request was sent). The stub's stop ends the late reply's wait at once.
        w.ctx.review_seconds = 8.0
        w.stub.push(late, good())
        result = run(w)
        ended = time.monotonic()
        assert assert_not_lost(w, result) == "failed"
        assert "time budget" in failure_summary(w)
        assert w.reviews() == []
    assert isinstance(result, JobOutcome) and result.status == "failed"
    # Stopped at the budget, not when the model finished: the run was over before the
    # late answer would have been (the stub's clock is this process's: it runs in a
    # thread), whatever the machine's load added before the request.
    [arrived, *_] = w.stub.arrivals
    assert ended < arrived + LATE, ended - arrived

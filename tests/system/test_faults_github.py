"""GitHub faults, each through a whole review job against the fake GitHub: 5xx on reads,
on git and on writes, secondary and primary rate limits, tokens dying at each step, a
lost answer to the review's POST, a PR that disappears mid-review.

Each ends in exactly one review, or one clear failure, or a retry for the queue carrying
GitHub's ``retry-after`` (``tests.support.faults.assert_not_lost``). A POST is never repeated
blindly: where a second one is made, a read of the reviews precedes it.

Covered in ``test_jobrun_faults.py`` and not repeated here: 502/503 on the review's POST
(stored or not, twice), a 422 on the review, 503 and a long ``retry-after`` on the PR
read, the PR closed or force-pushed mid-review or before the fetch; in
``test_jobrun.py``: the check run's completion failing after the post;
``test_jobrun_edges.py``: a token dying before the first request and before the fetch.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from bot.usecases.review.run import TransientJobError
from tests.support.faults import assert_not_lost, run
from tests.support.job_world import REPO, World, job_world, submit
from tests.support.planted import PLANTED_BUG

PULL = f"/repos/{REPO}/pulls/1"
REVIEWS = f"{PULL}/reviews"
CHECKS = f"/repos/{REPO}/check-runs"
GIT = "/octo/app.git/*"
MINT = "/app/installations/1/access_tokens"
UNICORN = "<html><body><h1>Unicorn!</h1><p>This page is taking too long to load.</p></body></html>"


def statuses(w: World, method: str, path: str) -> list[int]:
    return [r.status for r in w.gh.requests(method, path)]


# -- 5xx ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "fault"),
    [
        (PULL, {"status": 502}),
        (REVIEWS, {"status": 503, "body": UNICORN}),
        (REVIEWS, {"status": 500, "times": 2}),
    ],
    ids=["pull-502", "reviews-503-html", "reviews-500-twice"],
)
def test_a_5xx_on_a_read_is_retried_in_place_and_the_review_posted(
    tmp_path: Path, path: str, fault: dict[str, Any]
) -> None:
    with job_world(tmp_path) as w:
        w.stub.push(submit(PLANTED_BUG))
        w.gh.fail("GET", path, **fault)
        outcome = run(w)
        assert assert_not_lost(w, outcome) == "posted"
        failed = [s for s in statuses(w, "GET", path) if s >= 500]
        assert len(failed) == fault.get("times", 1)
        assert len(w.gh.requests("POST", REVIEWS)) == 1


def test_a_5xx_from_git_is_retried_later_before_anything_is_started(tmp_path: Path) -> None:
    with job_world(tmp_path) as w:
        w.gh.fail("*", GIT, status=503, times=20)
        result = run(w)
        assert assert_not_lost(w, result) == "retry"
        assert w.check_runs() == [] and w.stub.chat_requests == []
    assert "fetch" in str(result)


def test_a_5xx_creating_the_check_run_is_retried_later_without_asking_the_model(
    tmp_path: Path,
) -> None:
    with job_world(tmp_path) as w:
        w.stub.push(submit(PLANTED_BUG))
        w.gh.fail("POST", CHECKS, status=500)
        first = run(w)
        assert assert_not_lost(w, first) == "retry"
        assert w.stub.chat_requests == []
        assert len(w.gh.requests("POST", CHECKS)) == 1  # a write: not retried in place
        job = w.job("opened")
        second = run(w, job)  # the queue's retry
        assert assert_not_lost(w, second) == "posted"


def test_a_lost_answer_to_the_review_post_is_retried_later_and_found_not_reposted(
    tmp_path: Path,
) -> None:
    with job_world(tmp_path) as w:
        w.ctx.github_timeout = 1
        w.stub.push(submit(PLANTED_BUG), submit(PLANTED_BUG))
        # GitHub stores the review, but only after the client gave up waiting: the job
        # cannot know yet whether it landed, so it asks the queue to retry...
        w.gh.fail("POST", REVIEWS, status=201, apply=True, delay=2)
        job = w.job("opened")
        first = run(w, job)
        assert isinstance(first, TransientJobError) and "posting the review" in str(first)
        deadline = time.monotonic() + 10
        while not w.reviews() and time.monotonic() < deadline:
            time.sleep(0.05)  # polling for GitHub to finish storing it
        # ...and the retry reads the reviews first: found by its marker, not posted again.
        second = run(w, job)
        assert assert_not_lost(w, second) == "posted"
        methods = [r.method for r in w.gh.requests(path=REVIEWS)]
        assert len(w.stub.chat_requests) == 1
        [check] = w.check_runs()
    assert methods == ["GET", "POST", "GET", "GET"]
    # The run the first attempt paused now says what happened, not "will try again".
    assert check["output"]["title"] == "Review posted"


# -- rate limits ----------------------------------------------------------------------


@pytest.mark.parametrize("status", [403, 429])
def test_a_secondary_rate_limit_on_the_post_is_retried_later_with_retry_after(
    tmp_path: Path, status: int
) -> None:
    with job_world(tmp_path) as w:
        w.stub.push(submit(PLANTED_BUG))
        w.gh.fail_secondary_rate_limit("POST", REVIEWS, retry_after=90, status=status)
        result = run(w)
        assert assert_not_lost(w, result) == "retry"
        assert len(w.gh.requests("POST", REVIEWS)) == 1
    assert isinstance(result, TransientJobError)
    assert result.retry_after == 90


@pytest.mark.parametrize("status", [403, 429])
def test_a_secondary_rate_limit_on_a_read_is_waited_out_when_short(
    tmp_path: Path, status: int
) -> None:
    with job_world(tmp_path) as w:
        w.stub.push(submit(PLANTED_BUG))
        w.gh.fail_secondary_rate_limit("GET", REVIEWS, retry_after=1, status=status)
        started = time.monotonic()
        outcome = run(w)
        assert assert_not_lost(w, outcome) == "posted"
        assert statuses(w, "GET", REVIEWS)[0] == status
    assert time.monotonic() - started >= 1.0


def test_a_long_secondary_rate_limit_on_a_read_is_retried_later(tmp_path: Path) -> None:
    with job_world(tmp_path) as w:
        w.gh.fail_secondary_rate_limit("GET", REVIEWS, retry_after=300, status=429, times=10)
        result = run(w)
        assert assert_not_lost(w, result) == "retry"
        assert w.stub.chat_requests == []
    assert isinstance(result, TransientJobError) and result.retry_after == 300


def test_an_exhausted_primary_rate_limit_is_retried_after_its_reset(tmp_path: Path) -> None:
    with job_world(tmp_path) as w:
        w.reset_calls()
        w.gh.exhaust_rate_limit(1, reset_in=900)
        result = run(w)
        assert assert_not_lost(w, result) == "retry"
        [read] = w.gh.requests("GET", PULL)  # given up at once: the reset is far off
    assert read.status == 403
    assert isinstance(result, TransientJobError)
    assert result.retry_after is not None and 895 <= result.retry_after <= 905


def test_a_primary_rate_limit_on_the_post_is_retried_later_not_reposted(tmp_path: Path) -> None:
    with job_world(tmp_path) as w:
        w.stub.push(submit(PLANTED_BUG), submit(PLANTED_BUG))
        w.gh.fail_primary_rate_limit("POST", REVIEWS, reset_in=600)
        job = w.job("opened")
        first = run(w, job)
        assert assert_not_lost(w, first) == "retry"
        assert isinstance(first, TransientJobError) and first.retry_after is not None
        assert 590 <= first.retry_after <= 610
        second = run(w, job)  # the queue's retry, once the limit reset
        assert assert_not_lost(w, second) == "posted"
        assert [r.status for r in w.gh.requests("POST", REVIEWS)] == [403, 200]


# -- tokens dying mid-task ------------------------------------------------------------


def test_a_token_dying_during_the_review_is_minted_again_before_posting(tmp_path: Path) -> None:
    with job_world(tmp_path) as w:
        w.stub.push(submit(PLANTED_BUG))
        w.reset_calls()
        # The token dies while the model runs (after the re-read of the PR): the POST
        # meets a 401; nothing was stored, so it is posted with a fresh token.
        w.gh.when("GET", PULL, "expire_tokens", 1, times=2)
        outcome = run(w)
        assert assert_not_lost(w, outcome) == "posted"
        posts = statuses(w, "POST", REVIEWS)
        mints = w.gh.requests("POST", MINT)
    assert posts == [401, 200]
    assert len(mints) == 2


def test_a_token_dying_after_the_post_still_completes_the_check_run(tmp_path: Path) -> None:
    with job_world(tmp_path) as w:
        w.stub.push(submit(PLANTED_BUG))
        w.gh.when("POST", REVIEWS, "expire_tokens", 1)
        outcome = run(w)
        assert assert_not_lost(w, outcome) == "posted"
        [check] = w.check_runs()
        assert len(w.gh.requests("POST", REVIEWS)) == 1
    assert check["conclusion"] == "neutral" and "Review posted" in check["output"]["summary"]


# -- the PR goes away -----------------------------------------------------------------


def test_a_pr_gone_404_while_it_is_reviewed_gets_no_review(tmp_path: Path) -> None:
    with job_world(tmp_path) as w:
        w.stub.push(submit(PLANTED_BUG))
        w.gh.when("POST", CHECKS, "fail", "GET", PULL, status=404, times=10)
        outcome = run(w)
        assert w.reviews() == [] and len(w.stub.chat_requests) == 1
        [check] = w.check_runs()
    assert not isinstance(outcome, TransientJobError) and outcome.status == "gone"
    assert (check["status"], check["conclusion"]) == ("completed", "cancelled")

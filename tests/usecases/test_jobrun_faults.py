"""Review jobs when things go wrong: lost answers, refused reviews, PRs that move on
mid-review, exhausted quotas, broken settings, GitHub and model outages."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bot.usecases.review.run import TransientJobError, run_review_job
from tests.fakes.k3 import Reply
from tests.support.job_world import REPO, World, job_world, submit
from tests.support.planted import PLANTED_BUG

REVIEWS = f"/repos/{REPO}/pulls/1/reviews"
CHECKS = f"/repos/{REPO}/check-runs"


def everything_posted(w: World) -> str:
    """Every text GitNeural left on GitHub, for "no traceback anywhere" checks."""
    return json.dumps(
        [w.reviews(), w.check_runs(), w.gh.issue_comments(REPO, w.number)], ensure_ascii=False
    )


def test_post_answered_502_after_github_stored_it_is_one_review(tmp_path: Path) -> None:
    with job_world(tmp_path) as w:
        w.stub.push(submit(PLANTED_BUG))
        w.gh.fail("POST", REVIEWS, status=502, apply=True)
        outcome = run_review_job(w.job("opened"), w.ctx)
        [review] = w.reviews()
        posts = w.gh.requests("POST", REVIEWS)
        [check] = w.check_runs()
    assert (outcome.status, outcome.review_id) == ("posted", review["id"])
    assert len(posts) == 1  # read back, found by its marker, never posted again
    assert check["status"] == "completed"


def test_post_lost_before_github_stored_it_is_posted_once_more(tmp_path: Path) -> None:
    with job_world(tmp_path) as w:
        w.stub.push(submit(PLANTED_BUG))
        w.gh.fail("POST", REVIEWS, status=502)
        outcome = run_review_job(w.job("opened"), w.ctx)
        [review] = w.reviews()
        methods = [r.method for r in w.gh.requests(path=REVIEWS)]
    assert outcome.status == "posted" and outcome.review_id == review["id"]
    assert methods == ["GET", "POST", "GET", "POST"]  # the read-back came before the retry


def test_post_failing_twice_is_retried_later_by_the_job(tmp_path: Path) -> None:
    with job_world(tmp_path) as w:
        w.stub.push(submit(PLANTED_BUG))
        w.gh.fail("POST", REVIEWS, status=503, times=2)
        with pytest.raises(TransientJobError) as raised:
            run_review_job(w.job("opened"), w.ctx)
        assert w.reviews() == []
        [check] = w.check_runs()
    assert raised.value.transient is True
    assert (check["status"], check["conclusion"]) == ("completed", "neutral")
    assert "try again" in check["output"]["title"]


def test_422_moves_every_inline_comment_into_the_body_and_posts_once(tmp_path: Path) -> None:
    refusal = {
        "message": "Unprocessable Entity",
        "errors": ["Pull request review thread line must be part of the diff"],
    }
    with job_world(tmp_path) as w:
        w.stub.push(submit(PLANTED_BUG))
        w.gh.fail("POST", REVIEWS, status=422, body=refusal)
        outcome = run_review_job(w.job("opened"), w.ctx)
        [review] = w.reviews()
        posts = w.gh.requests("POST", REVIEWS)
        [check] = w.check_runs()
    assert outcome.status == "posted" and "422" in outcome.detail
    assert [len(p.json["comments"]) for p in posts] == [1, 0]
    assert review["comments"] == []
    assert "Off-by-one" in review["body"] and "return age >= 18" in review["body"]
    assert "people.py" in review["body"] and "#L2" in review["body"]
    assert "refused the inline comments" in check["output"]["summary"]
    assert "0 inline · 1 in the review body" in check["output"]["summary"]


def test_pr_closed_while_it_is_reviewed_gets_no_review(tmp_path: Path) -> None:
    with job_world(tmp_path) as w:
        w.stub.push(submit(PLANTED_BUG))
        w.gh.when("POST", CHECKS, "close_pull", REPO, w.number)
        outcome = run_review_job(w.job("opened"), w.ctx)
        assert w.reviews() == []
        [check] = w.check_runs()
        assert len(w.stub.chat_requests) == 1  # the model did run
    assert outcome.status == "gone"
    assert check["conclusion"] == "cancelled"


def test_pr_force_pushed_while_it_is_reviewed_gets_no_review(tmp_path: Path) -> None:
    with job_world(tmp_path) as w:
        w.stub.push(submit(PLANTED_BUG))
        w.gh.when("POST", CHECKS, "force_push", REPO, "feature", files={"x.py": "x = 1\n"})
        outcome = run_review_job(w.job("opened"), w.ctx)
        assert w.reviews() == []
    assert outcome.status == "superseded"


def test_still_current_false_posts_nothing(tmp_path: Path) -> None:
    asked: list[str] = []

    def still_current(head: str) -> bool:
        asked.append(head)
        return False

    with job_world(tmp_path) as w:
        w.stub.push(submit(PLANTED_BUG))
        job = w.job("opened")
        outcome = run_review_job(job, w.ctx, still_current=still_current)
        assert w.reviews() == []
    assert outcome.status == "superseded"
    assert asked == [job.head_sha]


def test_closed_or_moved_on_before_the_job_runs(tmp_path: Path) -> None:
    with job_world(tmp_path) as w:
        old = w.job("opened")
        w.gh.push(REPO, "feature", {"calc.py": "x = 2\n"})
        w.reset_calls()
        superseded = run_review_job(old, w.ctx)
        calls = w.api_calls()
        w.gh.close_pull(REPO, w.number)
        gone = run_review_job(w.job("synchronize"), w.ctx)
        assert w.check_runs() == [] and w.stub.chat_requests == []
    assert superseded.status == "superseded" and len(calls) == 1
    assert gone.status == "gone"


def test_exhausted_quota_fails_the_check_and_says_so_once_on_the_pr(tmp_path: Path) -> None:
    quota = Reply.http_error(429, "exceeded_current_quota_error", "Your account is out of credit")
    with job_world(tmp_path) as w:
        w.stub.push(quota, quota)
        first = run_review_job(w.job("opened"), w.ctx)
        second = run_review_job(w.job("command"), w.ctx)
        comments = w.gh.issue_comments(REPO, w.number)
        checks = w.check_runs()
        posted = everything_posted(w)
        assert w.reviews() == []
    assert first.status == second.status == "failed"
    assert "quota" in first.detail
    assert [c["conclusion"] for c in checks] == ["failure", "failure"]
    assert "quota" in checks[0]["output"]["summary"]
    [notice] = comments  # the second failure did not repeat it
    assert "quota is exhausted" in notice["body"]
    assert "Traceback" not in posted and 'File "' not in posted


def test_bad_settings_on_the_default_branch_fail_with_the_key_named(tmp_path: Path) -> None:
    with job_world(tmp_path, base_files={".gitneural.toml": "[review]\neffrot = 'low'\n"}) as w:
        outcome = run_review_job(w.job("opened"), w.ctx)
        [check] = w.check_runs()
        assert w.stub.chat_requests == [] and w.reviews() == []
    assert outcome.status == "failed"
    assert check["conclusion"] == "failure"
    assert "review.effrot" in check["output"]["summary"]
    assert "Traceback" not in json.dumps(check)


def test_unusable_model_output_fails_the_check(tmp_path: Path) -> None:
    with job_world(tmp_path) as w:
        w.stub.push(*[Reply(content="Looks fine to me!") for _ in range(4)])
        outcome = run_review_job(w.job("opened"), w.ctx)
        [check] = w.check_runs()
        assert w.reviews() == []
    assert outcome.status == "failed"
    assert check["conclusion"] == "failure"


def test_model_overload_is_retried_later(tmp_path: Path) -> None:
    busy = Reply.http_error(429, "engine_overloaded_error", "busy", retry_after=1)
    with job_world(tmp_path) as w:
        w.stub.push(busy, busy, busy)
        with pytest.raises(TransientJobError) as raised:
            run_review_job(w.job("opened"), w.ctx)
        [check] = w.check_runs()
        assert w.reviews() == []
    assert raised.value.transient is True
    assert raised.value.retry_after == 1
    assert check["status"] == "completed"


@pytest.mark.parametrize(
    ("fault", "retry_after"),
    [
        ({"status": 503}, None),
        # Longer than the client waits in place: the job is rescheduled instead.
        ({"status": 403, "headers": {"retry-after": "600"}, "body": {"message": "rate"}}, 600.0),
    ],
)
def test_github_outages_are_retried_later(
    tmp_path: Path, fault: dict[str, Any], retry_after: float | None
) -> None:
    with job_world(tmp_path) as w:
        # The client retries reads itself a few times; more faults than that.
        w.gh.fail("GET", f"/repos/{REPO}/pulls/1", times=10, **fault)
        with pytest.raises(TransientJobError) as raised:
            run_review_job(w.job("opened"), w.ctx)
    assert raised.value.transient is True
    assert raised.value.retry_after == retry_after


def test_pr_force_pushed_between_the_api_read_and_the_fetch(tmp_path: Path) -> None:
    with job_world(tmp_path) as w:
        w.gh.when("GET", REVIEWS, "force_push", REPO, "feature", files={"x.py": "x = 1\n"})
        outcome = run_review_job(w.job("opened"), w.ctx)
        assert w.reviews() == [] and w.check_runs() == [] and w.stub.chat_requests == []
    assert outcome.status == "superseded"


def test_an_unexpected_stop_cancels_the_check_run_and_propagates(tmp_path: Path) -> None:
    class Stopped(Exception):
        pass

    def still_current(head: str) -> bool:
        raise Stopped("the task's time limit")

    with job_world(tmp_path) as w:
        w.stub.push(submit(PLANTED_BUG))
        with pytest.raises(Stopped):
            run_review_job(w.job("opened"), w.ctx, still_current=still_current)
        [check] = w.check_runs()
        assert w.reviews() == []
    assert (check["status"], check["conclusion"]) == ("completed", "cancelled")
    assert "Stopped" in check["output"]["summary"]

"""What every fault test asserts about a review job, whatever the fault was.

- **nothing lost**: the job ended in a posted review, or in ONE completed check run whose
  failure summary says why, or in a :class:`TransientJobError` for the queue to retry;
- **nothing leaked**: no Python traceback in any text GitNeural sent to GitHub (every
  request body the fake GitHub recorded, not only what it stored).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

from bot.jobs import ReviewJob
from bot.usecases.review.run import JobOutcome, TransientJobError, run_review_job
from tests.fakes.github import FakeGitHub
from tests.support.job_world import World

TRACEBACK_SIGNS = ("Traceback", 'File "', '.py", line')


def strings(value: Any) -> Iterator[str]:
    """Every string (keys included) inside a decoded JSON value."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


def sent_texts(gh: FakeGitHub) -> list[str]:
    """Every string of every request body GitNeural sent to the fake GitHub."""
    return [text for r in gh.requests() for text in strings(r.json)]


def assert_no_traceback(gh: FakeGitHub) -> None:
    for text in sent_texts(gh):
        for sign in TRACEBACK_SIGNS:
            assert sign not in text, f"{sign!r} sent to GitHub: {text[:300]!r}"


def run(w: World, job: ReviewJob | None = None) -> JobOutcome | TransientJobError:
    """Run one job; a transient failure is returned, not raised (the queue's view)."""
    try:
        return run_review_job(job or w.job("opened"), w.ctx)
    except TransientJobError as exc:
        return exc


def assert_not_lost(w: World, result: JobOutcome | TransientJobError) -> str:
    """The job's fate is visible; returns ``"posted"``, ``"failed"`` or ``"retry"``."""
    assert_no_traceback(w.gh)
    reviews = w.reviews()
    checks = [c for c in w.check_runs() if c["name"] == "GitNeural"]
    assert all(c["status"] == "completed" for c in checks), "a check run left in progress"
    if isinstance(result, TransientJobError):
        assert result.transient is True and str(result)
        assert reviews == [], "a review posted and yet the job asks to be retried"
        return "retry"
    if result.status == "posted":
        assert len(reviews) == 1 and reviews[0]["id"] == result.review_id
        return "posted"
    assert result.status == "failed", result
    assert reviews == []
    [check] = checks  # ONE failure report, not one per attempt
    assert check["conclusion"] == "failure"
    summary = check["output"]["summary"]
    assert "failed" in summary and len(summary) < 2_000, summary
    return "failed"


def failure_summary(w: World) -> str:
    [check] = w.check_runs()
    return str(check["output"]["summary"])


def with_llm(w: World, **changes: Any) -> None:
    """Change the worker's model settings (retries, backoff) for the next jobs."""
    w.ctx.llm = dataclasses.replace(w.ctx.llm, **changes)

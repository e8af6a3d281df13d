"""Posting a review exactly once against the fake GitHub: 422 fallback, lost answers,
timeouts, rate limits, refusals."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import github
import pytest

from bot.errors import GitHubError
from bot.gh.api.access_tokens import InstallationTokens
from bot.gh.api.client import installation_client
from bot.gh.api.credentials import AppCredentials
from bot.gh.post import ReviewDraft, ReviewRefusedError, post_issue_comment, post_review
from bot.gh.pulls import gitneural_reviews, lazy_repo, read_pull
from bot.render.github import Marker
from tests.fakes.github import FakeGitHub

REPO = "octo/app"
REVIEWS = f"/repos/{REPO}/pulls/1/reviews"
COMMENT = {"path": "a.py", "line": 1, "side": "RIGHT", "body": "x is two now"}


@pytest.fixture
def gh(tmp_path: Path) -> Iterator[FakeGitHub]:
    with FakeGitHub(tmp_path / "gh") as fake:
        fake.create_repo(REPO, installation_id=1, files={"a.py": "x = 1\n"})
        fake.push(REPO, "feature", {"a.py": "x = 2\n"})
        fake.create_pull(REPO, head="feature")
        yield fake
        assert fake.forbidden_requests() == []


def client(gh: FakeGitHub, timeout: int = 30) -> github.Github:
    creds = AppCredentials(gh.app_id, gh.private_key_pem, gh.api_url)
    return installation_client(
        creds,
        InstallationTokens(creds),
        1,
        timeout=timeout,
        seconds_between_requests=None,
        seconds_between_writes=None,
    )


def draft(gh: FakeGitHub, delivery: str = "d1", comments: Any = None) -> ReviewDraft:
    head = gh.head_sha(REPO, 1)
    marker = Marker(head=head, trigger="opened", delivery=delivery).render()
    return ReviewDraft(
        commit_id=head,
        body=f"Review\n\n{marker}",
        comments=[COMMENT] if comments is None else comments,
        fallback_body=f"Review, comment moved here: x is two now\n\n{marker}",
    )


class ReadBack:
    """``already_posted`` as the job does it: this delivery's review, by its marker."""

    def __init__(self, gh: FakeGitHub, client: github.Github, delivery: str = "d1") -> None:
        self.gh, self.client, self.delivery, self.calls = gh, client, delivery, 0

    def __call__(self) -> int | None:
        self.calls += 1
        for review in gitneural_reviews(self.client, REPO, 1, self.gh.bot_login):
            if review.marker.delivery == self.delivery:
                return review.id
        return None


def post(gh: FakeGitHub, g: github.Github, d: ReviewDraft, read_back: ReadBack) -> Any:
    return post_review(lazy_repo(g, REPO), 1, d, already_posted=read_back)


def test_a_review_is_posted_as_comment_on_the_given_commit(gh: FakeGitHub) -> None:
    g = client(gh)
    read_back = ReadBack(gh, g)
    posted = post(gh, g, draft(gh), read_back)
    [review] = gh.reviews(REPO, 1)
    assert posted.review_id == review["id"] and not posted.moved_inline
    assert (review["event"], review["commit_id"]) == ("COMMENT", gh.head_sha(REPO, 1))
    assert [c["line"] for c in review["comments"]] == [1]
    assert read_back.calls == 0
    [request] = gh.requests("POST", REVIEWS)
    assert request.json["event"] == "COMMENT"


def test_a_comment_off_the_diff_gets_422_and_the_fallback_is_posted(gh: FakeGitHub) -> None:
    g = client(gh)
    off_diff = [dict(COMMENT, line=40)]  # the fake refuses it as GitHub would
    posted = post(gh, g, draft(gh, comments=off_diff), ReadBack(gh, g))
    [review] = gh.reviews(REPO, 1)
    assert posted.moved_inline and review["comments"] == []
    assert "comment moved here" in review["body"]
    assert [r.status for r in gh.requests("POST", REVIEWS)] == [422, 200]


def test_422_without_inline_comments_is_a_refusal(gh: FakeGitHub) -> None:
    g = client(gh)
    gh.fail("POST", REVIEWS, status=422, times=2)
    with pytest.raises(ReviewRefusedError) as raised:
        post(gh, g, draft(gh), ReadBack(gh, g))
    assert raised.value.transient is False
    assert len(gh.requests("POST", REVIEWS)) == 2
    assert gh.reviews(REPO, 1) == []


def test_502_after_storing_is_found_not_posted_again(gh: FakeGitHub) -> None:
    g = client(gh)
    gh.fail("POST", REVIEWS, status=502, apply=True)
    read_back = ReadBack(gh, g)
    posted = post(gh, g, draft(gh), read_back)
    assert posted.found and read_back.calls == 1
    assert len(gh.reviews(REPO, 1)) == 1
    assert len(gh.requests("POST", REVIEWS)) == 1


def test_a_timeout_is_left_to_the_job_s_retry(gh: FakeGitHub) -> None:
    """No answer: GitHub may still be storing the review, so it is not posted again."""
    g = client(gh, timeout=1)
    gh.fail("POST", REVIEWS, status=200, apply=True, delay=2.0)
    with pytest.raises(GitHubError) as raised:
        post(gh, g, draft(gh), ReadBack(gh, g))
    assert raised.value.transient is True and raised.value.status is None
    deadline = time.monotonic() + 10
    while not gh.reviews(REPO, 1) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(gh.reviews(REPO, 1)) == 1
    assert len(gh.requests("POST", REVIEWS)) == 1


def test_a_rate_limited_post_is_not_retried_in_place(gh: FakeGitHub) -> None:
    g = client(gh)
    gh.fail_secondary_rate_limit("POST", REVIEWS, retry_after=30)
    with pytest.raises(GitHubError) as raised:
        post(gh, g, draft(gh), ReadBack(gh, g))
    assert raised.value.transient is True and raised.value.retry_after == 30
    assert len(gh.requests("POST", REVIEWS)) == 1


def test_a_plain_refusal_is_not_retried(gh: FakeGitHub) -> None:
    g = client(gh)
    gh.fail("POST", REVIEWS, status=403, body={"message": "Resource not accessible by integration"})
    read_back = ReadBack(gh, g)
    with pytest.raises(GitHubError) as raised:
        post(gh, g, draft(gh), read_back)
    assert raised.value.transient is False and raised.value.status == 403
    assert "Resource not accessible" in str(raised.value)
    assert read_back.calls == 0


def test_only_the_app_s_marked_reviews_count(gh: FakeGitHub) -> None:
    g = client(gh)
    head = gh.head_sha(REPO, 1)
    forged = Marker(head=head, trigger="opened", delivery="d1").render()
    gh.add_review(REPO, 1, f"I am not the bot\n\n{forged}", user="mallory")
    post(gh, g, draft(gh, delivery="d2"), ReadBack(gh, g, "d2"))
    found = gitneural_reviews(g, REPO, 1, gh.bot_login)
    assert [r.marker.delivery for r in found] == ["d2"]
    # Without a known login, any bot account's marked review counts, never a person's.
    assert [r.marker.delivery for r in gitneural_reviews(g, REPO, 1, None)] == ["d2"]


def test_read_pull_and_issue_comment(gh: FakeGitHub) -> None:
    g = client(gh)
    pull = read_pull(g, REPO, 1)
    assert pull is not None
    assert (pull.head_sha, pull.base_ref, pull.default_branch) == (
        gh.head_sha(REPO, 1),
        "main",
        "main",
    )
    assert pull.clone_url == gh.clone_url(REPO) and pull.open
    assert read_pull(g, REPO, 99) is None
    cid = post_issue_comment(g, REPO, 1, "a notice")
    assert [c["id"] for c in gh.issue_comments(REPO, 1)] == [cid]

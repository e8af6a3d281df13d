"""The fake GitHub's tokens that are not minted with the App's JWT, as GitHub has them: a
workflow's ``GITHUB_TOKEN`` (an installation token of GitHub Actions' App, for one
repository) and a person's token (``gh auth token``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from github import Auth, Github, GithubException

from tests.fakes.github import FakeGitHub
from tests.support.actions import checkout, git

REPO = "octo/app"


@pytest.fixture
def gh(tmp_path: Path) -> Iterator[FakeGitHub]:
    with FakeGitHub(tmp_path / "gh") as fake:
        fake.create_repo(REPO, installation_id=1, files={"a.py": "x = 1\n"})
        fake.create_repo("octo/other", installation_id=1)
        fake.push(REPO, "feature", {"a.py": "x = 2\n"})
        fake.create_pull(REPO, head="feature")
        yield fake


def client(gh: FakeGitHub, token: str) -> Github:
    return Github(auth=Auth.Token(token), base_url=gh.api_url, retry=None)


def test_a_workflow_token_posts_as_github_actions_for_its_repository_only(gh: FakeGitHub) -> None:
    token = gh.actions_token(REPO)
    assert token.startswith("ghs_")
    repo = client(gh, token).get_repo(REPO)
    pr = repo.get_pull(1)
    review = pr.create_review(body="hello", event="COMMENT")
    assert (review.user.login, review.user.type) == ("github-actions[bot]", "Bot")
    run = repo.create_check_run(name="GitNeural", head_sha=pr.head.sha, status="in_progress")
    assert run.app.slug == "github-actions"
    reaction = repo.get_issue(1).create_reaction("eyes")
    assert reaction.user.login == "github-actions[bot]"
    with pytest.raises(GithubException) as other:
        client(gh, token).get_repo("octo/other").get_pull(1)
    assert other.value.status == 404  # a workflow's token reaches its own repository
    with pytest.raises(GithubException) as who:
        client(gh, token).get_user().login  # noqa: B018 - the attribute fetches /user
    assert who.value.status == 403
    assert {r.auth for r in gh.requests(kind="api")} == {"actions:1"}


def test_a_persons_token_posts_as_the_person_and_makes_no_check_runs(gh: FakeGitHub) -> None:
    token = gh.user_token(REPO, "alice")
    api = client(gh, token)
    assert api.get_user().login == "alice"
    repo = api.get_repo(REPO)
    pr = repo.get_pull(1)
    assert pr.create_review(body="hi", event="COMMENT").user.login == "alice"
    with pytest.raises(GithubException) as refused:
        repo.create_check_run(name="GitNeural", head_sha=pr.head.sha)
    assert refused.value.status == 403
    assert gh.check_runs(REPO) == []


def test_git_fetches_with_a_workflow_token_shallow_or_not(gh: FakeGitHub, tmp_path: Path) -> None:
    token = gh.actions_token(REPO)
    head = checkout(gh, REPO, 1, tmp_path / "shallow", token=token, shallow=True)
    assert (tmp_path / "shallow" / ".git" / "shallow").read_text().strip() == head
    checkout(gh, REPO, 1, tmp_path / "full", token=token, shallow=False)
    assert git("rev-list", "--count", "HEAD", cwd=tmp_path / "full") == "2"
    fetches = gh.requests(kind="git")
    assert fetches and {r.auth for r in fetches} == {"actions:1"}
    assert gh.forbidden_requests() == []

"""The fake GitHub answers PyGithub and git like GitHub does, logs every request, and
injects the faults later tests rely on."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import github
import jwt
import pytest
import requests
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from github import Auth, Github

from tests.fakes.github import FakeGitHub, FakeGitHubClient
from tests.support.paths import ROOT

LINES = "".join(f"line {i}\n" for i in range(1, 61))
REPO = "octo/app"


@pytest.fixture
def gh(tmp_path: Path) -> Iterator[FakeGitHub]:
    with FakeGitHub(tmp_path / "gh") as fake:
        fake.create_repo(REPO, installation_id=1, files={"a.py": LINES, "b.py": "old\n"})
        yield fake


def open_pull(gh: FakeGitHub) -> int:
    """a.py: lines 10 and 50 changed (two hunks); b.py: its one line replaced; c.py added."""
    changed = LINES.replace("line 10\n", "ten\n").replace("line 50\n", "fifty\n")
    gh.push(REPO, "feature", {"a.py": changed, "b.py": "new\n", "c.py": "print()\n"})
    return gh.create_pull(REPO, head="feature", title="Fix things", body="Please review")


def client(gh: FakeGitHub, installation_id: int = 1, **kwargs: Any) -> Github:
    return Github(
        auth=Auth.Token(gh.mint_token(installation_id)),
        base_url=gh.api_url,
        retry=None,
        seconds_between_requests=None,
        seconds_between_writes=None,
        **kwargs,
    )


def api(
    gh: FakeGitHub, method: str, path: str, token: str | None, accept: str = "", **kw: Any
) -> requests.Response:
    headers = {"Authorization": f"token {token}"} if token else {}
    if accept:
        headers["Accept"] = accept
    return requests.request(method, gh.api_url + path, headers=headers, timeout=10, **kw)


def test_pygithub_reads_repository_and_pull_request(gh: FakeGitHub) -> None:
    number = open_pull(gh)
    repo = client(gh).get_repo(REPO)
    assert repo.default_branch == "main"
    assert repo.clone_url == f"{gh.web_url}/{REPO}.git"
    pr = repo.get_pull(number)
    assert (pr.state, pr.draft, pr.title, pr.body) == ("open", False, "Fix things", "Please review")
    assert pr.head.sha == gh.head_sha(REPO, number)
    assert pr.head.ref == "feature"
    assert pr.head.repo.clone_url == repo.clone_url
    assert (pr.base.ref, pr.base.sha) == ("main", gh.branch_sha(REPO, "main"))
    assert [f.filename for f in pr.get_files()] == ["a.py", "b.py", "c.py"]


def test_pull_request_helpers_synchronize_close_and_force_push(gh: FakeGitHub) -> None:
    number = open_pull(gh)
    first = gh.head_sha(REPO, number)
    second = gh.push(REPO, "feature", {"d.py": "x\n"})
    assert gh.head_sha(REPO, number) == second != first
    rewritten = gh.force_push(REPO, "feature", files={"e.py": "y\n"})
    pr = client(gh).get_repo(REPO).get_pull(number)
    assert pr.head.sha == rewritten
    assert pr.get_commits().totalCount == 1  # the old commits are gone from the PR
    gh.close_pull(REPO, number)
    gh.push(REPO, "feature", {"f.py": "z\n"})
    pr = client(gh).get_repo(REPO).get_pull(number)
    assert (pr.state, pr.head.sha) == ("closed", rewritten)


def test_review_with_comments_on_the_diff_is_stored(gh: FakeGitHub) -> None:
    number = open_pull(gh)
    pr = client(gh).get_repo(REPO).get_pull(number)
    comments: list[Any] = [
        {"path": "a.py", "line": 10, "side": "RIGHT", "body": "one line"},
        {"path": "a.py", "start_line": 8, "line": 12, "side": "RIGHT", "body": "a range"},
        {"path": "a.py", "line": 10, "side": "LEFT", "body": "the old line"},
        {"path": "b.py", "line": 1, "side": "LEFT", "body": "deleted line"},
        {"path": "c.py", "line": 1, "body": "```suggestion\nprint('hi')\n```"},
    ]
    review = pr.create_review(
        commit=pr.head.repo.get_commit(pr.head.sha),
        body="Summary",
        event="COMMENT",
        comments=comments,
    )
    assert (review.state, review.commit_id, review.user.login) == (
        "COMMENTED",
        pr.head.sha,
        gh.bot_login,
    )
    [stored] = gh.reviews(REPO, number)
    assert stored["event"] == "COMMENT"
    assert [(c["path"], c["line"], c["side"]) for c in stored["comments"]] == [
        ("a.py", 10, "RIGHT"),
        ("a.py", 12, "RIGHT"),
        ("a.py", 10, "LEFT"),
        ("b.py", 1, "LEFT"),
        ("c.py", 1, "RIGHT"),
    ]
    assert stored["comments"][1]["start_line"] == 8
    assert [c.line for c in pr.get_review_comments()] == [10, 12, 10, 1, 1]
    assert [r.id for r in pr.get_reviews()] == [review.id]


@pytest.mark.parametrize(
    ("bad", "error"),
    [
        ({"path": "a.py", "line": 30, "body": "x"}, "Line could not be resolved"),
        ({"path": "a.py", "line": 30, "side": "LEFT", "body": "x"}, "Line could not be resolved"),
        ({"path": "nope.py", "line": 1, "body": "x"}, "Path could not be resolved"),
        (
            {"path": "a.py", "start_line": 10, "line": 50, "body": "x"},
            "start_line must be part of the same hunk as the line.",
        ),
        (
            {"path": "a.py", "start_line": 10, "line": 10, "body": "x"},
            "start_line must precede the end line.",
        ),
    ],
)
def test_one_bad_comment_rejects_the_whole_review(
    gh: FakeGitHub, bad: dict[str, Any], error: str
) -> None:
    number = open_pull(gh)
    good = {"path": "a.py", "line": 10, "body": "fine"}
    with pytest.raises(github.GithubException) as caught:
        client(gh).get_repo(REPO).get_pull(number).create_review(
            body="x", event="COMMENT", comments=[good, bad]
        )
    assert caught.value.status == 422
    assert caught.value.data["message"] == "Unprocessable Entity"
    assert caught.value.data["errors"] == [error]
    assert caught.value.data["documentation_url"].startswith("https://docs.github.com/")
    assert gh.reviews(REPO, number) == []
    assert gh.review_comments(REPO, number) == []


def test_review_body_limit_and_approvals(gh: FakeGitHub) -> None:
    number = open_pull(gh)
    pr = client(gh).get_repo(REPO).get_pull(number)
    with pytest.raises(github.GithubException) as caught:
        pr.create_review(body="x" * 65_537, event="COMMENT")
    assert caught.value.status == 422
    assert caught.value.data["errors"][0]["field"] == "body"
    pr.create_review(body="x" * 65_536, event="COMMENT")
    assert gh.forbidden_requests() == []
    pr.create_review(body="LGTM", event="APPROVE")
    assert [r.forbidden for r in gh.forbidden_requests()] == ["approves the pull request"]
    assert [r["state"] for r in gh.reviews(REPO, number)] == ["COMMENTED", "APPROVED"]


def test_lists_paginate_with_link_headers(gh: FakeGitHub) -> None:
    number = open_pull(gh)
    for i in range(5):
        gh.add_review(REPO, number, f"review {i}", user="alice")
    pr = client(gh, per_page=2).get_repo(REPO).get_pull(number)
    assert [r.body for r in pr.get_reviews()] == [f"review {i}" for i in range(5)]
    pages = [r.query.get("page") for r in gh.requests("GET", f"/repos/{REPO}/pulls/1/reviews")]
    assert pages == [None, "2", "3"]
    resp = api(gh, "GET", f"/repos/{REPO}/pulls/1/reviews?per_page=2", gh.mint_token(1))
    assert 'rel="next"' in resp.headers["Link"]
    assert resp.headers["Link"].startswith(f"<{gh.api_url}/repos/{REPO}/pulls/1/reviews?")


def test_check_runs_validate_like_github(gh: FakeGitHub) -> None:
    open_pull(gh)
    repo = client(gh).get_repo(REPO)
    sha = gh.branch_sha(REPO, "feature")
    assert sha is not None
    run = repo.create_check_run(name="GitNeural", head_sha=sha, status="in_progress")
    assert (run.status, run.conclusion) == ("in_progress", None)
    note = {"path": "a.py", "start_line": 10, "end_line": 10, "annotation_level": "warning"}
    with pytest.raises(github.GithubException) as caught:
        run.edit(
            output={"title": "t", "summary": "s", "annotations": [note | {"message": "m"}] * 51}
        )
    assert caught.value.status == 422
    with pytest.raises(github.GithubException):
        run.edit(output={"title": "t", "summary": "s" * 65_536})
    run.edit(
        status="completed",
        conclusion="neutral",
        output={"title": "t", "summary": "s" * 65_535, "annotations": [note | {"message": "m"}]},
    )
    [stored] = gh.check_runs(REPO, sha)
    assert (stored["status"], stored["conclusion"], len(stored["annotations"])) == (
        "completed",
        "neutral",
        1,
    )
    assert repo.get_commit(sha).get_check_runs().totalCount == 1


def test_issue_comments_and_reactions(gh: FakeGitHub) -> None:
    number = open_pull(gh)
    asked = gh.add_issue_comment(REPO, number, "/review effort=low", association="MEMBER")
    pr = client(gh).get_repo(REPO).get_pull(number)
    comment = pr.get_issue_comment(asked["id"])
    assert (comment.body, comment.user.login) == ("/review effort=low", "alice")
    first = comment.create_reaction("eyes")
    again = comment.create_reaction("eyes")
    assert first.id == again.id
    assert [r["content"] for r in gh.reactions(REPO, asked["id"])] == ["eyes"]
    posted = pr.create_issue_comment("Model quota exhausted")
    assert posted.user.login == gh.bot_login
    assert [c["body"] for c in gh.issue_comments(REPO, number)] == [
        "/review effort=low",
        "Model quota exhausted",
    ]


def test_request_log_keeps_bodies_but_never_credentials(gh: FakeGitHub) -> None:
    number = open_pull(gh)
    client(gh).get_repo(REPO).get_pull(number).create_review(body="hi", event="COMMENT")
    [post] = gh.requests("POST", f"/repos/{REPO}/pulls/{number}/reviews")
    assert post.json == {"body": "hi", "event": "COMMENT", "comments": []}
    assert (post.auth, post.installation_id, post.status) == ("installation:1", 1, 200)
    records = gh.requests()
    assert records and all("authorization" not in r.headers for r in records)
    assert gh.requests(path=f"/repos/{REPO}/pulls/*") == records[1:]


def test_repository_writes_are_answered_but_flagged(gh: FakeGitHub) -> None:
    number = open_pull(gh)
    token = gh.mint_token(1)
    main = gh.branch_sha(REPO, "main")
    writes = [
        ("PUT", f"/repos/{REPO}/contents/a.py", {"message": "m", "content": "eA=="}),
        ("POST", f"/repos/{REPO}/git/refs", {"ref": "refs/heads/x", "sha": main}),
        ("PATCH", f"/repos/{REPO}/git/refs/heads/main", {"sha": main}),
        ("PUT", f"/repos/{REPO}/pulls/{number}/merge", {}),
        ("PATCH", f"/repos/{REPO}/pulls/{number}", {"state": "closed"}),
    ]
    for method, path, body in writes:
        assert api(gh, method, path, token, json=body).status_code < 300
    assert [(r.method, r.path) for r in gh.forbidden_requests()] == [w[:2] for w in writes]
    assert gh.branch_sha(REPO, "main") == main
    assert gh.pull(REPO, number)["state"] == "open"
    assert api(gh, "GET", f"/repos/{REPO}/nothing-here", token).status_code == 404


def test_faults_fail_then_recover(gh: FakeGitHub) -> None:
    number = open_pull(gh)
    repo = client(gh).get_repo(REPO)
    gh.fail("GET", f"/repos/{REPO}/pulls/{number}", status=502, times=1)
    with pytest.raises(github.GithubException) as caught:
        repo.get_pull(number)
    assert caught.value.status == 502
    assert repo.get_pull(number).number == number
    failed, ok = gh.requests("GET", f"/repos/{REPO}/pulls/{number}")
    assert (failed.fault, failed.applied, failed.status, ok.fault) == (502, False, 502, None)


def test_fault_after_applying_makes_a_retried_post_visible(gh: FakeGitHub) -> None:
    number = open_pull(gh)
    pr = client(gh).get_repo(REPO).get_pull(number)
    gh.fail("POST", f"/repos/{REPO}/pulls/{number}/reviews", status=502, apply=True)
    with pytest.raises(github.GithubException):
        pr.create_review(body="once", event="COMMENT")
    assert [r["body"] for r in gh.reviews(REPO, number)] == ["once"]
    pr.create_review(body="once", event="COMMENT")  # what a naive retry would do
    assert len(gh.reviews(REPO, number)) == 2


def test_triggers_change_the_pull_request_mid_task(gh: FakeGitHub) -> None:
    number = open_pull(gh)
    before = gh.head_sha(REPO, number)
    gh.when("POST", f"/repos/{REPO}/check-runs", "force_push", REPO, "feature", files={"x": "1"})
    gh.when("GET", f"/repos/{REPO}/pulls/*", "close_pull", REPO, number)
    repo = client(gh).get_repo(REPO)
    assert repo.get_pull(number).state == "open"  # the trigger runs after the answer
    assert gh.pull(REPO, number)["state"] == "closed"
    assert gh.head_sha(REPO, number) == before
    gh.reopen_pull(REPO, number)
    repo.create_check_run(name="GitNeural", head_sha=before, status="in_progress")
    assert gh.head_sha(REPO, number) != before
    with pytest.raises(ValueError, match="no helper"):
        gh.when("GET", "/", "stop")


def test_rate_limit_faults_and_headers(gh: FakeGitHub) -> None:
    token = gh.mint_token(1)
    resp = api(gh, "GET", f"/repos/{REPO}", token)
    assert resp.headers["x-ratelimit-limit"] == "5000"
    assert int(resp.headers["x-ratelimit-remaining"]) < 5000
    gh.fail_secondary_rate_limit("*", f"/repos/{REPO}*", retry_after=7)
    resp = api(gh, "GET", f"/repos/{REPO}", token)
    assert (resp.status_code, resp.headers["retry-after"]) == (403, "7")
    assert "secondary rate limit" in resp.json()["message"]
    gh.fail_primary_rate_limit("GET", f"/repos/{REPO}", reset_in=30)
    resp = api(gh, "GET", f"/repos/{REPO}", token)
    assert resp.headers["x-ratelimit-remaining"] == "0"
    assert int(resp.headers["x-ratelimit-reset"]) >= time.time() + 25
    gh.exhaust_rate_limit(1, reset_in=60)
    resp = api(gh, "GET", f"/repos/{REPO}", token)
    assert resp.status_code == 403
    assert resp.json()["message"].startswith("API rate limit exceeded")
    gh.exhaust_rate_limit(1, reset_in=0)
    assert api(gh, "GET", f"/repos/{REPO}", token).status_code == 200


def test_tokens_are_scoped_to_their_installation(gh: FakeGitHub) -> None:
    gh.create_repo("other/lib", installation_id=2)
    path = f"/repos/{REPO}"
    assert api(gh, "GET", path, gh.mint_token(1)).status_code == 200
    assert api(gh, "GET", path, gh.mint_token(2)).status_code == 404
    assert api(gh, "GET", path, None).status_code == 404
    stale = gh.mint_token(1)
    gh.expire_tokens(1)
    resp = api(gh, "GET", path, stale)
    assert (resp.status_code, resp.json()["message"]) == (401, "Bad credentials")


def _jwt(gh: FakeGitHub, *, key: str | None = None, iss: Any = None, exp: int = 300) -> str:
    now = int(time.time())
    claims = {"iat": now - 60, "exp": now + exp, "iss": str(iss or gh.app_id)}
    return jwt.encode(claims, key or gh.private_key_pem, algorithm="RS256")


def test_access_tokens_need_a_valid_app_jwt(gh: FakeGitHub) -> None:
    other_key = (
        rsa.generate_private_key(public_exponent=65537, key_size=2048)
        .private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
        .decode()
    )

    def mint(token: str, installation: int = 1) -> requests.Response:
        headers = {"Authorization": f"Bearer {token}"}
        url = f"{gh.api_url}/app/installations/{installation}/access_tokens"
        return requests.post(url, headers=headers, timeout=10)

    ok = mint(_jwt(gh))
    assert ok.status_code == 201
    assert ok.json()["token"].startswith("ghs_")
    assert mint(_jwt(gh, key=other_key)).status_code == 401
    assert mint(_jwt(gh, iss=999)).status_code == 401
    assert mint(_jwt(gh, exp=3600)).json()["message"].endswith("too far in the future")
    assert mint(_jwt(gh, exp=-120)).status_code == 401
    assert mint(_jwt(gh), installation=77).status_code == 404


def _git(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(cwd or Path.cwd()),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_TERMINAL_PROMPT": "0",
    }
    return subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )


def test_git_clone_and_fetch_need_a_token_and_pushes_are_refused(
    gh: FakeGitHub, tmp_path: Path
) -> None:
    number = open_pull(gh)
    gh.create_repo("other/lib", installation_id=2)
    url = gh.clone_url(REPO)

    def with_token(token: str) -> str:
        return url.replace("http://", f"http://x-access-token:{token}@")

    assert _git("clone", "-q", url, str(tmp_path / "anon")).returncode != 0
    assert _git("clone", "-q", with_token("ghs_wrong"), str(tmp_path / "bad")).returncode != 0
    other = _git("clone", "-q", with_token(gh.mint_token(2)), str(tmp_path / "other"))
    assert other.returncode != 0
    assert "not found" in other.stderr.lower()
    work = tmp_path / "work"
    assert _git("clone", "-q", with_token(gh.mint_token(1)), str(work)).returncode == 0
    assert (work / "a.py").read_text() == LINES
    fetched = _git("fetch", "-q", "origin", f"refs/pull/{number}/head", cwd=work)
    assert fetched.returncode == 0, fetched.stderr
    head = _git("rev-parse", "FETCH_HEAD", cwd=work).stdout.strip()
    assert head == gh.head_sha(REPO, number)
    pushed = _git("push", "origin", "HEAD:refs/heads/evil", cwd=work)
    assert pushed.returncode != 0
    assert gh.branch_sha(REPO, "evil") is None
    assert {r.forbidden for r in gh.forbidden_requests()} == {"pushes to the repository"}


def test_diff_endpoints_and_too_large_diffs(gh: FakeGitHub) -> None:
    number = open_pull(gh)
    token = gh.mint_token(1)
    diff = "application/vnd.github.v3.diff"
    assert api(gh, "GET", f"/repos/{REPO}/pulls/{number}", None, diff).status_code == 404
    text = api(gh, "GET", f"/repos/{REPO}/pulls/{number}", token, diff).text
    assert "+ten" in text
    assert "-line 10" in text
    files = api(gh, "GET", f"/repos/{REPO}/pulls/{number}/files", token).json()
    assert [f["status"] for f in files] == ["modified", "modified", "added"]
    assert "+fifty" in files[0]["patch"]
    gh.push(REPO, "huge", {f"gen/{i}.txt": f"{i}\n" for i in range(301)})
    big = gh.create_pull(REPO, head="huge")
    resp = api(gh, "GET", f"/repos/{REPO}/pulls/{big}", token, diff)
    assert resp.status_code == 406
    assert resp.json()["errors"][0]["code"] == "too_large"


def test_cli_mode_serves_from_its_own_process(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.fakes.github", "--state-dir", str(state)], cwd=ROOT
    )
    try:
        deadline = time.monotonic() + 20
        while not (state / "fakegithub.json").exists():
            assert proc.poll() is None, "the fake GitHub exited"
            assert time.monotonic() < deadline, "the fake GitHub did not start"
            time.sleep(0.02)
        info = json.loads((state / "fakegithub.json").read_text())
        remote = FakeGitHubClient.from_state_dir(state)
        assert Path(info["private_key_path"]).read_text() == remote.private_key_pem
        remote.create_repo(REPO, installation_id=1)
        token = remote.mint_token(1)
        g = Github(auth=Auth.Token(token), base_url=remote.api_url, retry=None)
        assert g.get_repo(REPO).default_branch == "main"
        [record] = remote.requests("GET", f"/repos/{REPO}")
        assert record.status == 200
        remote.push(REPO, "feature", {"a.py": "1\n"})
        number = remote.create_pull(REPO, head="feature")
        remote.when("GET", f"/repos/{REPO}/pulls/{number}", "close_pull", REPO, number)
        assert g.get_repo(REPO).get_pull(number).state == "open"
        assert remote.pull(REPO, number)["state"] == "closed"
        with pytest.raises(RuntimeError, match="no repository"):
            remote.pull("nope/nope", 1)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert proc.returncode == 0

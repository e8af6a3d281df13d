"""``gitneural action`` run as GitHub's runner runs action.yml's step: the job's
environment, a workspace that is a real clone with the PR head checked out (shallow and
not), an Actions-style ``GITHUB_TOKEN`` against the fake GitHub, and the K3 stub."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from bot.render.github import parse_marker
from tests.support.actions import ActionsRun, checkout, comment_event, git, pull_request_event
from tests.support.job_world import REPO, World, job_world, submit
from tests.support.paths import FIXTURES
from tests.support.planted import PLANTED, PLANTED_BUG

SUGGESTION = "```suggestion\n    return age >= 18\n```"
SARIF_SCHEMA = json.loads((FIXTURES / "sarif" / "sarif-schema-2.1.0.json").read_text())
ACTIONS_BOT = "github-actions[bot]"


def inputs(w: World, **more: str) -> dict[str, str]:
    return {"kimi-api-key": w.stub.api_key, "kimi-base-url": w.stub.base_url, **more}


def assert_one_review_with_the_planted_suggestion(w: World, head: str) -> dict[str, Any]:
    [review] = w.reviews()
    assert (review["event"], review["commit_id"]) == ("COMMENT", head)
    assert review["user"]["login"] == ACTIONS_BOT  # posted with the workflow's token
    [comment] = review["comments"]
    assert (comment["path"], comment["line"], comment["side"]) == ("people.py", 2, "RIGHT")
    assert SUGGESTION in comment["body"]
    marker = parse_marker(review["body"])
    assert marker is not None and marker.head == head and marker.trigger == "opened"
    assert (marker.worst, marker.findings) == ("critical", 1)
    return review


def test_pull_request_with_a_full_checkout_is_read_from_the_workspace(tmp_path: Path) -> None:
    with job_world(tmp_path) as w:
        event = pull_request_event(w.gh, REPO, w.number)
        run = ActionsRun(tmp_path / "job", w.gh, REPO, event_name="pull_request", event=event)
        head = checkout(w.gh, REPO, w.number, run.workspace, token=run.token, shallow=False)
        w.gh.clear_requests()
        w.stub.push(submit(PLANTED_BUG))
        first = run.step("review", inputs(w))
        assert first.returncode == 0, first.stdout + first.stderr
        review = assert_one_review_with_the_planted_suggestion(w, head)
        assert w.gh.requests(kind="git") == []  # nothing fetched: the workspace had it all
        api = w.gh.requests(kind="api")
        assert {r.auth for r in api} == {"actions:1"}  # the plain token, no JWT dance
        assert not any(r.path.startswith("/app") for r in api)
        [check] = w.check_runs()
        assert check["status"] == "completed" and check["conclusion"] == "neutral"
        assert check["app"]["slug"] == "github-actions"
        assert "reading the pull request from the workspace" in first.stdout

        outputs = run.outputs()
        assert outputs["findings"] == "1"
        sarif = json.loads(Path(outputs["sarif"]).read_text())
        jsonschema.Draft7Validator(SARIF_SCHEMA).validate(sarif)
        [result] = sarif["runs"][0]["results"]
        location = result["locations"][0]["physicalLocation"]
        assert location["artifactLocation"]["uri"] == "people.py"
        assert location["region"]["startLine"] == 2
        summary = run.summary.read_text()
        assert summary.startswith("## GitNeural review")
        assert f"#pullrequestreview-{review['id']}" in summary
        assert "**critical** `people.py` line 2" in summary and "Reviewed 1 file" in summary

        # The same job run again (a re-run): the review is found by its marker.
        again = run.step("review", inputs(w))
        assert again.returncode == 0, again.stdout + again.stderr
        assert len(w.reviews()) == 1 and len(w.stub.chat_requests) == 1
        assert "already posted" in again.stdout
        assert run.outputs()["findings"] == "1" and run.outputs()["sarif"] == ""
        written = "".join([first.stdout, first.stderr, again.stdout, again.stderr, summary])
        written += run.output.read_text() + json.dumps(sarif)
        assert run.token not in written and w.stub.api_key not in written


def test_pull_request_target_with_a_shallow_checkout_fetches_by_git(tmp_path: Path) -> None:
    with job_world(tmp_path) as w:
        event = pull_request_event(w.gh, REPO, w.number)
        target = "pull_request_target"
        run = ActionsRun(tmp_path / "job", w.gh, REPO, event_name=target, event=event)
        head = checkout(w.gh, REPO, w.number, run.workspace, token=run.token, shallow=True)
        before = (
            git("for-each-ref", cwd=run.workspace),
            (run.workspace / ".git/shallow").read_text(),
        )
        w.gh.clear_requests()
        w.stub.push(submit(PLANTED_BUG))
        done = run.step("review", inputs(w))
        assert done.returncode == 0, done.stdout + done.stderr
        assert_one_review_with_the_planted_suggestion(w, head)
        assert "the checkout is shallow" in done.stdout
        fetches = w.gh.requests("POST", "/octo/app.git/git-upload-pack", kind="git")
        assert fetches and {r.auth for r in fetches} == {"actions:1"}
        # The workspace is read, never written: same refs, still shallow, nothing changed.
        after = git("for-each-ref", cwd=run.workspace), (run.workspace / ".git/shallow").read_text()
        assert after == before
        assert git("status", "--porcelain", cwd=run.workspace) == ""
        assert git("rev-parse", "HEAD", cwd=run.workspace) == head
        # The token went to git through libgit2's credentials only: no file holds it.
        kept = [p for p in run.temp.rglob("*") if p.is_file() and not p.is_symlink()]
        assert kept and not [p for p in kept if run.token.encode() in p.read_bytes()]
        assert run.token not in done.stdout + done.stderr

        # Another workflow run for the same head (a new event): still one review.
        rerun = ActionsRun(
            tmp_path / "job2", w.gh, REPO, event_name=target, event=event, run_id="7002"
        )
        checkout(w.gh, REPO, w.number, rerun.workspace, token=rerun.token, shallow=True)
        again = rerun.step("review", inputs(w))
        assert again.returncode == 0, again.stdout + again.stderr
        assert len(w.reviews()) == 1 and len(w.stub.chat_requests) == 1


def test_review_comment_by_a_none_user_does_nothing(tmp_path: Path) -> None:
    with job_world(tmp_path) as w:
        event, comment_id = comment_event(w.gh, REPO, w.number, "/review", "NONE")
        run = ActionsRun(tmp_path / "job", w.gh, REPO, event_name="issue_comment", event=event)
        w.gh.clear_requests()
        done = run.step("review", inputs(w))
        assert done.returncode == 0, done.stdout + done.stderr
        assert "/review by NONE is not allowed" in done.stdout
        assert w.gh.requests() == []  # not one request: no 👀, no read, no review
        assert w.gh.reactions(REPO, comment_id) == [] and w.reviews() == []
        assert w.stub.requests == []


def test_review_comment_by_a_collaborator_gets_eyes_first_then_one_review(tmp_path: Path) -> None:
    with job_world(tmp_path) as w:
        event, comment_id = comment_event(w.gh, REPO, w.number, "/review effort=high", "MEMBER")
        run = ActionsRun(tmp_path / "job", w.gh, REPO, event_name="issue_comment", event=event)
        w.gh.clear_requests()
        w.stub.push(submit(PLANTED_BUG))
        done = run.step("review", inputs(w, effort="low"))
        assert done.returncode == 0, done.stdout + done.stderr
        writes = [r.path for r in w.gh.requests(kind="api") if r.method != "GET"]
        assert writes[0] == f"/repos/{REPO}/issues/comments/{comment_id}/reactions"
        [reaction] = w.gh.reactions(REPO, comment_id)
        assert (reaction["content"], reaction["user"]["login"]) == ("eyes", ACTIONS_BOT)
        [review] = w.reviews()
        marker = parse_marker(review["body"])
        assert marker is not None and marker.trigger == "command"
        # The comment's effort wins over the input's.
        assert w.stub.chat_requests[0].body["reasoning_effort"] == "high"


@pytest.mark.parametrize("association", ["MEMBER", "COLLABORATOR"])
@pytest.mark.parametrize("body", ["/review", "/ask Why?", "/learn Report nothing.", "/forget 1"])
def test_a_read_only_member_or_collaborator_gets_nothing(
    tmp_path: Path, association: str, body: str
) -> None:
    """``author_association`` lets them through the router; the permission read, with the
    workflow's token, is the last word: no 👀, no review, no model call."""
    with job_world(tmp_path) as w:
        w.gh.set_permission(REPO, "rita", "read")
        event, comment_id = comment_event(w.gh, REPO, w.number, body, association, user="rita")
        run = ActionsRun(tmp_path / "job", w.gh, REPO, event_name="issue_comment", event=event)
        w.gh.clear_requests()
        done = run.step("review", inputs(w))
        assert done.returncode == 0, done.stdout + done.stderr
        posts = [r.path for r in w.gh.requests(kind="api") if r.method != "GET"]
        assert posts == []
        assert w.gh.reactions(REPO, comment_id) == [] and w.reviews() == []
        assert w.stub.requests == []
        if body == "/review":
            assert "may not write" in done.stdout
            reads = [r.path for r in w.gh.requests(kind="api")]
            assert f"/repos/{REPO}/collaborators/rita/permission" in reads


def test_a_fork_pull_request_without_a_key_is_a_notice_and_success(tmp_path: Path) -> None:
    with job_world(tmp_path) as w:
        fork = {
            "pull_request.head.repo.full_name": "stranger/app",
            "pull_request.head.repo.fork": True,
        }
        event = pull_request_event(w.gh, REPO, w.number, **fork)
        run = ActionsRun(tmp_path / "job", w.gh, REPO, event_name="pull_request", event=event)
        w.gh.clear_requests()
        done = run.step("review", inputs(w, **{"kimi-api-key": ""}))
        assert done.returncode == 0, done.stdout + done.stderr
        notices = [line for line in done.stdout.splitlines() if line.startswith("::notice")]
        assert len(notices) == 1 and "fork" in notices[0] and "pull_request_target" in notices[0]
        assert "::error" not in done.stdout
        assert w.gh.requests() == [] and w.stub.requests == []
        assert run.outputs() == {"findings": "0", "sarif": ""}


def test_a_missing_key_on_a_pull_request_of_the_repository_is_an_error(tmp_path: Path) -> None:
    with job_world(tmp_path) as w:
        event = pull_request_event(w.gh, REPO, w.number)
        run = ActionsRun(tmp_path / "job", w.gh, REPO, event_name="pull_request", event=event)
        done = run.step("review", inputs(w, **{"kimi-api-key": ""}))
    assert done.returncode == 2
    assert done.stdout.count("::error") == 1 and "KIMI_API_KEY" in done.stdout
    # Said once in the job's log, which shows stdout and stderr together.
    assert (done.stdout + done.stderr).count("KIMI_API_KEY") == 1
    assert "Traceback" not in done.stderr


def test_fail_on_major_with_a_major_finding_fails_the_step_and_its_re_run(tmp_path: Path) -> None:
    major = {**PLANTED_BUG, "severity": "major", "body": "18 is adult.\n::warning::forged"}
    with job_world(tmp_path) as w:
        event = pull_request_event(w.gh, REPO, w.number)
        run = ActionsRun(tmp_path / "job", w.gh, REPO, event_name="pull_request", event=event)
        checkout(w.gh, REPO, w.number, run.workspace, token=run.token, shallow=False)
        w.stub.push(submit(major))
        done = run.step("review", inputs(w, **{"fail-on": "major"}))
        assert done.returncode == 1, done.stdout + done.stderr
        errors = [line for line in done.stdout.splitlines() if line.startswith("::error")]
        assert len(errors) == 1 and "fail-on is major" in errors[0]
        # The model's text reached the log with workflow commands switched off around it.
        start = done.stdout.index("::stop-commands::")
        token = done.stdout[start:].split("\n", 1)[0].removeprefix("::stop-commands::")
        assert start < done.stdout.index("::warning::forged") < done.stdout.index(f"::{token}::")
        assert len(w.reviews()) == 1
        again = run.step("review", inputs(w, **{"fail-on": "major"}))
        assert again.returncode == 1 and len(w.stub.chat_requests) == 1
        lenient = run.step("review", inputs(w, **{"fail-on": "critical"}))
        assert lenient.returncode == 0 and len(w.reviews()) == 1


def test_other_events_say_why_and_succeed(tmp_path: Path) -> None:
    with job_world(tmp_path) as w:
        run = ActionsRun(tmp_path / "job", w.gh, REPO, event_name="push", event={"ref": "main"})
        w.gh.clear_requests()
        done = run.step("review", inputs(w))
        assert done.returncode == 0
        assert done.stdout.strip().splitlines() == [
            "GitNeural: nothing to review: the push event is not one GitNeural reviews on "
            "(pull_request, pull_request_target, issue_comment)"
        ]
        assert w.gh.requests() == []


def test_settings_come_from_the_base_branch_never_from_the_pull_request(tmp_path: Path) -> None:
    base = {".github/review.toml": '[review]\neffort = "high"\n'}
    loosened = '[review]\neffort = "max"\n'
    pr = {"people.py": PLANTED, ".github/review.toml": loosened, ".gitneural.toml": loosened}
    with job_world(tmp_path, base_files=base, pr_files=pr) as w:
        event = pull_request_event(w.gh, REPO, w.number)
        missing = ActionsRun(
            tmp_path / "job0", w.gh, REPO, event_name="pull_request", event=event, run_id="7000"
        )
        failed = missing.step("review", inputs(w, config="no/such.toml"))
        assert failed.returncode == 2, failed.stdout + failed.stderr
        assert "config file no/such.toml not found at" in failed.stdout
        assert w.reviews() == [] and w.check_runs()[0]["conclusion"] == "failure"

        run = ActionsRun(tmp_path / "job", w.gh, REPO, event_name="pull_request", event=event)
        checkout(w.gh, REPO, w.number, run.workspace, token=run.token, shallow=False)
        w.stub.push(submit(PLANTED_BUG))
        done = run.step("review", inputs(w, config=".github/review.toml"))
        assert done.returncode == 0, done.stdout + done.stderr
        [chat] = w.stub.chat_requests
        assert chat.body["reasoning_effort"] == "high"  # the base branch's file, not the PR's
        assert len(w.reviews()) == 1


def test_a_personal_token_as_github_token_posts_once_as_that_person(tmp_path: Path) -> None:
    with job_world(tmp_path) as w:
        event = pull_request_event(w.gh, REPO, w.number)
        pat = {"github-token": w.gh.user_token(REPO, "alice")}
        run = ActionsRun(tmp_path / "job", w.gh, REPO, event_name="pull_request", event=event)
        w.stub.push(submit(PLANTED_BUG))
        done = run.step("review", inputs(w, **pat))  # no checkout step: fetched by git
        assert done.returncode == 0, done.stdout + done.stderr
        assert "the workspace is not a git checkout" in done.stdout
        [review] = w.reviews()
        assert review["user"]["login"] == "alice"
        assert w.check_runs() == []  # a person's token makes no check runs; the review stands
        rerun = ActionsRun(
            tmp_path / "job2", w.gh, REPO, event_name="pull_request", event=event, run_id="7002"
        )
        again = rerun.step("review", inputs(w, **pat))
        assert again.returncode == 0, again.stdout + again.stderr
        assert len(w.reviews()) == 1 and len(w.stub.chat_requests) == 1

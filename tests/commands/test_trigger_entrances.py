"""The trigger policy and the registry in the other entrances: the GitHub Action (its
``pull_request`` event under the repository's policy, its comments read by the registry)
and ``gitneural review --pr`` (asked for by a person, like ``/review``: reviewed even when
the policy would skip it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bot.commands import commands
from tests.action.test_action_run import inputs
from tests.cli.test_cli_review import run_cli
from tests.cli.test_review_pr import pr_env
from tests.support.actions import ActionsRun, comment_event, pull_request_event
from tests.support.conversation import DESCRIPTION, conversation_reply
from tests.support.job_world import CONFIG, REPO, job_world, submit
from tests.support.planted import PLANTED, PLANTED_BUG


def test_the_action_skips_a_skip_labelled_pr_visibly_and_reviews_it_on_review(
    tmp_path: Path,
) -> None:
    with job_world(tmp_path) as w:
        w.gh.set_labels(REPO, w.number, ["gitneural:skip"])
        event = pull_request_event(w.gh, REPO, w.number)
        run = ActionsRun(tmp_path / "job", w.gh, REPO, event_name="pull_request", event=event)
        done = run.step("review", inputs(w))
        assert done.returncode == 0, done.stdout + done.stderr
        assert "no new review (skipped): the pull request is labelled" in done.stdout
        [check] = w.check_runs()
        assert (check["conclusion"], check["app"]["slug"]) == ("skipped", "github-actions")
        assert "Comment `/review` to review anyway" in check["output"]["summary"]
        assert w.stub.requests == [] and w.reviews() == []
        assert "labelled `gitneural:skip`" in run.summary.read_text()

        event, _ = comment_event(w.gh, REPO, w.number, "/review", "MEMBER")
        asked = ActionsRun(tmp_path / "job2", w.gh, REPO, event_name="issue_comment", event=event)
        w.stub.push(submit(PLANTED_BUG))
        reviewed = asked.step("review", inputs(w))
        assert reviewed.returncode == 0, reviewed.stdout + reviewed.stderr
        assert len(w.reviews()) == 1 and len(w.stub.chat_requests) == 1


def test_the_action_skips_an_oversized_pr_visibly(tmp_path: Path) -> None:
    config = {".gitneural.toml": CONFIG + "[github]\nmax_review_files = 1\n"}
    files: dict[str, str | None] = {"people.py": PLANTED, "other.py": "X = 1\n"}
    with job_world(tmp_path, base_files=config, pr_files=files) as w:
        event = pull_request_event(w.gh, REPO, w.number)
        run = ActionsRun(tmp_path / "job", w.gh, REPO, event_name="pull_request", event=event)
        done = run.step("review", inputs(w))
        assert done.returncode == 0, done.stdout + done.stderr
        assert "2 changed files, more than github.max_review_files = 1" in done.stdout
        [check] = w.check_runs()
        assert check["conclusion"] == "skipped" and w.stub.requests == []


def test_the_action_names_a_command_only_the_app_answers(tmp_path: Path) -> None:
    with job_world(tmp_path) as w:
        event, _ = comment_event(w.gh, REPO, w.number, "/learnings", "MEMBER")
        run = ActionsRun(tmp_path / "job", w.gh, REPO, event_name="issue_comment", event=event)
        done = run.step("review", inputs(w))
        assert done.returncode == 0, done.stdout + done.stderr
        runs = "the Action runs /review, /describe, /help"
        assert f"/learnings is answered by the GitHub App; {runs}" in done.stdout
        assert w.stub.requests == [] and w.gh.issue_comments(REPO, w.number)[1:] == []


def _our_comments(w: Any) -> list[dict[str, Any]]:
    return [c for c in w.gh.issue_comments(REPO, w.number) if c["user"]["type"] == "Bot"]


def test_the_action_answers_help_without_the_model(tmp_path: Path) -> None:
    with job_world(tmp_path) as w:
        event, _ = comment_event(w.gh, REPO, w.number, "/help", "MEMBER")
        run = ActionsRun(tmp_path / "job", w.gh, REPO, event_name="issue_comment", event=event)
        inputs_without_key = {**inputs(w), "kimi-api-key": ""}  # /help needs no model
        done = run.step("review", inputs_without_key)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "GitNeural: /help answered" in done.stdout
        [answer] = _our_comments(w)
        for command in commands().values():
            assert f"`{command.usage.replace('|', chr(92) + '|')}`" in answer["body"]
        assert w.stub.requests == []
        # Run again (a re-run of the job): the answer is found, not posted twice.
        again = run.step("review", inputs_without_key)
        assert again.returncode == 0, again.stdout + again.stderr
        assert "already-answered" in again.stdout and len(_our_comments(w)) == 1


def test_the_action_answers_describe_with_one_comment_and_edits_nothing(tmp_path: Path) -> None:
    with job_world(tmp_path) as w:
        w.stub.brain = conversation_reply
        before = w.gh.pull(REPO, w.number)
        event, _ = comment_event(w.gh, REPO, w.number, "/describe", "MEMBER")
        run = ActionsRun(tmp_path / "job", w.gh, REPO, event_name="issue_comment", event=event)
        done = run.step("review", inputs(w))
        assert done.returncode == 0, done.stdout + done.stderr
        [answer] = _our_comments(w)
        assert f"**Title:** {DESCRIPTION['title']}" in answer["body"]
        assert len(w.stub.chat_requests) >= 1
        after = w.gh.pull(REPO, w.number)
        assert (after["title"], after["body"]) == (before["title"], before["body"])
        assert w.gh.requests(method="PATCH", path=f"/repos/{REPO}/pulls/*") == []
        assert "/describe on" in run.summary.read_text()


def test_review_pr_reviews_a_pull_request_the_policy_skips(tmp_path: Path) -> None:
    config = {".gitneural.toml": CONFIG + '[github]\nauto_review = "off"\nmax_review_lines = 1\n'}
    with job_world(tmp_path, base_files=config) as w:
        w.gh.set_labels(REPO, w.number, ["gitneural:skip"])
        w.stub.push(submit(PLANTED_BUG))
        done = run_cli(
            ["review", "--pr", f"{REPO}#{w.number}", "--quiet"], tmp_path, pr_env(w, tmp_path)
        )
        assert done.returncode == 1, done.stderr  # reviewed: the planted critical finding
        assert "people.py:2: critical" in done.stdout
        assert len(w.stub.chat_requests) == 1

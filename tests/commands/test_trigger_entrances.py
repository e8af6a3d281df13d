"""The trigger policy and the registry in the other entrances: the GitHub Action (its
``pull_request`` event under the repository's policy, its comments read by the registry)
and ``gitneural review --pr`` (asked for by a person, like ``/review``: reviewed even when
the policy would skip it)."""

from __future__ import annotations

from pathlib import Path

from tests.action.test_action_run import inputs
from tests.cli.test_cli_review import run_cli
from tests.cli.test_review_pr import pr_env
from tests.support.actions import ActionsRun, comment_event, pull_request_event
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
        event, _ = comment_event(w.gh, REPO, w.number, "/describe", "MEMBER")
        run = ActionsRun(tmp_path / "job", w.gh, REPO, event_name="issue_comment", event=event)
        done = run.step("review", inputs(w))
        assert done.returncode == 0, done.stdout + done.stderr
        assert "/describe is answered by the GitHub App; the Action runs /review" in done.stdout
        assert w.stub.requests == [] and w.gh.issue_comments(REPO, w.number)[1:] == []


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

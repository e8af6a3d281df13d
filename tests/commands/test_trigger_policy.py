"""The trigger policy, on the job runner with the fake GitHub and the K3 stub: which
automatic triggers review, which are left alone quietly, and which complete a check run
``skipped`` (never ``success``) saying why and that ``/review`` reviews anyway."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.settings.repository import ConfigError, parse_config
from bot.usecases.review.run import run_review_job
from tests.support.job_world import CONFIG, REPO, World, job_world, submit
from tests.support.planted import PLANTED, PLANTED_BUG
from tests.support.webhooks import variant
from tests.web.test_web_app import Hook


def _config(github: str) -> dict[str, str | None]:
    return {".gitneural.toml": CONFIG + "[github]\n" + github}


def test_auto_review_takes_words_and_still_the_old_booleans() -> None:
    assert parse_config("[github]\nauto_review = true\n").github.auto_review == "always"
    assert parse_config("[github]\nauto_review = false\n").github.auto_review == "off"
    assert parse_config('[github]\nauto_review = "label"\n').github.auto_review == "label"
    defaults = parse_config("").github
    assert (defaults.auto_review, defaults.review_label, defaults.skip_label) == (
        "always",
        "gitneural",
        "gitneural:skip",
    )
    with pytest.raises(ConfigError, match="auto_review must be one of always, label, off"):
        parse_config('[github]\nauto_review = "sometimes"\n')
    with pytest.raises(ConfigError, match="skip_label must be a non-empty string"):
        parse_config('[github]\nskip_label = ""\n')


def _skipped_check(w: World) -> dict[str, object]:
    [check] = w.check_runs()
    assert (check["status"], check["conclusion"]) == ("completed", "skipped")
    return check


def test_a_skip_label_gets_a_skipped_check_run_and_no_model_call(tmp_path: Path) -> None:
    with job_world(tmp_path) as w:
        w.gh.set_labels(REPO, w.number, ["bug", "GitNeural:Skip"])  # labels ignore case
        w.reset_calls()
        outcome = run_review_job(w.job("opened"), w.ctx)
        assert outcome.status == "skipped" and "gitneural:skip" in outcome.detail
        summary = str(_skipped_check(w)["output"]["summary"])  # type: ignore[index]
        assert "labelled `gitneural:skip`" in summary
        assert "Comment `/review` to review anyway" in summary
        assert w.stub.chat_requests == [] and w.reviews() == []
        # Read the PR, its reviews, one POST of the completed check run.
        assert [m for m, _ in w.api_calls()] == ["GET", "GET", "POST"]
        # Someone asks: the label does not stop /review.
        w.stub.push(submit(PLANTED_BUG))
        assert run_review_job(w.job("command", comment_id=None), w.ctx).status == "posted"
        assert len(w.reviews()) == 1


@pytest.mark.parametrize(
    "limit,reason",
    [
        ("max_review_lines = 5", "changed lines, more than github.max_review_lines = 5"),
        ("max_review_files = 2", "3 changed files, more than github.max_review_files = 2"),
    ],
)
def test_an_oversized_pull_request_is_skipped_visibly_and_reviewed_on_request(
    tmp_path: Path, limit: str, reason: str
) -> None:
    files: dict[str, str | None] = {
        "people.py": PLANTED,
        "a.py": "A = 1\n" * 10,
        "b.py": "B = 2\n",
    }
    with job_world(tmp_path, base_files=_config(limit + "\n"), pr_files=files) as w:
        outcome = run_review_job(w.job("synchronize"), w.ctx)
        assert outcome.status == "skipped" and reason in outcome.detail
        check = _skipped_check(w)
        assert check["conclusion"] != "success" and w.stub.chat_requests == []
        w.stub.push(submit(PLANTED_BUG))
        assert run_review_job(w.job("command", comment_id=None), w.ctx).status == "posted"


def test_within_the_limits_the_review_goes_on(tmp_path: Path) -> None:
    config = _config("max_review_lines = 50\nmax_review_files = 3\n")
    with job_world(tmp_path, base_files=config) as w:
        w.stub.push(submit(PLANTED_BUG))
        assert run_review_job(w.job("opened"), w.ctx).status == "posted"
        [check] = w.check_runs()
        assert check["conclusion"] == "neutral"


@pytest.mark.parametrize(
    "github,labels,trigger,detail",
    [
        ('auto_review = "off"\n', [], "opened", 'auto_review = "off"'),
        ("auto_review = false\n", [], "opened", 'auto_review = "off"'),
        ('auto_review = "label"\n', ["other"], "opened", "not labelled 'gitneural'"),
        ('base_branches = ["release/*"]\n', [], "opened", "not in github.base_branches"),
        ("", ["gitneural"], "labeled", "only review_label starts a review"),
    ],
)
def test_triggers_the_policy_does_not_ask_for_end_quietly(
    tmp_path: Path, github: str, labels: list[str], trigger: str, detail: str
) -> None:
    with job_world(tmp_path, base_files=_config(github)) as w:
        w.gh.set_labels(REPO, w.number, labels)
        outcome = run_review_job(w.job(trigger), w.ctx)
        assert outcome.status == "skipped" and detail in outcome.detail
        assert w.check_runs() == [] and w.stub.chat_requests == []


@pytest.mark.parametrize("trigger", ["opened", "labeled"])
def test_with_auto_review_label_the_label_starts_the_review(tmp_path: Path, trigger: str) -> None:
    github = 'auto_review = "label"\nreview_label = "please-review"\nbase_branches = ["ma*"]\n'
    with job_world(tmp_path, base_files=_config(github)) as w:
        w.gh.set_labels(REPO, w.number, ["please-review"])
        w.stub.push(submit(PLANTED_BUG))
        assert run_review_job(w.job(trigger), w.ctx).status == "posted"


def test_the_webhook_queues_labeled_for_the_worker_s_policy_to_judge(tmp_path: Path) -> None:
    hook = Hook(tmp_path)
    payload = variant("pull_request.opened.payload.json", action="labeled")
    resp = hook.post("pull_request", payload)
    assert (resp.status_code, resp.json["trigger"]) == (202, "labeled")
    unlabeled = variant("pull_request.opened.payload.json", action="unlabeled")
    assert hook.post("pull_request", unlabeled).json["status"] == "ignored"

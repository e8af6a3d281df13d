"""A review job end to end: fake GitHub (REST + git smart HTTP), the K3 stub, real git."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.render.github import parse_marker
from bot.usecases.review.run import add_eyes_reaction, run_review_job
from tests.fakes.k3 import Reply
from tests.support.job_world import CALC_BUG, CONFIG, REPO, job_world, submit
from tests.support.planted import PLANTED, PLANTED_BUG

SUGGESTION = "```suggestion\n    return age >= 18\n```"


def test_opened_posts_one_review_with_the_suggestion_on_the_planted_line(tmp_path: Path) -> None:
    with job_world(tmp_path) as w:
        w.stub.push(submit(PLANTED_BUG))
        job = w.job("opened")
        w.reset_calls()
        outcome = run_review_job(job, w.ctx)
        calls = w.api_calls()
        [review] = w.reviews()
        [check] = w.check_runs()
        [chat] = w.stub.chat_requests
    assert (outcome.status, outcome.review_id) == ("posted", review["id"])
    assert (review["event"], review["commit_id"]) == ("COMMENT", job.head_sha)
    [comment] = review["comments"]
    assert (comment["path"], comment["line"], comment["side"]) == ("people.py", 2, "RIGHT")
    assert comment["start_line"] is None
    assert SUGGESTION in comment["body"]
    assert "Off-by-one" in comment["body"]
    marker = parse_marker(review["body"])
    assert marker is not None
    assert (marker.head, marker.trigger, marker.delivery) == (
        job.head_sha,
        "opened",
        job.delivery_id,
    )
    assert marker.since is None and len(marker.fingerprints) == 1
    assert "1 critical" in review["body"] and "the whole pull request" in review["body"]
    assert (check["name"], check["status"], check["conclusion"]) == (
        "GitNeural",
        "completed",
        "neutral",
    )
    assert check["head_sha"] == job.head_sha
    [annotation] = check["annotations"]
    assert (annotation["path"], annotation["start_line"], annotation["annotation_level"]) == (
        "people.py",
        2,
        "failure",
    )
    summary = check["output"]["summary"]
    assert "prompt tokens" in summary and "Reviewed 1 file" in summary
    assert f"#pullrequestreview-{review['id']}" in summary
    assert chat.body["reasoning_effort"] == "low"  # from .gitneural.toml on main
    assert calls == [
        ("GET", f"/repos/{REPO}/pulls/1"),
        ("GET", f"/repos/{REPO}/pulls/1/reviews"),
        ("POST", f"/repos/{REPO}/check-runs"),
        ("GET", f"/repos/{REPO}/pulls/1"),
        ("POST", f"/repos/{REPO}/pulls/1/reviews"),
        ("PATCH", f"/repos/{REPO}/check-runs/{check['id']}"),
    ]


def test_the_same_job_twice_posts_one_review_and_asks_the_model_once(tmp_path: Path) -> None:
    with job_world(tmp_path) as w:
        w.stub.push(submit(PLANTED_BUG))
        job = w.job("opened")
        first = run_review_job(job, w.ctx)
        w.reset_calls()
        again = run_review_job(job, w.ctx)
        calls = w.api_calls()
        assert len(w.reviews()) == 1
        assert len(w.stub.chat_requests) == 1
        [check] = w.check_runs()
    assert again.status == "posted" and again.review_id == first.review_id
    assert "already posted" in again.detail
    # Reading the PR and its reviews, then a look for a check run a dead worker left.
    assert calls[:2] == [
        ("GET", f"/repos/{REPO}/pulls/1"),
        ("GET", f"/repos/{REPO}/pulls/1/reviews"),
    ]
    assert len(calls) == 3
    assert check["status"] == "completed"


def test_another_automatic_trigger_on_a_reviewed_head_is_nothing_new(tmp_path: Path) -> None:
    with job_world(tmp_path) as w:
        w.stub.push(submit(PLANTED_BUG))
        run_review_job(w.job("opened"), w.ctx)
        outcome = run_review_job(w.job("ready_for_review"), w.ctx)
        assert len(w.reviews()) == 1
    assert outcome.status == "nothing-new"


def test_a_killed_worker_s_check_run_is_completed_by_the_rerun(tmp_path: Path) -> None:
    with job_world(tmp_path) as w:
        w.stub.push(submit(PLANTED_BUG))
        job = w.job("opened")
        # The worker dies after posting: the PATCH completing the check never arrives.
        w.gh.fail("PATCH", f"/repos/{REPO}/check-runs/*", status=502)
        with pytest.raises(Exception) as raised:
            run_review_job(job, w.ctx)
        assert getattr(raised.value, "transient", False)
        assert w.check_runs()[0]["status"] == "in_progress"
        again = run_review_job(job, w.ctx)
        [check] = w.check_runs()
        assert len(w.reviews()) == 1
    assert again.status == "posted"
    assert (check["status"], check["conclusion"]) == ("completed", "neutral")


def test_review_command_gets_eyes_then_a_review(tmp_path: Path) -> None:
    with job_world(tmp_path) as w:
        comment = w.gh.add_issue_comment(REPO, w.number, "/review", association="COLLABORATOR")
        job = w.job(
            "command",
            comment_id=comment["id"],
            requested_by="alice",
            author_association="COLLABORATOR",
        )
        add_eyes_reaction(job, w.ctx)
        add_eyes_reaction(job, w.ctx)  # a retried task: still one reaction
        reactions = w.gh.reactions(REPO, comment["id"])
        w.stub.push(submit(PLANTED_BUG))
        outcome = run_review_job(job, w.ctx)
        [review] = w.reviews()
    assert [r["content"] for r in reactions] == ["eyes"]
    assert outcome.status == "posted"
    marker = parse_marker(review["body"])
    assert marker is not None and marker.trigger == "command"


@pytest.mark.parametrize("association", ["MEMBER", "COLLABORATOR"])
def test_review_command_by_a_read_only_member_gets_no_eyes_and_no_review(
    tmp_path: Path, association: str
) -> None:
    """The webhook let the association through; the worker's permission read says no."""
    with job_world(tmp_path) as w:
        w.gh.set_permission(REPO, "rita", "read")
        comment = w.gh.add_issue_comment(
            REPO, w.number, "/review", user="rita", association=association
        )
        job = w.job(
            "command",
            comment_id=comment["id"],
            requested_by="rita",
            author_association=association,
        )
        w.reset_calls()
        add_eyes_reaction(job, w.ctx)
        outcome = run_review_job(job, w.ctx)
        assert w.gh.reactions(REPO, comment["id"]) == []
        assert w.reviews() == [] and w.check_runs() == [] and w.stub.requests == []
        # One permission read (the answer kept for the job), no write of any kind.
        assert w.api_calls() == [("GET", f"/repos/{REPO}/collaborators/rita/permission")]
    assert (outcome.status, outcome.detail) == ("skipped", "/review by rita, who may not write")


def test_review_command_by_an_association_the_repository_does_not_allow(tmp_path: Path) -> None:
    config = CONFIG + '[github]\nallowed_associations = ["OWNER"]\n'
    with job_world(tmp_path, base_files={".gitneural.toml": config}) as w:
        job = w.job("command", author_association="MEMBER", comment_id=None)
        outcome = run_review_job(job, w.ctx)
        assert w.reviews() == [] and w.check_runs() == [] and w.stub.chat_requests == []
    assert outcome.status == "skipped"
    assert "MEMBER" in outcome.detail


def test_synchronize_reviews_only_the_new_commit(tmp_path: Path) -> None:
    with job_world(tmp_path) as w:
        w.stub.push(submit(PLANTED_BUG))
        first_head = w.gh.head_sha(REPO, w.number)
        run_review_job(w.job("opened"), w.ctx)
        w.gh.push(REPO, "feature", {"calc.py": "def half(n):\n    return n / 2.0\n"})
        w.stub.push(submit(CALC_BUG, PLANTED_BUG))
        w.reset_calls()
        outcome = run_review_job(w.job("synchronize"), w.ctx)
        calls = w.api_calls()
        _, second = sorted(w.reviews(), key=lambda r: r["id"])
        prompt = json.dumps(w.stub.chat_requests[-1].body["messages"])
    assert outcome.status == "posted"
    assert [c["path"] for c in second["comments"]] == ["calc.py"]
    assert "```suggestion\n    return n // 2\n```" in second["comments"][0]["body"]
    marker = parse_marker(second["body"])
    assert marker is not None and marker.since == first_head
    assert "changes since" in second["body"]
    # Only the new commit went to the model: people.py's planted bug is not in it.
    assert "calc.py" in prompt and "age > 18" not in prompt
    # The six of every posted review, and the earlier threads in one GraphQL query.
    assert len(calls) == 7 and calls.count(("POST", "/graphql")) == 1


def test_a_finding_posted_before_is_not_posted_again(tmp_path: Path) -> None:
    with job_world(tmp_path) as w:
        w.stub.push(submit(PLANTED_BUG))
        first = run_review_job(w.job("opened"), w.ctx)
        other = dict(PLANTED_BUG, start_line=5, end_line=5, severity="minor", suggestion=None)
        other["title"] = "greet builds strings by concatenation"
        other["evidence"] = "def greet(name):"
        w.gh.push(REPO, "feature", {"people.py": PLANTED.replace("'hi ' + name", "'hi ' +name")})
        w.stub.push(submit(PLANTED_BUG, other))
        outcome = run_review_job(w.job("command", full=True), w.ctx)
        second = next(r for r in w.reviews() if r["id"] != first.review_id)
        check = max(w.check_runs(), key=lambda c: c["id"])
    assert outcome.status == "posted"
    assert [c["line"] for c in second["comments"]] == [5]
    assert "1 finding already reported earlier, not repeated" in second["body"]
    marker = parse_marker(second["body"])
    assert marker is not None and marker.since is None and len(marker.fingerprints) == 1
    assert "1 already reported earlier" in check["output"]["summary"]


def test_force_pushed_pr_is_reviewed_whole_again(tmp_path: Path) -> None:
    with job_world(tmp_path) as w:
        w.stub.push(submit(PLANTED_BUG))
        run_review_job(w.job("opened"), w.ctx)
        w.gh.force_push(REPO, "feature", files={"people.py": PLANTED, "calc.py": "x = 1\n"})
        w.stub.push(submit())
        outcome = run_review_job(w.job("synchronize"), w.ctx)
        latest = max(w.reviews(), key=lambda r: r["id"])
    assert outcome.status == "posted"
    marker = parse_marker(latest["body"])
    assert marker is not None and marker.since is None
    assert "no findings" in latest["body"]


def test_settings_come_from_the_default_branch_not_the_pr(tmp_path: Path) -> None:
    disable = '[github]\nauto_review = false\n[review]\neffort = "max"\n'
    pr_files = {"people.py": PLANTED, ".gitneural.toml": disable}
    with job_world(tmp_path, pr_files=pr_files) as w:
        w.stub.push(submit(PLANTED_BUG))
        outcome = run_review_job(w.job("opened"), w.ctx)
        [chat] = w.stub.chat_requests
    assert outcome.status == "posted"
    assert chat.body["reasoning_effort"] == "low"


def test_auto_review_off_on_the_default_branch_skips(tmp_path: Path) -> None:
    config = CONFIG + "[github]\nauto_review = false\n"
    with job_world(tmp_path, base_files={".gitneural.toml": config}) as w:
        outcome = run_review_job(w.job("opened"), w.ctx)
        assert w.reviews() == [] and w.check_runs() == []
    assert outcome.status == "skipped" and "auto_review" in outcome.detail


def test_drafts_are_skipped_unless_configured(tmp_path: Path) -> None:
    with job_world(tmp_path, draft=True) as w:
        skipped = run_review_job(w.job("opened"), w.ctx)
        w.stub.push(submit(PLANTED_BUG))
        asked = run_review_job(w.job("command"), w.ctx)  # /review on a draft: asked for
    assert skipped.status == "skipped" and "draft" in skipped.detail
    assert asked.status == "posted"
    config = CONFIG + "[github]\nreview_drafts = true\n"
    with job_world(tmp_path / "2", base_files={".gitneural.toml": config}, draft=True) as w:
        w.stub.push(submit())
        assert run_review_job(w.job("opened"), w.ctx).status == "posted"


def test_check_conclusion_failure_at_the_configured_severity(tmp_path: Path) -> None:
    config = CONFIG + '[github]\ncheck_conclusion = "failure"\ncheck_fail_on = "major"\n'
    with job_world(tmp_path, base_files={".gitneural.toml": config}) as w:
        w.stub.push(submit(PLANTED_BUG))
        run_review_job(w.job("opened"), w.ctx)
        [check] = w.check_runs()
    assert check["conclusion"] == "failure"


@pytest.mark.parametrize("files", [1, 300])
def test_api_calls_per_review_do_not_grow_with_the_pr(tmp_path: Path, files: int) -> None:
    changed = {f"src/mod{i:03}.py": f"VALUE_{i} = {i}\n" for i in range(files - 1)}
    changed["people.py"] = PLANTED
    with job_world(tmp_path, pr_files=changed) as w:
        w.stub.push(submit(PLANTED_BUG))
        w.reset_calls()
        outcome = run_review_job(w.job("opened"), w.ctx)
        calls = w.api_calls()
        git = w.gh.requests(kind="git")
    assert outcome.status == "posted"
    print(f"\nAPI calls for a {files}-file PR: {len(calls)} ({calls})")
    assert len(calls) == 6
    assert all("/files" not in path for _, path in calls)  # the code came by git
    assert git


def test_agentic_review_reads_the_pr_head_from_the_mirror(tmp_path: Path) -> None:
    config = '[review]\neffort = "max"\n'
    with job_world(tmp_path, base_files={".gitneural.toml": config}) as w:
        w.stub.push(
            Reply(reasoning="Who calls it?", tool_calls=[("read_file", {"path": "people.py"})]),
            submit(PLANTED_BUG),
        )
        outcome = run_review_job(w.job("opened"), w.ctx)
        first, second = w.stub.chat_requests
        [review] = w.reviews()
    assert outcome.status == "posted" and len(review["comments"]) == 1
    assert first.body["reasoning_effort"] == "max"
    tool_answer = next(m for m in second.body["messages"] if m["role"] == "tool")
    assert "age > 18" in tool_answer["content"]  # the PR's head, not the base


def test_a_gate_fails_a_pull_request_padded_past_the_size_cap(tmp_path: Path) -> None:
    # Branch protection counts "skipped" as passing: padding the change past the cap
    # must not turn the gate's failure into a pass.
    gate = '[github]\ncheck_conclusion = "failure"\n'
    cases = ((tmp_path / "gate", gate, True), (tmp_path / "no", "[github]\n", False))
    for where, extra, blocked in cases:
        config = CONFIG + extra + "max_review_lines = 1\n"
        with job_world(where, base_files={".gitneural.toml": config}) as w:
            outcome = run_review_job(w.job("opened"), w.ctx)
            [check] = w.check_runs()
            assert w.reviews() == [] and w.stub.chat_requests == []
        assert outcome.status == "skipped"
        assert check["status"] == "completed"
        summary = check["output"]["summary"]
        assert "more than github.max_review_lines = 1" in summary
        if blocked:
            assert check["conclusion"] == "failure"
            assert 'github.check_conclusion = "failure"' in summary
        else:
            assert check["conclusion"] == "skipped"

"""Review jobs at the edges: jobs made by the webhook from GitHub's own payloads, many
annotations, findings outside the diff, base-branch merges, tokens dying mid-job, the
eyes reaction, and the worker's settings from the environment."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pygit2
import pytest

from bot.render.github import parse_marker
from bot.store import upgrade
from bot.usecases.review.run import (
    JobContext,
    TransientJobError,
    add_eyes_reaction,
    run_review_job,
)
from bot.web.events import route
from bot.web.settings import WebSettings
from tests.support.job_world import REPO, job_world, submit
from tests.support.planted import PLANTED, PLANTED_BUG
from tests.support.webhooks import comment, variant

LONG = "".join(f"value_{i} = {i}\n" for i in range(1, 61))


def test_jobs_the_webhook_makes_from_github_payloads_are_reviewed(tmp_path: Path) -> None:
    settings = WebSettings(webhook_secret="s", bot_login="gitneural[bot]")
    with job_world(tmp_path) as w:
        head = w.gh.head_sha(REPO, w.number)
        opened = variant(
            "pull_request.opened.payload.json",
            **{
                "repository.full_name": REPO,
                "number": w.number,
                "pull_request.number": w.number,
                "pull_request.head.sha": head,
            },
        )
        asked = w.gh.add_issue_comment(REPO, w.number, "/review effort=low full")
        command = comment(
            "/review effort=low full",
            **{
                "repository.full_name": REPO,
                "issue.number": w.number,
                "comment.id": asked["id"],
                "comment.user.login": asked["user"]["login"],  # alice, who may write
            },
        )
        auto = route("pull_request", opened, "11111111-aaaa", settings).job
        asked_job = route("issue_comment", command, "22222222-bbbb", settings).job
        assert auto is not None and asked_job is not None
        w.stub.push(submit(PLANTED_BUG), submit(PLANTED_BUG))
        first = run_review_job(auto, w.ctx)
        add_eyes_reaction(asked_job, w.ctx)
        second = run_review_job(asked_job, w.ctx)
        reviews = sorted(w.reviews(), key=lambda r: r["id"])
        reactions = w.gh.reactions(REPO, asked["id"])
    assert (first.status, second.status) == ("posted", "posted")
    markers = [parse_marker(r["body"]) for r in reviews]
    assert [(m.trigger, m.delivery) for m in markers if m] == [
        ("opened", "11111111-aaaa"),
        ("command", "22222222-bbbb"),
    ]
    assert [r["content"] for r in reactions] == ["eyes"]
    # The full re-review found the same bug again: it is not posted a second time.
    assert reviews[1]["comments"] == []
    assert "already reported earlier" in reviews[1]["body"]


def test_more_than_50_annotations_take_several_patches(tmp_path: Path) -> None:
    config = '[review]\neffort = "low"\nmax_comments = 60\n'
    changed = "".join(f"value_{i} = {i + 1}\n" for i in range(1, 61))
    findings = [
        dict(
            PLANTED_BUG,
            path="long.py",
            start_line=i,
            end_line=i,
            suggestion=None,
            severity="nit",
            title=f"Constant {i} is off by one",
            evidence=f"value_{i} = {i + 1}",
        )
        for i in range(1, 56)
    ]
    base = {".gitneural.toml": config, "long.py": LONG}
    with job_world(tmp_path, base_files=base, pr_files={"long.py": changed}) as w:
        w.stub.push(submit(*findings))
        outcome = run_review_job(w.job("opened"), w.ctx)
        [check] = w.check_runs()
        patches = w.gh.requests("PATCH", f"/repos/{REPO}/check-runs/*")
        [review] = w.reviews()
    assert outcome.status == "posted"
    assert len(review["comments"]) == 55
    assert len(check["annotations"]) == 55
    assert [len(p.json["output"].get("annotations", [])) for p in patches] == [50, 5]
    assert patches[0].json["status"] == "completed"


def test_a_finding_outside_the_diff_is_listed_in_the_body_with_a_link(tmp_path: Path) -> None:
    far = dict(PLANTED_BUG, path="long.py", start_line=40, end_line=41, suggestion=None)
    far["evidence"] = "value_40 = 40\nvalue_41 = 41"
    far["title"] = "The table below no longer matches"
    changed = LONG.replace("value_2 = 2\n", "value_2 = 3\n")
    with job_world(tmp_path, base_files={"long.py": LONG}, pr_files={"long.py": changed}) as w:
        w.stub.push(submit(far))
        head = w.gh.head_sha(REPO, w.number)
        outcome = run_review_job(w.job("opened"), w.ctx)
        [review] = w.reviews()
    assert outcome.status == "posted"
    assert review["comments"] == []
    assert "The table below no longer matches" in review["body"]
    assert f"/octo/app/blob/{head}/long.py#L40-L41" in review["body"]
    marker = parse_marker(review["body"])
    assert marker is not None and len(marker.fingerprints) == 1


def test_merging_the_base_branch_into_the_pr_is_not_new_work(tmp_path: Path) -> None:
    with job_world(tmp_path) as w:
        w.stub.push(submit(PLANTED_BUG))
        run_review_job(w.job("opened"), w.ctx)
        main = w.gh.push(REPO, "main", {"README.md": "# app, version 2\n"})
        git = w.gh.store.repo(REPO).git()
        feature = w.gh.branch_sha(REPO, "feature")
        assert feature is not None
        index = git.merge_commits(feature, main)
        sig = pygit2.Signature("Dev", "dev@example.com")
        merge = git.create_commit(
            None,
            sig,
            sig,
            "Merge main",
            index.write_tree(git),
            [pygit2.Oid(hex=feature), pygit2.Oid(hex=main)],
        )
        w.gh.force_push(REPO, "feature", sha=str(merge))
        outcome = run_review_job(w.job("synchronize"), w.ctx)
        assert len(w.reviews()) == 1 and len(w.stub.chat_requests) == 1
        latest = max(w.check_runs(), key=lambda c: c["id"])
    assert outcome.status == "nothing-new"
    assert (latest["conclusion"], latest["output"]["title"]) == ("neutral", "Nothing new to review")


def test_tokens_dying_mid_job_are_minted_again(tmp_path: Path) -> None:
    with job_world(tmp_path) as w:
        w.stub.push(submit(PLANTED_BUG), submit(PLANTED_BUG))
        w.reset_calls()
        w.gh.expire_tokens(1)  # the cached token dies before the first request
        first = run_review_job(w.job("opened"), w.ctx)
        api_refused = [r for r in w.gh.requests(kind="api") if r.status == 401]
        # ... and, for the next job, between reading the reviews and the git fetch.
        w.gh.push(REPO, "feature", {"people.py": PLANTED + "# more\n"})
        w.gh.when("GET", f"/repos/{REPO}/pulls/1/reviews", "expire_tokens", 1)
        w.gh.clear_requests()
        second = run_review_job(w.job("synchronize"), w.ctx)
        mints = w.gh.requests("POST", "/app/installations/1/access_tokens")
        git_refused = [r for r in w.gh.requests(kind="git") if r.status == 401]
    assert (first.status, second.status) == ("posted", "posted")
    assert len(api_refused) == 1  # one read refused, then done with a new token
    # libgit2 asks anonymously first (401) each time; the dead token's 401 is the extra one.
    assert len(git_refused) == 3 and len(mints) == 1


def test_eyes_on_a_deleted_comment_is_quiet_and_outages_are_retried(tmp_path: Path) -> None:
    with job_world(tmp_path) as w:
        # alice may write (tests.support.people): the reaction is tried.
        gone = w.job("command", comment_id=987654, requested_by="alice")
        add_eyes_reaction(gone, w.ctx)  # 404: nothing to do
        add_eyes_reaction(w.job("command", requested_by="alice"), w.ctx)  # no comment id
        asked = w.gh.add_issue_comment(REPO, w.number, "/review")
        path = f"/repos/{REPO}/issues/comments/{asked['id']}/reactions"
        w.gh.fail("POST", path, status=503)
        with pytest.raises(TransientJobError):
            add_eyes_reaction(w.job("command", comment_id=asked["id"], requested_by="alice"), w.ctx)
        assert w.gh.reactions(REPO, asked["id"]) == []


def test_worker_context_from_the_environment(tmp_path: Path) -> None:
    with job_world(tmp_path) as w:
        env: dict[str, Any] = {
            **w.gh.env(),
            "KIMI_API_KEY": w.stub.api_key,
            "KIMI_BASE_URL": w.stub.base_url,
            "GITNEURAL_DATA_DIR": str(tmp_path / "data"),
            "GITNEURAL_BOT_LOGIN": w.gh.bot_login,
        }
        ctx = JobContext.from_env(env)
        ctx.github_pacing = False
        assert ctx.store is not None
        upgrade(ctx.store)  # as `gitneural worker` does at start-up, before any job
        w.stub.push(submit(PLANTED_BUG))
        outcome = run_review_job(w.job("opened"), ctx)
    assert outcome.status == "posted"
    assert (ctx.data_dir, ctx.bot_login) == (tmp_path / "data", w.gh.bot_login)
    assert ctx.mirrors.root == tmp_path / "data" / "mirrors"
    assert any((tmp_path / "data" / "mirrors").rglob("*.git"))
    assert "PRIVATE KEY" not in repr(ctx) and w.stub.api_key not in repr(ctx)

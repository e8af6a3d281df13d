"""Where a dismissal holds, job by job against the fake GitHub and the K3 stub: the PR's
author without write access resolving GitNeural's thread (the ``resolved`` webhook's job)
or reacting 👎 (read by the next review) holds the finding back on that PR only, and the
review body says so; another PR with the same code gets the finding. A writer's
dismissal holds it back on both."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bot.commands.dispatch import run_conversation
from bot.jobs import ConversationJob
from bot.render.conversation import parse_finding_marker
from bot.store.findings import stored_finding
from bot.usecases.review.run import run_review_job
from tests.support.job_world import REPO, World, job_world, submit
from tests.support.planted import PLANTED, PLANTED_BUG

HERE = "1 finding held back on this pull request: dismissed by its author"
EVERYWHERE = "1 finding not repeated: dismissed earlier"


def _top(w: World, number: int) -> dict[str, Any]:
    [top] = [
        c
        for c in w.gh.review_comments(REPO, number)
        if c["user"]["login"] == w.gh.bot_login and c.get("in_reply_to_id") is None
    ]
    return top


def _dismiss(w: World, how: str, who: str) -> dict[str, Any]:
    """GitNeural's finding thread on the PR, dismissed by ``who``: resolved (and the
    ``resolved`` webhook's job run), or 👎 (seen by the next review)."""
    top = _top(w, w.number)
    if how == "resolved":
        w.gh.resolve_thread(top["id"], user=who)
        job = ConversationJob(
            installation_id=1,
            repo=REPO,
            pr_number=w.number,
            trigger="resolved",
            comment_id=top["id"],
            delivery_id=f"resolved-{who}",
            requested_by=who,
        )
        assert run_conversation(job, w.ctx).status == "dismissed"
    else:
        w.gh.react_to_review_comment(REPO, top["id"], "-1", user=who)
    return top


@pytest.mark.parametrize("how", ["resolved", "thumbs_down"])
@pytest.mark.parametrize(
    ("who", "writes"), [("octocat", False), ("alice", True)], ids=["author", "writer"]
)
def test_a_dismissal_holds_where_its_author_may_write(
    tmp_path: Path, how: str, who: str, writes: bool
) -> None:
    with job_world(tmp_path) as w:
        # octocat opened the PR (the fake's default author) and may only read; alice may
        # write (tests.support.people).
        w.stub.push(submit(PLANTED_BUG))
        assert run_review_job(w.job("opened"), w.ctx).status == "posted"
        top = _dismiss(w, how, who)

        # This PR: held back either way; the body says where the dismissal holds.
        w.stub.push(submit(PLANTED_BUG))
        again = run_review_job(w.job("command", full=True, comment_id=None), w.ctx)
        assert again.publication is not None and again.publication.inline == []
        assert len(again.publication.held) == 1
        body = again.publication.draft.body
        assert (EVERYWHERE in body, HERE in body) == (writes, not writes)
        marker = parse_finding_marker(top["body"])
        assert marker is not None
        repo_id = w.gh.repo_json(REPO)["id"]
        row = stored_finding(w.ctx.ensure_store(), repo_id, w.number, marker.fingerprint)
        assert row is not None and (row.state, row.dismissed_by) == ("dismissed", who)
        assert row.dismissal_scope == ("repository" if writes else "pull_request")

        # Another PR, by someone else, with the same code: the same finding.
        w.gh.push(REPO, "feature-two", {"people.py": PLANTED}, "The same change again")
        other = w.gh.create_pull(REPO, head="feature-two", title="Again", user="dora")
        w.stub.push(submit(PLANTED_BUG))
        later = run_review_job(
            w.job("opened", pr_number=other, head_sha=w.gh.head_sha(REPO, other)), w.ctx
        )
        assert later.status == "posted" and later.publication is not None
        if writes:
            assert later.publication.inline == [] and len(later.publication.held) == 1
            assert EVERYWHERE in later.publication.draft.body
            assert [c for c in w.gh.review_comments(REPO, other)] == []
        else:
            assert len(later.publication.inline) == 1 and later.publication.held == []
            [posted] = w.gh.review_comments(REPO, other)
            assert parse_finding_marker(posted["body"]) == marker


def test_a_writers_dismissal_widens_the_authors(tmp_path: Path) -> None:
    """The author resolved the thread (this PR only); a writer's 👎 later holds it back in
    the whole repository."""
    with job_world(tmp_path) as w:
        w.stub.push(submit(PLANTED_BUG))
        run_review_job(w.job("opened"), w.ctx)
        top = _dismiss(w, "resolved", "octocat")
        w.gh.react_to_review_comment(REPO, top["id"], "-1", user="bob")
        w.stub.push(submit(PLANTED_BUG))
        again = run_review_job(w.job("command", full=True, comment_id=None), w.ctx)
        assert again.publication is not None and EVERYWHERE in again.publication.draft.body
        marker = parse_finding_marker(top["body"])
        assert marker is not None
        repo_id = w.gh.repo_json(REPO)["id"]
        row = stored_finding(w.ctx.ensure_store(), repo_id, w.number, marker.fingerprint)
        assert row is not None and (row.dismissed_by, row.dismissal_scope) == ("bob", "repository")

"""A review's memory of the PR's earlier findings, job by job against the fake GitHub and
the K3 stub: dismissals (a thread resolved by a person, a 👎 by the author or a writer),
held back on the PR and on later PRs of the repository, fixed findings' threads resolved
once, and the gate over every finding still open."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bot.commands.dispatch import run_conversation
from bot.jobs import ConversationJob
from bot.render.conversation import parse_finding_marker
from bot.store.finding_states import pull_findings
from bot.store.findings import stored_finding
from bot.usecases.review.run import TransientJobError, run_review_job
from tests.support.job_world import CONFIG, REPO, World, job_world, submit
from tests.support.planted import PLANTED, PLANTED_BUG

GATE = CONFIG + '[github]\ncheck_conclusion = "failure"\n'
FIXED = PLANTED.replace("age > 18", "age >= 18")


def _top(w: World, number: int | None = None) -> dict[str, Any]:
    """GitNeural's one inline comment on the PR: its finding's thread."""
    [top] = [
        c
        for c in w.gh.review_comments(REPO, number or w.number)
        if c["user"]["login"] == w.gh.bot_login and c.get("in_reply_to_id") is None
    ]
    return top


def _replies(w: World, top: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for c in w.gh.review_comments(REPO, w.number) if c.get("in_reply_to_id") == top["id"]]


def _review(w: World, trigger: str = "opened", **kwargs: Any) -> Any:
    return run_review_job(w.job(trigger, **kwargs), w.ctx)


def _summary(w: World) -> tuple[str, str]:
    run = max(w.check_runs(), key=lambda r: r["id"])
    return run["conclusion"], run["output"]["summary"]


def _second_pull(w: World, people: str = PLANTED) -> int:
    w.gh.push(REPO, "feature-two", {"people.py": people}, "Tighten is_adult again")
    return w.gh.create_pull(REPO, head="feature-two", title="Again", body="Please")


def test_a_thread_resolved_by_a_person_is_dismissed_here_and_on_later_prs(tmp_path: Path) -> None:
    with job_world(tmp_path) as w:
        w.stub.push(submit(PLANTED_BUG))
        assert _review(w).status == "posted"
        top = _top(w)
        w.gh.resolve_thread(top["id"], user="alice")
        w.stub.push(submit(PLANTED_BUG))
        full = _review(w, "command", full=True, comment_id=None)
        assert full.status == "posted" and full.publication is not None
        assert full.publication.inline == [] and len(full.publication.held) == 1
        _conclusion, summary = _summary(w)
        assert "1 finding not repeated: dismissed earlier" in summary
        repo_id = w.gh.repo_json(REPO)["id"]
        row = stored_finding(w.ctx.ensure_store(), repo_id, w.number, top_fingerprint(top))
        assert row is not None and (row.state, row.dismissal_reason) == ("dismissed", "resolved")
        assert (row.dismissed_by, row.comment_id) == ("alice", top["id"])
        # A later PR with the same code and the same finding: held back, not posted.
        same = _second_pull(w)
        w.stub.push(submit(PLANTED_BUG))
        later = run_review_job(
            w.job("opened", pr_number=same, head_sha=w.gh.head_sha(REPO, same)), w.ctx
        )
        assert later.publication is not None and later.publication.inline == []
        assert len(later.publication.held) == 1
        # Different code at the finding: another fingerprint, posted.
        other = PLANTED.replace("age > 18", "age > 18  # strict")
        w.gh.push(REPO, "feature-three", {"people.py": other}, "Other code")
        third = w.gh.create_pull(REPO, head="feature-three", title="Third", body="")
        bug = {**PLANTED_BUG, "evidence": "    return age > 18  # strict"}
        w.stub.push(submit(bug))
        posted = run_review_job(
            w.job("opened", pr_number=third, head_sha=w.gh.head_sha(REPO, third)), w.ctx
        )
        assert posted.publication is not None and len(posted.publication.inline) == 1


def top_fingerprint(top: dict[str, Any]) -> str:
    marker = parse_finding_marker(top["body"])
    assert marker is not None
    return marker.fingerprint


def test_a_thumbs_down_counts_from_the_author_or_a_writer_only(tmp_path: Path) -> None:
    with job_world(tmp_path) as w:
        w.gh.set_permission(REPO, "wendy", "write")
        w.stub.push(submit(PLANTED_BUG))
        _review(w)
        top = _top(w)
        w.gh.react_to_review_comment(REPO, top["id"], "-1", user="eve")  # NONE: nothing
        w.stub.push(submit(PLANTED_BUG))
        w.reset_calls()
        kept = _review(w, "command", full=True, comment_id=None)
        assert kept.publication is not None and kept.publication.held == []
        reads = [p for m, p in w.api_calls() if p.endswith("/permission")]
        assert reads == [f"/repos/{REPO}/collaborators/eve/permission"]
        store, repo_id = w.ctx.ensure_store(), w.gh.repo_json(REPO)["id"]
        row = stored_finding(store, repo_id, w.number, top_fingerprint(top))
        assert row is not None and row.state == "open" and row.comment_id == top["id"]
        # The PR's author (octocat, read access) says no: dismissed on this PR only (one
        # permission read says which; eve's answer is kept).
        w.gh.react_to_review_comment(REPO, top["id"], "-1", user="octocat")
        w.stub.push(submit(PLANTED_BUG))
        w.reset_calls()
        held = _review(w, "command", full=True, comment_id=None)
        assert held.publication is not None and len(held.publication.held) == 1
        reads = [p for _, p in w.api_calls() if p.endswith("/permission")]
        assert reads == [f"/repos/{REPO}/collaborators/octocat/permission"]
        row = stored_finding(store, repo_id, w.number, top_fingerprint(top))
        assert row is not None and (row.state, row.dismissal_reason, row.dismissed_by) == (
            "dismissed",
            "thumbs_down",
            "octocat",
        )
        assert row.dismissal_scope == "pull_request"
        # A writer's 👎 on another PR's finding counts too.
        second = _second_pull(w, PLANTED.replace("'hi '", "'hello '"))
        w.stub.push(submit({**PLANTED_BUG, "title": "Adults start at 18"}))
        run_review_job(
            w.job("opened", pr_number=second, head_sha=w.gh.head_sha(REPO, second)), w.ctx
        )
        other = _top(w, second)
        w.gh.react_to_review_comment(REPO, other["id"], "-1", user="wendy")
        w.stub.push(submit({**PLANTED_BUG, "title": "Adults start at 18"}))
        again = run_review_job(
            w.job("command", pr_number=second, full=True, comment_id=None), w.ctx
        )
        assert again.publication is not None and len(again.publication.held) == 1


def test_a_push_fixing_a_finding_resolves_its_thread_once(tmp_path: Path) -> None:
    with job_world(tmp_path, base_files={".gitneural.toml": GATE}) as w:
        w.stub.push(submit(PLANTED_BUG))
        first = _review(w)
        assert _summary(w)[0] == "failure" and first.status == "posted"
        top = _top(w)
        # A push elsewhere: the thread is left alone, and the gate still fails.
        w.gh.push(REPO, "feature", {"README.md": "# app\n\nMore words.\n"})
        w.stub.push(submit())
        elsewhere = _review(w, "synchronize")
        assert elsewhere.status == "posted"
        conclusion, summary = _summary(w)
        assert conclusion == "failure" and "1 still open from earlier reviews" in summary
        assert _replies(w, top) == [] and not w.gh.thread_resolved(top["id"])
        # The push that fixes it (people.py back as it was: nothing new to review, but
        # the finding is fixed): one reply, the thread resolved, the gate passes.
        head = w.gh.push(REPO, "feature", {"people.py": FIXED})
        fixed = _review(w, "synchronize")
        assert fixed.status == "nothing-new" and _summary(w)[0] == "success"
        [reply] = _replies(w, top)
        assert reply["body"].startswith(f"Addressed in `{head[:7]}`.")
        assert reply["user"]["login"] == w.gh.bot_login and w.gh.thread_resolved(top["id"])
        # Reviewed again (another delivery, the same head): nothing more is said.
        w.stub.push(submit())
        _review(w, "command", full=True, comment_id=None)
        assert len(_replies(w, top)) == 1
        rows = pull_findings(w.ctx.ensure_store(), w.gh.repo_json(REPO)["id"], w.number)
        assert [(r.state, r.fixed_in) for r in rows] == [("fixed", head)]


def test_a_thread_someone_answered_is_left_to_them(tmp_path: Path) -> None:
    with job_world(tmp_path) as w:
        w.stub.push(submit(PLANTED_BUG))
        _review(w)
        top = _top(w)
        w.gh.add_thread_reply(REPO, w.number, top["id"], "I disagree: 18 is not adult here")
        w.gh.push(REPO, "feature", {"people.py": FIXED})
        _review(w, "synchronize")
        assert [r["user"]["login"] for r in _replies(w, top)] == ["alice"]
        assert not w.gh.thread_resolved(top["id"])


def test_a_finding_moved_by_a_push_above_it_stays_open_where_it_went(tmp_path: Path) -> None:
    with job_world(tmp_path, base_files={".gitneural.toml": GATE}) as w:
        w.stub.push(submit(PLANTED_BUG))
        _review(w)
        w.gh.push(REPO, "feature", {"people.py": "import os\n\n" + PLANTED})
        w.stub.push(submit())
        _review(w, "synchronize")
        rows = pull_findings(w.ctx.ensure_store(), w.gh.repo_json(REPO)["id"], w.number)
        assert {(r.path, r.state, r.start_line) for r in rows} >= {("people.py", "open", 4)}
        assert _summary(w)[0] == "failure"


def test_a_resolved_job_records_the_dismissal_once_and_posts_nothing(tmp_path: Path) -> None:
    with job_world(tmp_path) as w:
        w.stub.push(submit(PLANTED_BUG))
        _review(w)
        top = _top(w)
        theirs = w.gh.add_review_comment(REPO, w.number, "people.py", 2, "Hm", user="carol")

        def resolved(comment_id: int, delivery: str) -> ConversationJob:
            return ConversationJob(
                installation_id=1,
                repo=REPO,
                pr_number=w.number,
                trigger="resolved",
                comment_id=comment_id,
                delivery_id=delivery,
                requested_by="alice",
            )

        w.gh.resolve_thread(theirs["id"], user="carol")
        other = run_conversation(resolved(theirs["id"], "r-0"), w.ctx)
        assert (other.status, other.detail) == (
            "ignored",
            "the thread is not one of GitNeural's findings",
        )
        w.gh.resolve_thread(top["id"], user="alice")
        w.reset_calls()
        first = run_conversation(resolved(top["id"], "r-1"), w.ctx)
        assert first.status == "dismissed"
        assert w.api_calls() == [
            ("GET", f"/repos/{REPO}/pulls/{w.number}"),
            ("POST", "/graphql"),
            ("GET", f"/repos/{REPO}/collaborators/alice/permission"),  # the dismissal's scope
        ]
        again = run_conversation(resolved(top["id"], "r-1"), w.ctx)
        assert (again.status, again.detail) == ("ignored", "the finding was dismissed already")
        repo_id = w.gh.repo_json(REPO)["id"]
        row = stored_finding(w.ctx.ensure_store(), repo_id, w.number, top_fingerprint(top))
        assert row is not None and (row.dismissal_reason, row.dismissed_by) == ("resolved", "alice")
        assert _replies(w, top) == [] and w.gh.issue_comments(REPO, w.number) == []
        assert len(w.stub.chat_requests) == 1  # the review's: the job asked K3 nothing


def test_a_thread_resolved_after_its_lines_changed_dismisses_nothing(tmp_path: Path) -> None:
    with job_world(tmp_path) as w:
        w.stub.push(submit(PLANTED_BUG))
        _review(w)
        top = _top(w)
        w.gh.push(REPO, "feature", {"people.py": PLANTED.replace("age > 18", "age > 17")})
        w.gh.resolve_thread(top["id"], user="alice")
        job = ConversationJob(
            installation_id=1,
            repo=REPO,
            pr_number=w.number,
            trigger="resolved",
            comment_id=top["id"],
            delivery_id="r-outdated",
            requested_by="alice",
        )
        outcome = run_conversation(job, w.ctx)
        assert outcome.status == "ignored" and "outdated" in outcome.detail


def test_a_job_run_again_after_resolving_a_thread_does_not_reply_twice(tmp_path: Path) -> None:
    with job_world(tmp_path) as w:
        w.stub.push(submit(PLANTED_BUG))
        _review(w)
        top = _top(w)
        w.gh.push(REPO, "feature", {"people.py": PLANTED.replace("age > 18", "age >= 18  # ok")})
        job = w.job("synchronize")
        # The thread is resolved, then posting the review fails: the job is retried.
        w.gh.fail("POST", f"/repos/{REPO}/pulls/{w.number}/reviews", status=502, times=2)
        w.stub.push(submit())
        with pytest.raises(TransientJobError):
            run_review_job(job, w.ctx)
        assert len(_replies(w, top)) == 1 and w.gh.thread_resolved(top["id"])
        w.gh.unresolve_thread(top["id"])  # and a person reopened it meanwhile
        w.stub.push(submit())
        assert run_review_job(job, w.ctx).status == "posted"
        assert len(_replies(w, top)) == 1 and not w.gh.thread_resolved(top["id"])


#: Five rules, each broken on its own line by the PR, and fixed by one later push.
RULES = "".join(f"def rule_{n}(x):\n    return x > {n}\n\n\n" for n in range(5))
BROKEN = RULES.replace("x > ", "x >= ")
MENDED = RULES.replace("x > ", "x > 0 + ")


def _rule_bug(n: int) -> dict[str, Any]:
    line = 2 + 4 * n
    return {
        **PLANTED_BUG,
        "path": "rules.py",
        "start_line": line,
        "end_line": line,
        "title": f"rule_{n} now accepts {n}",
        "body": f"`>=` lets {n} through.",
        "suggestion": f"    return x > {n}",
        "evidence": f"    return x >= {n}",
    }


def test_one_push_fixing_five_findings_closes_them_in_one_request(tmp_path: Path) -> None:
    with job_world(tmp_path, base_files={"rules.py": RULES}, pr_files={"rules.py": BROKEN}) as w:
        w.stub.push(submit(*(_rule_bug(n) for n in range(5))))
        assert _review(w).status == "posted"
        tops = [
            c
            for c in w.gh.review_comments(REPO, w.number)
            if c["user"]["login"] == w.gh.bot_login and c.get("in_reply_to_id") is None
        ]
        assert len(tops) == 5
        head = w.gh.push(REPO, "feature", {"rules.py": MENDED})
        job = w.job("synchronize")
        w.stub.push(submit())
        w.reset_calls()
        assert run_review_job(job, w.ctx).status == "posted"
        calls = w.api_calls()
        # Every thread's reply and resolution in one GraphQL request, after the one
        # that read the threads.
        assert calls.count(("POST", "/graphql")) == 2 and len(calls) <= 8
        for top in tops:
            [reply] = _replies(w, top)
            assert reply["body"].startswith(f"Addressed in `{head[:7]}`.")
            assert reply["user"]["login"] == w.gh.bot_login and w.gh.thread_resolved(top["id"])
        rows = pull_findings(w.ctx.ensure_store(), w.gh.repo_json(REPO)["id"], w.number)
        assert [(r.state, r.fixed_in) for r in rows] == [("fixed", head)] * 5
        assert all(r.auto_resolved_at is not None for r in rows)
        # The job run again (a redelivery): its review is found, nothing is said twice.
        w.stub.push(submit())
        w.reset_calls()
        run_review_job(job, w.ctx)
        assert all(len(_replies(w, top)) == 1 for top in tops)
        assert ("POST", "/graphql") not in w.api_calls()


def test_threads_github_did_not_close_are_tried_again_once(tmp_path: Path) -> None:
    with job_world(tmp_path, base_files={"rules.py": RULES}, pr_files={"rules.py": BROKEN}) as w:
        w.stub.push(submit(*(_rule_bug(n) for n in range(2))))
        _review(w)
        tops = [
            c for c in w.gh.review_comments(REPO, w.number) if c["user"]["login"] == w.gh.bot_login
        ]
        head = w.gh.push(REPO, "feature", {"rules.py": MENDED})
        # The addressing request (the review's second GraphQL request, after the threads
        # query) fails: GitHub ran nothing, and the mutation is not sent again.
        w.gh.when("POST", "/graphql", "fail", "POST", "/graphql", status=502)
        w.stub.push(submit())
        w.reset_calls()
        assert _review(w, "synchronize").status == "posted"
        assert w.api_calls().count(("POST", "/graphql")) == 2
        assert all(_replies(w, t) == [] and not w.gh.thread_resolved(t["id"]) for t in tops)
        rows = pull_findings(w.ctx.ensure_store(), w.gh.repo_json(REPO)["id"], w.number)
        assert [(r.state, r.auto_resolved_at) for r in rows] == [("fixed", None)] * 2
        # The next review closes them: one reply each, resolved.
        w.gh.push(REPO, "feature", {"README.md": "# app\n\nMore.\n"})
        w.stub.push(submit())
        _review(w, "synchronize")
        for top in tops:
            [reply] = _replies(w, top)
            assert reply["body"].startswith(f"Addressed in `{head[:7]}`.")
            assert w.gh.thread_resolved(top["id"])

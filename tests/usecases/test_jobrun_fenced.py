"""A run that lost its job writes nothing more to GitHub, on every path that writes: the
"nothing new" push that fixed a finding (its thread's "Addressed in …" and resolution),
the quota notice of a failed review, and a conversation's notice after its last retry.

The lock is a real one (:class:`~workers.state.pr_lock.PRLock` on SQLite) asked by the
workers' real fence (:func:`workers.state.fencing.fence`); another worker takes the PR
over once this run has started its check run, as after a pause longer than the lease.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from bot.jobs import ConversationJob
from bot.usecases.conversation.dispatch import give_up
from bot.usecases.review.run import TransientJobError, run_review_job
from tests.fakes.k3 import Reply
from tests.support.conversation import answers_in_thread, gitneural_thread
from tests.support.job_world import CONFIG, REPO, World, job_world, submit
from tests.support.planted import PLANTED, PLANTED_BUG
from workers.state import fencing
from workers.state.pr_lock import PRLock, SQLitePRState

GATE = CONFIG + '[github]\ncheck_conclusion = "failure"\n'
FIXED = PLANTED.replace("age > 18", "age >= 18")
CHECKS = f"/repos/{REPO}/check-runs"


class Lock:
    """The PR's lock, held by this run until :meth:`take_over` gives it to another."""

    def __init__(self, root: Path) -> None:
        self.state = SQLitePRState(root / "state.sqlite3")
        self.lock = PRLock(self.state, f"{REPO}#1", lease=60)
        assert self.lock.acquire()
        self.fence = fencing.fence({"the PR's lock": self.lock})

    def take_over(self) -> None:
        # As if this run had paused past its lease and another worker took the PR.
        self.state.release(self.lock.key, self.lock.owner)
        assert self.state.acquire(self.lock.key, "another-worker", 60)

    def lost_once(self, happened: Callable[[], bool]) -> Callable[[], None]:
        """The run's fence, the PR taken over as soon as ``happened()``."""

        def fence() -> None:
            if happened() and self.lock.held():
                self.take_over()
            self.fence()

        return fence


@contextlib.contextmanager
def pr_lock(root: Path) -> Iterator[Lock]:
    lock = Lock(root)
    try:
        yield lock
    finally:
        lock.lock.release()


def writes(w: World) -> list[tuple[str, str]]:
    """Every request since ``reset_calls`` that changed something on GitHub (GraphQL
    queries and token minting left out)."""
    found = []
    for r in w.gh.requests(kind="api"):
        query = str((r.json or {}).get("query", "")) if isinstance(r.json, dict) else ""
        if r.method == "GET" or r.path.endswith("/access_tokens"):
            continue
        if r.path == "/graphql" and not query.lstrip().startswith("mutation"):
            continue
        found.append((r.method, r.path))
    return found


def _top(w: World) -> dict[str, object]:
    [top] = [
        c
        for c in w.gh.review_comments(REPO, w.number)
        if c["user"]["login"] == w.gh.bot_login and c.get("in_reply_to_id") is None
    ]
    return top


def test_nothing_new_after_the_lease_is_lost_closes_no_thread(tmp_path: Path) -> None:
    with job_world(tmp_path, base_files={".gitneural.toml": GATE}) as w, pr_lock(tmp_path) as lk:
        w.stub.push(submit(PLANTED_BUG))
        assert run_review_job(w.job("opened"), w.ctx).status == "posted"
        top = _top(w)
        # The push that fixes it: nothing new to review, the finding's thread to close.
        w.gh.push(REPO, "feature", {"people.py": FIXED})
        w.reset_calls()
        fence = lk.lost_once(lambda: bool(w.gh.requests("POST", CHECKS)))
        with pytest.raises(TransientJobError, match="no longer this run's"):
            run_review_job(w.job("synchronize"), w.ctx, fence=fence)
        # Only the check run it started before the PR was taken over: no reply, no
        # resolution, no completion (the check run is the other run's to finish).
        assert writes(w) == [("POST", CHECKS)]
        replies = [c for c in w.gh.review_comments(REPO, w.number) if c.get("in_reply_to_id")]
        assert replies == [] and not w.gh.thread_resolved(int(str(top["id"])))
        assert max(w.check_runs(), key=lambda r: r["id"])["status"] == "in_progress"
        # The run that holds the job now closes the thread, once: nothing was left claimed.
        assert run_review_job(w.job("synchronize"), w.ctx).status == "nothing-new"
        [reply] = [c for c in w.gh.review_comments(REPO, w.number) if c.get("in_reply_to_id")]
        assert reply["body"].startswith("Addressed in ")
        assert w.gh.thread_resolved(int(str(top["id"])))


def test_the_quota_notice_of_a_run_that_lost_its_lease_is_not_posted(tmp_path: Path) -> None:
    quota = Reply.http_error(429, "exceeded_current_quota_error", "Your account is out of credit")
    with job_world(tmp_path) as w, pr_lock(tmp_path) as lk:
        w.stub.push(quota)
        w.reset_calls()
        fence = lk.lost_once(lambda: bool(w.gh.requests("POST", CHECKS)))
        outcome = run_review_job(w.job("opened"), w.ctx, fence=fence)
        assert outcome.status == "failed" and "quota" in outcome.detail
        assert w.gh.issue_comments(REPO, w.number) == []
        assert writes(w) == [("POST", CHECKS)]
        [check] = w.check_runs()
        assert check["status"] == "in_progress"  # left to the run that holds the job


def _reply_job(w: World, reply: dict[str, object], top: dict[str, object]) -> ConversationJob:
    return ConversationJob(
        installation_id=1,
        repo=REPO,
        pr_number=w.number,
        trigger="reply",
        comment_id=int(str(reply["id"])),
        delivery_id=f"delivery-reply-{reply['id']}",
        in_reply_to=int(str(top["id"])),
        requested_by="alice",
        author_association=str(reply["author_association"]),
        created_at=str(reply["created_at"]),
    )


def test_give_up_posts_its_notice_only_while_the_lock_is_held(tmp_path: Path) -> None:
    with job_world(tmp_path) as w, pr_lock(tmp_path) as lk:
        top = gitneural_thread(w.gh, REPO, w.number)
        reply = w.gh.add_thread_reply(REPO, w.number, top["id"], "Why?", user="alice")
        job = _reply_job(w, reply, top)
        lk.take_over()
        w.reset_calls()
        assert give_up(job, w.ctx, "the model timed out", fence=lk.fence) is None
        assert writes(w) == [] and answers_in_thread(w.gh, REPO, w.number, top["id"]) == []
        # Never taken (the store could not be asked): nothing either.
        refused = fencing.refused("the comment's lock")
        assert give_up(job, w.ctx, "the model timed out", fence=refused) is None
        assert writes(w) == []
        # Held: the notice is posted where the answer would be.
        (tmp_path / "held").mkdir()
        with pr_lock(tmp_path / "held") as held:
            posted = give_up(job, w.ctx, "the model timed out", fence=held.fence)
        [notice] = answers_in_thread(w.gh, REPO, w.number, top["id"])
        assert posted == notice["id"] and "after several attempts" in notice["body"]

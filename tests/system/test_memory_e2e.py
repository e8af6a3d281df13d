"""Quiet by design, end to end: what a team dismissed never comes back, fixed findings'
threads are closed, and the gate counts every finding still open.

The deployments of the conversation tests (``gitneural serve --no-worker`` under gunicorn,
a real ``gitneural worker``; the embedded broker with the store on SQLite, Redis with the
store on PostgreSQL), the fake GitHub (REST, GraphQL, git) and the K3 stub. One scenario
per deployment walks every rule, each PR planting its own bug (its own fingerprint):

1. K3 withdraws a finding in its thread → ``/review full`` holds it back;
2. a person resolves a thread (``pull_request_review_thread`` ``resolved``) → held back;
3. a 👎 by a NONE user changes nothing; a 👎 by the PR's author (read access) → held
   back on that PR only, and the body says so;
4. a later PR with the same code and finding → not posted (dismissed by a writer or by
   K3); the same code as the author's dismissal, or different code → posted;
5. with ``check_conclusion = "failure"``: a critical finding fails the check; a push to
   another file leaves its thread alone and the check still fails; the push that fixes
   it gets one "Addressed" reply, the thread resolved, and the check passes.
"""

from __future__ import annotations

import uuid
from typing import Any

from tests.support.conversation import reply_payload
from tests.support.planted import PLANTED, PLANTED_BUG
from tests.support.services import CONFIG, REPO, outcomes
from tests.support.webhooks import variant
from tests.system.test_conversation_e2e import Deployment, deployment  # noqa: F401

GATE = CONFIG + '[github]\ncheck_conclusion = "failure"\n'
DISMISSED = "1 finding not repeated: dismissed earlier"
HERE = "1 finding held back on this pull request: dismissed by its author"


def _bug(n: int) -> dict[str, Any]:
    return {
        **PLANTED_BUG,
        "title": f"Off-by-one: {n}-year-olds are no longer adults",
        "evidence": f"    return age > {n}",
    }


class Scenario:
    def __init__(self, d: Deployment) -> None:
        self.d, self.w, self.gh = d, d.world, d.world.gh

    def pull(self, n: int) -> int:
        """A PR planting ``age > n`` in ``people.py``; the model reports it."""
        number = self.w.new_pull({"people.py": PLANTED.replace("age > 18", f"age > {n}")})
        self.w.answers[self.w.title(number)] = [_bug(n)]
        return number

    def review(self, event: str, payload: dict[str, Any]) -> tuple[str, str]:
        delivery = f"{event}-{uuid.uuid4().hex[:10]}"
        assert self.d.deliver(event, payload, delivery).status == 202
        [(status, _, detail)] = outcomes(self.d.worker, delivery)
        return status, detail

    def opened(self, number: int) -> dict[str, Any]:
        assert self.review("pull_request", self.w.opened(number))[0] == "posted"
        return self.top(number)

    def full(self, number: int) -> str:
        status, _ = self.review("issue_comment", self.w.comment(number, "/review full", "OWNER"))
        assert status == "posted"
        return str(self.check(number)["output"]["summary"])

    def top(self, number: int) -> dict[str, Any]:
        [top] = [
            c
            for c in self.gh.review_comments(REPO, number)
            if c["user"]["login"] == self.gh.bot_login and c.get("in_reply_to_id") is None
        ]
        return top

    def inline_of_last_review(self, number: int) -> list[dict[str, Any]]:
        mine = [r for r in self.w.reviews(number) if r["user"]["login"] == self.gh.bot_login]
        return list(max(mine, key=lambda r: r["id"])["comments"])

    def check(self, number: int) -> dict[str, Any]:
        runs = self.gh.check_runs(REPO, self.gh.head_sha(REPO, number))
        return max(runs, key=lambda r: r["id"])

    def replies(self, number: int, top: dict[str, Any]) -> list[dict[str, Any]]:
        comments = self.gh.review_comments(REPO, number)
        return [c for c in comments if c.get("in_reply_to_id") == top["id"]]


def test_dismissed_findings_stay_quiet_fixed_ones_are_closed_and_the_gate_holds(
    deployment: Deployment,  # noqa: F811
) -> None:
    s, gh = Scenario(deployment), deployment.world.gh
    gh.push(REPO, "main", {".gitneural.toml": GATE}, "Fail the check on critical findings")

    # 1. Withdrawn by K3 in the thread.
    withdrawn = s.pull(30)
    top = s.opened(withdrawn)
    reply = gh.add_thread_reply(REPO, withdrawn, top["id"], "This is intended: 30 is the rule")
    deployment.deliver("pull_request_review_comment", reply_payload(gh, REPO, withdrawn, reply))
    [(status, _, detail)] = deployment.answered(reply["id"])
    assert status == "answered" and "withdrawn" in detail
    summary = s.full(withdrawn)
    assert DISMISSED in summary and s.check(withdrawn)["conclusion"] == "success"

    # 2. Resolved by a person while its lines are unchanged.
    resolved = s.pull(31)
    top = s.opened(resolved)
    gh.resolve_thread(top["id"], user="alice")
    thread = variant(
        "pull_request_review_thread.resolved.payload.json",
        **{
            "thread.node_id": f"PRRT_{top['id']}",
            "thread.comments": [top],
            "pull_request.number": resolved,
            "repository.full_name": REPO,
            "installation.id": 1,
            "sender.login": "alice",
            "sender.type": "User",
        },
    )
    assert deployment.deliver("pull_request_review_thread", thread).status == 202
    [(status, _, _)] = deployment.answered(top["id"])
    assert status == "dismissed"
    assert DISMISSED in s.full(resolved)

    # 3. 👎: by a NONE user, nothing; by the PR's author, dismissed.
    disliked = s.pull(32)
    top = s.opened(disliked)
    gh.react_to_review_comment(REPO, top["id"], "-1", user="eve")
    summary = s.full(disliked)
    assert "dismissed earlier" not in summary and s.check(disliked)["conclusion"] == "failure"
    gh.react_to_review_comment(REPO, top["id"], "-1", user="octocat")  # the PR's author
    summary = s.full(disliked)
    assert HERE in summary and DISMISSED not in summary

    # 4. A later PR: the same code and finding are not posted; different code is.
    same = s.pull(30)
    status, _ = s.review("pull_request", deployment.world.opened(same))
    assert status == "posted" and s.inline_of_last_review(same) == []
    assert DISMISSED in s.check(same)["output"]["summary"]
    by_author = s.pull(32)  # the code whose finding only its PR's author dismissed
    s.opened(by_author)
    assert len(s.inline_of_last_review(by_author)) == 1
    different = s.pull(33)
    s.opened(different)
    assert len(s.inline_of_last_review(different)) == 1

    # 5. The gate, and a fixed finding's thread.
    gated = s.pull(34)
    top = s.opened(gated)
    assert s.check(gated)["conclusion"] == "failure"
    gh.push(REPO, gh.pull(REPO, gated)["head"]["ref"], {"README.md": "# app\n\nMore.\n"})
    s.w.answers[s.w.title(gated)] = []
    assert s.review("pull_request", deployment.world.opened(gated, "synchronize"))[0] == "posted"
    check = s.check(gated)
    assert check["conclusion"] == "failure" and "1 still open" in check["output"]["summary"]
    assert s.replies(gated, top) == [] and gh.thread_resolved(top["id"]) is None
    fixed = PLANTED.replace("age > 18", "age >= 34")
    head = gh.push(REPO, gh.pull(REPO, gated)["head"]["ref"], {"people.py": fixed})
    assert s.review("pull_request", deployment.world.opened(gated, "synchronize"))[0] == "posted"
    assert s.check(gated)["conclusion"] == "success"
    [addressed] = s.replies(gated, top)
    assert addressed["body"].startswith(f"Addressed in `{head[:7]}`.")
    assert gh.thread_resolved(top["id"]) == gh.bot_login

"""Memory and precision: the GitHub API calls one review costs, with and without earlier
threads on the pull request.

A review job runs in-process (``run_review_job``) against the fake GitHub and the K3 stub,
as the job tests run it. Measured: every API request the job made (REST and GraphQL; the
installation token, minted once an hour, left out)

- for the first review of a PR (no earlier thread: nothing to read);
- for a review after a push to another file, with 30 earlier GitNeural threads on the PR
  (a few with a 👎 by the PR's author, one resolved by a person): all of them read in one
  GraphQL query, their dismissals recorded, nothing asked per comment;
- the same with the push fixing one finding: one more request, the reply and the
  resolution of its thread in one GraphQL mutation.

Budget: issue 12 (at most 8 calls per review with 0 and with 30 earlier threads).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from benchmarks.common import BenchmarkError, Row, main, row
from tests.fakes.github.graphql import github_schema
from tests.support.conversation import gitneural_thread
from tests.support.job_world import REPO, World, job_world, submit
from tests.support.planted import PLANTED, PLANTED_BUG
from workers.jobrun import run_review_job

#: The budget names 30 earlier threads; a quick run measures the same (15 s in all).
THREADS = 30
CALLS_BUDGET = 8
#: The planted bug fixed, the file still part of the PR (so a review is posted).
FIXED = PLANTED.replace("age > 18", "age >= 18  # adults")


def _calls(w: World, trigger: str) -> int:
    w.reset_calls()
    outcome = run_review_job(w.job(trigger), w.ctx)
    if outcome.status not in ("posted", "nothing-new"):
        raise AssertionError(f"the review ended {outcome.status}: {outcome.detail}")
    return len(w.api_calls())


def _earlier_threads(w: World, threads: int) -> None:
    """One real review (its thread on the planted bug), and GitNeural threads up to
    ``threads``: some 👎 by the PR's author, one resolved by a person."""
    w.stub.push(submit(PLANTED_BUG))
    run_review_job(w.job("opened"), w.ctx)
    for n in range(threads - 1):
        top = gitneural_thread(w.gh, REPO, w.number, fingerprint=f"fp-bench-{n}")
        if n % 10 == 0:
            w.gh.react_to_review_comment(REPO, top["id"], "-1", user="octocat")
        if n == 5:
            w.gh.resolve_thread(top["id"], user="alice")


def _measure(root: Path, threads: int, fix: bool) -> int:
    with job_world(root) as w:
        if threads == 0:
            w.stub.push(submit(PLANTED_BUG))
            return _calls(w, "opened")
        _earlier_threads(w, threads)
        files = {"people.py": FIXED} if fix else {"README.md": "# app\n\nMore.\n"}
        w.gh.push(REPO, "feature", files)
        w.stub.push(submit())
        calls = _calls(w, "synchronize")
        resolved = [
            c for c in w.gh.review_comments(REPO, w.number) if w.gh.thread_resolved(c["id"])
        ]
        if len(resolved) != (2 if fix else 1):  # the one a person resolved, and the fixed one
            raise BenchmarkError(f"{len(resolved)} threads resolved")
        return calls


def run(quick: bool = False) -> list[Row]:
    threads = THREADS
    github_schema()  # the fake's own start-up, not GitNeural's
    rows: list[Row] = []
    cases = [
        ("first review, 0 earlier threads", 0, False),
        (f"after a push elsewhere, {threads} earlier threads", threads, False),
        (f"after a push fixing one finding, {threads} earlier threads", threads, True),
    ]
    for label, count, fix in cases:
        with tempfile.TemporaryDirectory(prefix="bench-memory-") as tmp:
            calls = _measure(Path(tmp), count, fix)
        holds = calls <= CALLS_BUDGET
        rows.append(
            row(f"GitHub API calls per review, {label}", calls, "", f"<= {CALLS_BUDGET}", holds)
        )
    return rows


if __name__ == "__main__":
    raise SystemExit(main(run))

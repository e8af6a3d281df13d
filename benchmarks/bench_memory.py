"""Memory and precision: the GitHub API calls one review costs, with and without earlier
threads on the pull request.

A review job runs in-process (``run_review_job``) against the fake GitHub and the K3 stub,
as the job tests run it. Measured: every API request the job made (REST and GraphQL; the
installation token, minted once an hour, left out)

- for the first review of a PR (no earlier thread: nothing to read);
- for a review after a push to another file, with 30 earlier GitNeural threads on the PR
  (a few with a 👎 by the PR's author, one resolved by a person): all of them read in one
  GraphQL query, their dismissals recorded, nothing asked per comment but the write
  access of the author and of the resolver (where their dismissals hold; kept ten
  minutes);
- the same with the push fixing one finding, and fixing five: one more request either
  way, every fixed thread's reply and resolution in one GraphQL mutation;
- a push elsewhere with three threads 👎 by writers other than the PR's author: one
  permission read each (at most three a review), and the findings dismissed;
- the review after that of three threads 👎 by people without write access: their
  answers, read by the review before, are kept ten minutes by the process, and not read
  again.

- (issue 21) a first review of a PR that says it closes issues: two that GitHub links
  (carried by one GraphQL query), and three named in the description of a PR into
  another branch, which GitHub does not link (read together by one GraphQL query).

Budget: issue 12, at most 8 calls per review with 0 and with 30 earlier threads, however
many findings a push fixed (up to 25 in one request); with 👎 givers other than the author
not judged in the last ten minutes, 8 plus their permission reads, at most 3 (and, since
issue 19, one read each for the author and the resolvers, once per ten minutes). Issue 21:
plus one query for all the linked issues the threads query did not carry (issue 31).
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from benchmarks.common import BenchmarkError, Row, row
from benchmarks.standalone import main
from bot.store.finding_states import pull_findings
from bot.usecases.review.dismissals import MAX_PERMISSION_READS
from bot.usecases.review.run import run_review_job
from tests.fakes.github.graphql import github_schema
from tests.support.conversation import gitneural_thread
from tests.support.job_world import REPO, World, job_world, submit
from tests.support.planted import ORIGINAL, PLANTED_BUG

#: The budget names 30 earlier threads; a quick run measures the same (25 s in all).
THREADS = 30
CALLS_BUDGET = 8
#: Five rules the PR breaks, one finding each (the planted bug is the first).
RULES = "".join(f"def rule_{n}(x):\n    return x > {n}\n\n\n" for n in range(4))
BROKEN = RULES.replace("x > ", "x >= ")
#: The findings fixed, the files still part of the PR (so a review is posted).
FIXED = ORIGINAL.replace("age >= 18", "age >= 18  # adults")
MENDED = RULES.replace("x > ", "x > 0 + ")
GIVERS = ("wendy", "walt", "wilma")


@dataclass(frozen=True)
class Case:
    label: str
    threads: int
    fixed: int = 0
    #: Threads 👎 by people other than the author: 3, writers or not.
    givers: int = 0
    write: bool = True
    #: Measure the review after the first push's (the same givers, their answers kept).
    again: bool = False
    #: Issues the PR says it closes (first review only), and whether GitHub links them.
    issues: int = 0
    carried: bool = True


def _calls(w: World, trigger: str, **job: object) -> list[tuple[str, str]]:
    w.reset_calls()
    outcome = run_review_job(w.job(trigger, **job), w.ctx)
    if outcome.status not in ("posted", "nothing-new"):
        raise AssertionError(f"the review ended {outcome.status}: {outcome.detail}")
    return w.api_calls()


def _reads(calls: list[tuple[str, str]]) -> int:
    return sum(path.endswith("/permission") for _, path in calls)


def _rule_bug(n: int) -> dict[str, object]:
    line = 2 + 4 * n
    return {
        **PLANTED_BUG,
        "path": "rules.py",
        "start_line": line,
        "end_line": line,
        "title": f"rule_{n} now accepts {n}",
        "suggestion": f"    return x > {n}",
        "evidence": f"    return x >= {n}",
    }


def _earlier_threads(w: World, case: Case) -> None:
    """One real review (its threads on the planted bug and the broken rules), and GitNeural
    threads up to ``threads``: some 👎 by the PR's author, one resolved by a person, and
    ``givers`` 👎 by others than the author."""
    w.stub.push(submit(PLANTED_BUG, *(_rule_bug(n) for n in range(4))))
    run_review_job(w.job("opened"), w.ctx)
    for n in range(case.threads - 5):
        top = gitneural_thread(w.gh, REPO, w.number, fingerprint=f"fp-bench-{n}")
        if n % 10 == 0:
            w.gh.react_to_review_comment(REPO, top["id"], "-1", user="octocat")
        if n == 5:
            w.gh.resolve_thread(top["id"], user="alice")
        if 21 <= n < 21 + case.givers:
            giver = GIVERS[n - 21]
            w.gh.set_permission(REPO, giver, "write" if case.write else "read")
            w.gh.react_to_review_comment(REPO, top["id"], "-1", user=giver)


def _measure(root: Path, case: Case) -> int:
    with job_world(root, base_files={"rules.py": RULES}, pr_files={"rules.py": BROKEN}) as w:
        w.gh.push(REPO, "feature", {"people.py": ORIGINAL.replace("age >= 18", "age > 18")})
        if case.threads == 0 and case.issues:
            return _linked(w, case)
        if case.threads == 0:
            w.stub.push(submit(PLANTED_BUG))
            return len(_calls(w, "opened"))
        _earlier_threads(w, case)
        files: dict[str, str | None] = {"README.md": "# app\n\nMore.\n"}
        if case.fixed:
            files = {"people.py": FIXED, **({"rules.py": MENDED} if case.fixed > 1 else {})}
        w.gh.push(REPO, "feature", files)
        w.stub.push(submit())
        calls = _calls(w, "synchronize")
        # The PR's author (their 👎) and the resolver, where their dismissals hold (a push
        # that fixes a finding outdates the resolved thread: no resolution to judge).
        wanted = case.givers + 1 + (0 if case.fixed else 1)
        if _reads(calls) != wanted:
            raise BenchmarkError(f"{_reads(calls)} permission reads, not {wanted}")
        if calls.count(("POST", "/graphql")) != 1 + bool(case.fixed):
            raise BenchmarkError("the threads were not read, or closed, in one request")
        if case.again:
            w.gh.push(REPO, "feature", {"README.md": "# app\n\nMore again.\n"})
            w.stub.push(submit())
            calls = _calls(w, "synchronize")
            if _reads(calls):
                raise BenchmarkError("a kept answer was read again")
        dismissed = [
            r.dismissed_by
            for r in pull_findings(w.ctx.ensure_store(), w.gh.repo_json(REPO)["id"], w.number)
            if r.dismissed_by in GIVERS
        ]
        if len(dismissed) != (case.givers if case.write else 0):
            raise BenchmarkError(f"{len(dismissed)} findings dismissed by a 👎 of {GIVERS}")
        resolved = [
            c for c in w.gh.review_comments(REPO, w.number) if w.gh.thread_resolved(c["id"])
        ]
        if len(resolved) != 1 + case.fixed:  # the one a person resolved, and the fixed ones
            raise BenchmarkError(f"{len(resolved)} threads resolved, not {1 + case.fixed}")
        replies = [c for c in w.gh.review_comments(REPO, w.number) if c.get("in_reply_to_id")]
        if len(replies) != case.fixed:
            raise BenchmarkError(f"{len(replies)} replies, not {case.fixed}")
        return len(calls)


def _linked(w: World, case: Case) -> int:
    """A first review of a PR closing ``case.issues`` issues: into the default branch
    (GitHub links them) or into another (the description names them, read by one query)."""
    numbers = [
        w.gh.create_issue(REPO, title=f"Bug {n}", body=f"Steps for bug {n}.")
        for n in range(case.issues)
    ]
    body = "Tightens the check. " + ", ".join(f"Fixes #{n}" for n in numbers)
    number = w.number
    if case.carried:
        w.gh.edit_pull(REPO, number, body=body)
    else:
        w.gh.push(REPO, "release", {"README.md": "# app, release\n"})
        number = w.gh.create_pull(REPO, head="feature", base="release", title="Fix", body=body)
    w.stub.push(submit(PLANTED_BUG))
    calls = _calls(w, "opened", pr_number=number, head_sha=w.gh.head_sha(REPO, number))
    rest = sum(1 for _, path in calls if "/issues/" in path)
    graphql = calls.count(("POST", "/graphql"))
    if (rest, graphql) != (0, 1):  # issue 31: the uncarried ones in one query, no REST
        raise BenchmarkError(f"{rest} issue reads and {graphql} GraphQL queries")
    [chat] = w.stub.chat_requests
    if not all(f"Steps for bug {n}." in str(chat.body["messages"]) for n in range(case.issues)):
        raise BenchmarkError("an issue is missing from the prompt")
    return len(calls)


def run(quick: bool = False) -> list[Row]:
    n = THREADS
    github_schema()  # the fake's own start-up, not GitNeural's
    rows: list[Row] = []
    cases = [
        Case("first review, 0 earlier threads", 0),
        Case(f"after a push elsewhere, {n} earlier threads", n),
        Case(f"after a push fixing one finding, {n} earlier threads", n, fixed=1),
        Case(f"after a push fixing 5 findings, {n} earlier threads", n, fixed=5),
        Case(f"after a push elsewhere, {n} earlier threads, 3 👎 by writers", n, givers=3),
        Case(
            f"the next review, {n} earlier threads, 3 👎 by readers (answers kept)",
            n,
            givers=3,
            write=False,
            again=True,
        ),
        Case("first review, a PR closing 2 issues GitHub links", 0, issues=2),
        Case("first review, a PR into another branch naming 3 issues", 0, issues=3, carried=False),
    ]
    for case in cases:
        with tempfile.TemporaryDirectory(prefix="bench-memory-") as tmp:
            calls = _measure(Path(tmp), case)
        # Issue 19: the author's and the resolver's access, read once per ten minutes.
        scope_reads = 0 if case.again or not case.threads else 1 + (0 if case.fixed else 1)
        budget = CALLS_BUDGET + scope_reads
        budget += 0 if case.again else min(case.givers, MAX_PERMISSION_READS)
        budget += 0 if case.carried else 1  # issue 31: one query for the uncarried issues
        rows.append(
            row(
                f"GitHub API calls per review, {case.label}",
                calls,
                "",
                f"<= {budget}",
                calls <= budget,
            )
        )
    return rows


if __name__ == "__main__":
    raise SystemExit(main(run))

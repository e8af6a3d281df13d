"""The GitHub Action's cost per review: GitHub API requests, git traffic, time outside the
model.

For a pull request editing 1, 30 and 300 real files (:mod:`benchmarks.corpus`),
action.yml's review step runs as the runner runs it (``gitneural action`` in a process of
its own, the job's environment, an Actions-style ``GITHUB_TOKEN`` against the fake GitHub,
the K3 stub answering at once with no finding, default settings) on two workspaces cloned
with the git command line: one with the whole history and the PR's head checked out
(``fetch-depth: 0``), read in place, and a shallow one (``actions/checkout``'s default
depth of 1), which GitNeural leaves alone and fetches the PR for by git into its mirror.

PyGithub's pauses between requests (0.25 s, 1 s before a write: about 4 s a review) are
off here, as in the tests. Budgets: the same small number of API requests whatever the
size (at most 8: the App's six plus the ``GET /user`` that tells a person's token from a
workflow's), and no git request when the workspace holds the commits.
"""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.common import Row, row
from benchmarks.corpus import edited, source_files
from benchmarks.standalone import main
from tests.fakes.github import FakeGitHub
from tests.fakes.k3 import K3Stub, Reply
from tests.support.actions import ActionsRun, checkout, pull_request_event

SIZES = (1, 30, 300)
#: Quick: one size (every size runs the same code), of two files (a PR of several).
QUICK_SIZES = (2,)
CALLS_BUDGET = 8
REPO = "octo/app"


@dataclass
class Run:
    exit_code: int
    api_requests: int
    git_requests: int
    git_bytes: int
    seconds: float


def _nothing_to_report(_body: dict[str, Any]) -> Reply:
    return Reply(
        reasoning="Read the change; nothing to report.",
        tool_calls=[("submit_review", {"summary": "Reviewed.", "findings": []})],
    )


def _run(root: Path, gh: FakeGitHub, stub: K3Stub, number: int, shallow: bool) -> Run:
    event = pull_request_event(gh, REPO, number)
    job = ActionsRun(root, gh, REPO, event_name="pull_request", event=event, run_id=root.name)
    checkout(gh, REPO, number, job.workspace, token=job.token, shallow=shallow)
    gh.clear_requests()
    started = time.perf_counter()
    done = job.step("review", {"kimi-api-key": stub.api_key, "kimi-base-url": stub.base_url})
    seconds = time.perf_counter() - started
    git = gh.requests(kind="git")
    return Run(
        done.returncode,
        len(gh.requests(kind="api")),
        len(git),
        sum(r.response_bytes for r in git),
        seconds,
    )


def measure(count: int) -> tuple[Run, Run]:
    files = source_files(count)
    with (
        tempfile.TemporaryDirectory(prefix="gitneural-bench-action-") as tmp,
        FakeGitHub(Path(tmp) / "gh") as gh,
        K3Stub(brain=_nothing_to_report, check_history=False) as stub,
    ):
        gh.create_repo(REPO, installation_id=1, files={f.path: f.data for f in files})
        gh.push(REPO, "feature", {f.path: edited(f, hunks=3, inserted=2) for f in files})
        full_pr = gh.create_pull(REPO, head="feature", title="Edit files")
        gh.push(REPO, "other", {f.path: edited(f, hunks=2, inserted=1) for f in files})
        shallow_pr = gh.create_pull(REPO, head="other", title="Edit them too")
        full = _run(Path(tmp) / "full", gh, stub, full_pr, shallow=False)
        shallow = _run(Path(tmp) / "shallow", gh, stub, shallow_pr, shallow=True)
    return full, shallow


def _rows(count: int, full: Run, shallow: Run) -> list[Row]:
    rows = []
    for name, r in (("full checkout", full), ("shallow checkout", shallow)):
        where = f"action, {count}-file PR, {name}"
        calls_ok = r.api_requests <= CALLS_BUDGET
        rows.append(
            row(f"{where}: GitHub API requests", r.api_requests, "", f"<= {CALLS_BUDGET}", calls_ok)
        )
        if r is full:
            rows.append(row(f"{where}: git requests", r.git_requests, "", "0", r.git_requests == 0))
        else:
            rows.append(row(f"{where}: fetched by git", round(r.git_bytes / 1024, 1), "KiB"))
        rows.append(row(f"{where}: step time, model aside, no pacing", round(r.seconds, 2), "s"))
    return rows


def run(quick: bool = False) -> list[Row]:
    measured = [(n, *measure(n)) for n in (QUICK_SIZES if quick else SIZES)]
    rows = [r for n, full, shallow in measured for r in _rows(n, full, shallow)]
    calls = sorted({r.api_requests for _, *runs in measured for r in runs})
    shown = ", ".join(str(c) for c in calls)
    rows.append(
        row(
            "action: API requests per review, any size or checkout",
            shown,
            "",
            "the same",
            len(calls) == 1,
        )
    )
    failed = [f"{n}: exit {r.exit_code}" for n, *runs in measured for r in runs if r.exit_code]
    if failed:
        rows.append(row("action: every review posted", ", ".join(failed), "", "all", False))
    return rows


if __name__ == "__main__":
    raise SystemExit(main(run))

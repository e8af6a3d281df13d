"""Hostile "Fixes #N" in a pull request's description, through the App's review job on the
fake GitHub (its 5,000 requests an hour per installation): a description naming thousands
of issues costs one GraphQL request (ten numbers asked at most) and leaves the
installation's quota to the next pull request; a pattern built to backtrack parses at
once; an issue transferred to another (private) repository is never read into the prompt,
and no redirect is followed to it."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from bot.gh.linked_issues import MAX_REFERENCES, described_issues
from bot.usecases.review.run import run_review_job
from tests.support.job_world import REPO, World, job_world, submit
from tests.support.planted import PLANTED, PLANTED_BUG

#: What a description may be at most on GitHub.
BODY_LIMIT = 65_536


def _flood() -> str:
    refs: list[str] = []
    i = 1000
    while sum(len(r) + 1 for r in refs) < BODY_LIMIT:
        refs.append(f"fix #{i}")
        i += 1
    return " ".join(refs)[:BODY_LIMIT]


def _prompt(w: World) -> str:
    return "\n".join(str(c.body["messages"][1]["content"]) for c in w.stub.chat_requests)


def test_a_description_naming_thousands_of_issues_costs_one_query_and_spares_the_quota(
    tmp_path: Path,
) -> None:
    with job_world(tmp_path) as w:
        # Into another branch, so GitHub's own links do not carry them: each is a REST read.
        w.gh.push(REPO, "release", {"README.md": "# app, release\n"})
        w.gh.push(REPO, "hostile", {"people.py": PLANTED})
        flood = _flood()
        assert len(flood) == BODY_LIMIT and flood.count("fix #") > 4_900
        number = w.gh.create_pull(REPO, head="hostile", base="release", title="x", body=flood)
        w.stub.push(submit(PLANTED_BUG))
        w.reset_calls()
        head = w.gh.head_sha(REPO, number)
        outcome = run_review_job(w.job("opened", pr_number=number, head_sha=head), w.ctx)
        calls = w.api_calls()
        assert outcome.status == "posted", outcome.detail
        assert [c for c in calls if "/issues/" in c[1]] == []  # no REST read per number
        # Ten numbers, none found, asked in one query (the first review reads no threads).
        assert len([c for c in calls if c[1].endswith("/graphql")]) == 1
        assert len(calls) <= 6 + 12
        # The next, innocent pull request of the installation is reviewed.
        w.stub.push(submit(PLANTED_BUG))
        outcome = run_review_job(w.job("opened"), w.ctx)
        assert outcome.status == "posted", outcome.detail


@pytest.mark.parametrize(
    "text",
    [
        "fix" + " " * 24_000,  # the backtracking case: a keyword, then a long run of spaces
        ("fix" + " " * 60) * 1_040,
        "fix #" + "1" * 65_000,
        _flood(),
    ],
    ids=["spaces-24k", "spaced-keywords-65k", "digits-65k", "flood-65k"],
)
def test_a_hostile_description_parses_in_linear_time(text: str) -> None:
    # A complexity bound, not a benchmark: the old pattern took 20.9 s on the first text;
    # linear work over 65 k characters is well under a millisecond per kilobyte. The best
    # of five calls: a loaded machine may pause one call, never the parse's own work.
    spent = []
    for _ in range(5):
        started = time.perf_counter()
        found = described_issues(text, REPO)
        spent.append(time.perf_counter() - started)
    assert min(spent) < 0.05
    assert len(found) <= MAX_REFERENCES


def test_references_are_read_once_each_and_in_order() -> None:
    text = "Fixes #3, closes: #4 and fixes #3; resolves  octo/other#5; fixes#6; fix #07"
    assert described_issues(text, REPO) == [3, 4]


def test_the_issues_named_are_read_in_one_query_pull_requests_and_missing_left_out(
    tmp_path: Path,
) -> None:
    with job_world(tmp_path) as w:
        first = w.gh.create_issue(REPO, title="Crash on empty name", body="Steps: one")
        second = w.gh.create_issue(REPO, title="Typo in greeting", body="Steps: two")
        w.gh.push(REPO, "release", {"README.md": "# app, release\n"})
        w.gh.push(REPO, "fix", {"people.py": PLANTED})
        body = f"Fixes #{first}, fixes #{w.number}, fixes #9999, fixes #{first}, closes #{second}"
        number = w.gh.create_pull(REPO, head="fix", base="release", title="Fix", body=body)
        w.stub.push(submit(PLANTED_BUG))
        w.reset_calls()
        head = w.gh.head_sha(REPO, number)
        outcome = run_review_job(w.job("opened", pr_number=number, head_sha=head), w.ctx)
        calls = w.api_calls()
        assert outcome.status == "posted", outcome.detail
        prompt = _prompt(w)
    assert [c for c in calls if "/issues/" in c[1]] == []
    assert len([c for c in calls if c[1].endswith("/graphql")]) == 1
    assert "Crash on empty name" in prompt and "Typo in greeting" in prompt
    assert prompt.count("### Issue #") == 2  # the pull request and the missing number left out


def test_an_issue_transferred_to_a_private_repository_is_not_read(tmp_path: Path) -> None:
    with job_world(tmp_path) as w:
        private = REPO.split("/")[0] + "/vault"
        w.gh.create_repo(private, installation_id=1, files={"README.md": "# vault\n"})
        issue = w.gh.create_issue(REPO, title="Key rotation", body="The vault's root key is X")
        w.gh.transfer_issue(REPO, issue, private)
        w.gh.push(REPO, "release", {"README.md": "# app, release\n"})
        w.gh.push(REPO, "fix", {"people.py": PLANTED})
        number = w.gh.create_pull(
            REPO, head="fix", base="release", title="Fix", body=f"Fixes #{issue}"
        )
        w.stub.push(submit(PLANTED_BUG))
        w.reset_calls()
        head = w.gh.head_sha(REPO, number)
        outcome = run_review_job(w.job("opened", pr_number=number, head_sha=head), w.ctx)
        calls = w.api_calls()
        assert outcome.status == "posted", outcome.detail
        prompt = _prompt(w)
    assert "The vault's root key" not in prompt and "Key rotation" not in prompt
    assert "### Issue #" not in prompt
    # Not asked by REST, so no 301 to follow; nothing of the vault's was requested.
    assert [c for c in calls if "/issues/" in c[1] or "/vault" in c[1]] == []

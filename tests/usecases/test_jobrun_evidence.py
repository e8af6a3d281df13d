"""The evidence rule in a review job: fake GitHub (REST + git smart HTTP), the K3 stub,
real git. A finding whose quote is not in the pull request's code is not posted, and the
review's body and check run say how many were held back."""

from __future__ import annotations

from pathlib import Path

from bot.render.github import parse_marker
from bot.usecases.review.run import run_review_job
from tests.support.job_world import CONFIG, REPO, job_world, submit
from tests.support.planted import INVENTED_EVIDENCE, PLANTED_BUG

COUNT = "1 finding dropped: quoted code not found"
#: The planted bug, quoted with other indentation and spacing than the file's.
REQUOTED = dict(PLANTED_BUG, evidence="\t\treturn   age>18")
INVENTED = dict(
    PLANTED_BUG,
    start_line=1,
    end_line=1,
    severity="critical",
    title="is_adult evaluates its argument",
    evidence=INVENTED_EVIDENCE,
    suggestion=None,
)


def test_an_invented_quote_is_not_posted_and_the_check_run_counts_it(tmp_path: Path) -> None:
    with job_world(tmp_path) as w:
        w.stub.push(submit(INVENTED, REQUOTED))
        outcome = run_review_job(w.job("opened"), w.ctx)
        [review] = w.reviews()
        [check] = w.check_runs()
        posts = w.gh.requests("POST", f"/repos/{REPO}/pulls/1/reviews")
    assert outcome.status == "posted" and len(posts) == 1
    # The real quote is posted where it was, with its suggestion.
    [comment] = review["comments"]
    assert (comment["path"], comment["line"], comment["side"]) == ("people.py", 2, "RIGHT")
    assert "```suggestion\n    return age >= 18\n```" in comment["body"]
    assert "evaluates its argument" not in review["body"] + comment["body"]
    assert f"**1 critical** · 1 inline · {COUNT}" in review["body"]
    marker = parse_marker(review["body"])
    assert marker is not None and len(marker.fingerprints) == 1
    summary, text = check["output"]["summary"], check["output"]["text"]
    assert f"1 inline · 0 in the review body · {COUNT}." in summary
    assert "- `people.py`: quoted code not found in new-file lines 1-4" in text
    assert [a["start_line"] for a in check["annotations"]] == [2]
    assert check["output"]["title"] == "1 finding (1 critical)"


def test_nothing_dropped_says_nothing(tmp_path: Path) -> None:
    with job_world(tmp_path) as w:
        w.stub.push(submit(REQUOTED))
        run_review_job(w.job("opened"), w.ctx)
        [review] = w.reviews()
        [check] = w.check_runs()
    assert len(review["comments"]) == 1
    assert "dropped" not in review["body"] and "dropped" not in check["output"]["summary"]


def test_a_dropped_critical_finding_does_not_fail_the_gate(tmp_path: Path) -> None:
    gate = CONFIG + '[github]\ncheck_conclusion = "failure"\n'
    with job_world(tmp_path, base_files={".gitneural.toml": gate}) as w:
        w.stub.push(submit(INVENTED))
        run_review_job(w.job("opened"), w.ctx)
        [check] = w.check_runs()
    assert check["conclusion"] == "success"
    assert COUNT in check["output"]["summary"]

"""The router in the App's review job, in process: the fake GitHub, the K3 stub (a second
one for the routine endpoint), real git. The check run says each change's route."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from bot.metrics.exposition import render, scrape_registry
from bot.usecases.review.run import run_review_job
from tests.fakes.k3 import K3Stub
from tests.support.job_world import REPO, job_world, submit
from tests.support.planted import ORIGINAL, PLANTED, PLANTED_BUG
from tests.support.scrape import parse

HIGH = '[review]\neffort = "high"\n'
REFORMATTED = ORIGINAL.replace("'hi '", '"hi "').replace("(name)", "( name )")


def _summary(runs: list[dict[str, object]]) -> str:
    [run] = runs
    assert run["status"] == "completed"
    output = run["output"]
    assert isinstance(output, dict)
    return str(output["summary"])


def test_a_readme_only_pull_request_is_asked_at_low_and_says_so(tmp_path: Path) -> None:
    pr = {"README.md": "# app\n\nWho counts as an adult.\n"}
    with job_world(tmp_path, base_files={".gitneural.toml": HIGH}, pr_files=pr) as w:
        w.stub.push(submit())
        outcome = run_review_job(w.job("opened"), w.ctx)
        efforts = [r.body["reasoning_effort"] for r in w.stub.chat_requests]
        summary = _summary(w.check_runs())
    assert outcome.status == "posted", outcome.detail
    assert efforts == ["low"]
    assert "Route: docs only (README.md): effort low." in summary


def test_a_sensitive_pull_request_is_asked_at_max(tmp_path: Path) -> None:
    pr = {"auth/session.py": "def user(token):\n    return token\n"}
    with job_world(tmp_path, pr_files=pr) as w:  # the world's settings: effort = "low"
        w.stub.push(submit())
        outcome = run_review_job(w.job("opened"), w.ctx)
        efforts = [r.body["reasoning_effort"] for r in w.stub.chat_requests]
        summary = _summary(w.check_runs())
    assert outcome.status == "posted", outcome.detail
    assert efforts == ["max"]
    assert "Route: sensitive: auth/session.py (authentication): effort max." in summary


@pytest.mark.parametrize(
    ("gate", "conclusion"),
    [("", "neutral"), ('\n[github]\ncheck_conclusion = "failure"\n', "success")],
    ids=["neutral gate", "failing gate"],
)
def test_a_formatting_only_pull_request_passes_without_the_model(
    tmp_path: Path, gate: str, conclusion: str
) -> None:
    base = {".gitneural.toml": HIGH + gate}
    with job_world(tmp_path, base_files=base, pr_files={"people.py": REFORMATTED}) as w:
        outcome = run_review_job(w.job("opened"), w.ctx)
        assert w.stub.requests == []
        [run] = w.check_runs()
        reviews = w.reviews()
    assert outcome.status == "skipped", outcome.detail
    assert reviews == []
    assert run["conclusion"] == conclusion
    assert run["output"]["summary"] == (
        "Not sent to the model: formatting only (no file's tokens changed)."
    )


def test_a_routine_route_goes_to_the_routine_endpoint(tmp_path: Path) -> None:
    settings = (
        HIGH + '\n[[review.route]]\npaths = ["people.py"]\neffort = "low"\nmodel = "routine"\n'
    )
    with (
        job_world(tmp_path, base_files={".gitneural.toml": settings}) as w,
        K3Stub([submit()], models=("kimi-k3-routine",)) as routine,
    ):
        llm = dataclasses.replace(
            w.ctx.llm, routine_base_url=routine.base_url, routine_model="kimi-k3-routine"
        )
        ctx = dataclasses.replace(w.ctx, llm=llm)
        before = _tokens()
        outcome = run_review_job(w.job("opened"), ctx)
        after = _tokens()
        assert w.stub.requests == []
        sent = [(r.body["model"], r.body["reasoning_effort"]) for r in routine.chat_requests]
        summary = _summary(w.check_runs())
    assert outcome.status == "posted", outcome.detail
    assert sent == [("kimi-k3-routine", "low")]
    assert "Route: review.route[0] (people.py): effort low on the routine endpoint." in summary
    assert "kimi-k3-routine" in summary  # the usage line names the model that answered
    # Counted apart, and among all the model's tokens as well.
    routine_prompt = after[0] - before[0]
    assert routine_prompt == routine.chat_requests[0].usage["prompt_tokens"] > 0
    assert after[1] - before[1] == routine_prompt


def _tokens() -> tuple[float, float]:
    """This process's prompt tokens: the routine endpoint's, and all of them."""
    scraped = parse(render(scrape_registry())[0].decode())
    return (
        scraped.value("gitneural_routine_model_tokens_total", kind="prompt"),
        scraped.value("gitneural_model_tokens_total", kind="prompt"),
    )


def test_a_formatting_only_push_keeps_the_gate_on_open_findings(tmp_path: Path) -> None:
    """A push that only reformats asks nothing, but the earlier critical finding still
    stands: the failing gate stays failed."""
    gate = '[review]\neffort = "low"\n[github]\ncheck_conclusion = "failure"\n'
    with job_world(tmp_path, base_files={".gitneural.toml": gate}) as w:
        w.stub.push(submit(PLANTED_BUG))
        assert run_review_job(w.job("opened"), w.ctx).status == "posted"
        w.gh.push(REPO, "feature", {"people.py": PLANTED.replace("'hi '", '"hi "')})
        pushed = run_review_job(w.job("synchronize"), w.ctx)
        requests = len(w.stub.chat_requests)
        run = max(w.check_runs(), key=lambda r: r["id"])
    assert pushed.status == "skipped", pushed.detail
    assert requests == 1  # the first review's only
    assert run["conclusion"] == "failure"
    assert run["output"]["summary"] == (
        "Not sent to the model: formatting only (no file's tokens changed). "
        "1 finding still open from earlier reviews."
    )

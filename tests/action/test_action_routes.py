"""The router in ``gitneural action`` (the workflow's step, on the fake GitHub and the K3
stub): the route is decided before the model, as in the App."""

from __future__ import annotations

from pathlib import Path

from tests.support.actions import ActionsRun, checkout, pull_request_event
from tests.support.job_world import REPO, World, job_world, submit
from tests.support.planted import ORIGINAL

REFORMATTED = ORIGINAL.replace("(name)", "( name )").replace("'hi '", '"hi "')


def _step(w: World, tmp_path: Path) -> tuple[int, str, ActionsRun]:
    event = pull_request_event(w.gh, REPO, w.number)
    run = ActionsRun(tmp_path / "job", w.gh, REPO, event_name="pull_request", event=event)
    checkout(w.gh, REPO, w.number, run.workspace, token=run.token, shallow=False)
    done = run.step("review", {"kimi-api-key": w.stub.api_key, "kimi-base-url": w.stub.base_url})
    return done.returncode, done.stdout + done.stderr, run


def test_a_formatting_only_pull_request_succeeds_without_the_model(tmp_path: Path) -> None:
    with job_world(tmp_path, pr_files={"people.py": REFORMATTED}) as w:
        code, said, run = _step(w, tmp_path)
        assert w.stub.requests == []
        reviews, [check] = w.reviews(), w.check_runs()
        outputs = run.outputs()
    assert code == 0, said
    assert "Not sent to the model: formatting only" in said
    assert reviews == [] and outputs["findings"] == "0"
    assert check["conclusion"] == "neutral"
    assert check["output"]["summary"].startswith("Not sent to the model: formatting only")


def test_a_sensitive_pull_request_is_reviewed_at_max(tmp_path: Path) -> None:
    pr = {"Dockerfile": "FROM python:3.12-slim\nUSER root\n"}
    with job_world(tmp_path, pr_files=pr) as w:  # the world's settings: effort = "low"
        w.stub.push(submit())
        code, said, _ = _step(w, tmp_path)
        efforts = [r.body["reasoning_effort"] for r in w.stub.chat_requests]
        [check] = w.check_runs()
    assert code == 0, said
    assert efforts == ["max"]
    assert "Route: sensitive: Dockerfile (container manifests): effort max." in str(
        check["output"]["summary"]
    )

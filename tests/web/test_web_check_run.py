"""The check run's "Re-run" button: the App subscribes to ``check_run`` and a
``rerequested`` delivery of GitNeural's own run queues a full review of its head
(issue 34, point 9)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from bot.jobs import ReviewJob
from tests.support.paths import ROOT
from tests.support.webhooks import RecordingQueue, load
from tests.web.test_web_app import Hook

HEAD = "0123456789abcdef0123456789abcdef01234567"


def rerequested(name: str = "GitNeural", pulls: list[dict[str, Any]] | None = None) -> Any:
    """A ``check_run.rerequested`` delivery, its repository, installation and sender
    those of the pull_request fixture, as GitHub sends it to the App that made the run."""
    pr = load("pull_request.opened.payload.json")
    number = pr["pull_request"]["number"]
    return {
        "action": "rerequested",
        "check_run": {
            "id": 4,
            "name": name,
            "head_sha": HEAD,
            "status": "completed",
            "conclusion": "failure",
            "pull_requests": [{"number": number, "head": {"sha": HEAD}}]
            if pulls is None
            else pulls,
        },
        "repository": pr["repository"],
        "installation": pr["installation"],
        "sender": pr["sender"],
    }


def test_app_manifest_subscribes_to_check_run() -> None:
    manifest = yaml.safe_load((ROOT / "bot" / "gh" / "app.yml").read_text(encoding="utf-8"))
    assert "check_run" in manifest["default_events"]


def test_rerun_button_queues_a_full_review_of_that_head(tmp_path: Path) -> None:
    hook = Hook(tmp_path)
    payload = rerequested()
    resp = hook.post("check_run", payload)
    assert resp.status_code == 202, resp.json
    [job] = hook.queue.jobs
    assert isinstance(job, ReviewJob)
    assert job.head_sha == HEAD
    assert job.pr_number == payload["check_run"]["pull_requests"][0]["number"]
    assert job.repo == payload["repository"]["full_name"]
    assert job.full is True


def test_other_check_runs_and_forks_queue_nothing(tmp_path: Path) -> None:
    queue = RecordingQueue()
    hook = Hook(tmp_path, queue)
    completed = {**rerequested(), "action": "completed"}
    for payload in [rerequested(name="CI"), rerequested(pulls=[]), completed]:
        resp = hook.post("check_run", payload)
        assert resp.status_code == 200, resp.json
        assert resp.json["status"] == "ignored"
    assert queue.jobs == []

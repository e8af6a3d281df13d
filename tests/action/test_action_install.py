"""action.yml's install step, run for real: a virtual environment under ``RUNNER_TEMP``
with GitNeural installed from the action's own files, which then reviews a pull request.

The action's files are a copy of this repository's tracked files, as a runner checks an
action out; installing takes a minute or two (every dependency, from the package index).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.actions import ActionsRun, pull_request_event
from tests.support.job_world import REPO, job_world, submit
from tests.support.paths import ROOT
from tests.support.planted import PLANTED_BUG


def copy_of_the_action(target: Path) -> Path:
    listed = (
        subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=ROOT,
            capture_output=True,
            check=True,
        )
        .stdout.decode()
        .split("\0")
    )
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    return target


@pytest.mark.slow
def test_the_install_step_installs_gitneural_that_then_reviews(tmp_path: Path) -> None:
    action_path = copy_of_the_action(tmp_path / "action")
    with job_world(tmp_path) as w:
        event = pull_request_event(w.gh, REPO, w.number)
        run = ActionsRun(
            tmp_path / "job",
            w.gh,
            REPO,
            event_name="pull_request",
            event=event,
            action_path=action_path,
            installed=True,
        )
        installed = run.step("install", {"kimi-api-key": w.stub.api_key}, timeout=900)
        assert installed.returncode == 0, installed.stdout + installed.stderr
        gitneural = run.temp / "gitneural-venv" / "bin" / "gitneural"
        assert gitneural.is_file() and not gitneural.is_symlink()
        # Its own interpreter, not the one running the tests.
        assert str(run.temp / "gitneural-venv") in gitneural.read_text().splitlines()[0]
        w.stub.push(submit(PLANTED_BUG))
        inputs = {"kimi-api-key": w.stub.api_key, "kimi-base-url": w.stub.base_url}
        done = run.step("review", inputs)
        assert done.returncode == 0, done.stdout + done.stderr
        [review] = w.reviews()
        [comment] = review["comments"]
        assert (comment["path"], comment["line"]) == ("people.py", 2)
    assert "```suggestion\n    return age >= 18\n```" in comment["body"]

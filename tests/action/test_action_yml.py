"""action.yml is a valid composite action whose inputs reach GitNeural as environment
variables only; the workflow ``docs/action.md`` shows is ``docs/github-action-workflow.yml``,
and it uses the action as action.yml defines it, with the permissions GitNeural needs and
no step that could run a pull request's code."""

from __future__ import annotations

import re
from typing import Any

import yaml

from tests.support.actions import load_action
from tests.support.paths import ROOT

WORKFLOW = ROOT / "docs" / "github-action-workflow.yml"
INPUT_ENV = {
    "kimi-api-key": "KIMI_API_KEY",
    "kimi-base-url": "KIMI_BASE_URL",
    "model": "GITNEURAL_MODEL",
    "effort": "GITNEURAL_REASONING_EFFORT",
    "github-token": "GITHUB_TOKEN",
    "fail-on": "GITNEURAL_FAIL_ON",
    "config": "GITNEURAL_CONFIG",
}


def test_action_yml_declares_the_inputs_and_outputs() -> None:
    action = load_action()
    assert action["name"] and action["description"]
    inputs: dict[str, Any] = action["inputs"]
    assert set(inputs) == set(INPUT_ENV)
    assert all(spec["description"] for spec in inputs.values())
    assert inputs["kimi-api-key"]["required"] is True
    assert [n for n, spec in inputs.items() if spec.get("required")] == ["kimi-api-key"]
    assert inputs["github-token"]["default"] == "${{ github.token }}"
    assert inputs["fail-on"]["default"] == "none"
    outputs = action["outputs"]
    assert set(outputs) == {"findings", "sarif"}
    step_ids = {step.get("id") for step in action["runs"]["steps"]}
    for name, spec in outputs.items():
        assert spec["description"]
        match = re.fullmatch(r"\$\{\{ steps\.([a-z-]+)\.outputs\.([a-z-]+) \}\}", spec["value"])
        assert match is not None and match[1] in step_ids and match[2] == name


def test_action_yml_installs_itself_and_passes_inputs_as_environment() -> None:
    runs = load_action()["runs"]
    assert runs["using"] == "composite"
    install, review = runs["steps"]
    for step in (install, review):
        assert step["shell"] == "bash"
        # Script injection: no expression is ever spliced into shell code.
        assert "${{" not in step["run"]
    # Installed from the action's own files (never the pull request's) into its own venv.
    assert install["env"]["GITNEURAL_ACTION_PATH"] == "${{ github.action_path }}"
    assert install["env"]["GITNEURAL_VENV"] == review["env"]["GITNEURAL_VENV"]
    assert review["env"]["GITNEURAL_VENV"].startswith("${{ runner.temp }}/")
    assert 'python3 -m venv "$GITNEURAL_VENV"' in install["run"]
    # Pinned, hashed packages, then GitNeural itself: tests/action/test_action_lock.py.
    assert '--no-deps --no-build-isolation "$GITNEURAL_ACTION_PATH"' in install["run"]
    assert review["run"].strip() == '"$GITNEURAL_VENV/bin/gitneural" action'
    passed = {k: v for k, v in review["env"].items() if k != "GITNEURAL_VENV"}
    assert passed == {env: f"${{{{ inputs.{name} }}}}" for name, env in INPUT_ENV.items()}


def documented_workflow() -> str:
    """The first YAML block of the docs' page on the Action (``docs/action.md``)."""
    page = (ROOT / "docs" / "action.md").read_text(encoding="utf-8")
    match = re.search(r"^```yaml\n(.*?)^```$", page, re.DOTALL | re.MULTILINE)
    assert match is not None, "no ```yaml block in docs/action.md"
    return match[1]


def test_the_documented_workflow_is_the_example_file() -> None:
    assert documented_workflow() == WORKFLOW.read_text(encoding="utf-8")


def test_the_example_workflow_uses_the_action_safely() -> None:
    workflow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    triggers = workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` as true
    assert set(triggers) == {"pull_request_target", "issue_comment"}
    automatic = {"opened", "reopened", "ready_for_review", "synchronize"}
    assert set(triggers["pull_request_target"]["types"]) == automatic
    assert triggers["issue_comment"]["types"] == ["created"]
    needed = {"contents": "read", "pull-requests": "write", "checks": "write"}
    assert workflow["permissions"] == needed
    [job] = workflow["jobs"].values()
    assert "startsWith(github.event.comment.body, '/review')" in job["if"]
    [step] = job["steps"]
    # No step of this job runs anything, nor checks out the pull request's code.
    assert "run" not in step and step["uses"].startswith("gitneural/gitneural@v")
    inputs = load_action()["inputs"]
    given = step["with"]
    assert set(given) <= set(inputs)
    assert {n for n, spec in inputs.items() if spec.get("required")} <= set(given)
    assert given["kimi-api-key"] == "${{ secrets.KIMI_API_KEY }}"
    assert given["fail-on"] in ("none", "critical", "major", "minor", "nit")

"""Running ``action.yml`` the way GitHub's runner does, against the fake GitHub.

    run = ActionsRun(tmp_path, gh, event_name="pull_request", event=event)
    checkout(gh, REPO, number, run.workspace, token=run.token, shallow=True)
    result = run.step("review", {"kimi-api-key": stub.api_key})

A step of the composite action is run as the runner runs it: its ``env`` with every
``${{ }}`` expression evaluated (inputs and their defaults, ``github.*``, ``runner.*``),
then its ``run`` script under ``bash -e``, in the job's environment (``GITHUB_*``,
``RUNNER_TEMP``). The workspace is a real clone made with the git command line over
the fake's smart HTTP, with the token in an ``http.extraheader`` as ``actions/checkout``
does it. Expressions other than those the runner would know fail the test.
"""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from tests.fakes.github import FakeGitHub
from tests.support.paths import ROOT
from tests.support.webhooks import DELETE, variant

ACTION_FILE = ROOT / "action.yml"
_EXPRESSION = re.compile(r"\$\{\{\s*([^}]*?)\s*\}\}")
_RUNNER_PREFIXES = ("GITHUB_", "RUNNER_", "KIMI_", "MOONSHOT_", "GITNEURAL_", "INPUT_")


def load_action() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(ACTION_FILE.read_text(encoding="utf-8"))
    return data


def expand(text: str, context: Mapping[str, str]) -> str:
    """``text`` with each ``${{ name }}`` replaced from ``context`` (names only)."""

    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        assert name in context, f"the runner would not know ${{{{ {name} }}}} here"
        return context[name]

    return _EXPRESSION.sub(value, text)


def git(*args: str, cwd: Path | None = None, token: str | None = None) -> str:
    """The git command line, as a workflow's checkout runs it (token in an extra header)."""
    extra = []
    if token is not None:
        basic = base64.b64encode(f"x-access-token:{token}".encode()).decode()
        extra = ["-c", f"http.extraheader=AUTHORIZATION: basic {basic}"]
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_CONFIG_NOSYSTEM": "1"}
    done = subprocess.run(
        ["git", *extra, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, f"git {' '.join(args)}: {done.stderr}"
    return done.stdout.strip()


def checkout(
    gh: FakeGitHub, full_name: str, number: int, workspace: Path, *, token: str, shallow: bool
) -> str:
    """Clone the repository into ``workspace`` with the PR's head checked out (detached);
    ``shallow``: only the head commit, like ``actions/checkout``'s default depth of 1."""
    workspace.mkdir(parents=True, exist_ok=True)
    git("init", "-q", str(workspace))
    git("remote", "add", "origin", gh.clone_url(full_name), cwd=workspace)
    specs = [f"+refs/pull/{number}/head:refs/remotes/pull/{number}/head"]
    if not shallow:
        specs.append("+refs/heads/*:refs/remotes/origin/*")
    depth = ["--depth=1"] if shallow else []
    git("fetch", "-q", *depth, "origin", *specs, cwd=workspace, token=token)
    head = gh.head_sha(full_name, number)
    git("checkout", "-q", "--detach", head, cwd=workspace)
    return head


def pull_request_event(gh: FakeGitHub, full_name: str, number: int, **changes: Any) -> Any:
    """A ``pull_request`` event as Actions hands it over: GitHub's example delivery with
    the fake's PR and repository, and no ``installation`` (a workflow's event has none)."""
    fields: dict[str, Any] = {
        "action": "opened",
        "number": number,
        # Through JSON, as the runner's event file is: the head and base repositories of
        # the fake's answer are one object, which a fork's event must not share.
        "pull_request": json.loads(json.dumps(gh.pull(full_name, number))),
        "repository": gh.repo_json(full_name),
        "sender.login": "octocat",
        "installation": DELETE,
    }
    fields.update(changes)
    return variant("pull_request.opened.payload.json", **fields)


def comment_event(
    gh: FakeGitHub, full_name: str, number: int, body: str, association: str, user: str = "alice"
) -> tuple[Any, int]:
    """An ``issue_comment`` event for a comment the fake holds (so it can get 👀)."""
    comment = gh.add_issue_comment(full_name, number, body, user=user, association=association)
    fields: dict[str, Any] = {
        "comment": comment,
        "issue.number": number,
        "issue.state": "open",
        "repository": gh.repo_json(full_name),
        "sender.login": comment["user"]["login"],
        "sender.type": "User",
        "installation": DELETE,
    }
    return variant("issue_comment.created.on-pull-request.payload.json", **fields), comment["id"]


class ActionsRun:
    """One job of a workflow run: its temp dir, workspace, event file and environment."""

    def __init__(
        self,
        root: Path,
        gh: FakeGitHub,
        full_name: str,
        *,
        event_name: str,
        event: Any,
        run_id: str = "7001",
        action_path: Path = ROOT,
        installed: bool = False,
    ) -> None:
        """``installed``: leave the action's venv to its install step (else it is this one)."""
        self.root, self.gh, self.action_path = root, gh, action_path
        self.temp = root / "runner-temp"
        self.workspace = root / "workspace"
        for path in (self.temp, self.workspace):
            path.mkdir(parents=True, exist_ok=True)
        self.summary = root / "step_summary.md"
        self.output = root / "github_output"
        event_path = root / "event.json"
        event_path.write_text(json.dumps(event), encoding="utf-8")
        self.token = gh.actions_token(full_name)
        self.env = {
            "GITHUB_ACTIONS": "true",
            "GITHUB_EVENT_NAME": event_name,
            "GITHUB_EVENT_PATH": str(event_path),
            "GITHUB_REPOSITORY": full_name,
            "GITHUB_API_URL": gh.api_url,
            "GITHUB_SERVER_URL": gh.web_url,
            "GITHUB_WORKSPACE": str(self.workspace),
            "GITHUB_STEP_SUMMARY": str(self.summary),
            "GITHUB_OUTPUT": str(self.output),
            "GITHUB_RUN_ID": run_id,
            "GITHUB_RUN_ATTEMPT": "1",
            "GITHUB_ACTOR": "octocat",
            "RUNNER_TEMP": str(self.temp),
            # Not the runner's: PyGithub's pauses between requests, off to keep tests quick.
            "GITNEURAL_GITHUB_PACING": "false",
        }
        if not installed:
            self.stand_in_for_the_install_step()

    def stand_in_for_the_install_step(self) -> None:
        """Stand in for the install step: the action's venv is the one running the tests
        (``tests/action/test_action_install.py`` runs the real install step)."""
        bin_dir = self.temp / "gitneural-venv" / "bin"
        bin_dir.mkdir(parents=True, exist_ok=True)
        target = bin_dir / "gitneural"
        if not target.exists():
            target.symlink_to(Path(sys.executable).parent / "gitneural")

    def context(self, inputs: Mapping[str, str]) -> dict[str, str]:
        context = {
            "github.action_path": str(self.action_path),
            "github.token": self.token,
            "runner.temp": str(self.temp),
        }
        for name, spec in load_action()["inputs"].items():
            given = inputs.get(name, str(spec.get("default", "")))
            context[f"inputs.{name}"] = expand(given, context)
        unknown = set(inputs) - set(load_action()["inputs"])
        assert not unknown, f"action.yml has no inputs {sorted(unknown)}"
        return context

    def step(
        self, step_id: str, inputs: Mapping[str, str], timeout: float = 240
    ) -> subprocess.CompletedProcess[str]:
        """Run the step ``step_id`` of action.yml as the runner would."""
        [step] = [s for s in load_action()["runs"]["steps"] if s.get("id") == step_id]
        context = self.context(inputs)
        step_env = {k: expand(str(v), context) for k, v in (step.get("env") or {}).items()}
        base = {k: v for k, v in os.environ.items() if not k.startswith(_RUNNER_PREFIXES)}
        return subprocess.run(
            ["bash", "-e", "-c", step["run"]],
            cwd=self.workspace,
            env={**base, **self.env, **step_env},
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def outputs(self) -> dict[str, str]:
        """What the step wrote to ``GITHUB_OUTPUT`` (``name<<DELIM`` blocks or ``name=v``)."""
        text = self.output.read_text(encoding="utf-8") if self.output.exists() else ""
        found: dict[str, str] = {}
        lines = iter(text.splitlines())
        for line in lines:
            if "<<" in line:
                name, delimiter = line.split("<<", 1)
                body = []
                for inner in lines:
                    if inner == delimiter:
                        break
                    body.append(inner)
                found[name] = "\n".join(body)
            elif "=" in line:
                name, value = line.split("=", 1)
                found[name] = value
        return found

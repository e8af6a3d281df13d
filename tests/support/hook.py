"""Shared pieces of the hook tests: the fixed people.py, stub replies, and running real git.

Every process gets a clean environment: no model key or URL, no SKIP, no GIT_* variables
of the test runner, an empty global git config (a developer's ``core.hooksPath`` must not
move the hooks), and its own ``GITNEURAL_DATA_DIR``.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.fakes.k3 import K3Stub, Reply
from tests.support.planted import PLANTED_BUG

VENV_BIN = Path(sys.executable).parent
GITNEURAL = str(VENV_BIN / "gitneural")

FIXED = "def is_adult(age):\n    return 18 <= age\n\n\ndef greet(name):\n    return 'hi ' + name\n"

HEADLINE = "people.py:2: critical: Off-by-one: 18-year-olds are no longer adults"

_DROPPED_PREFIXES = ("KIMI_", "MOONSHOT_", "GITNEURAL_", "PRE_COMMIT", "GIT_")


def submit(findings: list[dict[str, Any]] | None = None, summary: str = "Reviewed.") -> Reply:
    args = {"summary": summary, "findings": [PLANTED_BUG] if findings is None else findings}
    return Reply(reasoning="Comparing the bounds.", tool_calls=[("submit_review", args)])


def clean_env(tmp: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(_DROPPED_PREFIXES)}
    env.pop("SKIP", None)
    empty = tmp / "empty-gitconfig"
    empty.touch()
    env.update(
        GIT_CONFIG_GLOBAL=str(empty),
        GIT_CONFIG_NOSYSTEM="1",
        GITNEURAL_DATA_DIR=str(tmp / "gitneural-data"),
    )
    env.update(extra)
    return env


def stub_env(stub: K3Stub) -> dict[str, str]:
    return {"KIMI_API_KEY": stub.api_key, "KIMI_BASE_URL": stub.base_url}


def dead_url() -> str:
    """The base URL of a stub that has stopped: its port refuses connections."""
    stub = K3Stub().start()
    url = stub.base_url
    stub.stop()
    return url


def run(
    args: list[str], cwd: Path, env: dict[str, str], stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args, cwd=cwd, env=env, input=stdin, capture_output=True, text=True, timeout=180
    )


def git(cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return run(["git", *args], cwd, env)


def hook_run(cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return run([GITNEURAL, "hook", "run", "--quiet", *args], cwd, env)


def head(cwd: Path, env: dict[str, str]) -> str:
    return git(cwd, env, "rev-parse", "HEAD").stdout.strip()


def prompt_of(stub: K3Stub, n: int = 0) -> str:
    """Every message text of the n-th chat request, joined."""
    body = stub.chat_requests[n].body
    return "\n".join(str(m.get("content", "")) for m in body["messages"])


def tree_digest(root: Path) -> dict[str, str]:
    """SHA-256 of every file under ``root`` (``.git`` included: index, refs, objects)."""
    out = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.is_symlink():
            out[str(path.relative_to(root))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out

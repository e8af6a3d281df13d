"""What the replay tests share: a repository of merged pull requests, a golden file naming
one bug line, and a stub brain that flags that line and a decoy."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pygit2
import pytest

from tests.fakes.k3 import K3Stub, Reply
from tests.fakes.k3.brain import user_text
from tests.support.repos import commit, make_repo

GITNEURAL = str(Path(sys.executable).parent / "gitneural")

BASE_APP = "".join(f"value_{n} = {n}\n" for n in range(1, 21))
#: The feature's app.py: line 3 holds the bug the golden file names, line 15 the decoy.
FEATURE_APP = BASE_APP.replace("value_3 = 3\n", "value_3 = 3 / 0  # BUG_LINE\n").replace(
    "value_15 = 15\n", "value_15 = 'fifteen'  # DECOY_LINE\n"
)
BUG_LINE, DECOY_LINE = 3, 15


def finding(line: int, text: str, severity: str) -> dict[str, Any]:
    return {
        "path": "app.py",
        "start_line": line,
        "end_line": line,
        "side": "RIGHT",
        "severity": severity,
        "category": "bug",
        "title": f"Suspicious line {line}",
        "body": "This line looks wrong.",
        "evidence": text,
    }


BUG = finding(BUG_LINE, "value_3 = 3 / 0  # BUG_LINE", "critical")
DECOY = finding(DECOY_LINE, "value_15 = 'fifteen'  # DECOY_LINE", "minor")


@dataclass
class History:
    path: Path
    golden: Path
    #: The merges' titles, oldest first.
    titles: list[str] = field(default_factory=list)


def _merge(repo: Any, files: dict[str, str], branch: str, number: int, title: str) -> None:
    main = repo.references["refs/heads/main"].peel(pygit2.Commit)
    side = commit(repo, files, f"{title} (work)", branch=branch, parents=[main])
    commit(
        repo,
        files,
        f"Merge pull request #{number} from someone/{branch}\n\n{title}",
        parents=[main, side],
    )


@pytest.fixture
def history(tmp_path: Path) -> History:
    """main: an initial commit, then three merged pull requests (the first adds the bug
    and the decoy; the others add notes files)."""
    repo = make_repo(tmp_path / "repo")
    commit(repo, {"app.py": BASE_APP, "README.md": "app\n"}, "initial")
    _merge(repo, {"app.py": FEATURE_APP}, "feature", 1, "Compute the values")
    _merge(repo, {"notes/second.py": "SECOND = 2\n"}, "second", 2, "Add the second note")
    _merge(repo, {"notes/third.py": "THIRD = 3\n"}, "third", 3, "Add the third note")
    first_merge = repo.revparse_single("HEAD~2").peel(pygit2.Commit)
    golden = tmp_path / "golden.json"
    golden.write_text(
        json.dumps(
            [
                {
                    "change": str(first_merge.parent_ids[1]),
                    "comments": [
                        {
                            "path": "app.py",
                            "line": BUG_LINE,
                            "text": "division by zero",
                            "severity": "critical",
                        }
                    ],
                }
            ]
        )
    )
    titles = ["Compute the values", "Add the second note", "Add the third note"]
    return History(tmp_path / "repo", golden, titles)


def flagging_brain(body: dict[str, Any]) -> Reply:
    """The bug and the decoy on the feature's change; nothing on the others."""
    found = [BUG, DECOY] if "BUG_LINE" in user_text(body) else []
    return Reply(
        reasoning="Reading the change.",
        tool_calls=[("submit_review", {"summary": "Reviewed.", "findings": found})],
    )


class BlockingBrain:
    """Answers like :func:`flagging_brain`, but holds the request of the change whose
    prompt says ``hold`` until :attr:`release` is set, telling :attr:`held` it arrived."""

    def __init__(self, hold: str) -> None:
        self.hold = hold
        self.held = threading.Event()
        self.release = threading.Event()

    def __call__(self, body: dict[str, Any]) -> Reply:
        if self.hold in user_text(body):
            self.held.set()
            self.release.wait(60)
        return flagging_brain(body)


def cli_env(stub: K3Stub, data: Path) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("KIMI_", "MOONSHOT_"))}
    base.pop("GITNEURAL_REASONING_EFFORT", None)
    return {
        **base,
        "KIMI_API_KEY": stub.api_key,
        "KIMI_BASE_URL": stub.base_url,
        "GITNEURAL_DATA_DIR": str(data),
    }


def replay(
    args: list[str], cwd: Path, stub: K3Stub, data: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """The installed ``gitneural replay`` in ``cwd``, on the stub; ``env`` set on top."""
    return subprocess.run(
        [GITNEURAL, "replay", "--effort", "low", *args],
        cwd=cwd,
        env={**cli_env(stub, data), **(env or {})},
        capture_output=True,
        text=True,
        timeout=300,
    )

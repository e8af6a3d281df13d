"""Which changes ``gitneural replay`` walks: first-parent merges by default, commits with
``--commits``, within ``--range``; and a real repository's last merges against the stub."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pygit2

from tests.cli.test_light_install import _probe
from tests.fakes.k3 import K3Stub, Reply
from tests.replay.conftest import GITNEURAL, History, cli_env, flagging_brain, replay
from tests.support.real_repos import checkout


def _changes(result: Any) -> list[dict[str, Any]]:
    assert result.returncode == 0, result.stderr
    changes: list[dict[str, Any]] = json.loads(result.stdout)["changes"]
    return changes


def test_merges_by_default_commits_with_commits_and_range_limits(
    history: History, tmp_path: Path
) -> None:
    repo = pygit2.Repository(str(history.path))
    merges = [repo.revparse_single(f"HEAD~{n}").peel(pygit2.Commit) for n in (2, 1, 0)]
    data = tmp_path / "data"
    with K3Stub() as stub:
        default = _changes(replay(["--dry-run", "--format", "json"], history.path, stub, data))
        last2 = _changes(
            replay(["--dry-run", "--format", "json", "--last", "2"], history.path, stub, data)
        )
        commits = _changes(
            replay(["--dry-run", "--format", "json", "--commits"], history.path, stub, data)
        )
        ranged = _changes(
            replay(
                ["--dry-run", "--format", "json", "--range", f"{merges[0].id}..HEAD~1"],
                history.path,
                stub,
                data,
            )
        )
        assert stub.requests == []
    assert [c["change"] for c in default] == [
        f"{m.parent_ids[0]}..{m.parent_ids[1]}" for m in merges
    ]
    assert [c["title"] for c in default] == history.titles
    assert [c["title"] for c in last2] == history.titles[1:]
    # Each first-parent commit is a change c^..c: the three merges (not the root commit).
    assert [c["change"] for c in commits] == [f"{m.parent_ids[0]}..{m.id}" for m in merges]
    assert [c["title"] for c in ranged] == [history.titles[1]]


def _no_findings(body: dict[str, Any]) -> Reply:
    return Reply(
        reasoning="Nothing to say.",
        tool_calls=[("submit_review", {"summary": "Fine.", "findings": []})],
    )


def test_last_5_merges_of_a_real_repository_complete_against_the_stub(tmp_path: Path) -> None:
    clone = checkout("anyhow")
    with K3Stub(brain=_no_findings) as stub:
        result = replay(
            ["--last", "5", "--format", "json", "--yes"], clone, stub, tmp_path / "data"
        )
        asked = len(stub.chat_requests)
    changes = _changes(result)
    assert len(changes) == 5
    assert asked >= 5
    repo = pygit2.Repository(str(clone))
    for c in changes:
        merge = repo.revparse_single(c["commit"]).peel(pygit2.Commit)
        assert len(merge.parent_ids) == 2
        assert c["change"] == f"{merge.parent_ids[0]}..{merge.parent_ids[1]}"
    report = json.loads(result.stdout)
    assert report["totals"]["changes"] == 5
    assert report["totals"]["prompt_tokens"] > 0


def test_replay_is_in_the_help_and_loads_no_server_package(
    history: History, tmp_path: Path
) -> None:
    helped = subprocess.run(
        [GITNEURAL, "--help"], capture_output=True, text=True, timeout=60, check=False
    )
    assert "replay" in helped.stdout and "refused" in helped.stdout
    with K3Stub(brain=flagging_brain) as stub:
        env = {**cli_env(stub, tmp_path / "data")}
        rc, loaded, out = _probe(["replay", "--effort", "low", "--quiet"], history.path, env)
        asked = len(stub.chat_requests)
    assert rc == 0, out
    assert asked == 3
    assert loaded == []

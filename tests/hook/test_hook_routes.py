"""The router in the pre-commit hook (``gitneural hook run``), against the K3 stub."""

from __future__ import annotations

from pathlib import Path

from tests.fakes.k3 import K3Stub
from tests.support.hook import hook_run, stub_env, submit
from tests.support.planted import ORIGINAL
from tests.support.repos import commit, make_repo, stage


def test_the_hook_asks_nothing_of_a_formatting_only_commit(
    tmp_path: Path, env: dict[str, str]
) -> None:
    repo = make_repo(tmp_path / "repo")
    commit(repo, {"people.py": ORIGINAL}, "initial")
    stage(repo, {"people.py": ORIGINAL.replace("(name)", "( name )").replace("'hi '", '"hi "')})
    with K3Stub() as stub:
        result = hook_run(tmp_path / "repo", {**env, **stub_env(stub)})
        assert stub.requests == []
    assert result.returncode == 0, result.stderr
    assert "Not sent to the model: formatting only" in result.stdout


def test_the_hook_reviews_docs_at_low_whatever_its_effort(
    tmp_path: Path, env: dict[str, str]
) -> None:
    repo = make_repo(tmp_path / "repo")
    settings = '[hook]\neffort = "high"\n'
    commit(repo, {"people.py": ORIGINAL, "README.md": "a\n", ".gitneural.toml": settings}, "i")
    stage(repo, {"README.md": "people\n"})
    with K3Stub([submit([])]) as stub:
        result = hook_run(tmp_path / "repo", {**env, **stub_env(stub)})
        efforts = [r.body["reasoning_effort"] for r in stub.chat_requests]
    assert result.returncode == 0, result.stderr
    assert efforts == ["low"]

"""``gitneural hook install`` / ``uninstall``: chaining, forcing, restoring, where hooks live."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pygit2
import pytest

from hooks.install import CHAINED_SUFFIX, MARKER, install
from tests.fakes.k3 import K3Stub
from tests.support.hook import GITNEURAL, HEADLINE, git, head, run, stub_env, submit
from tests.support.planted import ORIGINAL, PLANTED
from tests.support.repos import commit, make_repo, stage

FOREIGN = '#!/bin/sh\necho "foreign hook ran" >> "$(git rev-parse --git-dir)/foreign.log"\nexit 0\n'
FAILING = '#!/bin/sh\necho "lint failed" >&2\nexit 3\n'


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    r = make_repo(path)
    commit(r, {"people.py": ORIGINAL}, "initial")
    return path


def _hook(repo: Path, name: str = "pre-commit") -> Path:
    return repo / ".git" / "hooks" / name


def _write_hook(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)


def _cli(repo: Path, env: dict[str, str], *args: str) -> tuple[int, str]:
    result = run([GITNEURAL, "hook", *args], repo, env)
    return result.returncode, result.stdout + result.stderr


def test_refuses_a_foreign_hook_without_chain_or_force(repo: Path, env: dict[str, str]) -> None:
    _write_hook(_hook(repo), FOREIGN)
    code, out = _cli(repo, env, "install")
    assert code == 2
    assert "not GitNeural's" in out and "--chain" in out and "--force" in out
    assert _hook(repo).read_text() == FOREIGN


def test_chained_hook_runs_first_and_uninstall_restores_it(repo: Path, env: dict[str, str]) -> None:
    _write_hook(_hook(repo), FOREIGN)
    code, out = _cli(repo, env, "install", "--chain")
    assert code == 0, out
    assert MARKER in _hook(repo).read_text()
    assert (_hook(repo).parent / f"pre-commit{CHAINED_SUFFIX}").read_text() == FOREIGN
    stage(pygit2.Repository(str(repo)), {"people.py": PLANTED})
    with K3Stub([submit()]) as stub:
        result = git(repo, {**env, **stub_env(stub)}, "commit", "-m", "planted")
        assert len(stub.chat_requests) == 1
    assert result.returncode == 1
    assert HEADLINE in result.stderr
    assert (repo / ".git" / "foreign.log").read_text() == "foreign hook ran\n"

    code, out = _cli(repo, env, "uninstall")
    assert code == 0 and "restored" in out
    assert _hook(repo).read_text() == FOREIGN
    assert os.access(_hook(repo), os.X_OK)
    assert not (_hook(repo).parent / f"pre-commit{CHAINED_SUFFIX}").exists()


def test_a_failing_chained_hook_stops_the_commit_before_any_review(
    repo: Path, env: dict[str, str]
) -> None:
    _write_hook(_hook(repo), FAILING)
    assert _cli(repo, env, "install", "--chain")[0] == 0
    stage(pygit2.Repository(str(repo)), {"people.py": PLANTED})
    before = head(repo, env)
    with K3Stub() as stub:
        result = git(repo, {**env, **stub_env(stub)}, "commit", "-m", "x")
        assert stub.requests == []
    assert result.returncode != 0
    assert "lint failed" in result.stderr
    assert head(repo, env) == before


def test_force_sets_the_hook_aside_and_uninstall_puts_it_back(
    repo: Path, env: dict[str, str]
) -> None:
    _write_hook(_hook(repo), FAILING)
    assert _cli(repo, env, "install", "--force")[0] == 0
    stage(pygit2.Repository(str(repo)), {"people.py": PLANTED})
    result = git(repo, {**env, "GITNEURAL_SKIP": "1"}, "commit", "-m", "x")
    assert result.returncode == 0, result.stderr  # the failing hook no longer runs
    assert "lint failed" not in result.stderr
    assert _cli(repo, env, "uninstall")[0] == 0
    assert _hook(repo).read_text() == FAILING


def test_reinstall_updates_in_place_and_uninstall_is_idempotent(
    repo: Path, env: dict[str, str]
) -> None:
    assert _cli(repo, env, "install")[0] == 0
    assert _cli(repo, env, "install")[0] == 0  # ours: replaced without --force
    assert stat.S_IMODE(_hook(repo).stat().st_mode) == 0o755
    assert _cli(repo, env, "uninstall")[0] == 0
    assert not _hook(repo).exists()
    code, out = _cli(repo, env, "uninstall")
    assert code == 0 and "nothing to do" in out


def test_uninstall_leaves_a_foreign_hook_alone(repo: Path, env: dict[str, str]) -> None:
    _write_hook(_hook(repo), FOREIGN)
    code, out = _cli(repo, env, "uninstall")
    assert code == 2 and "not GitNeural's" in out
    assert _hook(repo).read_text() == FOREIGN


def test_core_hooks_path_is_honoured(repo: Path, env: dict[str, str]) -> None:
    git(repo, env, "config", "core.hooksPath", "shared-hooks")
    (repo / "sub").mkdir()
    assert _cli(repo / "sub", env, "install")[0] == 0  # from a subdirectory
    assert MARKER in (repo / "shared-hooks" / "pre-commit").read_text()
    assert not _hook(repo).exists()
    stage(pygit2.Repository(str(repo)), {"people.py": PLANTED})
    with K3Stub([submit()]) as stub:
        result = git(repo, {**env, **stub_env(stub)}, "commit", "-m", "x")
    assert result.returncode == 1 and HEADLINE in result.stderr


def test_linked_worktree_installs_into_the_shared_hooks(
    repo: Path, env: dict[str, str], tmp_path: Path
) -> None:
    linked = tmp_path / "linked"
    assert git(repo, env, "worktree", "add", "-b", "side", str(linked)).returncode == 0
    assert _cli(linked, env, "install")[0] == 0
    assert MARKER in _hook(repo).read_text()
    (linked / "people.py").write_text(PLANTED)
    assert git(linked, env, "add", "people.py").returncode == 0
    with K3Stub([submit()]) as stub:
        result = git(linked, {**env, **stub_env(stub)}, "commit", "-m", "x")
        prompt = "".join(str(m["content"]) for m in stub.chat_requests[0].body["messages"])
    assert result.returncode == 1
    assert "return age > 18" in prompt  # the linked worktree's own index


def test_script_falls_back_to_path_and_says_when_gitneural_is_gone(
    repo: Path, env: dict[str, str]
) -> None:
    install(repo, python="/nonexistent/venv/bin/python")
    stage(pygit2.Repository(str(repo)), {"people.py": ORIGINAL + "# more\n"})
    bare_path = "/usr/bin:/bin"
    gone = git(repo, {**env, "PATH": bare_path}, "commit", "-m", "x")
    assert gone.returncode == 1
    assert "/nonexistent/venv/bin/python is gone" in gone.stderr
    assert "gitneural hook install --force" in gone.stderr
    venv_bin = str(Path(GITNEURAL).parent)
    found = git(repo, {**env, "PATH": f"{venv_bin}:{bare_path}"}, "commit", "-m", "x")
    assert found.returncode == 0, found.stderr  # no key: fails open, through PATH
    assert "not reviewed, going ahead" in found.stderr


def test_outside_a_repository_is_a_clear_error(tmp_path: Path, env: dict[str, str]) -> None:
    outside = tmp_path / "nowhere"
    outside.mkdir()
    code, out = _cli(outside, {**env, "GIT_CEILING_DIRECTORIES": str(tmp_path)}, "install")
    assert code == 2 and "not a git repository" in out

"""The real pre-commit framework installs GitNeural from this repository and runs it.

pre-commit clones this repository at its committed HEAD (``.pre-commit-hooks.yaml`` and
the code as committed, not the work tree) and pip-installs it into an environment of its
own: slow, so it happens once per test run under a shared ``PRE_COMMIT_HOME``. The
hook process reaches the K3 stub of the test process through ``KIMI_BASE_URL``.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pygit2
import pytest

from tests.fakes.k3 import K3Stub
from tests.support.hook import (
    FIXED,
    HEADLINE,
    VENV_BIN,
    clean_env,
    git,
    head,
    prompt_of,
    run,
    stub_env,
    submit,
)
from tests.support.once import built_once
from tests.support.paths import ROOT
from tests.support.planted import ORIGINAL, PLANTED
from tests.support.repos import commit, make_repo, stage

PROJECT = ROOT
PRE_COMMIT = str(VENV_BIN / "pre-commit")

pytestmark = pytest.mark.slow


@pytest.fixture(scope="session")
def project_rev() -> str:
    out = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=PROJECT, capture_output=True, text=True, check=False
    )
    if out.returncode != 0:
        pytest.skip("the project is not a git checkout: pre-commit installs from a commit")
    rev = out.stdout.strip()
    manifest = subprocess.run(
        ["git", "cat-file", "-e", f"{rev}:.pre-commit-hooks.yaml"], cwd=PROJECT, check=False
    )
    assert manifest.returncode == 0, "commit .pre-commit-hooks.yaml before running this test"
    return rev


def _config(rev: str) -> str:
    return f"repos:\n  - repo: {PROJECT}\n    rev: {rev}\n    hooks: [{{id: gitneural}}]\n"


@pytest.fixture(scope="session")
def framework_env(tmp_path_factory: pytest.TempPathFactory, project_rev: str) -> dict[str, str]:
    """An environment whose PRE_COMMIT_HOME already holds GitNeural's hook environment
    (installed once per run; pre-commit locks its own store, so workers may share it)."""

    def install_hooks(tmp: Path) -> None:
        env = clean_env(tmp, PRE_COMMIT_HOME=str(tmp / "home"))
        scratch = tmp / "scratch"
        commit(make_repo(scratch), {".pre-commit-config.yaml": _config(project_rev)}, "config")
        done = run([PRE_COMMIT, "install-hooks"], scratch, env)
        assert done.returncode == 0, done.stdout + done.stderr

    tmp = built_once(tmp_path_factory, "pre-commit", install_hooks)
    return clean_env(tmp, PRE_COMMIT_HOME=str(tmp / "home"))


def _repo(tmp_path: Path, rev: str, env: dict[str, str], *hook_types: str) -> Path:
    path = tmp_path / "repo"
    repo = make_repo(path)
    files = {".pre-commit-config.yaml": _config(rev), "people.py": ORIGINAL}
    commit(repo, files, "initial")
    types = [arg for t in hook_types for arg in ("--hook-type", t)]
    installed = run([PRE_COMMIT, "install", *types], path, env)
    assert installed.returncode == 0, installed.stderr
    return path


def test_commit_refused_then_fixed_then_offline_goes_through(
    tmp_path: Path, project_rev: str, framework_env: dict[str, str]
) -> None:
    env = {**framework_env, "GITNEURAL_DATA_DIR": str(tmp_path / "data")}
    path = _repo(tmp_path, project_rev, env, "pre-commit")
    repo = pygit2.Repository(str(path))
    start = head(path, env)
    stage(repo, {"people.py": PLANTED})
    with K3Stub([submit(), submit([])]) as stub:
        online = {**env, **stub_env(stub)}
        refused = git(path, online, "commit", "-m", "planted")
        assert "return age > 18" in prompt_of(stub)
        out = refused.stdout + refused.stderr
        assert refused.returncode == 1, out
        assert HEADLINE in out and "Failed" in out
        assert head(path, env) == start

        stage(repo, {"people.py": FIXED})
        fixed = git(path, online, "commit", "-m", "fixed")
        assert fixed.returncode == 0, fixed.stdout + fixed.stderr
        assert "No findings." in fixed.stdout + fixed.stderr  # verbose: shown on success
    after_fix = head(path, env)
    assert after_fix != start

    # The stub is gone: the commit goes ahead with one warning line.
    stage(repo, {"people.py": FIXED + "# offline\n"})
    offline = git(path, {**env, **stub_env(stub)}, "commit", "-m", "offline")
    out = offline.stdout + offline.stderr
    assert offline.returncode == 0, out
    warnings = [ln for ln in out.splitlines() if ln.startswith("gitneural")]
    assert len(warnings) == 1 and "not reviewed, going ahead" in warnings[0], out
    assert head(path, env) != after_fix


def test_pre_push_stage_reviews_the_pushed_range(
    tmp_path: Path, project_rev: str, framework_env: dict[str, str]
) -> None:
    env = {**framework_env, "GITNEURAL_DATA_DIR": str(tmp_path / "data")}
    path = _repo(tmp_path, project_rev, env, "pre-push")
    remote = tmp_path / "remote.git"
    pygit2.init_repository(str(remote), bare=True, initial_head="main")
    assert git(path, env, "remote", "add", "origin", str(remote)).returncode == 0
    first = git(path, {**env, "SKIP": "gitneural"}, "push", "-q", "origin", "main")
    assert first.returncode == 0, first.stderr
    commit(pygit2.Repository(str(path)), {"people.py": PLANTED}, "planted")
    with K3Stub([submit()]) as stub:
        pushed = git(path, {**env, **stub_env(stub)}, "push", "origin", "main")
        prompt = prompt_of(stub)
    out = pushed.stdout + pushed.stderr
    assert pushed.returncode != 0, out
    assert HEADLINE in out
    assert "return age > 18" in prompt and ".pre-commit-config.yaml" not in prompt

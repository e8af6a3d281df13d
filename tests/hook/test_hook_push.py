"""The pre-push stage: the pushed commits are reviewed, from git's lines or the framework's refs."""

from __future__ import annotations

from pathlib import Path

import pygit2
import pytest

from tests.fakes.k3 import K3Stub
from tests.support.hook import (
    GITNEURAL,
    HEADLINE,
    git,
    hook_run,
    prompt_of,
    run,
    stub_env,
    submit,
)
from tests.support.planted import ORIGINAL, PLANTED
from tests.support.repos import commit, make_repo


@pytest.fixture
def pushed(tmp_path: Path, env: dict[str, str]) -> tuple[Path, pygit2.Repository]:
    """A clone whose main is pushed to a bare remote, with the pre-push hook installed."""
    remote = tmp_path / "remote.git"
    pygit2.init_repository(str(remote), bare=True, initial_head="main")
    path = tmp_path / "work"
    repo = make_repo(path)
    commit(repo, {"people.py": ORIGINAL, "README.md": "people\n"}, "initial")
    assert git(path, env, "remote", "add", "origin", str(remote)).returncode == 0
    assert git(path, env, "push", "-q", "origin", "main").returncode == 0
    result = run([GITNEURAL, "hook", "install", "--hook-type", "pre-push"], path, env)
    assert result.returncode == 0, result.stderr
    return path, repo


def _remote_main(path: Path, env: dict[str, str]) -> str:
    return git(path, env, "ls-remote", "origin", "refs/heads/main").stdout.split()[0]


def test_push_of_a_planted_bug_is_refused(
    pushed: tuple[Path, pygit2.Repository], env: dict[str, str]
) -> None:
    path, repo = pushed
    before = _remote_main(path, env)
    commit(repo, {"people.py": PLANTED}, "planted")
    commit(repo, {"NOTES.md": "later\n"}, "notes")
    with K3Stub([submit()]) as stub:
        result = git(path, {**env, **stub_env(stub)}, "push", "origin", "main")
        prompt = prompt_of(stub)
    assert result.returncode != 0
    assert HEADLINE in result.stdout + result.stderr
    assert "return age > 18" in prompt and "NOTES.md" in prompt  # both pushed commits
    assert _remote_main(path, env) == before


def test_new_branch_reviews_only_its_own_commits(
    pushed: tuple[Path, pygit2.Repository], env: dict[str, str]
) -> None:
    path, repo = pushed
    main = repo.head.target
    commit(
        repo,
        {"feature.py": "def f():\n    return 1\n"},
        "feature",
        branch="feature",
        parents=[main],
    )
    with K3Stub([submit([])]) as stub:
        result = git(path, {**env, **stub_env(stub)}, "push", "origin", "feature")
        prompt = prompt_of(stub)
    assert result.returncode == 0, result.stderr
    assert "feature.py" in prompt
    assert "people.py" not in prompt  # already on the remote


def test_deleting_a_remote_branch_sends_nothing(
    pushed: tuple[Path, pygit2.Repository], env: dict[str, str]
) -> None:
    path, _repo = pushed
    assert (
        git(path, {**env, "GITNEURAL_SKIP": "1"}, "push", "-q", "origin", "main:gone").returncode
        == 0
    )
    with K3Stub() as stub:
        result = git(path, {**env, "KIMI_BASE_URL": stub.base_url}, "push", "origin", ":gone")
        assert stub.requests == []
    assert result.returncode == 0, result.stderr


def test_framework_refs_name_the_range(tmp_path: Path, env: dict[str, str]) -> None:
    path = tmp_path / "repo"
    repo = make_repo(path)
    first = commit(repo, {"people.py": ORIGINAL}, "initial")
    second = commit(repo, {"people.py": PLANTED}, "planted")
    refs = {
        "PRE_COMMIT_FROM_REF": str(first.id),
        "PRE_COMMIT_TO_REF": str(second.id),
        "PRE_COMMIT_REMOTE_NAME": "origin",
        "PRE_COMMIT_LOCAL_BRANCH": "refs/heads/main",
    }
    with K3Stub([submit()]) as stub:
        result = hook_run(path, {**env, **stub_env(stub), **refs})
        prompt = prompt_of(stub)
    assert result.returncode == 1
    assert "return age > 18" in prompt
    assert HEADLINE in result.stdout


def test_framework_push_from_a_root_commit_is_not_reviewed(
    tmp_path: Path, env: dict[str, str]
) -> None:
    path = tmp_path / "repo"
    commit(make_repo(path), {"people.py": PLANTED}, "initial")
    with K3Stub() as stub:
        result = hook_run(
            path, {**env, "KIMI_BASE_URL": stub.base_url, "PRE_COMMIT_REMOTE_NAME": "origin"}
        )
        assert stub.requests == []
    assert result.returncode == 0
    assert "root commit" in result.stderr


def test_malformed_push_lines_fail_open_with_one_line(tmp_path: Path, env: dict[str, str]) -> None:
    path = tmp_path / "repo"
    commit(make_repo(path), {"people.py": ORIGINAL}, "initial")
    result = run(
        [GITNEURAL, "hook", "run", "--stage", "pre-push", "--", "origin", "url"],
        path,
        env,
        stdin="this is not a ref line\n",
    )
    assert result.returncode == 0
    assert "not a pre-push line" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1

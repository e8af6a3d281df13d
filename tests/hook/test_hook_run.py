"""``gitneural hook run`` and the installed hook with real ``git commit``, against the K3 stub."""

from __future__ import annotations

import sys
from pathlib import Path

import pygit2
import pytest

from tests.fakes.k3 import K3Stub, Reply
from tests.support.hook import (
    FIXED,
    GITNEURAL,
    HEADLINE,
    dead_url,
    git,
    head,
    hook_run,
    prompt_of,
    run,
    stub_env,
    submit,
    tree_digest,
)
from tests.support.planted import ORIGINAL, PLANTED, PLANTED_BUG
from tests.support.repos import commit, make_repo, stage, write_worktree


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    r = make_repo(path)
    commit(r, {"people.py": ORIGINAL, "README.md": "people\n"}, "initial")
    return path


def handle(path: Path) -> pygit2.Repository:
    return pygit2.Repository(str(path))


def _install(repo: Path, env: dict[str, str], *args: str) -> None:
    result = run([GITNEURAL, "hook", "install", *args], repo, env)
    assert result.returncode == 0, result.stderr


def test_git_commit_refused_on_planted_bug_then_goes_through_after_fix(
    repo: Path, env: dict[str, str]
) -> None:
    _install(repo, env)
    before = head(repo, env)
    stage(handle(repo), {"people.py": PLANTED})
    with K3Stub([submit(), submit([])]) as stub:
        full = {**env, **stub_env(stub)}
        refused = git(repo, full, "commit", "-m", "planted")
        assert refused.returncode == 1
        # git sends a hook's stdout to its own stderr.
        assert HEADLINE in refused.stderr
        assert "+    return age >= 18" in refused.stderr
        assert "refused: 1 finding at or above critical" in refused.stderr
        assert head(repo, env) == before
        assert "return age > 18" in prompt_of(stub, 0)
        assert "Also write `walkthrough`" not in prompt_of(stub, 0)  # none in the hook

        stage(handle(repo), {"people.py": FIXED})
        done = git(repo, full, "commit", "-m", "fixed")
        assert done.returncode == 0, done.stdout + done.stderr
        assert "No findings." in done.stderr
        assert len(stub.chat_requests) == 2
    assert head(repo, env) != before


def test_stub_down_commit_goes_through_with_one_warning_line_and_strict_refuses(
    repo: Path, env: dict[str, str]
) -> None:
    _install(repo, env)
    down = {**env, "KIMI_API_KEY": "sk-unused", "KIMI_BASE_URL": dead_url()}
    stage(handle(repo), {"people.py": PLANTED})
    before = head(repo, env)
    done = git(repo, down, "commit", "-m", "while offline")
    assert done.returncode == 0, done.stderr
    lines = [ln for ln in done.stderr.splitlines() if ln.startswith("gitneural")]
    assert len(lines) == 1, done.stderr
    assert "warning: not reviewed, going ahead" in lines[0]
    assert "connection refused" in lines[0] and "KIMI_BASE_URL" in lines[0]
    assert "Traceback" not in done.stderr
    assert head(repo, env) != before

    # strict = true at HEAD (the trusted revision) refuses the next one.
    commit(handle(repo), {".gitneural.toml": "[hook]\nstrict = true\n"}, "strict")
    stage(handle(repo), {"people.py": FIXED})
    strict_head = head(repo, env)
    refused = git(repo, down, "commit", "-m", "while offline, strict")
    assert refused.returncode != 0
    assert "refused: the review could not run (strict)" in refused.stderr
    assert head(repo, env) == strict_head
    # The flag wins over the file.
    assert hook_run(repo, down, "--no-strict").returncode == 0


def test_staged_config_cannot_loosen_the_policy(repo: Path, env: dict[str, str]) -> None:
    commit(handle(repo), {".gitneural.toml": "[hook]\nstrict = true\n"}, "strict")
    stage(
        handle(repo),
        {"people.py": PLANTED, ".gitneural.toml": "[hook]\nstrict = false\n"},
    )
    result = hook_run(repo, env)  # no key at all
    assert result.returncode == 2
    assert "KIMI_API_KEY" in result.stderr and "strict" in result.stderr


def test_partially_staged_file_is_reviewed_as_staged(repo: Path, env: dict[str, str]) -> None:
    r = handle(repo)
    stage(r, {"people.py": PLANTED})
    unstaged = PLANTED.replace("'hi ' + name", "'UNSTAGED-EDIT ' + name")
    write_worktree(r, {"people.py": unstaged})
    _install(repo, env)
    with K3Stub([submit()]) as stub:
        result = git(repo, {**env, **stub_env(stub)}, "commit", "-m", "partial")
        prompt = prompt_of(stub)
    assert result.returncode == 1
    assert "return age > 18" in prompt
    assert "UNSTAGED-EDIT" not in prompt
    assert (repo / "people.py").read_text() == unstaged  # the work tree kept as it was


def test_commit_all_reviews_what_git_commit_a_records(repo: Path, env: dict[str, str]) -> None:
    """``git commit -a`` hands the hook a temporary index (GIT_INDEX_FILE)."""
    write_worktree(handle(repo), {"people.py": PLANTED})  # not staged
    _install(repo, env)
    with K3Stub([submit()]) as stub:
        result = git(repo, {**env, **stub_env(stub)}, "commit", "-a", "-m", "all")
        prompt = prompt_of(stub)
    assert result.returncode == 1, result.stderr
    assert "return age > 18" in prompt
    assert HEADLINE in result.stderr


def test_hook_changes_no_file_and_patch_out_applies(
    repo: Path, env: dict[str, str], tmp_path: Path
) -> None:
    r = handle(repo)
    stage(r, {"people.py": PLANTED})
    write_worktree(r, {"README.md": "people, unstaged\n"})
    before = tree_digest(repo)
    patch = tmp_path / "suggestions.patch"
    with K3Stub([submit()]) as stub:
        result = hook_run(repo, {**env, **stub_env(stub)}, "--patch-out", str(patch))
    assert result.returncode == 1
    assert f"Wrote 1 suggestion(s) to {patch}" in result.stdout
    assert tree_digest(repo) == before  # work tree, index and .git byte-identical
    check = git(repo, env, "apply", "--cached", str(patch))
    assert check.returncode == 0, check.stderr
    assert git(repo, env, "show", ":people.py").stdout == ORIGINAL


def test_suggestions_print_as_a_patch_without_patch_out(repo: Path, env: dict[str, str]) -> None:
    stage(handle(repo), {"people.py": PLANTED})
    minor = dict(PLANTED_BUG, severity="minor")
    with K3Stub([submit([minor])]) as stub:
        result = hook_run(repo, {**env, **stub_env(stub)})
    assert result.returncode == 0  # minor is below fail_on = critical
    text = result.stdout
    assert "Suggested patch (1 suggestion(s)" in text
    patch = text[text.index("diff --git a/people.py b/people.py") :]
    assert "-    return age > 18\n+    return age >= 18\n" in patch


@pytest.mark.parametrize(
    ("setup", "words"),
    [
        ("empty", "nothing staged"),
        ("deletions", "only deletions"),
        ("merge", "merge commit"),
        ("skip", "SKIP names gitneural"),
        ("gitneural_skip", "GITNEURAL_SKIP is set"),
    ],
)
def test_quick_exits_send_nothing_and_need_no_key(
    repo: Path, env: dict[str, str], setup: str, words: str
) -> None:
    r = handle(repo)
    extra: dict[str, str] = {}
    if setup == "deletions":
        stage(r, {"README.md": None})
    elif setup == "merge":
        base = r.head.target
        commit(r, {"other.py": "x = 1\n"}, "other", branch="feature", parents=[base])
        commit(r, {"people.py": PLANTED}, "main moves on")
        merged = git(repo, env, "merge", "--no-commit", "--no-ff", "feature")
        assert merged.returncode == 0, merged.stderr
    elif setup in ("skip", "gitneural_skip"):
        stage(r, {"people.py": PLANTED})
        extra = {"SKIP": "flake8,gitneural"} if setup == "skip" else {"GITNEURAL_SKIP": "1"}
    with K3Stub() as stub:
        result = hook_run(repo, {**env, **extra, "KIMI_BASE_URL": stub.base_url})
        assert stub.requests == []
    assert result.returncode == 0, result.stderr
    assert words in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_cached_result_is_reused_and_exit_code_follows_current_policy(
    repo: Path, env: dict[str, str]
) -> None:
    stage(handle(repo), {"people.py": PLANTED})
    major = dict(PLANTED_BUG, severity="major")
    with K3Stub([submit([major])]) as stub:
        full = {**env, **stub_env(stub)}
        first = hook_run(repo, full)
        assert first.returncode == 0  # major < critical
        second = hook_run(repo, full, "--fail-on", "major")
        assert len(stub.chat_requests) == 1  # answered from the cache
    assert second.returncode == 1
    assert "cached review" in second.stderr
    assert first.stdout.split("Usage:")[0] == second.stdout.split("Usage:")[0]


def test_failures_are_not_cached_and_effort_is_part_of_the_key(
    repo: Path, env: dict[str, str]
) -> None:
    stage(handle(repo), {"people.py": PLANTED})
    with K3Stub() as stub:
        full = {**env, **stub_env(stub)}
        stub.push(Reply.http_error(429, "exceeded_current_quota_error", "quota exceeded"))
        failed = hook_run(repo, full)
        assert failed.returncode == 0
        assert "quota" in failed.stderr
        stub.push(submit())
        assert hook_run(repo, full).returncode == 1  # reviewed, not a cached failure
        stub.push(submit([]))
        assert hook_run(repo, full, "--effort", "high").returncode == 0
        bodies = [r.body for r in stub.chat_requests]
    assert [b["reasoning_effort"] for b in bodies] == ["low", "low", "high"]


def test_timeout_fails_open_with_one_line(repo: Path, env: dict[str, str]) -> None:
    stage(handle(repo), {"people.py": PLANTED})
    with K3Stub([Reply(delay=5.0)]) as stub:
        result = hook_run(repo, {**env, **stub_env(stub)}, "--timeout", "1")
    assert result.returncode == 0
    (line,) = [ln for ln in result.stderr.splitlines() if ln.startswith("gitneural")]
    assert "within the hook's 1s" in line
    # The setting that gives it more time, and no advice to lower an effort already low.
    assert "timeout in [hook] of .gitneural.toml" in line and "lower effort" not in line


def test_hook_path_imports_no_web_stack(repo: Path, env: dict[str, str]) -> None:
    """In-process: what the hook leaves in sys.modules after a fail-open run and a skip."""
    stage(handle(repo), {"people.py": PLANTED})
    code = (
        "import sys\n"
        "from bot.cli.main import main\n"
        "rc = main(['hook', 'run', '--quiet'])\n"
        "heavy = sorted({m.split('.')[0] for m in sys.modules} & "
        "{'flask', 'celery', 'github', 'openai', 'kombu', 'redis', 'sqlalchemy'})\n"
        "print('HEAVY', ','.join(heavy))\n"
    )
    no_key = run([sys.executable, "-c", code], repo, env)
    assert no_key.returncode == 0, no_key.stderr
    assert "HEAVY \n" in no_key.stdout  # no key: fails open before the SDK is needed
    with K3Stub([submit()]) as stub:
        reviewed = run([sys.executable, "-c", code], repo, {**env, **stub_env(stub)})
        cached = run([sys.executable, "-c", code], repo, {**env, **stub_env(stub)})
    assert "HEAVY openai\n" in reviewed.stdout  # a request was sent: openai only
    assert "HEAVY \n" in cached.stdout  # a cache hit needs no SDK


def test_a_cache_hit_loads_no_review_stage(repo: Path, env: dict[str, str]) -> None:
    """The hook keys its cache on the staged change and the prompt's version: a hit loads
    neither the plan nor the pipeline nor the answers (``bot.review`` loads each name on
    first use), nor ``importlib.metadata``, which only the line for a missing extra needs."""
    stage(handle(repo), {"people.py": PLANTED})
    code = (
        "import sys\n"
        "from bot.cli.main import main\n"
        "rc = main(['hook', 'run', '--quiet'])\n"
        "print('LOADED', ','.join(sorted(set(sys.argv[1:]) & set(sys.modules))))\n"
    )
    late = ["bot.review.pipeline", "bot.review.answers.run", "bot.review.answers.describe"]
    probe = [sys.executable, "-c", code, *late, "importlib.metadata", "bot.review.plan"]
    with K3Stub([submit()]) as stub:
        reviewed = run(probe, repo, {**env, **stub_env(stub)})
        cached = run(probe, repo, {**env, **stub_env(stub)})
    assert reviewed.returncode == cached.returncode == 0, reviewed.stderr + cached.stderr
    # A request sent: the pipeline, and importlib.metadata with the SDK.
    assert "LOADED bot.review.pipeline,bot.review.plan,importlib.metadata\n" in reviewed.stdout
    assert "LOADED \n" in cached.stdout  # a hit: the cache key needs no plan either

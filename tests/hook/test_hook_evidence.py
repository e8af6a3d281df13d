"""The hook applies the evidence rule: a finding whose quoted code is not in the staged
file never refuses a commit, and the hook says how many it held back (cached runs too)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.k3 import K3Stub
from tests.support.hook import GITNEURAL, HEADLINE, git, head, hook_run, run, stub_env, submit
from tests.support.planted import INVENTED_EVIDENCE, ORIGINAL, PLANTED, PLANTED_BUG
from tests.support.repos import commit, make_repo, stage

INVENTED = dict(PLANTED_BUG, evidence=INVENTED_EVIDENCE)
COUNT = "1 finding dropped: quoted code not found"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    r = make_repo(path)
    commit(r, {"people.py": ORIGINAL, "README.md": "people\n"}, "initial")
    stage(r, {"people.py": PLANTED})
    return path


def test_an_invented_quote_does_not_refuse_the_commit(repo: Path, env: dict[str, str]) -> None:
    installed = run([GITNEURAL, "hook", "install"], repo, env)
    assert installed.returncode == 0, installed.stderr
    before = head(repo, env)
    with K3Stub([submit([INVENTED])]) as stub:
        done = git(repo, {**env, **stub_env(stub)}, "commit", "-m", "planted")
    # git shows the hook's output on its stderr.
    assert done.returncode == 0, done.stderr
    assert head(repo, env) != before
    assert "No findings.\n" + COUNT in done.stderr
    assert "quoted code not found in new-file lines 1-5" in done.stderr
    assert "refused" not in done.stderr


def test_a_real_quote_with_other_indentation_refuses_it(repo: Path, env: dict[str, str]) -> None:
    quoted = dict(PLANTED_BUG, evidence="return age  >  18")
    with K3Stub([submit([quoted])]) as stub:
        refused = hook_run(repo, {**env, **stub_env(stub)})
    assert refused.returncode == 1
    assert HEADLINE in refused.stdout and "dropped" not in refused.stdout


def test_the_cached_result_keeps_the_count(repo: Path, env: dict[str, str]) -> None:
    with K3Stub([submit([INVENTED, PLANTED_BUG])]) as stub:
        full = {**env, **stub_env(stub)}
        first = hook_run(repo, full)
        again = hook_run(repo, full)
        asked = len(stub.chat_requests)
    assert asked == 1  # the second run came from the cache
    for result in (first, again):
        assert result.returncode == 1
        assert HEADLINE in result.stdout and COUNT in result.stdout

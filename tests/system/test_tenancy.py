"""Tenancy: one worker serves many installations, and nothing of one reaches another.

Two installations own a repository of the same name (``alpha/app``, ``beta/app``) with
different code. One worker context (one token cache, one mirror cache, as in a worker
process) reviews both, interleaved. The fake GitHub logs which installation's token
every API and git request carried; the K3 stub records what the model was shown.

Also: a clone URL the API reports on another host than ``GITHUB_API_URL``'s is refused
before any git request, so the installation token never leaves for it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pygit2
import pytest

from bot.jobs import ReviewJob
from bot.usecases.review.run import run_review_job
from tests.fakes.github import FakeGitHub
from tests.fakes.k3 import K3Stub, Reply
from tests.support.faults import assert_no_traceback
from tests.support.job_world import make_context

TENANTS = {1: "alpha/app", 2: "beta/app"}
SECRETS = {1: "ALPHA_ONLY_7f3a", 2: "BETA_ONLY_c91d"}


def nothing() -> Reply:
    return Reply(tool_calls=[("submit_review", {"summary": "Fine.", "findings": []})])


def job(gh: FakeGitHub, installation: int, trigger: str = "opened", **kw: Any) -> ReviewJob:
    repo = kw.pop("repo", TENANTS[installation])
    return ReviewJob(
        installation_id=installation,
        repo=repo,
        pr_number=1,
        head_sha=kw.pop("head_sha", None if trigger == "command" else gh.head_sha(repo, 1)),
        trigger=trigger,
        delivery_id=f"{installation}-{repo}-{trigger}-{len(gh.requests())}",
        **kw,
    )


def owner_of(path: str) -> int | None:
    """The installation a logged request's path belongs to (API or git)."""
    for installation, repo in TENANTS.items():
        if path.startswith((f"/repos/{repo}/", f"/{repo}.git/")):
            return installation
    return None


def files_of(installation: int) -> dict[str, str]:
    mark = SECRETS[installation]
    return {
        "app.py": f"TOKEN_NAME = '{mark}'\n\ndef run(x):\n    return x + 1\n",
        ".gitneural.toml": '[review]\neffort = "low"\n',
    }


@pytest.fixture
def tenants(tmp_path: Path) -> Any:
    with FakeGitHub(tmp_path / "gh") as gh, K3Stub() as stub:
        for installation, repo in TENANTS.items():
            gh.create_repo(repo, installation_id=installation, files=files_of(installation))
            changed = files_of(installation)["app.py"].replace("x + 1", "x + 2")
            gh.push(repo, "feature", {"app.py": changed}, "Change run")
            gh.create_pull(repo, head="feature", title="Change run", body="")
        yield gh, stub, make_context(gh, stub, tmp_path / "worker")
        assert gh.forbidden_requests() == []


def test_each_installation_s_token_and_mirror_serve_only_its_own_repository(
    tenants: Any,
) -> None:
    gh, stub, ctx = tenants
    stub.push(*[nothing() for _ in range(4)])
    runs = [(1, "opened"), (2, "opened")]
    outcomes = [run_review_job(job(gh, i, t), ctx) for i, t in runs]
    for installation, repo in TENANTS.items():  # a push to each, reviewed interleaved
        gh.push(repo, "feature", {"more.py": f"m = {installation}\n"})
    outcomes += [run_review_job(job(gh, i, "synchronize"), ctx) for i in (2, 1)]
    assert [o.status for o in outcomes] == ["posted"] * 4

    # Every request about a tenant's repository carried that tenant's token (libgit2
    # first asks without credentials, as git does).
    requests = [r for r in gh.requests() if r.kind in ("api", "git")]
    assert requests and all(r.auth != "invalid" for r in requests)
    for r in requests:
        owner = owner_of(r.path)
        if owner is not None:
            assert r.auth in (f"installation:{owner}", "anonymous"), (r.method, r.path, r.auth)
            assert r.auth != "anonymous" or r.kind == "git"
    minted = {t.value: t.installation_id for t in gh.store.tokens.values()}
    assert sorted(minted.values()) == [1, 2]  # one token each, cached across the jobs

    # One mirror per installation, holding only its own repository's commits.
    for installation, repo in TENANTS.items():
        other = 3 - installation
        mine = pygit2.Repository(str(ctx.mirrors.path_for(installation, gh.clone_url(repo))))
        assert gh.head_sha(repo, 1) in mine
        assert gh.head_sha(TENANTS[other], 1) not in mine
        assert not ctx.mirrors.path_for(other, gh.clone_url(repo)).exists()

    # The model saw each tenant's code in that tenant's reviews only.
    prompts = [r.raw for r in stub.chat_requests]
    order = [1, 2, 2, 1]
    for installation, prompt in zip(order, prompts, strict=True):
        assert SECRETS[installation] in prompt or "more.py" in prompt
        assert SECRETS[3 - installation] not in prompt


def test_a_job_naming_another_installation_s_repository_reads_nothing_of_it(
    tenants: Any,
) -> None:
    gh, stub, ctx = tenants
    stub.push(nothing(), nothing())
    assert run_review_job(job(gh, 1), ctx).status == "posted"  # alpha's mirror exists
    gh.clear_requests()
    # A job routed wrongly (or forged): installation 2, alpha's repository.
    wrong = job(gh, 2, repo=TENANTS[1])
    outcome = run_review_job(wrong, ctx)
    assert outcome.status == "gone"  # GitHub does not show alpha's PR to beta's token
    assert [r.auth for r in gh.requests(kind="api") if "/repos/" in r.path] == ["installation:2"]
    assert gh.requests(kind="git") == [] and len(stub.chat_requests) == 1
    assert not ctx.mirrors.path_for(2, gh.clone_url(TENANTS[1])).exists()
    assert gh.reviews(TENANTS[1], 1)[0]["body"].count("gitneural:v1") == 1
    assert len(gh.reviews(TENANTS[1], 1)) == 1


# -- clone URLs on another host ----------------------------------------------------------


def foreign_urls(gh: FakeGitHub, evil: FakeGitHub) -> list[str]:
    own = gh.clone_url(TENANTS[1])
    port = own.split(":")[2].split("/")[0]
    return [
        evil.clone_url(TENANTS[1]),  # another server (another port)
        own.replace("127.0.0.1", "localhost"),  # another host name for the same server
        own.replace("http://", "https://"),  # another scheme
        own.replace("http://", "http://x-access-token:leak@"),  # credentials in the URL
        own.replace(f":{port}/", f":{port}.evil.example/"),
        "https://github.com/alpha/app.git",  # real GitHub, not GITHUB_API_URL's
        "file:///etc/passwd",
        "ext::sh -c touch% /tmp/pwned",
    ]


def test_a_clone_url_on_another_host_is_refused_and_gets_no_token(
    tenants: Any, tmp_path: Path
) -> None:
    gh, stub, ctx = tenants
    with FakeGitHub(tmp_path / "evil") as evil:
        evil.create_repo(TENANTS[1], installation_id=1, files=files_of(1))
        urls = foreign_urls(gh, evil)
        stub.push(*[nothing() for _ in urls])
        for url in urls:
            gh.set_clone_url(TENANTS[1], url)
            gh.clear_requests()
            outcome = run_review_job(job(gh, 1, "command"), ctx)
            [check] = [c for c in gh.check_runs(TENANTS[1]) if c["conclusion"] == "failure"][-1:]
            assert outcome.status == "failed", url
            assert "GITHUB_API_URL" in check["output"]["summary"], url
            assert gh.requests(kind="git") == [], url
            assert "leak" not in check["output"]["summary"]
        assert evil.requests() == []  # the other server never heard from the worker
        assert stub.chat_requests == []
        assert gh.reviews(TENANTS[1], 1) == []
        assert_no_traceback(gh)
        assert not Path("/tmp/pwned").exists()

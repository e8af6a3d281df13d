"""The pygit2 mirror cache, fetching over real smart HTTP from the fake GitHub."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Iterator
from pathlib import Path

import pygit2
import pytest

from bot.errors import GitError
from bot.gh.mirrors.cache import (
    MirrorAuthError,
    MirrorBusyError,
    MirrorCache,
    MirrorError,
    MirrorHostError,
    MirrorNetworkError,
    MirrorNotFoundError,
)
from tests.fakes.github import FakeGitHub

REPO = "octo/app"
UPLOAD = f"/{REPO}.git/git-upload-pack"


@pytest.fixture
def gh(tmp_path: Path) -> Iterator[FakeGitHub]:
    with FakeGitHub(tmp_path / "gh") as fake:
        # A large blob makes a full fetch clearly bigger than an incremental one.
        big = os.urandom(300_000)
        fake.create_repo(REPO, installation_id=1, files={"a.py": "x = 1\n", "big.bin": big})
        fake.push(REPO, "feature", {"a.py": "x = 2\n"})
        fake.create_pull(REPO, head="feature")
        fake.create_repo("other/lib", installation_id=2)
        yield fake


@pytest.fixture
def cache(tmp_path: Path) -> MirrorCache:
    return MirrorCache(tmp_path / "mirrors")


def fetch(
    gh: FakeGitHub,
    cache: MirrorCache,
    refs: list[str],
    *,
    installation_id: int = 1,
    token: str | None = None,
    repo: str = REPO,
) -> pygit2.Repository:
    return cache.fetch(
        installation_id=installation_id,
        clone_url=gh.clone_url(repo),
        token=token or gh.mint_token(installation_id),
        api_url=gh.api_url,
        refs=refs,
    )


def target(repo: pygit2.Repository, ref: str) -> str:
    return str(repo.references[ref].resolve().target)


def test_first_fetch_brings_the_pull_request_and_its_base(
    gh: FakeGitHub, cache: MirrorCache
) -> None:
    mirror = fetch(gh, cache, ["refs/pull/1/head", "main"])
    assert mirror.is_bare
    assert target(mirror, "refs/pull/1/head") == gh.head_sha(REPO, 1)
    assert target(mirror, "refs/heads/main") == gh.branch_sha(REPO, "main")
    assert "refs/heads/feature" not in mirror.references  # only what was asked for
    assert Path(mirror.path).resolve() == cache.path_for(1, gh.clone_url(REPO)).resolve()
    assert gh.requests(kind="api") == []  # the code came by git alone


def test_later_fetches_are_incremental_and_follow_force_pushes(
    gh: FakeGitHub, cache: MirrorCache
) -> None:
    fetch(gh, cache, ["refs/pull/1/head", "main"])
    new_head = gh.push(REPO, "feature", {"b.py": "y = 3\n"})
    mirror = fetch(gh, cache, ["refs/pull/1/head", "main"])
    assert target(mirror, "refs/pull/1/head") == new_head
    first, second = (r.response_bytes for r in gh.requests("POST", UPLOAD))
    assert first > 300_000
    assert second < 5_000
    rewritten = gh.force_push(REPO, "feature", files={"c.py": "z\n"})
    mirror = fetch(gh, cache, ["refs/pull/1/head"])
    assert target(mirror, "refs/pull/1/head") == rewritten
    assert new_head not in {str(c.id) for c in mirror.walk(rewritten)}


def test_concurrent_fetches_into_one_mirror_take_turns(gh: FakeGitHub, cache: MirrorCache) -> None:
    # The first upload-pack answer is slow; a second fetch must not start meanwhile.
    gh.fail("POST", UPLOAD, status=502, times=1, delay=0.4)
    results: list[object] = []

    def worker() -> None:
        try:
            results.append(fetch(gh, cache, ["refs/pull/1/head"]))
        except MirrorError as exc:
            results.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    git = sorted(gh.requests(kind="git"), key=lambda r: r.time)
    [slow] = [r for r in git if r.fault == 502]
    later = [r for r in git if r.time > slow.time]
    assert later, "the second fetch never ran"
    assert all(r.time >= slow.done_at for r in later), "two fetches overlapped"
    failed = [r for r in results if isinstance(r, MirrorNetworkError)]
    fetched = [r for r in results if isinstance(r, pygit2.Repository)]
    assert (len(failed), len(fetched)) == (1, 1)
    assert failed[0].transient is True
    assert target(fetched[0], "refs/pull/1/head") == gh.head_sha(REPO, 1)


def _hold_lock(cache: MirrorCache, gh: FakeGitHub) -> int:
    """Take the mirror's lock as another worker would (its own open file: flock locks
    belong to the open file, so the cache's own open waits for it)."""
    path = cache.path_for(1, gh.clone_url(REPO))
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path.with_name(path.name + ".lock"), os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def _fetch_together(
    gh: FakeGitHub, cache: MirrorCache, ref_lists: list[list[str]]
) -> list[pygit2.Repository | MirrorError]:
    """Fetch each list of refs from its own thread while the lock is held elsewhere, then
    free the lock: every request is waiting when the first can fetch."""
    fd = _hold_lock(cache, gh)
    results: list[pygit2.Repository | MirrorError | None] = [None] * len(ref_lists)
    started = threading.Barrier(len(ref_lists) + 1)

    def worker(i: int) -> None:
        started.wait()
        try:
            results[i] = fetch(gh, cache, ref_lists[i])
        except MirrorError as exc:
            results[i] = exc

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(len(ref_lists))]
    try:
        for t in threads:
            t.start()
        started.wait()
        time.sleep(0.5)  # every thread is past its barrier and waiting on the lock
    finally:
        os.close(fd)
    for t in threads:
        t.join(timeout=30)
    assert all(r is not None for r in results), "a fetch never returned"
    return [r for r in results if r is not None]


def _fetches(gh: FakeGitHub) -> int:
    """Fetches that reached GitHub: each opens with one ref advertisement asked without
    credentials (libgit2 sends the token when GitHub asks for it)."""
    git = gh.requests("GET", f"/{REPO}.git/info/refs", kind="git")
    return len([r for r in git if r.auth == "anonymous"])


def test_requests_waiting_for_a_mirror_together_are_fetched_as_one(
    gh: FakeGitHub, cache: MirrorCache
) -> None:
    for i in range(5):
        gh.push(REPO, f"topic-{i}", {f"t{i}.py": f"t = {i}\n"})
        gh.create_pull(REPO, head=f"topic-{i}")
    numbers = range(1, 7)
    results = _fetch_together(gh, cache, [[f"refs/pull/{n}/head", "main"] for n in numbers])
    assert _fetches(gh) == 1  # six pull requests, one fetch
    for n, mirror in zip(numbers, results, strict=True):
        assert isinstance(mirror, pygit2.Repository)
        assert target(mirror, f"refs/pull/{n}/head") == gh.head_sha(REPO, n)


def test_a_batch_fails_together_and_a_missing_ref_fails_only_its_request(
    gh: FakeGitHub, cache: MirrorCache
) -> None:
    gh.fail("GET", f"/{REPO}.git/info/refs", status=503, times=1)
    failed = _fetch_together(gh, cache, [["refs/pull/1/head"], ["main"]])
    assert [type(r) for r in failed] == [MirrorNetworkError, MirrorNetworkError]
    assert all(isinstance(r, MirrorError) and r.transient for r in failed)
    mixed = _fetch_together(gh, cache, [["refs/pull/1/head"], ["refs/heads/gone"]])
    assert _fetches(gh) == 2
    assert isinstance(mixed[0], pygit2.Repository)
    assert target(mixed[0], "refs/pull/1/head") == gh.head_sha(REPO, 1)
    assert isinstance(mixed[1], MirrorNotFoundError) and "refs/heads/gone" in str(mixed[1])
    # A request arriving when nothing runs fetches at once, in a batch of its own.
    assert target(fetch(gh, cache, ["main"]), "refs/heads/main") == gh.branch_sha(REPO, "main")
    assert _fetches(gh) == 3


def test_a_lock_held_by_another_process_makes_the_fetch_wait(
    gh: FakeGitHub, tmp_path: Path
) -> None:
    cache = MirrorCache(tmp_path / "mirrors", lock_timeout_s=0.3)
    path = cache.path_for(1, gh.clone_url(REPO))
    path.parent.mkdir(parents=True)
    lock = path.with_name(path.name + ".lock")
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl, os, sys\n"
            f"fd = os.open({str(lock)!r}, os.O_RDWR | os.O_CREAT)\n"
            "fcntl.flock(fd, fcntl.LOCK_EX)\n"
            "print('locked', flush=True)\n"
            "sys.stdin.read()\n",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
        with pytest.raises(MirrorBusyError) as caught:
            fetch(gh, cache, ["main"])
        assert caught.value.transient is True
        assert gh.requests(kind="git") == []
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=10)
        if holder.stdout is not None:
            holder.stdout.close()
    assert target(fetch(gh, cache, ["main"]), "refs/heads/main") == gh.branch_sha(REPO, "main")


def test_a_clone_url_on_another_host_is_refused(gh: FakeGitHub, cache: MirrorCache) -> None:
    token = gh.mint_token(1)
    for url in (
        "https://evil.example/octo/app.git",
        gh.clone_url(REPO).replace("127.0.0.1", "localhost"),
        gh.clone_url(REPO).replace("http://", f"http://x-access-token:{token}@"),
    ):
        with pytest.raises(MirrorHostError) as caught:
            cache.fetch(
                installation_id=1, clone_url=url, token=token, api_url=gh.api_url, refs=["main"]
            )
        assert token not in str(caught.value)
        assert isinstance(caught.value, GitError)
    assert gh.requests() == []
    assert not cache.root.exists() or not any(cache.root.rglob("*.git"))


def test_the_token_is_never_stored_or_shown(gh: FakeGitHub, cache: MirrorCache) -> None:
    token = gh.mint_token(1)
    fetch(gh, cache, ["refs/pull/1/head", "main"], token=token)
    for file in cache.root.rglob("*"):
        if file.is_file():
            assert token.encode() not in file.read_bytes(), file
    config = (cache.path_for(1, gh.clone_url(REPO)) / "config").read_text()
    assert "127.0.0.1" not in config  # the remote is anonymous: not even the URL is kept
    gh.expire_tokens(1)
    with pytest.raises(MirrorAuthError) as refused:
        fetch(gh, cache, ["main"], token=token)
    assert token not in "".join(traceback.format_exception(refused.value))


def test_mirrors_are_kept_apart_per_installation(gh: FakeGitHub, cache: MirrorCache) -> None:
    mine = fetch(gh, cache, ["main"])
    with pytest.raises(MirrorNotFoundError):
        # Installation 2's token cannot read installation 1's repository...
        fetch(gh, cache, ["main"], installation_id=2)
    # ...and its (empty) mirror is not installation 1's.
    theirs = cache.path_for(2, gh.clone_url(REPO))
    assert theirs != Path(mine.path).resolve()
    assert "refs/heads/main" not in pygit2.Repository(str(theirs)).references
    other = fetch(gh, cache, ["main"], installation_id=2, repo="other/lib")
    assert Path(other.path).resolve() == cache.path_for(2, gh.clone_url("other/lib")).resolve()


def test_a_ref_gone_from_github_is_an_error_and_not_kept(
    gh: FakeGitHub, cache: MirrorCache
) -> None:
    gh.push(REPO, "topic", {"t.py": "t\n"})
    assert "refs/heads/topic" in fetch(gh, cache, ["topic", "main"]).references
    gh.delete_branch(REPO, "topic")
    with pytest.raises(MirrorNotFoundError, match="refs/heads/topic") as caught:
        fetch(gh, cache, ["topic", "main"])
    assert caught.value.transient is False
    mirror = pygit2.Repository(str(cache.path_for(1, gh.clone_url(REPO))))
    assert "refs/heads/topic" not in mirror.references
    assert "refs/heads/main" in mirror.references


def test_network_faults_are_transient(gh: FakeGitHub, cache: MirrorCache) -> None:
    gh.fail("GET", f"/{REPO}.git/info/refs", status=503, times=1)
    with pytest.raises(MirrorNetworkError) as caught:
        fetch(gh, cache, ["main"])
    assert caught.value.transient is True
    url = gh.clone_url(REPO)
    gh.stop()
    with pytest.raises(MirrorNetworkError):
        cache.fetch(
            installation_id=1,
            clone_url=url,
            token="ghs_" + "x" * 36,
            api_url=gh.api_url,
            refs=["x"],
        )


def test_bad_arguments_and_a_broken_mirror(gh: FakeGitHub, cache: MirrorCache) -> None:
    with pytest.raises(MirrorError, match="not a valid ref"):
        fetch(gh, cache, ["refs/heads/../evil"])
    with pytest.raises(MirrorError, match="no refs"):
        fetch(gh, cache, [])
    with pytest.raises(MirrorError, match="OWNER/REPO"):
        cache.path_for(1, "http://127.0.0.1/../../etc.git")
    broken = cache.path_for(1, gh.clone_url(REPO))
    broken.mkdir(parents=True)
    (broken / "HEAD").write_text("garbage")
    assert target(fetch(gh, cache, ["main"]), "refs/heads/main") == gh.branch_sha(REPO, "main")

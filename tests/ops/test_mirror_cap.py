"""``GITNEURAL_MIRROR_MAX_BYTES``: the mirror cache stays under its cap over reviews of 50
repositories (four at a time), least recently used mirrors are evicted and counted, a
mirror in use is never evicted, and a review whose mirror went between two jobs fetches
it again and posts."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from bot.errors import ConfigError
from bot.gh.mirrors.cache import MirrorCache
from bot.gh.mirrors.lru import max_bytes_from_env, tree_bytes
from bot.jobs import ReviewJob
from bot.metrics.exposition import render, scrape_registry
from bot.usecases.review.run import JobContext, run_review_job
from tests.fakes.github import FakeGitHub
from tests.fakes.k3 import K3Stub, Reply
from tests.support.job_world import CONFIG, make_context, submit
from tests.support.planted import ORIGINAL, PLANTED, PLANTED_BUG
from tests.support.scrape import parse


@dataclass
class Fleet:
    gh: FakeGitHub
    stub: K3Stub
    ctx: JobContext
    root: Path
    #: PR titles the model is slow to answer (a review in flight, holding its mirror).
    slow: dict[str, float]

    def brain(self, body: dict[str, Any]) -> Reply:
        text = str(body.get("messages"))
        for title, seconds in self.slow.items():
            if title in text:
                time.sleep(seconds)
        return submit(PLANTED_BUG)

    def repo(self, index: int) -> str:
        name = f"octo/repo-{index:02d}"
        self.gh.create_repo(
            name, installation_id=1, files={"people.py": ORIGINAL, ".gitneural.toml": CONFIG}
        )
        self.gh.push(name, "feature", {"people.py": PLANTED}, "Tighten is_adult")
        self.gh.create_pull(name, head="feature", title=f"Tighten {name}", body="Please")
        return name

    def job(self, repo: str, trigger: str = "opened") -> ReviewJob:
        return ReviewJob(1, repo, 1, self.gh.head_sha(repo, 1), trigger, f"{repo}-{trigger}")

    def mirror(self, repo: str) -> Path:
        return self.ctx.mirrors.path_for(1, self.gh.clone_url(repo))

    @property
    def disk(self) -> int:
        return tree_bytes(self.root / "mirrors")


@contextlib.contextmanager
def fleet(root: Path) -> Iterator[Fleet]:
    made: Fleet
    with (
        FakeGitHub(root / "gh") as gh,
        K3Stub(brain=lambda b: made.brain(b), check_history=False) as stub,
    ):
        made = Fleet(gh, stub, make_context(gh, stub, root), root, {})
        yield made
        assert gh.forbidden_requests() == []


def evictions() -> float:
    return parse(render(scrape_registry())[0].decode()).value("gitneural_mirror_evictions_total")


def test_the_cap_holds_over_50_repositories(tmp_path: Path) -> None:
    with fleet(tmp_path) as f:
        repos = [f.repo(i) for i in range(50)]
        assert run_review_job(f.job(repos[0]), f.ctx).status == "posted"
        one = f.disk  # the size of one mirror: the cap holds about three
        cap = 3 * one + one // 2
        f.ctx.mirrors = MirrorCache(tmp_path / "mirrors", max_bytes=cap)
        before = evictions()
        worst = [0]
        stop = threading.Event()

        def watch() -> None:  # the disk as the jobs run, sampled
            while not stop.wait(0.01):
                worst[0] = max(worst[0], f.disk)

        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        with ThreadPoolExecutor(4) as pool:
            results = list(pool.map(lambda r: run_review_job(f.job(r), f.ctx), repos[1:]))
        stop.set()
        watcher.join()
        assert [r.status for r in results] == ["posted"] * 49
        assert all(len(f.gh.reviews(repo, 1)) == 1 for repo in repos)
        left = [repo for repo in repos if f.mirror(repo).exists()]
        assert f.disk <= cap and 1 <= len(left) <= 3
        # While jobs ran, only mirrors in use (four at most) could stand over the cap.
        assert worst[0] <= cap + 4 * one + one // 2
        assert evictions() - before == 50 - len(left)


def test_a_mirror_in_use_is_never_evicted_and_an_evicted_one_comes_back(tmp_path: Path) -> None:
    with fleet(tmp_path) as f:
        busy, other = f.repo(1), f.repo(2)
        f.ctx.mirrors = MirrorCache(tmp_path / "mirrors", max_bytes=1)  # nothing fits
        f.slow[f"Tighten {busy}"] = 3.0
        with ThreadPoolExecutor(1) as pool:
            running = pool.submit(run_review_job, f.job(busy), f.ctx)
            deadline = time.monotonic() + 30
            while not f.stub.chat_requests and time.monotonic() < deadline:
                time.sleep(0.02)  # until the busy review waits on the model
            assert f.mirror(busy).exists()
            # Another review fetches (and would evict everything else): the busy one stays.
            assert run_review_job(f.job(other), f.ctx).status == "posted"
            assert f.mirror(busy).exists() and not running.done()
            assert running.result(timeout=60).status == "posted"
        # Both done: nothing is in use, so nothing stays under a cap of one byte.
        assert not f.mirror(busy).exists() and not f.mirror(other).exists() and f.disk == 0
        # A push after its mirror went: fetched again, reviewed, posted.
        f.slow.clear()
        f.gh.push(busy, "feature", {"calc.py": "def half(n):\n    return n / 2\n"}, "More")
        assert run_review_job(f.job(busy, "synchronize"), f.ctx).status == "posted"
        assert len(f.gh.reviews(busy, 1)) == 2


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("", None),
        ("0", None),
        ("1000", 1000),
        ("500M", 500 * 1024**2),
        ("20G", 20 * 1024**3),
        ("2GiB", 2 * 1024**3),
        ("1 T", 1024**4),
    ],
)
def test_the_cap_reads_sizes(raw: str, expected: int | None) -> None:
    assert max_bytes_from_env({"GITNEURAL_MIRROR_MAX_BYTES": raw}) == expected


def test_a_bad_cap_is_one_line() -> None:
    with pytest.raises(ConfigError, match="GITNEURAL_MIRROR_MAX_BYTES must be a size"):
        max_bytes_from_env({"GITNEURAL_MIRROR_MAX_BYTES": "lots"})

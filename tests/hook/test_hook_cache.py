"""The hook's result cache: what the key covers, round trips, bounds, damage and races."""

from __future__ import annotations

import dataclasses
import os
import threading
import time
from pathlib import Path

import pygit2
import pytest

from bot.domain.change import Change
from bot.domain.results import Coverage, Finding, ReviewResult, Severity
from bot.git import repo as gitrepo
from bot.settings.repository import Config, parse_config
from bot.usage import Usage
from hooks.cache import ResultCache, cache_key, default_directory
from tests.support.repos import commit, make_repo, stage


@pytest.fixture
def repo(tmp_path: Path) -> pygit2.Repository:
    r = make_repo(tmp_path / "r")
    commit(r, {"a.py": "x = 1\n", "AGENTS.md": "Be brief.\n"})
    stage(r, {"a.py": "x = 2\n"})
    return r


def key(change: Change, config: Config | None = None, **over: str) -> str:
    args = {
        "model": "kimi-k3",
        "effort": "low",
        "base_url": "https://api.moonshot.ai/v1",
        "prompt_version": "1.abc",
    }
    args.update(over)
    return cache_key(change, config or Config(), **args)


def result(title: str = "x", body_size: int = 10) -> ReviewResult:
    f = Finding("a.py", 1, 1, "RIGHT", Severity.MAJOR, "bug", title, "b" * body_size, "x = 1")
    return ReviewResult("summary", [f], Coverage(["a.py"]), Usage(10, 5, 0, 1), "kimi-k3", "low")


def test_key_covers_what_decides_the_review(repo: pygit2.Repository) -> None:
    change = gitrepo.staged_change(repo)
    base = key(change)
    assert key(gitrepo.staged_change(repo)) == base  # rebuilt: same key
    different = {
        key(change, model="kimi-k3-mini"),
        key(change, effort="high"),
        key(change, base_url="http://127.0.0.1:1/v1"),
        key(change, prompt_version="2.def"),
        key(change, parse_config("[review]\nmax_comments = 3\n")),
        key(change, parse_config("[agent]\nmax_turns = 2\n")),
    }
    assert base not in different and len(different) == 6
    # The hook's policy is applied afterwards, so it is not part of the key.
    assert key(change, parse_config("[hook]\nfail_on = 'nit'\nstrict = true\n")) == base

    # Other instructions at the trusted revision, the same diff on the same base.
    other = commit(repo, {"AGENTS.md": "Be thorough.\n"}, branch="policy")
    trusted = gitrepo.TreeSnapshot(repo, other)
    assert key(dataclasses.replace(change, trusted=trusted)) != base

    stage(repo, {"a.py": "x = 3\n"})
    assert key(gitrepo.staged_change(repo)) != base


def test_round_trip_and_damaged_entries(tmp_path: Path) -> None:
    cache = ResultCache(tmp_path / "c")
    k = "ab" * 32
    assert cache.get(k) is None
    cache.put(k, result("Off by one"))
    got = cache.get(k)
    assert got is not None and got.findings[0].title == "Off by one"
    assert got.findings[0].severity == Severity.MAJOR
    (tmp_path / "c" / f"{k}.json").write_text('{"version": 1, "summ')
    assert cache.get(k) is None
    assert not (tmp_path / "c" / f"{k}.json").exists()  # dropped, reviewed again next time
    with pytest.raises(ValueError):
        cache.get("../../etc/passwd")


def test_bounded_least_recently_used_first(tmp_path: Path) -> None:
    cache = ResultCache(tmp_path / "c", max_entries=3)
    keys = [f"{i:064x}" for i in range(5)]
    now = time.time()
    for i, k in enumerate(keys[:3]):
        cache.put(k, result())
        os.utime(tmp_path / "c" / f"{k}.json", (now - 100 + i, now - 100 + i))
    assert cache.get(keys[0]) is not None  # a hit makes the oldest the most recent
    cache.put(keys[3], result())
    cache.put(keys[4], result())
    assert len(cache) == 3
    assert cache.get(keys[1]) is None and cache.get(keys[2]) is None
    assert all(cache.get(k) is not None for k in (keys[0], keys[3], keys[4]))


def test_bounded_in_bytes_and_stale_temporaries_removed(tmp_path: Path) -> None:
    cache = ResultCache(tmp_path / "c", max_bytes=6000)
    stale = tmp_path / "c" / ".tmp-dead.json"
    stale.parent.mkdir()
    stale.write_text("{")
    os.utime(stale, (time.time() - 7200, time.time() - 7200))
    for i in range(6):
        cache.put(f"{i:064x}", result(body_size=2000))
        time.sleep(0.01)  # distinct mtimes, so the order is the writing order
    sizes = [p.stat().st_size for p in (tmp_path / "c").iterdir()]
    assert sum(sizes) <= 6000 and len(cache) >= 1
    assert cache.get(f"{5:064x}") is not None
    assert not stale.exists()


def test_unusable_directory_never_breaks_the_hook(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    cache = ResultCache(blocker / "c")
    cache.put("cd" * 32, result())  # silently not stored
    assert cache.get("cd" * 32) is None


def test_readers_never_see_a_partial_entry(tmp_path: Path) -> None:
    cache = ResultCache(tmp_path / "c")
    k = "ef" * 32
    big = result(body_size=200_000)
    stop = threading.Event()
    seen: list[str] = []

    def write() -> None:
        while not stop.is_set():
            cache.put(k, big)

    writers = [threading.Thread(target=write) for _ in range(2)]
    for w in writers:
        w.start()
    deadline = time.monotonic() + 1.0
    while time.monotonic() < deadline:
        got = cache.get(k)
        if got is not None:
            seen.append(got.findings[0].body)
    stop.set()
    for w in writers:
        w.join()
    assert seen and all(len(body) == 200_000 for body in seen)
    assert [p.name for p in (tmp_path / "c").iterdir()] == [f"{k}.json"]


def test_default_directory_follows_gitneural_data_dir(tmp_path: Path) -> None:
    assert default_directory({"GITNEURAL_DATA_DIR": str(tmp_path)}) == tmp_path / "hook-cache"
    assert default_directory({}).name == "hook-cache"

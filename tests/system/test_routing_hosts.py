"""Routing by repository, end to end, on three worker hosts in network namespaces of
their own (:mod:`tests.support.hosts`), Redis and PostgreSQL: each repository's reviews
run on its home host (:func:`workers.schedule.routing.home_host`) while that host has a
free thread, its mirror is cloned there once and then fetched incrementally; when the
host leaves, its repositories (and only those) move, and they come back when it rejoins.
"""

from __future__ import annotations

import re
import subprocess
import time
from collections.abc import Iterable
from pathlib import Path

import pytest

from bot.jobs import ReviewJob
from tests.support.hosts import Cluster, WorkerHost
from tests.support.partitions import worker_hosts
from tests.support.people import grant_maintainers
from tests.support.planted import ORIGINAL, PLANTED
from tests.support.services import CONFIG, AppWorld, wait_for
from workers.celeryapp.turn_messages import HOSTS_TTL
from workers.schedule.protocol import Schedule, open_schedule
from workers.schedule.routing import home_host

pytestmark = [pytest.mark.slow, pytest.mark.redis]

REPOS = [f"octo/r{n:02d}" for n in range(1, 13)]
#: Reviews in flight at once: fewer than any host's threads, so a home always has room.
AT_ONCE = 2
TARGET = 0.95


def _pull(world: AppWorld, repo: str) -> int:
    world.gh.push(repo, "topic", {"people.py": PLANTED}, "Tighten is_adult")
    title = f"Pull {repo} topic ok"
    number = world.gh.create_pull(repo, head="topic", title=title, body="Please")
    world.active.setdefault(title, 0)
    return number


def _job(world: AppWorld, repo: str, number: int, trigger: str) -> ReviewJob:
    head = world.gh.head_sha(repo, number)
    delivery = f"{repo}-{number}-{trigger}-{time.monotonic_ns()}"
    return ReviewJob(1, repo, number, head, trigger, delivery)


def _ran_on(cluster: Cluster, delivery: str) -> str | None:
    pattern = re.compile(rf"review job delivery={re.escape(delivery)} .* outcome=posted")
    found = [h.name for h in cluster.hosts if pattern.search(h.log())]
    return found[0] if found else None


def _round(cluster: Cluster, world: AppWorld, jobs: list[ReviewJob]) -> dict[str, str]:
    """Review ``jobs``, ``AT_ONCE`` at a time; the host each was posted from, by repo."""
    ran: dict[str, str] = {}
    schedule = open_schedule(cluster.d.settings)
    for i in range(0, len(jobs), AT_ONCE):
        batch = jobs[i : i + AT_ONCE]
        for job in batch:
            cluster.d.queue.submit(job)
        for job in batch:
            host = wait_for(lambda j=job: _ran_on(cluster, j.delivery_id), job.repo, 90, 0.1)
            ran[job.repo] = host
        # A review's outcome is logged just before its thread is given back: the next
        # batch goes out once every host has its threads free again, so each home has
        # room (what the target is about); a busy home's review may go anywhere.
        wait_for(lambda: _idle(schedule), "every review thread free", 30, 0.05)
    return ran


def _idle(schedule: Schedule) -> bool:
    return all(load.running == 0 for load in schedule.hosts().values())


def _live(cluster: Cluster, names: Iterable[str]) -> None:
    schedule = open_schedule(cluster.d.settings)
    want = set(names)
    wait_for(lambda: set(schedule.hosts()) == want, f"live hosts {sorted(want)}", 60, 0.2)
    time.sleep(HOSTS_TTL + 0.5)  # the publisher's memory of the live hosts catches up


def _packs(host: WorkerHost, repo: str) -> list[int]:
    """Objects in each pack of ``host``'s mirror of ``repo``, oldest first ([] if none)."""
    mirrors = list((host.data_dir / "mirrors").rglob(f"{repo.split('/')[1]}.git"))
    if not mirrors:
        return []
    [mirror] = mirrors
    counts = []
    for idx in sorted((mirror / "objects" / "pack").glob("*.idx"), key=lambda p: p.stat().st_mtime):
        with idx.open("rb") as f:
            shown = subprocess.run(["git", "show-index"], stdin=f, capture_output=True, text=True)
        counts.append(len(shown.stdout.splitlines()))
    return counts


def test_repositories_are_reviewed_on_their_home_host_and_move_when_it_leaves(
    tmp_path: Path,
) -> None:
    with worker_hosts("redis", tmp_path, hosts=3, GITNEURAL_WORKER_CONCURRENCY="2") as found:
        cluster, world = found
        for repo in REPOS:
            files = {"people.py": ORIGINAL, "README.md": "# r\n", ".gitneural.toml": CONFIG}
            world.gh.create_repo(repo, installation_id=1, files=files)
            grant_maintainers(world.gh, repo)
        names = [h.name for h in cluster.hosts]
        _live(cluster, names)
        home = {repo: home_host(repo, names) for repo in REPOS}
        pulls = {repo: _pull(world, repo) for repo in REPOS}

        # Opened, then pushed to: each review on its home host (free threads everywhere).
        runs: list[tuple[str, str, str]] = []  # (repository, host it ran on, its home)
        first = _round(cluster, world, [_job(world, r, pulls[r], "opened") for r in REPOS])
        runs += [(r, first[r], home[r]) for r in REPOS]
        _push(world, "More")
        again = _round(cluster, world, [_job(world, r, pulls[r], "synchronize") for r in REPOS])
        runs += [(r, again[r], home[r]) for r in REPOS]

        # Each repository cloned once per host that reviewed it, then fetched: each later
        # fetch there brought a pack of only the new objects.
        for host in cluster.hosts:
            for repo in REPOS:
                reviews = sum(1 for r, ran, _ in runs if (r, ran) == (repo, host.name))
                packs = _packs(host, repo)
                assert len(packs) == reviews, (repo, host.name, packs)
                assert all(later < packs[0] for later in packs[1:]), (repo, host.name, packs)

        # The third host leaves: its repositories, and only those, move to the next winner.
        leaving = cluster.hosts[2]
        cluster.stop(leaving)
        _live(cluster, names[:2])
        moved = {r for r in REPOS if home[r] == leaving.name}
        assert 2 <= len(moved) <= 6, moved  # about a third of twelve
        assert all(home_host(r, names[:2]) == home[r] for r in REPOS if r not in moved)
        _push(world, "Even more")
        without = _round(cluster, world, [_job(world, r, pulls[r], "synchronize") for r in REPOS])
        runs += [(r, without[r], home_host(r, names[:2]) or "") for r in REPOS]
        assert leaving.name not in without.values()

        # It rejoins: the same repositories come back to it, and to the mirrors it kept.
        cluster.start(leaving)
        _live(cluster, names)
        _push(world, "Back")
        back = _round(cluster, world, [_job(world, r, pulls[r], "synchronize") for r in REPOS])
        runs += [(r, back[r], home[r]) for r in REPOS]
        at_home = sum(ran == want for _, ran, want in runs)
        assert at_home / len(runs) >= TARGET, [run for run in runs if run[1] != run[2]]
        returned = {r for r in moved if back[r] == leaving.name}
        assert len(returned) >= len(moved) - 1, (moved, back)
        for repo in returned:
            packs = _packs(leaving, repo)
            assert len(packs) >= 2 and all(p < packs[0] for p in packs[1:]), (repo, packs)
        print(f"routing: {at_home} of {len(runs)} reviews on their home host; moved {len(moved)}")


def _push(world: AppWorld, what: str) -> None:
    for repo in REPOS:
        world.gh.push(repo, "topic", {"README.md": f"# {repo}\n\n{what}.\n"}, what)

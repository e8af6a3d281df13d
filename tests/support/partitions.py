"""A worker host cut off mid-review, and what came of it: shared by
``tests/system/test_partitions.py`` (the promises) and ``benchmarks/bench_partitions.py``
(the seconds).

    with worker_hosts("rabbitmq", root) as (cluster, world):
        result = partition_mid_review(cluster, world, "services")
        result.seconds          # cut → the review posted by another host
        result.reviews          # exactly one, whatever the cut host did after healing

Two worker hosts, one review thread each, PostgreSQL as the store and the broker of
``kind``. The K3 stub holds the first run's answer until the cut host is healed, so the
cut lands mid-review and that run reaches its posting step only afterwards: whatever it
posts then is a duplicate.
"""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support.deployments import deployment
from tests.support.hosts import Cluster, Cut, WorkerHost
from tests.support.netns import HostNetwork
from tests.support.services import OUTCOME, REPO, AppWorld, app_world, make_job, wait_for
from tests.support.store import PostgresServer, postgres_database

#: The claim's lease in these tests (the product's default is longer): a cut host's job
#: is put back in line this long after its last renewal.
LEASE = 3.0


@dataclass
class Partition:
    cut: Cut
    #: Seconds from the cut to the first review accepted by GitHub.
    seconds: float
    reviews: list[dict[str, Any]]
    #: Every check run of the head, and every request that gave one a conclusion.
    checks: list[dict[str, Any]]
    conclusions: list[str]
    #: What the cut host's run of the job ended as, once healed.
    cut_outcome: str
    #: Reviews and conclusions GitHub accepted after the cut host was healed.
    posted_after_heal: int
    logs: str


@contextlib.contextmanager
def worker_hosts(
    kind: str, root: Path, hosts: int = 2, database: str | None = None, **extra: str
) -> Iterator[tuple[Cluster, AppWorld]]:
    """``hosts`` worker hosts (one review thread each) on ``kind``'s broker, with
    PostgreSQL as the store (``database``, else a database of their own on the shared
    server)."""
    with contextlib.ExitStack() as stack:
        net = stack.enter_context(HostNetwork(hosts))
        world = stack.enter_context(app_world(root / "world", gh_host=net.git))
        if database is None:
            database = stack.enter_context(postgres_database())
        settings = {
            "GITNEURAL_DATABASE_URL": database,
            "GITNEURAL_LOCK_LEASE": str(LEASE),
            "GITNEURAL_WORKER_CONCURRENCY": "1",
        } | extra
        d = stack.enter_context(deployment(kind, world, root, **settings))
        cluster = stack.enter_context(Cluster(net, world, d, root))
        for host in cluster.hosts:
            cluster.start(host, wait=False)
        for host in cluster.hosts:
            for proc in host.workers:
                proc.wait_log("ready.", timeout=90)
        yield cluster, world


def running(cluster: Cluster, delivery: str) -> WorkerHost | None:
    pattern = re.compile(rf"review job delivery={re.escape(delivery)} .* started by")
    found = [h for h in cluster.hosts if pattern.search(h.log())]
    return found[0] if len(found) == 1 else None


_RETRIED = re.compile(r"review job delivery=(\S+) .* fault=\d+ retry_in=")


def outcomes_of(host: WorkerHost, delivery: str) -> list[str]:
    """How ``host``'s runs of ``delivery`` ended, in order (``retrying``: a transient fault)."""
    log = host.log()
    ends = [(m.start(), m.group(2)) for m in OUTCOME.finditer(log) if m.group(1) == delivery]
    ends += [(m.start(), "retrying") for m in _RETRIED.finditer(log) if m.group(1) == delivery]
    return [status for _, status in sorted(ends)]


def _accepted(world: AppWorld, number: int, head: str) -> list[tuple[float, str]]:
    """``(time, what)`` of every review and check run conclusion GitHub accepted."""
    posts = world.gh.requests("POST", f"/repos/{REPO}/pulls/{number}/reviews")
    found = [(r.time, "review") for r in posts if r.status == 200]
    ids = {c["id"] for c in world.gh.check_runs(REPO, head)}
    for r in world.gh.requests("PATCH", f"/repos/{REPO}/check-runs/*"):
        body = r.json if isinstance(r.json, dict) else {}
        if r.status == 200 and body.get("conclusion") and int(r.path.rsplit("/", 1)[1]) in ids:
            found.append((r.time, f"conclusion {body['conclusion']}"))
    return sorted(found)


def partition_mid_review(
    cluster: Cluster, world: AppWorld, cut: Cut, *, hold: float = 3 * LEASE, answer: str = "heal"
) -> Partition:
    """Cut the host running a review once it waits on the model; heal it after ``hold``
    seconds or, when another host posted, as soon as that review is in. The cut host's
    model answer comes at the ``"cut"`` (its run goes on, cut off) or once ``"heal"``ed
    (its run reaches its posting step after another host may have posted)."""
    number = world.new_pull()
    title = world.title(number)
    job = make_job(world, number)
    head = str(job.head_sha)
    world.wake.clear()
    world.think = 600.0  # the first run waits on the model until the cut host is healed
    cluster.d.queue.submit(job)
    try:
        wait_for(lambda: world.active.get(title), "the review to reach the model", 60)
        victim = wait_for(lambda: running(cluster, job.delivery_id), "the host running it", 10)
        cut_at = time.time()
        cluster.cut(victim, cut)
        world.think = 0.0  # any other run answers at once
        if answer == "cut":
            world.wake.set()
        deadline = time.monotonic() + hold

        def done() -> bool:
            # The review, and its check run completed: the other run has nothing left to send.
            checks = world.gh.check_runs(REPO, head)
            complete = bool(checks) and all(c["status"] == "completed" for c in checks)
            return bool(world.reviews(number)) and complete

        wait_for(
            lambda: done() or time.monotonic() > deadline, "a review, or the hold", hold + 90, 0.2
        )
        cluster.heal(victim)
        healed_at = time.time()
        world.wake.set()  # the cut host's answer comes now
        wait_for(lambda: world.reviews(number), "the review", LEASE + 90, 0.2)
        finished = ("posted", "nothing-new", "failed", "superseded", "gone", "retrying")
        wait_for(
            lambda: set(outcomes_of(victim, job.delivery_id)) & set(finished),
            "the cut host's run to end",
            90,
            0.2,
        )
        time.sleep(1.0)  # anything that run still sends lands within this
    finally:
        world.think = 0.0
        world.wake.set()
    accepted = _accepted(world, number, head)
    reviews = [t for t, what in accepted if what == "review"]
    return Partition(
        cut=cut,
        seconds=min(reviews) - cut_at if reviews else float("inf"),
        reviews=world.reviews(number),
        checks=world.gh.check_runs(REPO, head),
        conclusions=[what for _, what in accepted if what != "review"],
        cut_outcome=",".join(outcomes_of(victim, job.delivery_id)),
        posted_after_heal=sum(1 for t, _ in accepted if t > healed_at),
        logs="\n".join(f"== {h.name}\n{h.log()}" for h in cluster.hosts),
    )


def restart_store_mid_review(cluster: Cluster, world: AppWorld, pg: PostgresServer) -> Partition:
    """Stop PostgreSQL while a review waits on the model, let the answer come while it is
    down (the run needs the store before it posts), and start it again."""
    number = world.new_pull()
    title = world.title(number)
    job = make_job(world, number)
    head = str(job.head_sha)
    world.wake.clear()
    world.think = 600.0
    cluster.d.queue.submit(job)
    try:
        wait_for(lambda: world.active.get(title), "the review to reach the model", 60)
        host = wait_for(lambda: running(cluster, job.delivery_id), "the host running it", 10)
        cut_at = time.time()
        pg.stop()
        world.think = 0.0
        world.wake.set()
        wait_for(lambda: "retrying" in outcomes_of(host, job.delivery_id), "a retry", 60, 0.2)
        pg.start()
        healed_at = time.time()
        wait_for(lambda: world.reviews(number), "the review", 90, 0.2)
        time.sleep(1.0)
    finally:
        world.think = 0.0
        world.wake.set()
    accepted = _accepted(world, number, head)
    reviews = [t for t, what in accepted if what == "review"]
    return Partition(
        cut="everything",
        seconds=min(reviews) - cut_at if reviews else float("inf"),
        reviews=world.reviews(number),
        checks=world.gh.check_runs(REPO, head),
        conclusions=[what for _, what in accepted if what != "review"],
        cut_outcome=",".join(outcomes_of(host, job.delivery_id)),
        posted_after_heal=sum(1 for t, _ in accepted if t > healed_at),
        logs="\n".join(f"== {h.name}\n{h.log()}" for h in cluster.hosts),
    )

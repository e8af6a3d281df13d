"""Installation A queues a backlog, then installation B's one review arrives while A's
run: shared by ``tests/system/test_fairness.py`` (the order) and
``benchmarks/bench_fairness.py`` (the time, in review-times).

    with app_world(root) as world:
        r = backlog_then_one("redis", world, root, "fair", backlog=200, threads=4, think=5)
        r.wait / r.review_time       # B's wait from its delivery to its review, in reviews

Two ``gitneural worker -Q reviews -c threads`` processes; the K3 stub thinks ``think``
seconds per review. A review-time is one review alone on the same set-up, measured first.

Order is read where the scheduler decides it: the moment each job is claimed (the
workers' "review job ... started by" lines, on this machine's clock), not the moment its
first request reaches the model: the time between the two (a mirror to clone, a token
to mint) depends on how busy the machine is, the claim order does not.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import re
import time
from dataclasses import dataclass
from pathlib import Path

from bot.jobs import ReviewJob
from tests.support.deployments import deployment
from tests.support.planted import ORIGINAL, PLANTED
from tests.support.services import (
    CONFIG,
    REPO,
    AppWorld,
    GitNeuralProcess,
    make_job,
    stop_together,
    wait_for,
    worker_ready,
)

OTHER = "other/lib"
#: A worker's line about a review job (Celery's worker log format: local time); a claim
#: ends "started by WORKER", an end "outcome=STATUS".
JOB_LINE = (
    r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}): [^\]]*\] "
    r"review job delivery=(\S+) [^\n]*?"
)
STARTED = re.compile(JOB_LINE + r" started by ", re.MULTILINE)
ENDED = re.compile(JOB_LINE + r" outcome=", re.MULTILINE)


@dataclass
class Backlog:
    review_time: float
    #: Seconds from B's delivery to B's review on GitHub.
    wait: float
    #: A's jobs claimed (started) after B's delivery and before B's job was.
    ahead: int
    #: A's jobs claimed before B's delivery.
    before: int
    #: A's reviews that reached the model after B's delivery and before B's (this also
    #: counts A's claimed after B's whose first request beat B's: a benchmark's number).
    ahead_at_model: int
    b_reviews: int

    @property
    def waits(self) -> float:
        return self.wait / self.review_time


def b_pull(world: AppWorld) -> ReviewJob:
    """A PR of installation 2 (its own repository), titled for the stub's brain."""
    if OTHER not in world.gh.store.repos:
        files = {"people.py": ORIGINAL, ".gitneural.toml": CONFIG}
        world.gh.create_repo(OTHER, installation_id=2, files=files)
    branch = f"b-{time.monotonic_ns()}"
    world.gh.push(OTHER, branch, {"people.py": PLANTED}, "Tighten is_adult")
    title = f"Pull {branch} ok"
    number = world.gh.create_pull(OTHER, head=branch, title=title, body="Please")
    world.active.setdefault(title, 0)
    head = world.gh.head_sha(OTHER, number)
    return ReviewJob(2, OTHER, number, head, "opened", f"b-{number}-{time.monotonic_ns()}")


def _posted_at(world: AppWorld, repo: str, number: int) -> float:
    posts = world.gh.requests("POST", f"/repos/{repo}/pulls/{number}/reviews")
    return min(r.time for r in posts if r.status == 200)


def claimed_at(logs: list[str]) -> dict[str, float]:
    """Delivery id -> when a worker claimed its job (the first claim, if put back)."""
    return _first(logs, STARTED)


def ended_at(logs: list[str]) -> dict[str, float]:
    """Delivery id -> when its job's outcome was logged (the first)."""
    return _first(logs, ENDED)


def _first(logs: list[str], line: re.Pattern[str]) -> dict[str, float]:
    found: dict[str, float] = {}
    for text in logs:
        for m in line.finditer(text):
            when = dt.datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S,%f").timestamp()
            found[m.group(2)] = min(when, found.get(m.group(2), when))
    return found


def _ahead_of(world: AppWorld, since: int, title: str) -> int:
    for count, request in enumerate(world.stub.chat_requests[since:]):
        if title in str((request.body or {}).get("messages")):
            return count
    raise AssertionError("B's review never reached the model")


def backlog_then_one(
    kind: str,
    world: AppWorld,
    root: Path,
    schedule: str,
    *,
    backlog: int,
    threads: int,
    think: float,
) -> Backlog:
    root.mkdir(parents=True, exist_ok=True)
    patience = 60 + 3 * think * backlog / threads
    with (
        deployment(kind, world, root, GITNEURAL_SCHEDULE=schedule) as d,
        contextlib.ExitStack() as stack,
    ):
        command = ["worker", "-Q", "reviews", "-c", str(threads)]
        workers = [
            stack.enter_context(GitNeuralProcess(command, d.env, root / f"w{i}.log"))
            for i in range(2)
        ]
        stack.callback(stop_together, workers)
        for worker in workers:
            worker_ready(worker)
        world.think = think
        try:
            alone = make_job(world, world.new_pull())
            sent = time.time()
            d.queue.submit(alone)
            wait_for(lambda: world.reviews(alone.pr_number), "a review alone", 60 + 3 * think)
            review_time = _posted_at(world, REPO, alone.pr_number) - sent
            a_jobs = [make_job(world, world.new_pull()) for _ in range(backlog)]
            b = b_pull(world)  # made before A's run: B's delivery is only the submit
            for job in a_jobs:
                d.queue.submit(job)
            # A, alone, takes every thread (the default limit applies only while another
            # installation is active). Counted by claims: how many are with the model at
            # one moment depends on the machine's load.
            busy = min(2 * threads, backlog)
            a_ids = {job.delivery_id for job in a_jobs}

            def a_claimed() -> bool:
                return len(a_ids & set(claimed_at([w.log() for w in workers]))) >= busy

            wait_for(a_claimed, "A's reviews to start", 60 + 3 * think * busy / threads)
            since = len(world.stub.chat_requests)
            delivered = time.time()
            d.queue.submit(b)
            wait_for(lambda: world.gh.reviews(OTHER, b.pr_number), "B's review", patience, 0.2)
            wait = _posted_at(world, OTHER, b.pr_number) - delivered
            title = str(world.gh.pull(OTHER, b.pr_number)["title"])
            at_model = _ahead_of(world, since, title)
            started = claimed_at([w.log() for w in workers])
        finally:
            world.think = 0.0
        # A's backlog is left to the workers' shutdown: its jobs stay in this run's keys.
        b_reviews = len(world.gh.reviews(OTHER, b.pr_number))
    b_started = started[b.delivery_id]
    a_started = [started[j.delivery_id] for j in a_jobs if j.delivery_id in started]
    ahead = sum(1 for t in a_started if delivered < t < b_started)
    before = sum(1 for t in a_started if t <= delivered)
    return Backlog(review_time, wait, ahead, before, at_model, b_reviews)

"""The review schedule on real SQLite and real Redis: turns between installations, the
per-installation limit, ``/review`` first, leases put back when their worker stops,
delays, locality, and every job claimed once by racing threads."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.services import REDIS_URL, drop_redis_keys, require_redis, unique_prefix
from workers.schedule.protocol import (
    FIFO_KEY,
    Claim,
    HostLoad,
    QueuedJob,
    Schedule,
    default_limit,
    worker_of,
)
from workers.schedule.redis_store import RedisSchedule
from workers.schedule.sqlite_store import SQLiteSchedule


@pytest.fixture(params=["sqlite", pytest.param("redis", marks=pytest.mark.redis)])
def sched(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Schedule]:
    if request.param == "sqlite":
        yield SQLiteSchedule(tmp_path / "schedule.sqlite3")
        return
    client = require_redis()
    prefix = unique_prefix() + ":fq:"
    store = RedisSchedule(REDIS_URL, prefix=prefix)
    yield store
    store.close()
    drop_redis_keys(client, prefix)
    client.close()


def job(inst: str, name: str, lane: str = "auto", home: str | None = None) -> QueuedJob:
    payload: dict[str, Any] = {"installation_id": int(inst) if inst.isdigit() else 1,
                               "name": name}  # fmt: skip
    return QueuedJob(payload, seq=1, turn_key=inst, lane=lane, home=home)  # type: ignore[arg-type]


def name(claim: Claim | None) -> str | None:
    return None if claim is None else str(claim.entry.job["name"])


def take(sched: Schedule, limit: int = 100, host: str = "h1", lease: float = 60) -> Claim | None:
    return sched.claim("w1", host, lease, limit)


def test_installations_take_turns_and_a_newcomer_goes_next(sched: Schedule) -> None:
    for i in range(5):
        sched.enqueue(job("1", f"a{i}"))
    assert name(take(sched)) == "a0"
    sched.enqueue(job("2", "b0"))  # B arrives while A has four queued
    assert name(take(sched)) == "b0"
    for i in range(3):
        sched.enqueue(job("3", f"c{i}"))
    sched.enqueue(job("2", "b1"))
    order = [name(take(sched)) for _ in range(8)]
    # C has never had a turn: it goes first; then whoever was served least recently.
    assert order == ["c0", "a1", "b1", "c1", "a2", "c2", "a3", "a4"]
    assert take(sched) is None
    assert sched.pending() == 0


def test_a_review_command_goes_ahead_of_automatic_reviews(sched: Schedule) -> None:
    sched.enqueue(job("1", "auto-1"))
    sched.enqueue(job("1", "auto-2"))
    sched.enqueue(job("1", "command", lane="command"))
    assert [name(take(sched)) for _ in range(3)] == ["command", "auto-1", "auto-2"]


def test_the_per_installation_limit_and_the_dropped_turn_given_out_again(
    sched: Schedule,
) -> None:
    for i in range(4):
        sched.enqueue(job("1", f"a{i}"))
    first, second = take(sched, limit=2), take(sched, limit=2)
    assert (name(first), name(second)) == ("a0", "a1")
    assert take(sched, limit=2) is None  # A is at its limit: the turn is dropped
    sched.enqueue(job("2", "b0"))
    assert name(take(sched, limit=2)) == "b0"  # another installation is not held up
    assert first is not None and second is not None
    assert sched.finish(first) is True  # a place came free: give the dropped turn out
    assert name(take(sched, limit=2)) == "a2"
    assert sched.finish(second) is False  # nothing was dropped since


def test_the_default_limit_keeps_a_quarter_of_the_threads_free() -> None:
    assert [default_limit(n) for n in (1, 2, 4, 8, 16)] == [1, 1, 3, 6, 12]
    assert default_limit(0) > 10**6  # no worker reported in: no limit to size


def test_the_default_limit_follows_the_live_workers(sched: Schedule) -> None:
    sched.heartbeat("w1", "h1", 2, ttl=60)
    sched.heartbeat("w2", "h2", 2, ttl=60)  # 4 threads: 3 per installation
    for i in range(5):
        sched.enqueue(job("1", f"a{i}"))
    assert [name(take(sched, limit=0)) for _ in range(4)] == ["a0", "a1", "a2", None]
    assert sched.hosts() == {"h1": HostLoad(2, 3), "h2": HostLoad(2, 0)}
    sched.leave("w2")
    assert set(sched.hosts()) == {"h1"}


def test_fifo_is_one_line_for_everyone(sched: Schedule) -> None:
    for who in ("a0", "a1", "b0"):
        sched.enqueue(job(FIFO_KEY, who))
    assert [name(take(sched)) for _ in range(3)] == ["a0", "a1", "b0"]


def test_a_job_whose_worker_stopped_renewing_is_put_back_first(sched: Schedule) -> None:
    sched.enqueue(job("1", "held"))
    sched.enqueue(job("1", "next"))
    held = sched.claim("dead-worker", "h1", 0.2, 100)
    assert held is not None and worker_of(held.owner) == "dead-worker"
    assert sched.renew(held, 0.2)
    time.sleep(0.35)
    assert sched.recover(skip_worker="dead-worker") == []  # a worker never recovers itself
    [back] = sched.recover(skip_worker="w1")
    assert (back.entry.id, back.owner, back.entry.resume) == (held.entry.id, held.owner, True)
    assert sched.recover(skip_worker="w1") == []  # once
    # The dead run can no longer renew, finish or release it.
    assert not sched.renew(held, 60) and not sched.finish(held) and not sched.release(held)
    again = take(sched)
    assert again is not None and name(again) == "held"
    assert (again.entry.resume, again.entry.recoveries) == (True, 1)
    assert again.owner != held.owner


def test_a_deferred_job_waits_its_delay_then_goes_first(sched: Schedule) -> None:
    sched.enqueue(job("1", "busy-pr"))
    claim = take(sched)
    assert claim is not None
    sched.enqueue(job("1", "other"))
    sched.defer(claim, 0.3, faults=2)
    assert sched.promote() == []
    assert name(take(sched)) == "other"
    time.sleep(0.45)
    [due] = sched.promote()
    assert (due.entry.id, due.entry.faults) == (claim.entry.id, 2)
    again = take(sched)
    assert name(again) == "busy-pr" and again is not None and again.entry.faults == 2


def test_a_released_job_goes_back_to_the_front_to_resume(sched: Schedule) -> None:
    sched.enqueue(job("1", "stopped"))
    sched.enqueue(job("1", "queued"))
    claim = take(sched)
    assert claim is not None and sched.release(claim)
    again = take(sched)
    assert name(again) == "stopped" and again is not None and again.entry.resume


def test_a_worker_takes_its_own_host_s_repositories_first(sched: Schedule) -> None:
    sched.enqueue(job("1", "for-h1", home="h1"))
    sched.enqueue(job("1", "for-h2", home="h2"))
    sched.enqueue(job("1", "anywhere"))
    assert name(take(sched, host="h2")) == "for-h2"
    assert name(take(sched, host="h3")) == "for-h1"  # none of its own: the oldest
    assert name(take(sched, host="h3")) == "anywhere"


def test_stalled_gives_out_turns_only_when_threads_are_free_and_nobody_claims(
    sched: Schedule,
) -> None:
    sched.heartbeat("w1", "h1", 2, ttl=60)
    assert take(sched) is None
    sched.enqueue(job("1", "a0"))
    sched.enqueue(job("1", "a1"))
    sched.enqueue(job("1", "a2"))
    assert sched.stalled(patience=5, limit=0) == 0  # a claim just happened
    time.sleep(0.3)
    assert sched.stalled(patience=0.2, limit=0) == 1  # 2 threads, limit 1 per installation
    assert sched.stalled(patience=0.2, limit=0) == 0  # once per patience


@pytest.mark.parametrize("threads", [8])
def test_racing_threads_claim_each_job_once(sched: Schedule, threads: int) -> None:
    for i in range(60):
        sched.enqueue(job(str(1 + i % 3), f"j{i}"))
    got: Counter[str] = Counter()
    lock = threading.Lock()

    def worker(n: int) -> None:
        while (claim := sched.claim(f"w{n}", "h1", 60, 100)) is not None:
            with lock:
                got[str(claim.entry.job["name"])] += 1
            sched.finish(claim)

    pool = [threading.Thread(target=worker, args=(n,)) for n in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join(timeout=60)
    assert got == Counter({f"j{i}": 1 for i in range(60)})


def test_a_job_whose_turn_was_refused_is_withdrawn_unless_it_already_runs(
    sched: Schedule,
) -> None:
    waiting, taken = job("1", "waiting"), job("2", "taken")
    sched.enqueue(taken)
    claim = take(sched)
    assert claim is not None and claim.entry.id == taken.id
    sched.enqueue(waiting)
    assert sched.withdraw(waiting) and not sched.withdraw(waiting)
    assert not sched.withdraw(taken)  # running: it stays its runner's
    assert sched.pending() == 0 and take(sched) is None

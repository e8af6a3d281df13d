"""The review schedule on real SQLite and real Redis: turns between installations, the
per-installation limit, ``/review`` first, leases put back when their worker stops,
delays, locality, and every job claimed once by racing threads."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.services import (
    REDIS_URL,
    drop_redis_keys,
    require_redis,
    unique_prefix,
    wait_for,
)
from workers.schedule.protocol import (
    ACTIVE_WINDOW,
    FIFO_KEY,
    Claim,
    HostLoad,
    QueuedJob,
    Returned,
    Schedule,
    default_limit,
    worker_of,
)
from workers.schedule.redis_store import RedisSchedule
from workers.schedule.sqlite_store import SQLiteSchedule

#: A schedule on each store; ``active_window``: seconds an installation counts as active
#: after its last review ended (short here, to see the window close).
Stores = Callable[..., Schedule]


@pytest.fixture(params=["sqlite", pytest.param("redis", marks=pytest.mark.redis)])
def stores(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Stores]:
    opened: list[RedisSchedule] = []
    prefixes: list[str] = []

    def make(active_window: float = ACTIVE_WINDOW) -> Schedule:
        if request.param == "sqlite":
            return SQLiteSchedule(tmp_path / "schedule.sqlite3", active_window=active_window)
        prefixes.append(unique_prefix() + ":fq:")
        opened.append(RedisSchedule(REDIS_URL, prefix=prefixes[-1], active_window=active_window))
        return opened[-1]

    client = require_redis() if request.param == "redis" else None
    yield make
    for store in opened:
        store.close()
    if client is not None:
        for prefix in prefixes:
            drop_redis_keys(client, prefix)
        client.close()


@pytest.fixture
def sched(stores: Stores) -> Schedule:
    return stores()


def job(inst: str, name: str, lane: str = "auto", home: str | None = None) -> QueuedJob:
    payload: dict[str, Any] = {"installation_id": int(inst) if inst.isdigit() else 1, "name": name}
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


def test_an_installation_alone_may_use_every_thread(sched: Schedule) -> None:
    sched.heartbeat("w1", "h1", 2, ttl=60)
    sched.heartbeat("w2", "h2", 2, ttl=60)  # 4 threads: 3 per installation when limited
    for i in range(5):
        sched.enqueue(job("1", f"a{i}"))
    # Nobody else has work: the default limit holds no thread back (the worker's own
    # threads, not the schedule, stop a fifth review from starting on 4 threads).
    assert [name(take(sched, limit=0)) for _ in range(5)] == ["a0", "a1", "a2", "a3", "a4"]
    assert sched.hosts() == {"h1": HostLoad(2, 5), "h2": HostLoad(2, 0)}
    sched.leave("w2")
    assert set(sched.hosts()) == {"h1"}


def test_the_default_limit_applies_while_another_installation_has_jobs(
    sched: Schedule,
) -> None:
    sched.heartbeat("w1", "h1", 4, ttl=60)  # 4 threads: 3 per installation when limited
    for i in range(6):
        sched.enqueue(job("1", f"a{i}"))
    a = [take(sched, limit=0) for _ in range(4)]  # A alone: all 4 threads
    assert [name(c) for c in a] == ["a0", "a1", "a2", "a3"]
    sched.enqueue(job("2", "b0"))
    sched.enqueue(job("2", "b1"))
    assert name(take(sched, limit=0)) == "b0"  # B's turn first: A was served
    # B has a job waiting: A (4 running) is over the default limit of 3, B is not.
    assert name(take(sched, limit=0)) == "b1"
    assert take(sched, limit=0) is None  # B's still run: A stays limited
    assert a[0] is not None and sched.finish(a[0]) is True  # a dropped turn to give out
    assert take(sched, limit=0) is None  # A runs 3: at its limit while B is active
    assert a[1] is not None and sched.finish(a[1])
    assert name(take(sched, limit=0)) == "a4"  # 2 running: under the limit again


def test_the_default_limit_applies_for_a_while_after_another_s_review_ended(
    stores: Stores,
) -> None:
    window = 1.0
    sched = stores(active_window=window)
    sched.heartbeat("w1", "h1", 4, ttl=60)  # 4 threads: 3 per installation when limited
    sched.enqueue(job("2", "b0"))
    b = take(sched, limit=0)
    assert b is not None and name(b) == "b0"
    ended = time.monotonic()
    assert sched.finish(b) is False  # B has nothing left, but was active a moment ago
    for i in range(5):
        sched.enqueue(job("1", f"a{i}"))
    first = [name(take(sched, limit=0)) for _ in range(4)]
    assert first[:3] == ["a0", "a1", "a2"]
    if time.monotonic() - ended < window:  # asked within B's window (a stall may delay it)
        assert first[3] is None  # B was active: A held to 3 of the 4 threads
    # B quiet for longer than the window: A alone, every thread (waited for, not slept).
    waited = wait_for(lambda: take(sched, limit=0), "A's next job after B's window", 10)
    assert time.monotonic() - ended >= window - 0.05 or first[3] is not None
    later = [name(waited), name(take(sched, limit=0))]
    assert [n for n in first[3:] + later if n] == ["a3", "a4"]


def test_an_explicit_limit_holds_even_for_an_installation_alone(sched: Schedule) -> None:
    sched.heartbeat("w1", "h1", 8, ttl=60)
    for i in range(3):
        sched.enqueue(job("1", f"a{i}"))
    assert [name(take(sched, limit=2)) for _ in range(3)] == ["a0", "a1", None]


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
    renewed = time.monotonic()

    # Asked all along while the lease lapses on the store's clock: a worker never
    # recovers its own job, however long it has been.
    def recovered_itself() -> list[Returned] | bool:
        return sched.recover(skip_worker="dead-worker") or time.monotonic() - renewed > 0.35

    assert wait_for(recovered_itself, "the lease to lapse", 10) is True
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
    deferred = time.monotonic()
    sched.defer(claim, 0.3, faults=2)
    assert name(take(sched)) == "other"  # a deferred job is out of line until it is due
    early = sched.promote()
    assert early == [] or time.monotonic() - deferred >= 0.3  # not before its delay
    [due] = early or wait_for(sched.promote, "the deferred job due", 10)
    assert time.monotonic() - deferred >= 0.3 - 0.05
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
    # Nobody claims for longer than the patience: turns are given out (waited for).
    assert wait_for(lambda: sched.stalled(patience=0.2, limit=0), "turns given out", 10) == 2
    assert sched.stalled(patience=30, limit=0) == 0  # once per patience
    assert wait_for(lambda: sched.stalled(patience=0.2, limit=1), "one more turn", 10) == 1


def test_stalled_counts_the_default_limit_while_another_installation_runs(
    sched: Schedule,
) -> None:
    sched.heartbeat("w1", "h1", 8, ttl=60)  # 8 threads: 6 per installation when limited
    sched.enqueue(job("2", "b0"))
    assert name(take(sched, limit=0)) == "b0"  # B runs one: 7 threads free
    for i in range(8):
        sched.enqueue(job("1", f"a{i}"))
    given = wait_for(lambda: sched.stalled(patience=0.2, limit=0), "turns given out", 10)
    assert given == 6  # A may start 6, not 7


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

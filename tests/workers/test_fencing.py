"""The fence at the moment of posting (:mod:`workers.state.fencing`), on real Redis and
real SQLite: it asks the store, by the claim's owner token, whether the job is still this
run's, so it refuses a run whose claim was taken over before any heartbeat noticed, and
one whose store cannot be reached at once, not a lease later."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.usecases.errors import FencedError
from tests.support.services import drop_redis_keys, require_redis, unique_prefix, wait_for
from tests.support.tcpproxy import CuttableProxy
from workers.schedule.leases import ClaimLease
from workers.schedule.protocol import QueuedJob, Schedule
from workers.schedule.redis_store import RedisSchedule
from workers.schedule.sqlite_store import SQLiteSchedule
from workers.state.fencing import fence
from workers.state.pr_lock import PRLock, RedisPRState

LEASE = 0.6


@pytest.fixture(params=["sqlite", pytest.param("redis", marks=pytest.mark.redis)])
def sched(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Schedule]:
    if request.param == "sqlite":
        yield SQLiteSchedule(tmp_path / "schedule.sqlite3")
        return
    client = require_redis()
    prefix = unique_prefix() + ":fq:"
    store = RedisSchedule("redis://127.0.0.1:6379/0", prefix=prefix)
    yield store
    store.close()
    drop_redis_keys(client, prefix)


def _queued(sched: Schedule) -> QueuedJob:
    entry = QueuedJob({"installation_id": 1, "name": "a"}, seq=1, turn_key="1", lane="auto")
    sched.enqueue(entry)
    return entry


def test_a_claim_taken_over_is_fenced_before_any_heartbeat_notices(sched: Schedule) -> None:
    _queued(sched)
    first = sched.claim("w1", "h1", LEASE, 0)
    assert first is not None
    # Its heartbeat never beats (a run paused: GC, a stalled disk, a partition healed).
    lease = ClaimLease(sched, first, LEASE)
    check = fence({"the claim on the job": lease})
    check()  # still its own: renewed, and nothing raised
    # Another worker's sweep puts it back in line once the lease lapses (waited for).
    [_back] = wait_for(lambda: sched.recover("w2"), "the lapsed claim put back", 10)
    second = sched.claim("w2", "h2", 60, 0)
    assert second is not None and second.entry.id == first.entry.id
    assert not lease.lost  # nothing has noticed yet: the old check would let it post
    with pytest.raises(FencedError, match="no longer this run's"):
        check()
    assert lease.lost
    fence({"the claim on the job": ClaimLease(sched, second, 60)})()  # the new owner may post


@pytest.mark.redis
def test_a_run_that_cannot_reach_the_store_is_fenced_at_once() -> None:
    client = require_redis()
    proxy = CuttableProxy(("127.0.0.1", 6379))
    prefix = unique_prefix()
    url = f"redis://127.0.0.1:{proxy.port}/0"
    sched = RedisSchedule(url, prefix=prefix + ":fq:")
    state = RedisPRState(url, prefix=prefix + ":pr:")
    try:
        _queued(sched)
        claim = sched.claim("w1", "h1", 60, 0)
        assert claim is not None
        lock = PRLock(state, "octo/app#1", 60, owner=claim.owner)
        assert lock.acquire()
        check = fence({"the claim on the job": ClaimLease(sched, claim, 60), "the PR's lock": lock})
        check()
        proxy.cut()
        started = time.monotonic()
        with pytest.raises(FencedError, match="cannot be confirmed"):
            check()
        # Not a lease (60 s) later: the first request that fails says so.
        assert time.monotonic() - started < 10
        proxy.restore()
        check()  # the store answers again and the claim is still this run's
        lock.release()
    finally:
        sched.close()
        proxy.close()
        drop_redis_keys(client, prefix)


def test_a_run_given_up_at_its_hard_limit_is_fenced(sched: Schedule) -> None:
    _queued(sched)
    claim = sched.claim("w1", "h1", 60, 0)
    assert claim is not None
    check = fence({"the claim on the job": ClaimLease(sched, claim, 60)}, lambda: True)
    with pytest.raises(FencedError, match="hard time limit"):
        check()

"""Per-PR locks and latest-head records on real SQLite (threads, processes) and real Redis;
the lock's heartbeat; the thread guard's time limits."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.services import (
    REDIS_URL,
    drop_redis_keys,
    require_redis,
    unique_prefix,
    wait_for,
)
from workers.celeryapp.time_limits import (
    ShutdownInterrupt,
    SoftLimitInterrupt,
    TaskGuard,
    interrupt_all,
)
from workers.state.pr_lock import PRLock, PRState, RedisPRState, SQLitePRState, is_current

A, B = "a" * 40, "b" * 40


@pytest.fixture(params=["sqlite", pytest.param("redis", marks=pytest.mark.redis)])
def state(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[PRState]:
    if request.param == "sqlite":
        yield SQLitePRState(tmp_path / "state.sqlite3")
        return
    client = require_redis()
    prefix = unique_prefix() + ":"
    store = RedisPRState(REDIS_URL, prefix=prefix)
    yield store
    store.close()
    drop_redis_keys(client, prefix)
    client.close()


def test_submissions_number_themselves_and_remember_the_newest_head(state: PRState) -> None:
    assert state.latest("o/r#1") is None
    assert state.note_submitted("o/r#1", A) == 1
    assert state.note_submitted("o/r#1", None) == 2  # a /review: head unchanged
    record = state.latest("o/r#1")
    assert record is not None
    assert (record.head_sha, record.head_seq, record.seq) == (A, 1, 2)
    assert state.note_submitted("o/r#1", B) == 3
    record = state.latest("o/r#1")
    assert record is not None and (record.head_sha, record.head_seq, record.seq) == (B, 3, 3)
    # The job for A (submission 1) is stale now; B's and the /review's verdicts differ.
    assert not is_current(record, A, 1)
    assert is_current(record, B, 3)
    assert not is_current(record, A, 2)  # the /review ran on A, but B came after it
    assert state.latest("o/r#2") is None  # PRs are separate


def test_lock_is_exclusive_renewable_and_released_only_by_its_owner(state: PRState) -> None:
    assert state.acquire("o/r#1", "job-1", 30)
    assert not state.acquire("o/r#1", "job-2", 30)
    assert state.acquire("o/r#2", "job-2", 30)  # another PR
    assert state.acquire("o/r#1", "job-1", 30)  # re-entrant for its owner
    assert state.renew("o/r#1", "job-1", 30)
    assert not state.renew("o/r#1", "job-2", 30)
    state.release("o/r#1", "job-2")  # not the owner: no effect
    assert not state.acquire("o/r#1", "job-2", 30)
    state.release("o/r#1", "job-1")
    assert state.acquire("o/r#1", "job-2", 30)


def test_an_expired_lease_frees_the_pr(state: PRState) -> None:
    taken = time.monotonic()
    assert state.acquire("o/r#1", "crashed", 0.2)
    # Refused while the lease runs: asked within it (a stalled machine may ask later,
    # when taking it is right).
    assert not state.acquire("o/r#1", "next", 30) or time.monotonic() - taken >= 0.2
    wait_for(lambda: state.acquire("o/r#1", "next", 30), "the lease to run out", 5, 0.02)
    assert not state.renew("o/r#1", "crashed", 30)


def test_threads_never_hold_one_lock_together(state: PRState) -> None:
    holders: list[int] = []
    overlaps: list[int] = []
    guard = threading.Lock()

    def worker(n: int) -> None:
        for _ in range(20):
            while not state.acquire("o/r#9", f"t{n}", 10):
                time.sleep(0.001)
            with guard:
                holders.append(n)
                if len(holders) > 1:
                    overlaps.append(n)
            time.sleep(0.001)
            with guard:
                holders.remove(n)
            state.release("o/r#9", f"t{n}")

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert overlaps == []


RACER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from workers.state.pr_lock import SQLitePRState, RedisPRState

    kind, where, go, me = sys.argv[1:5]
    state = SQLitePRState(Path(where)) if kind == "sqlite" else RedisPRState(
        "redis://127.0.0.1:6379/0", prefix=where)
    print("ready", flush=True)
    while not Path(go).exists():
        time.sleep(0.001)
    won = [str(pr) for pr in range(50) if state.acquire(f"o/r#{pr}", me, 60)]
    print(" ".join(won), flush=True)
    """
)


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("redis", marks=pytest.mark.redis)])
def test_processes_racing_for_locks_win_each_once(kind: str, tmp_path: Path) -> None:
    where = str(tmp_path / "state.sqlite3")
    client = None
    if kind == "redis":
        client = require_redis()
        where = unique_prefix() + ":"
    go = tmp_path / "go"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", RACER, kind, where, str(go), f"p{i}"],
            stdout=subprocess.PIPE,
            text=True,
        )
        for i in range(3)
    ]
    try:
        for proc in procs:
            assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        go.touch()
        won = [proc.communicate(timeout=60)[0].split() for proc in procs]
    finally:
        if client is not None:
            drop_redis_keys(client, where)
    flat = [pr for batch in won for pr in batch]
    assert sorted(flat, key=int) == [str(pr) for pr in range(50)]


def test_the_heartbeat_keeps_a_short_lease_alive(tmp_path: Path) -> None:
    state = SQLitePRState(tmp_path / "s.sqlite3")
    lock = PRLock(state, "o/r#1", lease=0.3)
    assert lock.acquire()
    try:
        time.sleep(1.0)  # three leases: only renewals keep it
        assert not state.acquire("o/r#1", "other", 30)
        assert not lock.lost
    finally:
        lock.release()
    assert state.acquire("o/r#1", "other", 30)


def test_a_lock_taken_over_is_noticed_as_lost(tmp_path: Path) -> None:
    state = SQLitePRState(tmp_path / "s.sqlite3")
    lock = PRLock(state, "o/r#1", lease=0.3)
    assert lock.acquire()
    # As if the store had been unreachable past the lease and another job took the PR.
    state.release("o/r#1", lock.owner)
    assert state.acquire("o/r#1", "other", 30)
    wait_for(lambda: lock.lost, "the heartbeat to notice", 5, 0.02)
    lock.release()
    assert not state.acquire("o/r#1", "third", 30)  # the other job's lock is untouched


# ---- time limits in pool threads -------------------------------------------------------


def _run_in_thread(target: object) -> dict[str, object]:
    result: dict[str, object] = {}

    def body() -> None:
        try:
            result["value"] = target()  # type: ignore[operator]
        except BaseException as exc:
            result["error"] = exc

    thread = threading.Thread(target=body)
    thread.start()
    thread.join(timeout=30)
    assert not thread.is_alive()
    return result


def test_soft_limit_interrupts_the_task_thread() -> None:
    def task() -> str:
        with TaskGuard(0.2, None) as guard:
            try:
                time.sleep(0.001)  # work the guard's timer interrupts, as a review's would be
                for _ in range(10_000):
                    time.sleep(0.001)  # the interrupt lands between bytecodes
            except SoftLimitInterrupt:
                return f"interrupted:{guard.fired is SoftLimitInterrupt}"
        return "finished"

    started = time.monotonic()
    # Interrupted, not finished: the loop (10,000 sleeps, >= 10 s) never ran to its end.
    assert _run_in_thread(task) == {"value": "interrupted:True"}
    assert time.monotonic() - started >= 0.2  # never before the soft limit


def test_a_finished_task_is_never_interrupted_afterwards() -> None:
    def task() -> str:
        with TaskGuard(0.05, 0.1):
            pass
        time.sleep(0.5)  # past both limits, outside the guard
        return "clean"

    assert _run_in_thread(task) == {"value": "clean"}


def test_hard_limit_runs_the_callback_while_the_thread_is_stuck() -> None:
    released = threading.Event()

    def task() -> bool:
        with TaskGuard(None, 0.2, released.set):
            deadline = time.monotonic() + 5
            while not released.is_set() and time.monotonic() < deadline:
                time.sleep(0.01)
        return released.is_set()

    assert _run_in_thread(task) == {"value": True}


def test_shutdown_interrupts_every_running_guarded_task() -> None:
    started = threading.Barrier(3)
    results: list[str] = []

    def task() -> None:
        with TaskGuard(None, None):
            try:
                started.wait()
                for _ in range(10_000):
                    time.sleep(0.001)
                results.append("finished")
            except ShutdownInterrupt:
                results.append("requeue")

    threads = [threading.Thread(target=task) for _ in range(2)]
    for t in threads:
        t.start()
    started.wait()
    assert interrupt_all(ShutdownInterrupt) == 2
    for t in threads:
        t.join(timeout=10)
    assert results == ["requeue", "requeue"]
    assert interrupt_all(ShutdownInterrupt) == 0  # nothing left running

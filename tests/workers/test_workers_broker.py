"""The embedded broker (kombu's SQLAlchemy transport on SQLite, made durable): messages
are delivered once, acknowledged ones are deleted, and nothing held by a dead consumer is
lost. Real SQLite files, real processes."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import kombu
import pytest

from tests.support.paths import ROOT
from tests.support.services import wait_for
from workers.celeryapp.app import EMBEDDED_TRANSPORT


def connect(db: Path, visibility: float = 3600.0) -> kombu.Connection:
    return kombu.Connection(
        f"sqlite:///{db}",
        transport=EMBEDDED_TRANSPORT,
        transport_options={
            "polling_interval": 0.01,
            "visibility_timeout": visibility,
            "restore_interval": 0.05,
        },
    )


def rows(db: Path) -> list[tuple[int, bool]]:
    with sqlite3.connect(db) as conn:
        return [(int(i), bool(v)) for i, v in conn.execute("SELECT id, visible FROM kombu_message")]


def put(db: Path, *bodies: str, queue: str = "jobs") -> None:
    with connect(db) as conn:
        q = conn.SimpleQueue(queue)
        for body in bodies:
            q.put(body)
        q.close()


def test_acknowledged_messages_are_deleted(tmp_path: Path) -> None:
    db = tmp_path / "broker.sqlite3"
    put(db, "one", "two")
    with connect(db) as conn:
        q = conn.SimpleQueue("jobs")
        first = q.get(timeout=5)
        assert first.payload == "one"
        assert [v for _, v in rows(db)] == [False, True]  # taken, not yet acknowledged
        first.ack()
        assert [v for _, v in rows(db)] == [True]
        second = q.get(timeout=5)
        assert second.payload == "two"
        second.ack()
        q.close()
    assert rows(db) == []


def test_a_clean_close_puts_unacknowledged_messages_back_in_place(tmp_path: Path) -> None:
    db = tmp_path / "broker.sqlite3"
    put(db, "one", "two")
    before = rows(db)
    with connect(db) as conn:
        q = conn.SimpleQueue("jobs")
        assert q.get(timeout=5).payload == "one"
        q.close()
    # Not re-published as a copy: the same row is visible again.
    assert rows(db) == before
    with connect(db) as conn:
        q = conn.SimpleQueue("jobs")
        message = q.get(timeout=5)
        # Handed out before, so flagged as a redelivery (as AMQP and kombu's Redis do).
        assert (message.payload, message.delivery_info.get("redelivered")) == ("one", True)
        message.ack()
        q.close()


def test_reject_deletes_and_requeue_restores(tmp_path: Path) -> None:
    db = tmp_path / "broker.sqlite3"
    put(db, "poison", "again")
    with connect(db) as conn:
        q = conn.SimpleQueue("jobs")
        q.get(timeout=5).reject()
        assert len(rows(db)) == 1
        again = q.get(timeout=5)
        again.requeue()
        assert rows(db) == [(rows(db)[0][0], True)]
        assert q.get(timeout=5).payload == "again"
        q.close()


CONSUMER = textwrap.dedent(
    """
    import os, signal, sys, kombu
    db, queue, mode = sys.argv[1:4]
    conn = kombu.Connection(
        f"sqlite:///{db}", transport="workers.celeryapp.embedded_broker:Transport",
        transport_options={"polling_interval": 0.01})
    q = conn.SimpleQueue(queue)
    if mode == "die":
        message = q.get(timeout=10)
        print(message.payload, flush=True)
        os.kill(os.getpid(), signal.SIGKILL)  # no ack, no clean close: a worker killed
    got = []
    while True:
        try:
            message = q.get(timeout=1)
        except q.Empty:
            break
        got.append(message.payload)
        message.ack()
    print(" ".join(got), flush=True)
    """
)


def consumer(db: Path, mode: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", CONSUMER, str(db), "jobs", mode],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )


def test_a_message_held_by_a_killed_consumer_is_redelivered(tmp_path: Path) -> None:
    db = tmp_path / "broker.sqlite3"
    put(db, "review-1")
    dying = consumer(db, "die")
    out, _ = dying.communicate(timeout=60)
    assert out.strip() == "review-1" and dying.returncode == -9
    assert [v for _, v in rows(db)] == [False]  # held by nobody now
    with connect(db, visibility=0.5) as conn:
        q = conn.SimpleQueue("jobs")
        with pytest.raises(q.Empty):
            q.get(timeout=0.1)  # not before the visibility timeout
        message = wait_for(lambda: _get(q), "redelivery", 10)
        assert message.payload == "review-1"
        message.ack()
        q.close()
    assert rows(db) == []


def _get(q: kombu.simple.SimpleQueue) -> kombu.Message | None:
    try:
        return q.get(timeout=0.2)
    except q.Empty:
        return None


def test_concurrent_consumers_get_each_message_once(tmp_path: Path) -> None:
    db = tmp_path / "broker.sqlite3"
    bodies = [f"m{i}" for i in range(120)]
    put(db, *bodies)
    procs = [consumer(db, "drain") for _ in range(3)]
    got = [p.communicate(timeout=120)[0].split() for p in procs]
    flat = [b for batch in got for b in batch]
    assert sorted(flat) == sorted(bodies)
    assert rows(db) == []


DECLARE_AT_ONCE = """
import sys, time
from tests.workers.test_workers_broker import connect
from pathlib import Path
start = float(sys.argv[2])
time.sleep(max(0.0, start - time.time()))
with connect(Path(sys.argv[1])) as conn:
    for n in range(8):
        q = conn.SimpleQueue(f"new-{n}")
        q.put("hello")
        q.close()
"""


def test_processes_declaring_a_new_queue_at_once_all_go_on(tmp_path: Path) -> None:
    # kombu guards a queue's creation against threads, not processes: the second insert
    # met UNIQUE and a worker died at start. Four processes declare eight new queues at
    # the same instant.
    db = tmp_path / "broker.sqlite3"
    put(db, "tables made")
    start = f"{time.time() + 3.0}"
    command = [sys.executable, "-c", DECLARE_AT_ONCE, str(db), start]
    procs = [
        subprocess.Popen(command, cwd=ROOT, stderr=subprocess.PIPE, text=True) for _ in range(4)
    ]
    errors = [p.communicate(timeout=60)[1] for p in procs]
    assert [p.returncode for p in procs] == [0] * 4, [e[-300:] for e in errors]
    with sqlite3.connect(db) as conn:
        names = [n for (n,) in conn.execute("SELECT name FROM kombu_queue")]
    assert sorted(names) == sorted(["jobs"] + [f"new-{n}" for n in range(8)])
    assert len(rows(db)) == 1 + 4 * 8

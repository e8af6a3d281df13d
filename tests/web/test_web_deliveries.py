"""The delivery log on real SQLite (threads and processes) and on the real Redis."""

from __future__ import annotations

import copy
import hashlib
import multiprocessing
import multiprocessing.queues
import subprocess
import sys
import textwrap
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import redis

from bot.web.app import create_app
from bot.web.deliveries import (
    CLAIM_SECONDS,
    RETENTION_SECONDS,
    DeliveryLog,
    DeliveryLogError,
    RedisDeliveryLog,
    SQLiteDeliveryLog,
    open_delivery_log,
)
from bot.web.settings import WebSettings
from tests.support.services import REDIS_URL, require_redis
from tests.support.webhooks import (
    SECRET,
    RecordingQueue,
    encode,
    failing_queue,
    headers_for,
    load,
)


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


# ---- SQLite ----------------------------------------------------------------------------


def test_sqlite_claim_confirm_forget(tmp_path: Path) -> None:
    log = SQLiteDeliveryLog(tmp_path / "d.sqlite3")
    assert log.seen_or_record("a") is False
    assert log.seen_or_record("a") is True
    log.forget("a")
    assert log.seen_or_record("a") is False
    log.confirm("a")
    assert log.seen_or_record("a") is True
    assert log.seen_or_record("b") is False


def test_sqlite_unconfirmed_claim_expires_but_confirmed_id_is_kept(tmp_path: Path) -> None:
    clock = Clock()
    log = SQLiteDeliveryLog(tmp_path / "d.sqlite3", clock=clock)
    assert not log.seen_or_record("crashed-before-confirm")
    assert not log.seen_or_record("accepted")
    log.confirm("accepted")
    clock.now += CLAIM_SECONDS + 1
    # The process that claimed it died: a redelivery may claim it again.
    assert log.seen_or_record("crashed-before-confirm") is False
    assert log.seen_or_record("accepted") is True
    clock.now += RETENTION_SECONDS
    assert log.seen_or_record("accepted") is False


def test_sqlite_survives_reopening(tmp_path: Path) -> None:
    path = tmp_path / "d.sqlite3"
    first = SQLiteDeliveryLog(path)
    assert not first.seen_or_record("x")
    first.confirm("x")
    assert SQLiteDeliveryLog(path).seen_or_record("x") is True


def test_sqlite_threads_claim_each_id_once(tmp_path: Path) -> None:
    log = SQLiteDeliveryLog(tmp_path / "d.sqlite3")
    ids = [f"id-{i}" for i in range(200)]

    def claim_all(_: int) -> list[str]:
        return [i for i in ids if not log.seen_or_record(i)]

    with ThreadPoolExecutor(max_workers=6) as pool:
        won = [i for batch in pool.map(claim_all, range(6)) for i in batch]
    assert sorted(won) == sorted(ids)


CLAIMER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from bot.web.deliveries import SQLiteDeliveryLog

    db, go, count = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
    print("ready", flush=True)
    while not go.exists():  # start together, to race for real (creating the file too)
        time.sleep(0.001)
    log = SQLiteDeliveryLog(db)
    for i in range(count):
        if not log.seen_or_record(f"id-{i}"):
            log.confirm(f"id-{i}")
            print(f"id-{i}")
    """
)


def test_sqlite_processes_claim_each_id_once(tmp_path: Path) -> None:
    db, go, count = tmp_path / "d.sqlite3", tmp_path / "go", 400
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", CLAIMER, str(db), str(go), str(count)],
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(3)
    ]
    for proc in procs:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready"
    go.touch()
    outputs = [proc.communicate(timeout=60)[0].split() for proc in procs]
    assert [proc.returncode for proc in procs] == [0, 0, 0]
    won = [i for out in outputs for i in out]
    assert sorted(won) == sorted(f"id-{i}" for i in range(count))  # each id exactly once


def test_sqlite_unusable_path_is_a_delivery_log_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("not a directory")
    with pytest.raises(DeliveryLogError, match="GITNEURAL_DATA_DIR"):
        SQLiteDeliveryLog(tmp_path / "file" / "d.sqlite3")


def test_open_delivery_log_defaults_to_sqlite_in_data_dir(tmp_path: Path) -> None:
    log = open_delivery_log(WebSettings(webhook_secret=SECRET, data_dir=tmp_path / "data"))
    assert isinstance(log, SQLiteDeliveryLog)
    assert log.path == tmp_path / "data" / "deliveries.sqlite3"
    assert not log.seen_or_record("x")
    assert log.path.exists()


# ---- Redis -----------------------------------------------------------------------------


@pytest.fixture
def redis_client() -> Iterator[redis.Redis]:
    client = require_redis()
    yield client
    client.close()


@pytest.fixture
def prefix(redis_client: redis.Redis) -> Iterator[str]:
    value = f"gitneural-test:{uuid.uuid4()}:"
    yield value
    keys = list(redis_client.scan_iter(match=value + "*"))
    if keys:
        redis_client.delete(*keys)


@pytest.mark.redis
def test_redis_claim_confirm_forget_and_ttls(redis_client: redis.Redis, prefix: str) -> None:
    log = RedisDeliveryLog(REDIS_URL, prefix=prefix)
    assert log.seen_or_record("a") is False
    assert log.seen_or_record("a") is True
    assert 0 < redis_client.ttl(prefix + "a") <= CLAIM_SECONDS
    log.confirm("a")
    assert redis_client.ttl(prefix + "a") > 6 * 24 * 3600
    assert log.seen_or_record("a") is True
    log.forget("a")
    assert log.seen_or_record("a") is False
    log.close()


@pytest.mark.redis
def test_redis_claim_expires(redis_client: redis.Redis, prefix: str) -> None:
    log = RedisDeliveryLog(REDIS_URL, prefix=prefix, claim_seconds=1)
    assert not log.seen_or_record("short")
    assert log.seen_or_record("short") is True
    # Shorten the lease rather than wait it out: Redis' own expiry is what is relied on.
    redis_client.pexpire(prefix + "short", 1)
    deadline = time.monotonic() + 5
    while redis_client.exists(prefix + "short") and time.monotonic() < deadline:
        time.sleep(0.001)
    assert log.seen_or_record("short") is False


@pytest.mark.redis
def test_redis_threads_with_separate_clients_claim_each_id_once(
    redis_client: redis.Redis, prefix: str
) -> None:
    ids = [f"id-{i}" for i in range(200)]

    def claim_all(_: int) -> list[str]:
        log = RedisDeliveryLog(REDIS_URL, prefix=prefix)
        try:
            return [i for i in ids if not log.seen_or_record(i)]
        finally:
            log.close()

    with ThreadPoolExecutor(max_workers=6) as pool:
        won = [i for batch in pool.map(claim_all, range(6)) for i in batch]
    assert sorted(won) == sorted(ids)


@pytest.mark.redis
def test_two_web_hosts_sharing_redis_queue_a_delivery_once(
    redis_client: redis.Redis, prefix: str, tmp_path: Path
) -> None:
    queue = RecordingQueue()
    settings = WebSettings(webhook_secret=SECRET, data_dir=tmp_path)
    hosts = [
        create_app(settings, queue, deliveries=RedisDeliveryLog(REDIS_URL, prefix=prefix))
        for _ in range(2)
    ]
    body = encode(load("pull_request.opened.payload.json"))
    headers = headers_for("pull_request", body, delivery="shared-delivery")
    statuses = [
        h.test_client().post("/webhook", data=body, headers=headers).status_code for h in hosts
    ]
    assert statuses == [202, 200]
    assert len(queue.jobs) == 1
    assert redis_client.get(prefix + "shared-delivery") is not None


def _claim_in_child(path: str, result: multiprocessing.queues.Queue[bool]) -> None:
    # Runs in a forked child that inherited the parent's log object (gunicorn --preload).
    result.put(INHERITED[path].seen_or_record("from-child"))


INHERITED: dict[str, SQLiteDeliveryLog] = {}


def test_sqlite_log_inherited_through_fork_reconnects(tmp_path: Path) -> None:
    path = tmp_path / "d.sqlite3"
    log = SQLiteDeliveryLog(path)
    assert not log.seen_or_record("from-parent")  # the parent holds an open connection
    INHERITED[str(path)] = log
    ctx = multiprocessing.get_context("fork")
    result: multiprocessing.queues.Queue[bool] = ctx.Queue()
    child = ctx.Process(target=_claim_in_child, args=(str(path), result))
    child.start()
    child.join(timeout=30)
    assert child.exitcode == 0
    assert result.get(timeout=5) is False
    assert log.seen_or_record("from-child") is True


# ---- the same body under another delivery id ------------------------------------------


@pytest.fixture(params=["sqlite", pytest.param("redis", marks=pytest.mark.redis)])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[DeliveryLog]:
    if request.param == "sqlite":
        yield SQLiteDeliveryLog(tmp_path / "d.sqlite3")
        return
    client = require_redis()
    # The delivery prefix's own shape, so the bodies' prefix (``…:delivery-body:``) sits
    # under the test's namespace too and is cleaned up with it.
    namespace = f"gitneural-test:{uuid.uuid4()}:"
    log = RedisDeliveryLog(REDIS_URL, prefix=namespace + "delivery:")
    yield log
    log.close()
    keys = list(client.scan_iter(match=namespace + "*"))
    assert keys, "the log wrote nothing under the test's namespace"
    client.delete(*keys)
    client.close()


def test_a_body_already_queued_under_another_delivery_id_is_ignored(
    store: DeliveryLog, tmp_path: Path
) -> None:
    queue = RecordingQueue()
    app = create_app(WebSettings(webhook_secret=SECRET, data_dir=tmp_path), queue, deliveries=store)
    client = app.test_client()

    def send(payload: dict[str, object], delivery: str, event: str = "pull_request") -> Any:
        body = encode(payload)
        headers = headers_for(event, body, delivery=delivery)
        return client.post("/webhook", data=body, headers=headers)

    opened = load("pull_request.opened.payload.json")
    first = send(opened, "original")
    assert (first.status_code, first.json["status"]) == (202, "queued")
    # A captured delivery replayed with a fresh id: answered like an accepted one, not queued.
    for replay_id in ("replayed", "replayed-again", "replayed"):
        replay = send(opened, replay_id)
        assert replay.status_code == 202, replay_id
        assert replay.json == {"status": "ignored", "reason": "duplicate body"}
    # GitHub's own redelivery (the same id) keeps its answer.
    redelivery = send(opened, "original")
    assert (redelivery.status_code, redelivery.json) == (200, {"status": "duplicate"})
    assert [job.delivery_id for job in queue.jobs] == ["original"]
    # The body is kept as long as the delivery id, by its SHA-256 (computed here, not by
    # the code under test).
    digest = hashlib.sha256(encode(opened)).hexdigest()
    if isinstance(store, RedisDeliveryLog):
        redis_client = require_redis()
        kept = [redis_client.ttl(key) for key in (store.key("original"), store.key(digest, "body"))]
        redis_client.close()
        assert all(ttl > RETENTION_SECONDS - 60 for ttl in kept), kept
    else:
        assert store.seen_or_record(digest, "body") is True
    # One byte different is another event: queued.
    other = copy.deepcopy(opened)
    other["pull_request"]["head"]["sha"] = "f" * 40
    assert send(other, "next-push").status_code == 202
    assert [job.delivery_id for job in queue.jobs] == ["original", "next-push"]
    # A body whose job was refused is not remembered: another id for it is queued later.
    third = copy.deepcopy(opened)
    third["number"] = 99
    third["pull_request"]["number"] = 99
    queue.fail_with = failing_queue().fail_with
    assert send(third, "refused").status_code == 503
    queue.fail_with = None
    assert send(third, "retried-under-a-new-id").status_code == 202
    assert [job.delivery_id for job in queue.jobs][-1] == "retried-under-a-new-id"
    # Only accepted bodies are remembered: an ignored one is ignored for its own reason.
    ping = load("ping.with-app_id.payload.json")
    for delivery in ("ping-1", "ping-2"):
        pong = send(ping, delivery, event="ping")
        assert (pong.status_code, pong.json["reason"]) == (200, "pong")


def test_sqlite_keeps_a_body_as_long_as_a_delivery_id(tmp_path: Path) -> None:
    clock = Clock()
    log = SQLiteDeliveryLog(tmp_path / "d.sqlite3", clock=clock)
    digest = hashlib.sha256(b'{"action": "opened"}').hexdigest()
    assert log.seen_or_record("id", "delivery") is False
    # A digest and a delivery id with the same text are different keys.
    assert log.seen_or_record("id", "body") is False
    assert log.seen_or_record(digest, "body") is False
    assert log.seen_or_record(digest, "body") is True
    log.confirm(digest, "body")
    log.confirm("id")
    clock.now += RETENTION_SECONDS - 1
    assert log.seen_or_record(digest, "body") is True and log.seen_or_record("id") is True
    clock.now += 2
    assert log.seen_or_record(digest, "body") is False and log.seen_or_record("id") is False

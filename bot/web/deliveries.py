"""The delivery log: which ``X-GitHub-Delivery`` ids, and which bodies, have already been
queued.

GitHub sends the same id again on a redelivery, so a job is queued at most once per id.
A body is queued at most once too, whatever id comes with it: every event's payload
carries its own ids and times, so the same bytes under a new id are a replay of a signed
delivery (captured from a log or a proxy), never a new event. Bodies are kept as their
SHA-256 (:func:`body_digest`), with the same leases and retention as ids (``kind="body"``).
The webhook uses it in three steps so that a crash at any point loses nothing:

1. ``seen_or_record(id)`` atomically *claims* the id for ``claim_seconds`` (a short
   lease); a concurrent or later copy of the delivery sees it and is not queued. Then
   ``seen_or_record(digest, kind="body")`` claims the body the same way.
2. The job is submitted. If submitting fails, ``forget`` drops both claims and the
   webhook answers 503, so GitHub's redelivery can queue it.
3. ``confirm`` keeps the id and the body for ``retention_seconds`` (GitHub redelivers up
   to three days back).

If the process dies between 1 and 3, the lease runs out and a redelivery is queued again:
at worst a job is queued twice (the worker is idempotent per PR head and delivery id),
never lost. Recording only after submitting would lose nothing either, but would let two
copies arriving together both be queued.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Final, Literal, Protocol

from bot.errors import GitNeuralError
from bot.web.settings import WebSettings

if TYPE_CHECKING:
    import redis

CLAIM_SECONDS: Final = 120.0
RETENTION_SECONDS: Final = 7 * 24 * 3600.0
_PURGE_EVERY: Final = 1000
_BUSY_SECONDS: Final = 10.0

#: What a key names: a delivery's ``X-GitHub-Delivery`` id, or a body's digest.
Kind = Literal["delivery", "body"]
_TABLES: Final[dict[str, str]] = {"delivery": "deliveries", "body": "bodies"}


def _statements(table: str) -> dict[str, str]:
    # ``table`` is one of the fixed names above, never text from a request.
    return {
        "create": f"CREATE TABLE IF NOT EXISTS {table} "
        "(id TEXT PRIMARY KEY, expires REAL NOT NULL) WITHOUT ROWID",
        # One statement, so one write transaction: insert the key, or take over an
        # expired claim; a live row is left alone and nothing changes.
        "claim": f"INSERT INTO {table} (id, expires) VALUES (?, ?) "  # noqa: S608
        f"ON CONFLICT (id) DO UPDATE SET expires = excluded.expires WHERE {table}.expires <= ?",
        "confirm": f"UPDATE {table} SET expires = ? WHERE id = ?",  # noqa: S608
        "forget": f"DELETE FROM {table} WHERE id = ?",  # noqa: S608
        "purge": f"DELETE FROM {table} WHERE expires <= ?",  # noqa: S608
    }


_SQL: Final = {kind: _statements(table) for kind, table in _TABLES.items()}


def body_digest(body: bytes) -> str:
    """The key of a raw webhook body: its SHA-256, in hex."""
    return hashlib.sha256(body).hexdigest()


class DeliveryLogError(GitNeuralError):
    """The delivery log cannot be read or written (the webhook answers 503)."""


class DeliveryLog(Protocol):
    def seen_or_record(self, key: str, kind: Kind = "delivery") -> bool:
        """``True`` if the key is already claimed or recorded; else claim it, ``False``."""
        ...

    def confirm(self, key: str, kind: Kind = "delivery") -> None:
        """The job of a claimed key was accepted: remember it for the retention time."""
        ...

    def forget(self, key: str, kind: Kind = "delivery") -> None:
        """The job of a claimed key was not accepted: let a redelivery claim it."""
        ...


class SQLiteDeliveryLog:
    """For one machine without Redis: safe across threads and processes (WAL, upsert)."""

    def __init__(
        self,
        path: Path,
        *,
        claim_seconds: float = CLAIM_SECONDS,
        retention_seconds: float = RETENTION_SECONDS,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.path = path
        self._claim = claim_seconds
        self._retention = retention_seconds
        self._clock = clock
        self._local = threading.local()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise DeliveryLogError(
                f"cannot create {path.parent} for the delivery log ({exc.strerror}): "
                "set GITNEURAL_DATA_DIR to a writable directory"
            ) from None
        for sql in _SQL.values():
            self._run(sql["create"])

    def _connection(self) -> sqlite3.Connection:
        # One connection per thread and per process: sqlite3 connections must not cross
        # threads, and a connection inherited through fork (gunicorn --preload) is unsafe.
        local = self._local
        if getattr(local, "pid", None) != os.getpid():
            conn = sqlite3.connect(self.path, timeout=_BUSY_SECONDS, isolation_level=None)
            _use_wal(conn)
            # NORMAL in WAL mode loses at most the last commits on power loss, not on a crash.
            conn.execute("PRAGMA synchronous=NORMAL")
            local.conn, local.pid, local.claims = conn, os.getpid(), 0
        conn_: sqlite3.Connection = local.conn
        return conn_

    def _run(self, sql: str, params: tuple[object, ...] = ()) -> int:
        try:
            return self._connection().execute(sql, params).rowcount
        except sqlite3.Error as exc:
            raise DeliveryLogError(
                f"delivery log {self.path} failed ({exc}): check the disk and "
                "GITNEURAL_DATA_DIR, or use Redis with GITNEURAL_DEDUPE_URL"
            ) from None

    def seen_or_record(self, key: str, kind: Kind = "delivery") -> bool:
        now = self._clock()
        changed = self._run(_SQL[kind]["claim"], (key, now + self._claim, now))
        self._local.claims += 1
        if self._local.claims % _PURGE_EVERY == 0:
            for sql in _SQL.values():
                self._run(sql["purge"], (now,))
        return changed == 0

    def confirm(self, key: str, kind: Kind = "delivery") -> None:
        self._run(_SQL[kind]["confirm"], (self._clock() + self._retention, key))

    def forget(self, key: str, kind: Kind = "delivery") -> None:
        self._run(_SQL[kind]["forget"], (key,))


def _use_wal(conn: sqlite3.Connection) -> None:
    # WAL lets readers and the writer of several processes proceed together and is stored
    # in the file, so only the first connection switches. The switch needs the database
    # to itself and SQLite answers "locked" at once instead of waiting for the busy
    # timeout when another process opens the fresh file at the same moment: retry.
    deadline = time.monotonic() + _BUSY_SECONDS
    delay = 0.005
    while True:
        try:
            if conn.execute("PRAGMA journal_mode=WAL").fetchone()[0] == "wal":
                return
        except sqlite3.OperationalError:
            if time.monotonic() > deadline:
                raise
        if time.monotonic() > deadline:
            raise sqlite3.OperationalError("cannot switch the delivery log to WAL mode")
        time.sleep(delay)
        delay = min(delay * 2, 0.2)


class RedisDeliveryLog:
    """Shared by every web process and host: ``SET NX`` with a TTL. Bodies' keys have a
    prefix of their own (``…:delivery-body:`` beside ``…:delivery:``), so no delivery id
    can name one."""

    def __init__(
        self,
        url: str,
        *,
        prefix: str = "gitneural:delivery:",
        claim_seconds: float = CLAIM_SECONDS,
        retention_seconds: float = RETENTION_SECONDS,
    ) -> None:
        import redis  # only deployments that use Redis pay for the import

        self._errors = redis.RedisError
        stem = prefix[:-1] if prefix.endswith(":") else prefix
        self._prefixes: dict[str, str] = {"delivery": prefix, "body": f"{stem}-body:"}
        self._claim = max(1, round(claim_seconds))
        self._retention = max(1, round(retention_seconds))
        # No connection is made here; short timeouts keep a dead Redis from holding the
        # request past GitHub's 10 s.
        self._redis: redis.Redis = redis.Redis.from_url(
            url, socket_timeout=3.0, socket_connect_timeout=3.0
        )

    def _fail(self, exc: Exception) -> DeliveryLogError:
        # The message of a Redis error may echo the URL; name only the kind of failure.
        return DeliveryLogError(
            f"delivery log on Redis failed ({type(exc).__name__}): "
            "check that Redis is up and GITNEURAL_DEDUPE_URL is right"
        )

    def key(self, key: str, kind: Kind = "delivery") -> str:
        """The Redis key that holds ``key``."""
        return self._prefixes[kind] + key

    def seen_or_record(self, key: str, kind: Kind = "delivery") -> bool:
        try:
            claimed = self._redis.set(self.key(key, kind), b"1", nx=True, ex=self._claim)
        except self._errors as exc:
            raise self._fail(exc) from None
        return not claimed

    def confirm(self, key: str, kind: Kind = "delivery") -> None:
        try:
            self._redis.set(self.key(key, kind), b"2", ex=self._retention)
        except self._errors as exc:
            raise self._fail(exc) from None

    def forget(self, key: str, kind: Kind = "delivery") -> None:
        try:
            self._redis.delete(self.key(key, kind))
        except self._errors as exc:
            raise self._fail(exc) from None

    def close(self) -> None:
        self._redis.close()


def open_delivery_log(settings: WebSettings) -> DeliveryLog:
    """Redis when ``settings.dedupe_url`` is set, else SQLite under ``settings.data_dir``."""
    if settings.dedupe_url:
        return RedisDeliveryLog(settings.dedupe_url, prefix=f"{settings.key_prefix}:delivery:")
    return SQLiteDeliveryLog(settings.data_dir / "deliveries.sqlite3")

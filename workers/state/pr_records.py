"""Where the per-PR records live: SQLite on one machine, or Redis shared by every host.

Both keep the same two records (see :mod:`workers.state.pr_lock`): the latest head submitted for
a PR, and the PR's lock (an owner token with a lease). Every operation is one atomic
statement (an SQLite upsert, a Redis Lua script), so web and worker processes on any
number of threads and hosts agree without a lock of their own.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from bot.errors import GitNeuralError
from workers.state.lua_scripts import script
from workers.state.sqlite import ThreadConnections

#: Head records outlive any queued job by far; older ones are dropped.
RECORD_SECONDS: Final = 30 * 24 * 3600


class PRStateError(GitNeuralError):
    """The lock and head store cannot be read or written (a job is retried later)."""

    transient = True
    retry_after: float | None = None


@dataclass(frozen=True)
class HeadRecord:
    #: The head of the newest submission that named one (``None``: only ``/review``s).
    head_sha: str | None
    #: ``seq`` of that submission.
    head_seq: int
    #: Submissions so far for the PR.
    seq: int


_TABLES = (
    "CREATE TABLE IF NOT EXISTS heads (pr TEXT PRIMARY KEY, head TEXT, "
    "head_seq INTEGER NOT NULL, seq INTEGER NOT NULL, updated REAL NOT NULL)",
    "CREATE TABLE IF NOT EXISTS locks "
    "(pr TEXT PRIMARY KEY, owner TEXT NOT NULL, expires REAL NOT NULL)",
)


class SQLitePRState:
    """For one machine: safe across threads and processes (WAL, single-statement upserts)."""

    def __init__(self, path: Path, *, clock: Callable[[], float] = time.time) -> None:
        self.path = path
        self._clock = clock
        self._connections = ThreadConnections(path, _TABLES)
        self._pruned = False

    def _conn(self) -> sqlite3.Connection:
        conn = self._connections.get()
        if not self._pruned:
            # Old heads go once per process: records of PRs long gone need no keeping.
            conn.execute("DELETE FROM heads WHERE updated < ?", (self._clock() - RECORD_SECONDS,))
            self._pruned = True
        return conn

    def _run(self, sql: str, params: tuple[object, ...]) -> sqlite3.Cursor:
        try:
            return self._conn().execute(sql, params)
        except sqlite3.Error as exc:
            raise PRStateError(
                f"PR lock store {self.path} failed ({exc}): check the disk and "
                "GITNEURAL_DATA_DIR, or use Redis with GITNEURAL_STATE_URL"
            ) from None

    def note_submitted(self, key: str, head_sha: str | None) -> int:
        # One statement, one write transaction. SET expressions read the old row.
        row = self._run(
            "INSERT INTO heads (pr, head, head_seq, seq, updated) VALUES (?, ?, ?, 1, ?) "
            "ON CONFLICT (pr) DO UPDATE SET seq = seq + 1, "
            "head = COALESCE(excluded.head, head), "
            "head_seq = CASE WHEN excluded.head IS NULL THEN head_seq ELSE seq + 1 END, "
            "updated = excluded.updated RETURNING seq",
            (key, head_sha, 0 if head_sha is None else 1, self._clock()),
        ).fetchone()
        return int(row[0])

    def latest(self, key: str) -> HeadRecord | None:
        row = self._run("SELECT head, head_seq, seq FROM heads WHERE pr = ?", (key,)).fetchone()
        return None if row is None else HeadRecord(row[0], int(row[1]), int(row[2]))

    def acquire(self, key: str, owner: str, lease: float) -> bool:
        now = self._clock()
        cur = self._run(
            "INSERT INTO locks (pr, owner, expires) VALUES (?, ?, ?) "
            "ON CONFLICT (pr) DO UPDATE SET owner = excluded.owner, expires = excluded.expires "
            "WHERE locks.expires <= ? OR locks.owner = excluded.owner",
            (key, owner, now + lease, now),
        )
        return cur.rowcount == 1

    def renew(self, key: str, owner: str, lease: float) -> bool:
        cur = self._run(
            "UPDATE locks SET expires = ? WHERE pr = ? AND owner = ?",
            (self._clock() + lease, key, owner),
        )
        return cur.rowcount == 1

    def release(self, key: str, owner: str) -> None:
        self._run("DELETE FROM locks WHERE pr = ? AND owner = ?", (key, owner))


class RedisPRState:
    """Shared by every web and worker host; expiry is Redis' own (``PX`` leases)."""

    def __init__(self, url: str, *, prefix: str = "gitneural:") -> None:
        import redis  # only deployments that use Redis pay for the import

        self._errors = redis.RedisError
        self._prefix = prefix
        # Short timeouts keep a dead Redis from holding a webhook request past 10 s.
        self._redis: redis.Redis = redis.Redis.from_url(
            url, socket_timeout=3.0, socket_connect_timeout=3.0
        )
        self._note = self._redis.register_script(script("note_head"))
        self._acquire = self._redis.register_script(script("lock_acquire"))
        self._renew = self._redis.register_script(script("lock_renew"))
        self._release = self._redis.register_script(script("lock_release"))

    def _fail(self, exc: Exception) -> PRStateError:
        # A Redis error's text may echo the URL (and its password): name the kind only.
        return PRStateError(
            f"PR lock store on Redis failed ({type(exc).__name__}): "
            "check that Redis is up and GITNEURAL_STATE_URL is right"
        )

    def note_submitted(self, key: str, head_sha: str | None) -> int:
        try:
            seq = self._note(
                keys=[self._prefix + "head:" + key], args=[head_sha or "", RECORD_SECONDS]
            )
        except self._errors as exc:
            raise self._fail(exc) from None
        return int(seq)

    def latest(self, key: str) -> HeadRecord | None:
        try:
            raw = self._redis.hgetall(self._prefix + "head:" + key)
        except self._errors as exc:
            raise self._fail(exc) from None
        if not raw:
            return None
        head = raw.get(b"head")
        return HeadRecord(
            _text(head) if head else None, int(raw.get(b"head_seq", 0)), int(raw[b"seq"])
        )

    def _lock_call(self, script: Any, key: str, *args: str | int) -> int:
        try:
            return int(script(keys=[self._prefix + "lock:" + key], args=list(args)))
        except self._errors as exc:
            raise self._fail(exc) from None

    def acquire(self, key: str, owner: str, lease: float) -> bool:
        return self._lock_call(self._acquire, key, owner, max(1, round(lease * 1000))) == 1

    def renew(self, key: str, owner: str, lease: float) -> bool:
        return self._lock_call(self._renew, key, owner, max(1, round(lease * 1000))) == 1

    def release(self, key: str, owner: str) -> None:
        self._lock_call(self._release, key, owner)

    def close(self) -> None:
        self._redis.close()


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value

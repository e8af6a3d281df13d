"""The plumbing of the review schedule in SQLite (:mod:`workers.schedule.sqlite_store`): the
tables, one ``BEGIN IMMEDIATE`` transaction per operation, counters, and the reads every
operation shares."""

from __future__ import annotations

import contextlib
import sqlite3
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from workers.schedule.types import (
    ACTIVE_WINDOW,
    UNLIMITED,
    Claim,
    QueuedJob,
    ScheduleError,
    default_limit,
    limit_applies,
)
from workers.state.sqlite import ThreadConnections

_TABLES = (
    "CREATE TABLE IF NOT EXISTS jobs (id TEXT PRIMARY KEY, blob TEXT NOT NULL, "
    "inst TEXT NOT NULL, lane TEXT NOT NULL, home TEXT, faults INTEGER NOT NULL, "
    "resume INTEGER NOT NULL, recoveries INTEGER NOT NULL, state TEXT NOT NULL, "
    "pos INTEGER NOT NULL, ready_at REAL, owner TEXT, host TEXT, expires REAL)",
    "CREATE INDEX IF NOT EXISTS jobs_line ON jobs (state, inst, lane, pos)",
    "CREATE TABLE IF NOT EXISTS turns (inst TEXT PRIMARY KEY, served INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS counters (name TEXT PRIMARY KEY, value REAL NOT NULL)",
    "CREATE TABLE IF NOT EXISTS workers "
    "(id TEXT PRIMARY KEY, host TEXT NOT NULL, slots INTEGER NOT NULL, expires REAL NOT NULL)",
    # When each installation's last review ended (the default limit's "recently active").
    "CREATE TABLE IF NOT EXISTS active (inst TEXT PRIMARY KEY, at REAL NOT NULL)",
)


class SQLiteLines:
    """One SQLite file of jobs, lines and workers; the operations are the subclass's."""

    def __init__(
        self,
        path: Path,
        *,
        clock: Callable[[], float] = time.time,
        active_window: float = ACTIVE_WINDOW,
    ) -> None:
        self.path = path
        self._clock = clock
        self._window = active_window
        self._connections = ThreadConnections(path, _TABLES)

    # -- plumbing --------------------------------------------------------------------

    def _conn(self) -> sqlite3.Connection:
        return self._connections.get()

    @contextlib.contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        try:
            conn = self._conn()
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            raise ScheduleError(
                f"review schedule {self.path} failed ({exc}): check the disk and "
                "GITNEURAL_DATA_DIR, or use Redis with GITNEURAL_STATE_URL"
            ) from None

    @staticmethod
    def _counter(conn: sqlite3.Connection, name: str, step: float = 0) -> float:
        row = conn.execute(
            "INSERT INTO counters (name, value) VALUES (?, ?) ON CONFLICT (name) "
            "DO UPDATE SET value = value + excluded.value RETURNING value",
            (name, step),
        ).fetchone()
        return float(row[0])

    @staticmethod
    def _set(conn: sqlite3.Connection, name: str, value: float) -> None:
        conn.execute(
            "INSERT INTO counters (name, value) VALUES (?, ?) ON CONFLICT (name) "
            "DO UPDATE SET value = excluded.value",
            (name, value),
        )

    def _front(self, conn: sqlite3.Connection) -> int:
        return -int(self._counter(conn, "pos", 1))

    @staticmethod
    def _entry(row: tuple[object, ...]) -> QueuedJob:
        id_, blob, inst, lane, home, faults, resume, recoveries = row
        fields = {
            "inst": str(inst),
            "lane": str(lane),
            "home": str(home or ""),
            "faults": str(faults),
            "resume": "1" if resume else "0",
            "recoveries": str(recoveries),
        }
        return QueuedJob.from_parts(str(id_), str(blob), fields)

    def _live_slots(self, conn: sqlite3.Connection, now: float) -> int:
        conn.execute("DELETE FROM workers WHERE expires <= ?", (now,))
        return int(conn.execute("SELECT COALESCE(SUM(slots), 0) FROM workers").fetchone()[0])

    def _caps(self, conn: sqlite3.Connection, now: float, limit: int) -> Callable[[str], int]:
        """How many reviews each installation may run at once now (see
        :func:`workers.schedule.types.limit_applies`)."""
        if limit > 0:
            return lambda inst: limit
        cap = default_limit(self._live_slots(conn, now))
        conn.execute("DELETE FROM active WHERE at <= ?", (now - self._window,))

        def of(inst: str) -> int:
            others = conn.execute(
                "SELECT 1 FROM jobs WHERE inst != ? UNION ALL "
                "SELECT 1 FROM active WHERE inst != ? LIMIT 1",
                (inst, inst),
            ).fetchone()
            return cap if limit_applies(limit, others is not None) else UNLIMITED

        return of

    def _ended(self, conn: sqlite3.Connection, id_: str, now: float) -> None:
        """A review of the job's installation ended now: it stays active a while."""
        conn.execute(
            "INSERT INTO active (inst, at) SELECT inst, ? FROM jobs WHERE id = ? "
            "ON CONFLICT (inst) DO UPDATE SET at = excluded.at",
            (now, id_),
        )

    def _running(self, conn: sqlite3.Connection, inst: str) -> int:
        sql = "SELECT COUNT(*) FROM jobs WHERE state = 'running' AND inst = ?"
        return int(conn.execute(sql, (inst,)).fetchone()[0])

    def _turn_order(self, conn: sqlite3.Connection) -> list[str]:
        rows = conn.execute(
            "SELECT t.inst FROM turns t WHERE EXISTS (SELECT 1 FROM jobs j WHERE "
            "j.state = 'pending' AND j.inst = t.inst) ORDER BY t.served, t.inst"
        ).fetchall()
        return [str(r[0]) for r in rows]

    def _ready(self, conn: sqlite3.Connection, id_: str, *, front: bool) -> None:
        """Make a job pending again (``front``: ahead of its lane) and give its
        installation a turn record."""
        pos = self._front(conn) if front else int(self._counter(conn, "pos", 1))
        conn.execute(
            "UPDATE jobs SET state = 'pending', pos = ?, ready_at = NULL, owner = NULL, "
            "host = NULL, expires = NULL WHERE id = ?",
            (pos, id_),
        )
        conn.execute(
            "INSERT OR IGNORE INTO turns (inst, served) SELECT inst, 0 FROM jobs WHERE id = ?",
            (id_,),
        )

    def _orphan_turn(self, conn: sqlite3.Connection) -> bool:
        """A place came free: give a dropped turn out again if any job waits."""
        if self._counter(conn, "orphans") <= 0:
            return False
        if conn.execute("SELECT 1 FROM jobs WHERE state = 'pending' LIMIT 1").fetchone() is None:
            self._set(conn, "orphans", 0)
            return False
        self._counter(conn, "orphans", -1)
        return True

    def _owned(self, conn: sqlite3.Connection, claim: Claim) -> bool:
        row = conn.execute(
            "SELECT 1 FROM jobs WHERE id = ? AND state = 'running' AND owner = ?",
            (claim.entry.id, claim.owner),
        ).fetchone()
        return row is not None

    # -- the schedule ----------------------------------------------------------------

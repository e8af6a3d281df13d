"""The review schedule in SQLite, for one machine (:mod:`workers.schedule.protocol` says what it
keeps). Each operation is one ``BEGIN IMMEDIATE`` transaction: the webhook's processes
and every worker process on the machine agree without a lock of their own."""

from __future__ import annotations

import contextlib
import sqlite3
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from workers.schedule.types import (
    ACTIVE_WINDOW,
    LANES,
    LOCALITY_WINDOW,
    UNLIMITED,
    Claim,
    HostLoad,
    QueuedJob,
    Returned,
    ScheduleError,
    default_limit,
    limit_applies,
    new_owner,
    worker_of,
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


class SQLiteSchedule:
    """One SQLite file of jobs, lines and workers, and the schedule's operations on it."""

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

    # -- the operations ----------------------------------------------------------------

    def enqueue(self, entry: QueuedJob) -> None:
        with self._tx() as conn:
            conn.execute(
                "INSERT INTO jobs (id, blob, inst, lane, home, faults, resume, recoveries, "
                "state, pos) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?)",
                (
                    entry.id,
                    entry.blob(),
                    entry.turn_key,
                    entry.lane,
                    entry.home,
                    entry.faults,
                    int(entry.resume),
                    entry.recoveries,
                    int(self._counter(conn, "pos", 1)),
                ),
            )
            conn.execute(
                "INSERT OR IGNORE INTO turns (inst, served) VALUES (?, 0)", (entry.turn_key,)
            )

    def withdraw(self, entry: QueuedJob) -> bool:
        with self._tx() as conn:
            cur = conn.execute("DELETE FROM jobs WHERE id = ? AND state = 'pending'", (entry.id,))
            return cur.rowcount == 1

    def claim(self, worker: str, host: str, lease: float, limit: int) -> Claim | None:
        now = self._clock()
        with self._tx() as conn:
            self._set(conn, "last_claim", now)
            cap = self._caps(conn, now, limit)
            for inst in self._turn_order(conn):
                if self._running(conn, inst) >= cap(inst):
                    continue
                row = self._pick(conn, inst, host)
                if row is None:
                    continue
                entry = self._entry(row)
                owner = new_owner(worker)
                conn.execute(
                    "UPDATE jobs SET state = 'running', owner = ?, host = ?, expires = ? "
                    "WHERE id = ?",
                    (owner, host, now + lease, entry.id),
                )
                served = int(self._counter(conn, "clock", 1))
                conn.execute("UPDATE turns SET served = ? WHERE inst = ?", (served, inst))
                return Claim(entry, owner)
            if self._turn_order(conn):
                self._counter(conn, "orphans", 1)  # every waiting job is over its limit
            return None

    def _pick(self, conn: sqlite3.Connection, inst: str, host: str) -> tuple[object, ...] | None:
        for lane in LANES:
            rows = conn.execute(
                "SELECT id, blob, inst, lane, home, faults, resume, recoveries FROM jobs "
                "WHERE state = 'pending' AND inst = ? AND lane = ? ORDER BY pos LIMIT ?",
                (inst, lane, LOCALITY_WINDOW),
            ).fetchall()
            if rows:
                mine: tuple[object, ...] = next((r for r in rows if r[4] == host), rows[0])
                return mine
        return None

    def renew(self, claim: Claim, lease: float) -> bool:
        with self._tx() as conn:
            cur = conn.execute(
                "UPDATE jobs SET expires = ? WHERE id = ? AND state = 'running' AND owner = ?",
                (self._clock() + lease, claim.entry.id, claim.owner),
            )
            return cur.rowcount == 1

    def finish(self, claim: Claim) -> bool:
        with self._tx() as conn:
            if not self._owned(conn, claim):
                return False
            self._ended(conn, claim.entry.id, self._clock())
            conn.execute("DELETE FROM jobs WHERE id = ?", (claim.entry.id,))
            return self._orphan_turn(conn)

    def defer(self, claim: Claim, delay: float, *, faults: int) -> bool:
        with self._tx() as conn:
            if not self._owned(conn, claim):
                return False
            conn.execute(
                "UPDATE jobs SET state = 'delayed', ready_at = ?, faults = ?, owner = NULL, "
                "host = NULL, expires = NULL WHERE id = ?",
                (self._clock() + delay, faults, claim.entry.id),
            )
            return self._orphan_turn(conn)

    def release(self, claim: Claim) -> bool:
        with self._tx() as conn:
            if not self._owned(conn, claim):
                return False
            conn.execute("UPDATE jobs SET resume = 1 WHERE id = ?", (claim.entry.id,))
            self._ready(conn, claim.entry.id, front=True)
            return True

    def recover(self, skip_worker: str) -> list[Returned]:
        now = self._clock()
        with self._tx() as conn:
            rows = conn.execute(
                "SELECT id, blob, inst, lane, home, faults, resume, recoveries, owner FROM jobs "
                "WHERE state = 'running' AND expires < ?",
                (now,),
            ).fetchall()
            back = []
            for row in rows:
                owner = str(row[-1])
                if worker_of(owner) == skip_worker:
                    continue
                conn.execute(
                    "UPDATE jobs SET resume = 1, recoveries = recoveries + 1 WHERE id = ?",
                    (row[0],),
                )
                self._ready(conn, str(row[0]), front=True)
                entry = self._entry(row[:-1])
                back.append(Returned(entry.with_changes(resume=True), owner))
            return back

    def promote(self) -> list[Returned]:
        with self._tx() as conn:
            rows = conn.execute(
                "SELECT id, blob, inst, lane, home, faults, resume, recoveries FROM jobs "
                "WHERE state = 'delayed' AND ready_at <= ? ORDER BY ready_at",
                (self._clock(),),
            ).fetchall()
            for row in rows:
                self._ready(conn, str(row[0]), front=True)
            return [Returned(self._entry(row)) for row in rows]

    def stalled(self, patience: float, limit: int) -> int:
        now = self._clock()
        with self._tx() as conn:
            last = conn.execute("SELECT value FROM counters WHERE name = 'last_claim'").fetchone()
            if last is None:
                self._set(conn, "last_claim", now)  # the first sweep: patience starts now
                return 0
            if now - float(last[0]) < patience:
                return 0
            cap = self._caps(conn, now, limit)
            running = conn.execute("SELECT COUNT(*) FROM jobs WHERE state = 'running'")
            free = self._live_slots(conn, now) - int(running.fetchone()[0])
            waiting = 0
            for inst in self._turn_order(conn):
                room = cap(inst) - self._running(conn, inst)
                sql = "SELECT COUNT(*) FROM jobs WHERE state = 'pending' AND inst = ?"
                if room > 0:
                    waiting += min(room, int(conn.execute(sql, (inst,)).fetchone()[0]))
            if waiting <= 0 or free <= 0:
                return 0
            self._set(conn, "last_claim", now)
            return min(waiting, free)

    def heartbeat(self, worker: str, host: str, slots: int, ttl: float) -> None:
        with self._tx() as conn:
            conn.execute(
                "INSERT INTO workers (id, host, slots, expires) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (id) DO UPDATE SET host = excluded.host, slots = excluded.slots, "
                "expires = excluded.expires",
                (worker, host, slots, self._clock() + ttl),
            )

    def leave(self, worker: str) -> None:
        with self._tx() as conn:
            conn.execute("DELETE FROM workers WHERE id = ?", (worker,))

    def hosts(self) -> dict[str, HostLoad]:
        now = self._clock()
        with self._tx() as conn:
            self._live_slots(conn, now)
            slots = dict(conn.execute("SELECT host, SUM(slots) FROM workers GROUP BY host"))
            busy = dict(
                conn.execute(
                    "SELECT host, COUNT(*) FROM jobs WHERE state = 'running' GROUP BY host"
                )
            )
        return {str(h): HostLoad(int(n), int(busy.get(h, 0))) for h, n in slots.items()}

    def pending(self) -> int:
        with self._tx() as conn:
            row = conn.execute("SELECT COUNT(*) FROM jobs WHERE state = 'pending'").fetchone()
            return int(row[0])

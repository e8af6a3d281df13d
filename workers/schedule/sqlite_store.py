"""The review schedule in SQLite, for one machine (:mod:`workers.schedule.protocol` says what it
keeps). Each operation is one ``BEGIN IMMEDIATE`` transaction: the webhook's processes
and every worker process on the machine agree without a lock of their own."""

from __future__ import annotations

import sqlite3

from workers.schedule.sqlite_tables import SQLiteLines
from workers.schedule.types import (
    LANES,
    LOCALITY_WINDOW,
    Claim,
    HostLoad,
    QueuedJob,
    Returned,
    new_owner,
    worker_of,
)


class SQLiteSchedule(SQLiteLines):
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

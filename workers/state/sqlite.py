"""SQLite opened for many processes at once: WAL, a busy timeout, and a WAL switch that
survives processes opening a fresh file together (the embedded broker and PR state)."""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Final

BUSY_SECONDS: Final = 30.0


def use_wal(conn: sqlite3.Connection, seconds: float = BUSY_SECONDS) -> None:
    # WAL lets the readers and the writer of several processes proceed together and is
    # stored in the file. The switch needs the database to itself, and SQLite answers
    # "locked" at once (no busy wait) when another process opens the fresh file at the
    # same moment: retry briefly.
    deadline = time.monotonic() + seconds
    delay = 0.005
    while True:
        try:
            if conn.execute("PRAGMA journal_mode=WAL").fetchone()[0] == "wal":
                break
        except sqlite3.OperationalError:
            if time.monotonic() > deadline:
                raise
        if time.monotonic() > deadline:
            raise sqlite3.OperationalError("cannot switch the database to WAL mode")
        time.sleep(delay)
        delay = min(delay * 2, 0.2)
    # NORMAL in WAL mode loses at most the last commits on power loss, not on a crash.
    conn.execute("PRAGMA synchronous=NORMAL")


def connect(path: Path) -> sqlite3.Connection:
    """An autocommit connection (statements are their own transactions) in WAL mode."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, timeout=BUSY_SECONDS, isolation_level=None)
    use_wal(conn)
    return conn


class ThreadConnections:
    """One connection per thread and per process to one file, its tables made on first use.

    sqlite3 connections must not cross threads, and one inherited through a fork would
    share the parent's locks: each thread of each process opens its own.
    """

    def __init__(self, path: Path, tables: Iterable[str] = ()) -> None:
        self.path = path
        self._tables = tuple(tables)
        self._local = threading.local()

    def get(self) -> sqlite3.Connection:
        local = self._local
        if getattr(local, "pid", None) != os.getpid():
            conn = connect(self.path)
            for statement in self._tables:
                conn.execute(statement)
            local.conn, local.pid = conn, os.getpid()
        conn_: sqlite3.Connection = local.conn
        return conn_

"""The embedded broker: kombu's SQLAlchemy transport on SQLite, made safe for ``acks_late``.

kombu's own transport marks a message invisible when a worker takes it and keeps the
"unacknowledged" state in that worker's memory only: a worker killed with SIGKILL loses
every message it held, and acknowledged rows are never deleted. This subclass gives it the
Redis transport's semantics instead:

- taking a message marks its row invisible and stamps the time (UTC);
- an ack (or a reject without requeue) deletes the row;
- a requeue, or a worker's clean shutdown, makes the row visible again in place;
- any worker makes rows visible again that stayed invisible longer than the visibility
  timeout (their worker died), so the job is redelivered, as Redis does.

SQLite runs in WAL mode with a busy timeout, so the webhook processes publishing and the
worker processes consuming share the file safely. Selected with Celery's
``broker_transport = "workers.celeryapp.embedded_broker:Transport"``
(see ``workers.celeryapp.app``).
"""

from __future__ import annotations

import datetime
import logging
import os
import sqlite3
import threading
import time
from json import dumps, loads
from queue import Empty
from typing import Any

from kombu.transport import sqlalchemy as kombu_sqla
from kombu.transport.sqlalchemy.models import metadata
from kombu.utils.encoding import bytes_to_str
from sqlalchemy import create_engine, event, select, update
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError, OperationalError
from sqlalchemy.orm import sessionmaker

from workers.state.sqlite import BUSY_SECONDS, use_wal

log = logging.getLogger("gitneural.broker")

#: Transport options read here (kombu's own would pass them all to ``create_engine``).
OPTIONS = ("polling_interval", "visibility_timeout", "restore_interval")
_MUTEX = threading.RLock()


def _utcnow() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC).replace(tzinfo=None)


def _configure(dbapi_conn: sqlite3.Connection, _record: object) -> None:
    use_wal(dbapi_conn)


class Channel(kombu_sqla.Channel):
    #: Per process: a SQLAlchemy engine must not cross a fork (prefork children publish).
    _gitneural_engines: dict[tuple[int, str], tuple[Engine, Any]] = {}  # noqa: RUF012

    def __init__(self, connection: Any, **kwargs: Any) -> None:
        super().__init__(connection, **kwargs)
        options = connection.client.transport_options
        self.visibility_timeout = float(options.get("visibility_timeout", 3600.0))
        self.restore_interval = float(
            options.get("restore_interval", min(60.0, self.visibility_timeout / 4))
        )
        # delivery tag -> row id of the messages this channel holds unacknowledged.
        self._rows: dict[str, int] = {}
        self._queue_ids: dict[str, int] = {}
        self._next_sweep = 0.0

    # -- engine ---------------------------------------------------------------------------

    def _url(self) -> str:
        client = self.connection.client
        assert client is not None and client.hostname, "the broker URL names the SQLite file"
        return str(client.hostname)

    def _engine_from_config(self) -> Engine:
        url = self._url()
        engine = create_engine(url, connect_args={"timeout": BUSY_SECONDS})
        event.listen(engine, "connect", _configure)
        return engine

    def _open(self) -> tuple[Engine, Any]:
        key = (os.getpid(), self._url())
        with _MUTEX:
            if key not in self._gitneural_engines:
                engine = self._engine_from_config()
                _create_tables(engine)
                self._gitneural_engines[key] = (engine, sessionmaker(bind=engine))
            return self._gitneural_engines[key]

    @property
    def _table(self) -> Any:
        return self.message_cls.__table__

    def _write(self, statement: Any) -> None:
        # Acks come from pool threads: a short connection of their own, never the
        # consumer's session.
        engine, _ = self._open()
        try:
            with engine.begin() as conn:
                conn.execute(statement)
        except OperationalError as exc:
            # A lost ack only means a redelivery after the visibility timeout, which the
            # tasks absorb (one run per PR head); say so rather than crash the ack path.
            log.warning("embedded broker write failed (%s); the message may be redelivered", exc)

    # -- consuming ------------------------------------------------------------------------

    def _get_or_create(self, queue: str) -> Any:
        # kombu guards the creation of a queue's row against other threads, not other
        # processes: two workers (or a worker and the webhook) declaring a new queue at
        # once both insert it, and the second met UNIQUE and died at start (a full run).
        try:
            return super()._get_or_create(queue)  # type: ignore[misc]
        except IntegrityError:
            self.session.rollback()
            return self.session.query(self.queue_cls).filter(self.queue_cls.name == queue).one()

    def _queue_id(self, queue: str) -> int:
        # Queue rows are never deleted: look each up (or create it) once per channel.
        qid = self._queue_ids.get(queue)
        if qid is None:
            qid = self._queue_ids[queue] = int(self._get_or_create(queue).id)
        return qid

    def _put(self, queue: str, payload: Any, **kwargs: Any) -> None:  # type: ignore[override]
        # One Core INSERT: the webhook publishes inside GitHub's 10 s, and kombu's ORM
        # path costs milliseconds. Errors propagate, so a refused publish is a 503.
        engine, _ = self._open()
        table = self._table
        with engine.begin() as conn:
            conn.execute(
                table.insert().values(
                    payload=dumps(payload), queue_id=self._queue_id(queue), visible=True, version=1
                )
            )

    def _get(self, queue: str) -> dict[str, Any]:  # type: ignore[override]
        self._maybe_restore_stale()
        engine, _ = self._open()
        table = self._table
        visible = (table.c.queue_id == self._queue_id(queue)) & (table.c.visible == True)  # noqa: E712
        with engine.connect() as conn:
            # An idle poll only reads: the write lock is taken when there is work.
            if conn.execute(select(table.c.id).where(visible).limit(1)).first() is None:
                raise Empty()
        oldest = (
            select(table.c.id)
            .where(visible)
            .order_by(table.c.timestamp, table.c.id)
            .limit(1)
            .scalar_subquery()
        )
        # One statement takes the oldest visible message: atomic among consumers.
        claim = (
            update(table)
            .where(table.c.id == oldest)
            .values(visible=False, timestamp=_utcnow(), version=table.c.version + 1)
            .returning(table.c.id, table.c.payload, table.c.version)
        )
        with engine.begin() as conn:
            row = conn.execute(claim).first()
        if row is None:  # another consumer took it first
            raise Empty()
        payload: dict[str, Any] = loads(bytes_to_str(row.payload))
        if row.version > 2:
            # Claimed before (version 1 at publish, +1 per claim): its worker died or
            # requeued it. Said the way kombu's Redis transport says it.
            properties = payload.setdefault("properties", {})
            properties.setdefault("delivery_info", {})["redelivered"] = True
        tag = payload.get("properties", {}).get("delivery_tag")
        if tag:
            self._rows[tag] = int(row.id)
        return payload

    def basic_ack(self, delivery_tag: str, multiple: bool = False) -> None:
        super().basic_ack(delivery_tag, multiple=multiple)
        row = self._rows.pop(delivery_tag, None)
        if row is not None:
            self._write(self._table.delete().where(self._table.c.id == row))

    def basic_reject(self, delivery_tag: str, requeue: bool = False) -> None:
        super().basic_reject(delivery_tag, requeue=requeue)  # a requeue goes via _restore
        row = self._rows.pop(delivery_tag, None)
        if row is not None:
            self._write(self._table.delete().where(self._table.c.id == row))

    def _restore(self, message: Any) -> None:
        row = self._rows.pop(message.delivery_tag, None)
        if row is None:
            super()._restore(message)
            return
        # Visible again in its old place (ordered by id once the timestamp is cleared).
        self._write(
            update(self._table).where(self._table.c.id == row).values(visible=True, timestamp=None)
        )

    def _maybe_restore_stale(self) -> None:
        now = time.monotonic()
        if now < self._next_sweep:
            return
        self._next_sweep = now + self.restore_interval
        cutoff = _utcnow() - datetime.timedelta(seconds=self.visibility_timeout)
        table = self._table
        self._write(
            update(table)
            .where(table.c.visible == False, table.c.timestamp < cutoff)  # noqa: E712
            .values(visible=True, timestamp=None)
        )


def _create_tables(engine: Engine) -> None:
    # Processes starting together race between "does the table exist" and "create it".
    for attempt in range(20):
        try:
            metadata.create_all(engine)
            return
        except OperationalError:
            if attempt == 19:
                raise
            time.sleep(0.05)


class Transport(kombu_sqla.Transport):
    Channel = Channel

"""The review schedule in Redis, shared by every web and worker host
(:mod:`workers.schedule.protocol` says what it keeps, :mod:`workers.schedule.lua` how). One
Lua script per operation: atomic on the server, and on the server's clock."""

from __future__ import annotations

from typing import Any

import workers.schedule.lua as lua
from workers.schedule.types import (
    ACTIVE_WINDOW,
    LOCALITY_WINDOW,
    Claim,
    HostLoad,
    QueuedJob,
    Returned,
    ScheduleError,
    new_owner,
)


def _text(value: Any) -> str:
    if value is None or value is False:
        return ""
    return value.decode() if isinstance(value, bytes) else str(value)


def _ms(seconds: float) -> int:
    return max(1, round(seconds * 1000))


def _entry(values: list[Any]) -> QueuedJob:
    id_, blob, inst, lane, home, faults, resume, recoveries = (_text(v) for v in values)
    fields = {
        "inst": inst,
        "lane": lane,
        "home": home,
        "faults": faults,
        "resume": resume,
        "recoveries": recoveries,
    }
    return QueuedJob.from_parts(id_, blob, fields)


class RedisSchedule:
    def __init__(
        self, url: str, *, prefix: str = "gitneural:fq:", active_window: float = ACTIVE_WINDOW
    ) -> None:
        import redis  # only deployments that use Redis pay for the import

        self._errors = redis.RedisError
        self.prefix = prefix
        self._window = _ms(active_window)
        # Short timeouts keep a dead Redis from holding a webhook request past 10 s.
        self._redis: redis.Redis = redis.Redis.from_url(
            url, socket_timeout=3.0, socket_connect_timeout=3.0
        )
        self._scripts = {
            name: self._redis.register_script(lua.script(name)) for name in lua.SCRIPTS
        }

    def _call(self, name: str, *args: str | int) -> Any:
        try:
            return self._scripts[name](keys=[], args=[self.prefix, *args])
        except self._errors as exc:
            # A Redis error's text may echo the URL (and its password): name the kind only.
            raise ScheduleError(
                f"review schedule on Redis failed ({type(exc).__name__}): "
                "check that Redis is up and GITNEURAL_STATE_URL is right"
            ) from None

    def enqueue(self, entry: QueuedJob) -> None:
        self._call(
            "enqueue",
            entry.id,
            entry.blob(),
            entry.turn_key,
            entry.lane,
            entry.home or "",
            entry.faults,
            int(entry.resume),
            entry.recoveries,
        )

    def withdraw(self, entry: QueuedJob) -> bool:
        return int(self._call("withdraw", entry.id)) == 1

    def claim(self, worker: str, host: str, lease: float, limit: int) -> Claim | None:
        owner = new_owner(worker)
        found = self._call("claim", owner, host, _ms(lease), limit, LOCALITY_WINDOW, self._window)
        return Claim(_entry(found), owner) if found else None

    def renew(self, claim: Claim, lease: float) -> bool:
        return int(self._call("renew", claim.entry.id, claim.owner, _ms(lease))) == 1

    def finish(self, claim: Claim) -> bool:
        return int(self._call("finish", claim.entry.id, claim.owner)) == 2

    def defer(self, claim: Claim, delay: float, *, faults: int) -> bool:
        return int(self._call("defer", claim.entry.id, claim.owner, _ms(delay), faults)) == 2

    def release(self, claim: Claim) -> bool:
        return int(self._call("release", claim.entry.id, claim.owner)) == 1

    def recover(self, skip_worker: str) -> list[Returned]:
        found = self._call("recover", skip_worker)
        return [Returned(_entry(list(row[1:])), _text(row[0])) for row in found]

    def promote(self) -> list[Returned]:
        return [Returned(_entry(list(row))) for row in self._call("promote")]

    def stalled(self, patience: float, limit: int) -> int:
        return int(self._call("stalled", _ms(patience), limit, self._window))

    def heartbeat(self, worker: str, host: str, slots: int, ttl: float) -> None:
        self._call("heartbeat", worker, host, slots, _ms(ttl))

    def leave(self, worker: str) -> None:
        try:
            self._redis.zrem(self.prefix + "workers", worker)
            self._redis.hdel(self.prefix + "wslots", worker)
        except self._errors as exc:
            raise ScheduleError(f"review schedule on Redis failed ({type(exc).__name__})") from None

    def hosts(self) -> dict[str, HostLoad]:
        flat = self._call("hosts")
        return {
            _text(flat[i]): HostLoad(int(flat[i + 1]), int(flat[i + 2]))
            for i in range(0, len(flat), 3)
        }

    def pending(self) -> int:
        return int(self._call("pending"))

    def close(self) -> None:
        self._redis.close()

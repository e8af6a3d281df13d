"""The review schedule's Lua scripts for Redis (see :mod:`workers.schedule.redis_store`), kept
as ``.lua`` files in ``workers/schedule/lua/`` (package data): one per operation, each sent
with ``helpers.lua`` in front of it.

Every script gets the key prefix as ``ARGV[1]`` and reads the time from Redis itself
(``TIME``), so every host's leases and delays run on one clock. Keys, under the prefix:

- ``job:<id>`` hash: ``blob`` (the job, never rewritten), ``inst``, ``lane``, ``home``,
  ``faults``, ``resume``, ``recoveries``, and while it runs ``owner`` and ``host``;
- ``lane:<inst>:<lane>`` sorted set of waiting job ids by position (front: negative);
- ``turns`` sorted set of installations with waiting jobs, by when they last had a
  turn (``clock``); ``served`` hash remembers that for installations with none;
- ``running`` sorted set of running job ids by lease expiry (ms); ``rcount`` and
  ``hrun`` hashes count them per installation and per worker host;
- ``delayed`` sorted set of job ids by the time they may run again (ms);
- ``workers`` sorted set of live workers by expiry, ``wslots`` their ``host|slots``;
- ``njobs`` hash: jobs in the schedule per installation (waiting, running or delayed);
  ``active`` sorted set of installations by when their last review ended (ms): with
  ``njobs``, whether another installation is active (when the default limit applies);
- ``orphans``: turns dropped because every waiting job was over its limit;
  ``last_claim``: when a worker last asked for a job.
"""

from __future__ import annotations

from functools import cache
from importlib.resources import files

#: Every operation of the schedule in Redis, by the name its file has (``claim.lua``…).
SCRIPTS = (
    "enqueue",
    "withdraw",
    "claim",
    "renew",
    "finish",
    "defer",
    "release",
    "recover",
    "promote",
    "stalled",
    "heartbeat",
    "hosts",
    "pending",
)


def _read(name: str) -> str:
    # This module's own package, where ``lua/`` ships.
    package = __name__.rpartition(".")[0]
    return (files(package) / "lua" / f"{name}.lua").read_text(encoding="utf-8")


@cache
def script(name: str) -> str:
    """The source of operation ``name``, its helpers first."""
    if name not in SCRIPTS:
        raise KeyError(f"no Lua script named {name!r}")
    return _read("helpers") + "\n" + _read(name)

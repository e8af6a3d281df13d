"""A small HTTP/1.1 load generator on asyncio, for webhook deliveries on loopback.

wrk is not installed and locust's own cost per request (gevent, a web UI, stats in
Python) would take much of the second core from the server under test. This sends
prepared requests over raw sockets, one connection per request with ``Connection:
close``, as GitHub delivers webhooks, and reads each reply to its end.

Two ways to load a server:

- :func:`closed_loop`: ``concurrency`` clients send back to back; gives the most
  deliveries per second the server sustains (latency then includes queueing);
- :func:`open_loop`: requests start at a fixed ``rate`` whatever the replies do; gives
  the latency a sender at that rate sees. It is measured from the moment each request
  was due, so a server (or client) that falls behind cannot hide it.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from benchmarks.common import percentile

#: Builds request ``n`` (the bytes of a whole HTTP request).
RequestMaker = Callable[[int], bytes]

_TIMEOUT = 10.0  # GitHub's own limit for a webhook answer


@dataclass
class LoadResult:
    elapsed: float
    #: Seconds per completed request, sorted.
    latencies: list[float] = field(default_factory=list)
    statuses: Counter[int] = field(default_factory=Counter)
    #: Connection errors and timeouts (no HTTP status).
    failures: int = 0

    @property
    def completed(self) -> int:
        return len(self.latencies)

    @property
    def rate(self) -> float:
        return self.completed / self.elapsed if self.elapsed > 0 else 0.0

    def ms(self, q: float) -> float:
        return percentile(self.latencies, q) * 1000

    def count(self, status: int) -> int:
        return self.statuses[status]


def http_request(path: str, host: str, headers: dict[str, str], body: bytes) -> bytes:
    """A POST request's bytes, with ``Content-Length`` and ``Connection: close``."""
    lines = [f"POST {path} HTTP/1.1", f"Host: {host}"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    lines += [f"Content-Length: {len(body)}", "Connection: close", "", ""]
    return "\r\n".join(lines).encode("latin-1") + body


async def _send(host: str, port: int, request: bytes) -> int | None:
    """The reply's status code, or None when the connection failed or timed out."""
    try:
        async with asyncio.timeout(_TIMEOUT):
            reader, writer = await asyncio.open_connection(host, port)
            try:
                writer.write(request)
                reply = await reader.read()  # to EOF: the server closes after replying
            finally:
                writer.close()
    except (OSError, TimeoutError):
        return None
    try:
        return int(reply[9:12])  # "HTTP/1.1 202 ..."
    except ValueError:
        return None


def _record(result: LoadResult, status: int | None, started: float) -> None:
    if status is None:
        result.failures += 1
    else:
        result.statuses[status] += 1
        result.latencies.append(time.perf_counter() - started)


async def _closed(
    host: str, port: int, make: RequestMaker, concurrency: int, duration: float
) -> LoadResult:
    result = LoadResult(elapsed=0.0)
    counter = iter(range(1 << 62))
    began = time.perf_counter()
    deadline = began + duration

    async def client() -> None:
        while time.perf_counter() < deadline:
            request = make(next(counter))
            started = time.perf_counter()
            _record(result, await _send(host, port, request), started)

    await asyncio.gather(*(client() for _ in range(concurrency)))
    result.elapsed = time.perf_counter() - began
    result.latencies.sort()
    return result


async def _open(
    host: str, port: int, make: RequestMaker, rate: float, duration: float
) -> LoadResult:
    result = LoadResult(elapsed=0.0)
    total = max(1, round(rate * duration))
    requests = [make(n) for n in range(total)]  # built before the clock starts
    began = time.perf_counter()

    async def one(n: int) -> None:
        due = began + n / rate
        delay = due - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        _record(result, await _send(host, port, requests[n]), due)

    await asyncio.gather(*(one(n) for n in range(total)))
    result.elapsed = time.perf_counter() - began
    result.latencies.sort()
    return result


def closed_loop(
    host: str, port: int, make: RequestMaker, *, concurrency: int, duration: float
) -> LoadResult:
    return asyncio.run(_closed(host, port, make, concurrency, duration))


def open_loop(
    host: str, port: int, make: RequestMaker, *, rate: float, duration: float
) -> LoadResult:
    return asyncio.run(_open(host, port, make, rate, duration))

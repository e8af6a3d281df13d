"""What every benchmark module shares: the row format, the table, timing, test servers.

A benchmark module has ``run(quick: bool = False) -> list[Row]`` and ends with::

    if __name__ == "__main__":
        raise SystemExit(main(run))

A :class:`Row` says one thing measured: ``measure`` (what), ``value`` (a number, or a
string when the value is not a number), ``unit``, ``budget`` (the promise it is held to,
in words such as ``"< 1 s"``; ``""`` when none) and ``holds`` (``True``/``False`` against
the budget, ``None`` when there is no budget).

Realistic repositories made from the standard library's code live in
:mod:`benchmarks.corpus` (the files themselves: :mod:`benchmarks.corpus_files`).
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import math
import statistics
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

from bot.errors import GitNeuralError

if TYPE_CHECKING:  # imported where used: the runner and every module's process import
    # this module, and the fakes bring Flask and GraphQL (a third of a second each time)
    from tests.fakes.github import FakeGitHub
    from tests.fakes.k3 import K3Stub

REPO_ROOT = Path(__file__).resolve().parent.parent
RESULTS_DIR = REPO_ROOT / "benchmarks" / "results"
TESTS_DIR = REPO_ROOT / "tests"
FIXTURES_DIR = TESTS_DIR / "fixtures"


class BenchmarkError(GitNeuralError):
    """A benchmark could not run, or returned something that is not a list of rows."""


class Row(TypedDict):
    measure: str
    value: str | float
    unit: str
    budget: str
    holds: bool | None


ROW_KEYS = frozenset(Row.__annotations__)


def row(
    measure: str,
    value: str | float,
    unit: str = "",
    budget: str = "",
    holds: bool | None = None,
) -> Row:
    """One row; ``holds`` must be given whenever ``budget`` is."""
    if budget and holds is None:
        raise BenchmarkError(f"row {measure!r} names a budget but not whether it holds")
    return Row(measure=measure, value=value, unit=unit, budget=budget, holds=holds)


def validate_rows(data: object, source: str = "benchmark") -> list[Row]:
    """``data`` as rows, or :class:`BenchmarkError` saying what is wrong with it."""
    if not isinstance(data, list) or not data:
        raise BenchmarkError(f"{source} must return a non-empty list of rows")
    for i, item in enumerate(data):
        if not isinstance(item, dict) or set(item) != ROW_KEYS:
            raise BenchmarkError(f"{source} row {i} must have exactly the keys {sorted(ROW_KEYS)}")
        problems = [
            name
            for name, ok in (
                ("measure", isinstance(item["measure"], str) and bool(item["measure"])),
                ("value", _valid_value(item["value"])),
                ("unit", isinstance(item["unit"], str)),
                ("budget", isinstance(item["budget"], str)),
                ("holds", item["holds"] is None or isinstance(item["holds"], bool)),
            )
            if not ok
        ]
        if problems:
            raise BenchmarkError(f"{source} row {i} has a bad {', '.join(problems)}")
        if item["budget"] and item["holds"] is None:
            raise BenchmarkError(f"{source} row {i} names a budget but not whether it holds")
    return data  # checked above, key by key


def _valid_value(value: object) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int | float):
        return math.isfinite(value)
    return isinstance(value, str)


def format_value(r: Row) -> str:
    value = r["value"]
    if isinstance(value, str):
        text = value
    elif isinstance(value, int):
        text = f"{value:,}"
    elif abs(value) >= 100:
        text = f"{value:,.0f}"
    elif abs(value) >= 10:
        text = f"{value:.1f}"
    else:
        text = f"{value:.3g}"
    return f"{text} {r['unit']}".strip()


def verdict(r: Row) -> str:
    return {True: "yes", False: "NO", None: "-"}[r["holds"]]


def _cells(rows: Sequence[Row]) -> list[tuple[str, str, str, str]]:
    return [(r["measure"], format_value(r), r["budget"] or "-", verdict(r)) for r in rows]


HEADER = ("measure", "value", "budget", "holds")


def format_table(rows: Sequence[Row]) -> str:
    """A plain-text table with aligned columns, for the terminal."""
    cells = [HEADER, *_cells(rows)]
    widths = [max(len(c[i]) for c in cells) for i in range(4)]
    lines = ["  ".join(c[i].ljust(widths[i]) for i in range(4)).rstrip() for c in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def markdown_table(rows: Sequence[Row]) -> str:
    def cell(text: str) -> str:
        return text.replace("|", "\\|")

    lines = ["| " + " | ".join(HEADER) + " |", "|---|--:|---|:-:|"]
    lines += ["| " + " | ".join(cell(c) for c in cells) + " |" for cells in _cells(rows)]
    return "\n".join(lines)


def main(run: Callable[[bool], list[Row]], argv: Sequence[str] | None = None) -> int:
    """The ``__main__`` of a benchmark module: print its rows; 1 if a budget fails."""
    parser = argparse.ArgumentParser(description="Run one GitNeural benchmark module.")
    parser.add_argument("--quick", action="store_true", help="small sizes, short runs")
    args = parser.parse_args(argv)
    rows = validate_rows(run(args.quick))
    print(format_table(rows))
    return 1 if any(r["holds"] is False for r in rows) else 0


# --- measuring ---------------------------------------------------------------------------


def best_and_median(fn: Callable[[], object], repeat: int) -> tuple[float, float]:
    """(fastest, median) wall time of ``repeat`` calls of ``fn``, in seconds."""
    times = []
    for _ in range(max(1, repeat)):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return min(times), statistics.median(times)


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0..100) of already sorted values, nearest-rank."""
    if not sorted_values:
        raise BenchmarkError("no values to take a percentile of")
    rank = max(1, math.ceil(q / 100 * len(sorted_values)))
    return sorted_values[min(rank, len(sorted_values)) - 1]


# --- servers the benchmarks talk to -------------------------------------------------------


@contextlib.contextmanager
def k3_stub(**kwargs: Any) -> Iterator[K3Stub]:
    """A running :class:`~tests.fakes.k3.K3Stub` on 127.0.0.1 (``.base_url``, ``.api_key``)."""
    from tests.fakes.k3 import K3Stub

    stub = K3Stub(**kwargs)
    with stub:
        yield stub


@contextlib.contextmanager
def fake_github(**kwargs: Any) -> Iterator[FakeGitHub]:
    """A running :class:`~tests.fakes.github.FakeGitHub` (``.api_url``, ``.env()``)."""
    from tests.fakes.github import FakeGitHub

    gh = FakeGitHub(**kwargs)
    with gh:
        yield gh


def wait_for_http(host: str, port: int, path: str = "/healthz", timeout: float = 30.0) -> None:
    """Poll ``GET path`` until it answers 200, or raise :class:`BenchmarkError`."""
    deadline = time.monotonic() + timeout
    delay = 0.01
    while True:
        conn = http.client.HTTPConnection(host, port, timeout=2)
        try:
            conn.request("GET", path)
            if conn.getresponse().status == 200:
                return
        except OSError:
            pass
        finally:
            conn.close()
        if time.monotonic() > deadline:
            raise BenchmarkError(f"http://{host}:{port}{path} did not answer within {timeout} s")
        time.sleep(delay)
        delay = min(delay * 2, 0.2)


def redis_up(url: str) -> bool:
    """Whether the Redis at ``url`` answers a PING within a second (else its rows are
    reported as not run)."""
    import redis  # only the benchmarks that offer a Redis deployment need it

    client = redis.Redis.from_url(url, socket_connect_timeout=1.0, socket_timeout=1.0)
    try:
        return bool(client.ping())
    except redis.RedisError:
        return False
    finally:
        client.close()

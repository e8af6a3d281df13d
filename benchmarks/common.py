"""What every benchmark module shares: the row format, the table, timing, test servers.

A benchmark module has ``run(quick: bool = False) -> list[Row]`` and ends with::

    if __name__ == "__main__":
        raise SystemExit(main(run))

A :class:`Row` says one thing measured: ``measure`` (what), ``value`` (a number, or a
string when the value is not a number), ``unit``, ``budget`` (the promise it is held to,
in words such as ``"<= 3"``; ``""`` when none) and ``holds`` (``True``/``False`` against
the budget, ``None`` when there is no budget).

A time is judged as a ratio to the reference workload the runner measures in the same
run (:mod:`benchmarks.reference`), never in seconds: a machine twice as slow takes twice
as long for both (a measure that says ``CPU`` is in CPU seconds, and compared with the
workload's). Such a row names ``ref_limit`` (at most that many reference units) and
its ``budget`` says why that limit (and any other condition, which ``holds`` judges);
the runner judges the ratio. A time held to an absolute budget must be a timer's (a
lease, a timeout, GitHub's ten seconds): its budget names it with :data:`TIMER`.

Realistic repositories made from the standard library's code live in
:mod:`benchmarks.corpus` (the files themselves: :mod:`benchmarks.corpus_files`).
"""

from __future__ import annotations

import contextlib
import http.client
import math
import statistics
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
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
    ref_limit: float | None


ROW_KEYS = frozenset(Row.__annotations__)
#: A row written before reference budgets (or by hand) may leave ``ref_limit`` out.
_OLD_KEYS = ROW_KEYS - {"ref_limit"}
#: Seconds per unit of the units a time is written in.
TIME_UNITS = {"s": 1.0, "ms": 1e-3}
#: Marks a budget in seconds that a timer sets (not the processor's speed), e.g.
#: ``f"< 120 s ({TIMER} the 60 s lease)"``.
TIMER = "timer:"


def row(
    measure: str,
    value: str | float,
    unit: str = "",
    budget: str = "",
    holds: bool | None = None,
    ref_limit: float | None = None,
) -> Row:
    """One row; ``holds`` must be given whenever ``budget`` or ``ref_limit`` is."""
    if (budget or ref_limit is not None) and holds is None:
        raise BenchmarkError(f"row {measure!r} names a budget but not whether it holds")
    if ref_limit is not None and unit not in TIME_UNITS:
        raise BenchmarkError(f"row {measure!r} has a reference budget but is not a time")
    return Row(
        measure=measure, value=value, unit=unit, budget=budget, holds=holds, ref_limit=ref_limit
    )


def within_refs(
    measure: str, value: float, unit: str, limit: float, why: str, holds: bool = True
) -> Row:
    """A time held to at most ``limit`` reference units (judged by the runner); ``why``
    says how the limit was chosen; ``holds`` judges any other condition of the row."""
    return row(measure, value, unit, why, holds, limit)


def validate_rows(data: object, source: str = "benchmark") -> list[Row]:
    """``data`` as rows, or :class:`BenchmarkError` saying what is wrong with it."""
    if not isinstance(data, list) or not data:
        raise BenchmarkError(f"{source} must return a non-empty list of rows")
    for i, item in enumerate(data):
        if isinstance(item, dict) and set(item) == _OLD_KEYS:
            item["ref_limit"] = None
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
                ("ref_limit", _valid_limit(item["ref_limit"], item["unit"])),
            )
            if not ok
        ]
        if problems:
            raise BenchmarkError(f"{source} row {i} has a bad {', '.join(problems)}")
        if (item["budget"] or item["ref_limit"] is not None) and item["holds"] is None:
            raise BenchmarkError(f"{source} row {i} names a budget but not whether it holds")
    return data  # checked above, key by key


def _valid_limit(limit: object, unit: object) -> bool:
    if limit is None:
        return True
    if isinstance(limit, bool) or not isinstance(limit, int | float):
        return False
    return math.isfinite(limit) and limit > 0 and unit in TIME_UNITS


def _valid_value(value: object) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int | float):
        return math.isfinite(value)
    return isinstance(value, str)


def format_value(r: Mapping[str, Any]) -> str:
    value = r["value"]
    if isinstance(value, str):
        text = value
    elif isinstance(value, int):
        text = f"{value:,}"
    else:
        text = format_number(value)
    return f"{text} {r['unit']}".strip()


def format_number(value: float) -> str:
    if abs(value) >= 100:
        return f"{value:,.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}"
    return f"{value:.3g}"


def verdict(r: Mapping[str, Any]) -> str:
    return {True: "yes", False: "NO", None: "-"}[r["holds"]]


def _cells(rows: Sequence[Mapping[str, Any]]) -> list[tuple[str, ...]]:
    """A row's cells: its ratio to the reference (``refs``, set by the runner for every
    time) beside its value."""

    def refs(r: Mapping[str, Any]) -> str:
        value = r.get("refs")
        return "-" if value is None else format_number(value)

    return [(r["measure"], format_value(r), refs(r), r["budget"] or "-", verdict(r)) for r in rows]


HEADER = ("measure", "value", "refs", "budget", "holds")


def format_table(rows: Sequence[Mapping[str, Any]]) -> str:
    """A plain-text table with aligned columns, for the terminal."""
    cells = [HEADER, *_cells(rows)]
    widths = [max(len(c[i]) for c in cells) for i in range(len(HEADER))]
    lines = ["  ".join(c[i].ljust(w) for i, w in enumerate(widths)).rstrip() for c in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def markdown_table(rows: Sequence[Mapping[str, Any]]) -> str:
    def cell(text: str) -> str:
        return text.replace("|", "\\|")

    lines = ["| " + " | ".join(HEADER) + " |", "|---|--:|--:|---|:-:|"]
    lines += ["| " + " | ".join(cell(c) for c in cells) + " |" for cells in _cells(rows)]
    return "\n".join(lines)


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

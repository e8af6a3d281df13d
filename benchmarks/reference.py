"""The reference workload every time is judged against, measured in the same run.

An absolute budget ("the hook starts in < 300 ms") cannot tell a slower machine from
slower code: on a laptop, a loaded CI runner or this 2-core machine shared with other
work, the same code takes longer. So the runner measures a fixed piece of Python work in
the same run, and every time budget is a ratio to it: "at most 1 reference unit". The
workload stands for the product's kind of work (start an interpreter, import, parse
Python): a fresh interpreter (``-I -S``: nothing installed changes it) imports
:mod:`json`, :mod:`re`, :mod:`email.parser` and :mod:`sqlite3`, then parses with
:mod:`ast` one file in :data:`STRIDE` of the corpus (the running Python's standard
library, :mod:`benchmarks.corpus_files`, in sorted order: the same files on every
machine with the same Python). The runner samples it five times before the suite, once
between every two modules, and five times after; a module's times are judged against
the mean of the samples just before and after it (its ``ref``), so other work starting
or ending during a long run moves the reference with the times. The spreads before and
after the suite are shown, and their drift, so a run whose machine changed speed says so.
A time measured in CPU seconds (its measure says ``CPU``) is a ratio to the workload's
CPU seconds instead: a busy machine stretches wall time, hardly CPU time, and a ratio
must compare like with like.

A row whose value is a time carries its ratio (``refs``); a row with a ``ref_limit`` is
judged on it (:func:`judge`). A time with a budget in seconds must name its timer
(:data:`benchmarks.common.TIMER`), or :func:`judge` fails it: only a lease, a timeout or
GitHub's ten seconds are promises in seconds.
"""

from __future__ import annotations

import re
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from benchmarks.common import TIME_UNITS, TIMER, BenchmarkError, Row, row
from benchmarks.corpus_files import corpus_paths, stdlib_root

#: Every STRIDE-th file of the sorted corpus: 112 of CPython 3.11's 667 files, about 0.6 s
#: on a quiet 2-core machine (the whole corpus would take 4 s a sample).
STRIDE = 6
#: Samples before and after the suite (a quick run: one each side, the same workload).
REPEAT = 5
QUICK_REPEAT = 1
WORKLOAD = (
    "import ast, json, re, email.parser, sqlite3, sys\n"
    "for path in sys.stdin.read().splitlines():\n"
    "    with open(path, 'rb') as f:\n"
    "        ast.parse(f.read(), path)\n"
)
MEASURE = (
    "reference: fresh interpreter, import json, re, email, sqlite3, ast-parse 1 corpus file in 6"
)


def reference_files() -> list[str]:
    root = stdlib_root()
    return [str(root / relative) for relative in corpus_paths()[::STRIDE]]


#: A measure in CPU seconds says so; it is judged against the workload's CPU seconds.
_CPU = re.compile(r"\bCPU\b")


def sample(files: Sequence[str]) -> tuple[float, float]:
    """Wall and CPU seconds (user + system) of one run of the workload on ``files``."""
    listing = "\n".join(files)
    # The runner has no other child running now: the children's usage grows by this one.
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", WORKLOAD],
        input=listing,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    elapsed = time.perf_counter() - started
    now = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise BenchmarkError(f"the reference workload failed: {done.stderr.strip()[-300:]}")
    return elapsed, (now.ru_utime - used.ru_utime) + (now.ru_stime - used.ru_stime)


def samples(repeat: int) -> list[tuple[float, float]]:
    files = reference_files()
    return [sample(files) for _ in range(max(1, repeat))]


@dataclass(frozen=True)
class Reference:
    """The samples (wall, CPU seconds) taken before and after the suite."""

    before: tuple[tuple[float, float], ...]
    after: tuple[tuple[float, float], ...]

    @property
    def unit(self) -> float:
        """Wall seconds in one reference unit: the median of every sample."""
        return statistics.median(wall for wall, _ in (*self.before, *self.after))

    @property
    def cpu_unit(self) -> float:
        """CPU seconds in one reference unit, for the times measured in CPU seconds."""
        return statistics.median(cpu for _, cpu in (*self.before, *self.after))

    def rows(self) -> list[Row]:
        def spread(taken: Sequence[tuple[float, float]]) -> str:
            def one(values: list[float]) -> str:
                low, mid, high = min(values), statistics.median(values), max(values)
                return f"{low:.3f}–{high:.3f} s (median {mid:.3f})"

            walls, cpus = [w for w, _ in taken], [c for _, c in taken]
            return f"{len(taken)} runs, wall {one(walls)}, CPU {one(cpus)}"

        def drift(i: int) -> float:
            after = statistics.median(t[i] for t in self.after)
            return round(after / statistics.median(t[i] for t in self.before), 2)

        return [
            row(f"{MEASURE}: 1 ref", self.unit, "s"),
            row("reference, CPU seconds (1 ref for the times in CPU seconds)", self.cpu_unit, "s"),
            row("reference before the suite", spread(self.before)),
            row("reference after the suite", spread(self.after)),
            row("reference drift, after / before (medians of wall time)", drift(0), "x"),
            row("reference drift, after / before (medians of CPU time)", drift(1), "x"),
        ]


def around(ahead: tuple[float, float], behind: tuple[float, float]) -> tuple[float, float]:
    """The reference (wall, CPU seconds) for a module: the mean of the samples taken just
    before and just after it."""
    return (ahead[0] + behind[0]) / 2, (ahead[1] + behind[1]) / 2


def seconds(r: Row) -> float | None:
    """A time row's value in seconds; ``None`` for any other row."""
    value = r["value"]
    if r["unit"] not in TIME_UNITS or isinstance(value, str):
        return None
    return value * TIME_UNITS[r["unit"]]


def in_cpu_seconds(r: Row) -> bool:
    return _CPU.search(r["measure"]) is not None


def judge(r: Row, unit: float, cpu_unit: float) -> dict[str, Any]:
    """``r`` with its ratio to the reference (``refs``: of its CPU seconds, for a time in
    CPU seconds) and, if it has a ``ref_limit``, judged on it; a time with a budget in
    seconds that names no timer fails."""
    taken = seconds(r)
    refs = None if taken is None else taken / (cpu_unit if in_cpu_seconds(r) else unit)
    judged: dict[str, Any] = {**r, "refs": None if refs is None else float(f"{refs:.4g}")}
    limit = r["ref_limit"]
    if limit is not None and refs is not None:
        judged["budget"] = f"<= {limit:g} ref" + (f" ({r['budget']})" if r["budget"] else "")
        judged["holds"] = bool(r["holds"]) and refs <= limit
    elif refs is not None and r["budget"] and TIMER not in r["budget"]:
        judged["budget"] = f"{r['budget']} (in seconds, not refs, and names no {TIMER[:-1]})"
        judged["holds"] = False
    return judged

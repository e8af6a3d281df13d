"""Which tests the suite hands out first: the slowest, as measured (``tests/slow_first.txt``).

pytest-xdist gives tests to its workers in collection order. A two-minute test collected
near the end starts when the others are nearly done and keeps one worker busy alone for
its whole length: the run's tail. Collected first, it runs beside the many short ones.

Refresh the list from a full run's ``--durations`` output::

    .venv/bin/python -m pytest -n 6 --durations=150 | tee run.txt
    .venv/bin/python -m tests.support.slow_first < run.txt > tests/slow_first.txt
"""

from __future__ import annotations

import re
import sys
from collections import defaultdict
from collections.abc import Iterable

from tests.support.paths import ROOT

LIST = ROOT / "tests" / "slow_first.txt"
#: Tests shorter than this keep their place: ordering them gains nothing.
MIN_SECONDS = 10.0
_DURATION = re.compile(r"^([0-9.]+)s (?:call|setup|teardown)\s+(\S+)")
_HEADER = """\
# The suite's slowest tests, slowest first: tests/conftest.py runs them first, so that no
# two-minute test is handed out last and keeps one worker busy after the rest are done.
# Seconds (setup + call + teardown) from `pytest -n 6 --durations=150` on a full run;
# refresh with: python -m tests.support.slow_first < that run's output > tests/slow_first.txt
# Listed is also marked slow: to keep the fast lane (`-m "not slow"`) under 5 minutes, add
# its slowest from its own --durations output (kept lines stay):
#   python -m tests.support.slow_first --merge --min 20 < fast-lane output > new list
"""


def measured(lines: Iterable[str], minimum: float = MIN_SECONDS) -> list[tuple[float, str]]:
    """``(seconds, test id)`` of every test at least :data:`MIN_SECONDS` long, slowest first.
    pytest cuts a parametrised id at its first space: what is kept matches as a prefix."""
    totals: dict[str, float] = defaultdict(float)
    for line in lines:
        found = _DURATION.match(line)
        if found:
            totals[found[2]] += float(found[1])
    slow = [(seconds, test) for test, seconds in totals.items() if seconds >= minimum]
    return sorted(slow, key=lambda pair: (-pair[0], pair[1]))


def listed() -> list[str]:
    """The test ids of :data:`LIST`, slowest first (none when it is missing)."""
    if not LIST.is_file():
        return []
    lines = LIST.read_text("utf-8").splitlines()
    return [line.split(" ", 1)[1] for line in lines if line and not line.startswith("#")]


def rank(test_id: str, slowest: list[str]) -> int:
    """Where ``test_id`` goes: its place in ``slowest``, or after all of them."""
    for place, prefix in enumerate(slowest):
        if test_id.startswith(prefix):
            return place
    return len(slowest)


def kept() -> dict[str, float]:
    """The committed list's seconds by test id."""
    if not LIST.is_file():
        return {}
    lines = LIST.read_text("utf-8").splitlines()
    pairs = (line.split(" ", 1) for line in lines if line and not line.startswith("#"))
    return {test: float(seconds) for seconds, test in pairs}


def merged(
    current: dict[str, float], found: Iterable[tuple[float, str]]
) -> list[tuple[float, str]]:
    """The committed list with ``found`` added (a test in both keeps the larger figure),
    slowest first."""
    out = dict(current)
    for seconds, test in found:
        out[test] = max(seconds, out.get(test, 0.0))
    return sorted(((s, t) for t, s in out.items()), key=lambda pair: (-pair[0], pair[1]))


def main(argv: list[str] | None = None) -> None:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m tests.support.slow_first")
    parser.add_argument("--merge", action="store_true", help="keep the committed list's lines")
    parser.add_argument("--min", type=float, default=MIN_SECONDS, help="seconds to be listed")
    args = parser.parse_args(argv)
    found = [(s, t) for s, t in measured(sys.stdin, args.min)]
    rows = merged(kept(), found) if args.merge else found
    sys.stdout.write(_HEADER)
    for seconds, test in rows:
        sys.stdout.write(f"{seconds:.0f} {test}\n")


if __name__ == "__main__":
    main()

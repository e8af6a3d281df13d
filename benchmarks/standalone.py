"""One benchmark module run on its own (``python -m benchmarks.bench_x``): its rows judged
against the reference workload measured around it, as the runner judges them."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence

from benchmarks.common import Row, format_table, validate_rows
from benchmarks.reference import Reference, judge, samples


def main(run: Callable[[bool], list[Row]], argv: Sequence[str] | None = None) -> int:
    """The ``__main__`` of a benchmark module: print its rows; 1 if a budget fails."""
    parser = argparse.ArgumentParser(description="Run one GitNeural benchmark module.")
    parser.add_argument("--quick", action="store_true", help="small sizes, short runs")
    args = parser.parse_args(argv)
    rows = validate_rows(run(args.quick))
    repeat = 1 if args.quick else 3
    before = samples(repeat)
    reference = Reference(tuple(before), tuple(samples(repeat)))
    judged = [judge(r, reference.unit, reference.cpu_unit) for r in [*reference.rows(), *rows]]
    print(format_table(judged))
    return 1 if any(r["holds"] is False for r in judged) else 0

"""Do several runs judge every row the same? ``python -m benchmarks.compare A.json B.json …``

A time budget is a ratio to a reference measured in the same run, so that a quiet
machine, a loaded one and a single core judge the same code alike
(:mod:`benchmarks.reference`). This prints, for every time row with a reference limit
in any of the runs (``--all``: every row with a budget), its ratio (``refs``, or its
value when it has none) and its verdict in each run, and marks the rows the runs judge
differently. A row a run does not have (a module left
out with ``--only``, or a quick run's other sizes) is shown as ``absent`` and judged by
the runs that have it; a run that shows a row without a budget does not judge it. But a
module that stopped half-way in one run (its row ``runs to the end`` fails) has left its
other rows out of it: that row and the module's judged rows in the other runs of the same
mode (full or quick) are judged differently, and counted even without ``--all``.

Only the time rows (those with a reference limit in some run) count by default: a quick
run's other verdicts are about its tiny sizes (a recall over a few files, a rate from a
short burst). ``--all`` shows and counts every judged row.

Exit status: 0 when every counted row gets one verdict from the runs that judge it, 1
when one does not, 2 for a file that cannot be read.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from benchmarks.common import format_number, verdict

ABSENT = "absent"


def load(path: Path) -> dict[str, Any]:
    """A results file written by ``benchmarks.run`` (``latest.json``)."""
    data = json.loads(path.read_text("utf-8"))
    if not isinstance(data, dict) or not isinstance(data.get("rows"), list):
        raise ValueError(f"{path}: not a benchmarks.run results file (no rows)")
    return data


def _key(r: Mapping[str, Any]) -> str:
    return f"{r.get('module', '')}: {r['measure']}"


def _cell(r: Mapping[str, Any] | None) -> str:
    if r is None:
        return ABSENT
    shown = r.get("refs")
    if shown is None:
        shown = r["value"]
    text = format_number(shown) if isinstance(shown, int | float) else str(shown)
    return f"{text} {verdict(r)}"


def differences(runs: Sequence[Mapping[str, Any]]) -> list[tuple[str, list[str], bool]]:
    """Every judged row: its key, a cell per run, and whether the runs judge it alike."""
    tables = [{_key(r): r for r in run["rows"]} for run in runs]
    keys: list[str] = []
    for table in tables:
        keys += [k for k, r in table.items() if r["holds"] is not None and k not in keys]
    found = []
    for key in keys:
        present = [t.get(key) for t in tables]
        verdicts = {r["holds"] for r in present if r is not None and r["holds"] is not None}
        found.append((key, [_cell(r) for r in present], len(verdicts) <= 1))
    return found


#: The row the runner adds for a module that did not run to its end (judged "runs").
STOPPED = "runs to the end"


def stopped_rows(runs: Sequence[Mapping[str, Any]]) -> set[str]:
    """The judged rows of a module that stopped half-way in one run (its ``runs to the
    end`` row fails, and is one of them), in every run of the same mode (full or quick)."""
    found = set()
    for run in runs:
        stopped = {
            r.get("module", "")
            for r in run["rows"]
            if r["measure"].endswith(STOPPED) and r["holds"] is False
        }
        for other in runs:
            if stopped and bool(other.get("quick")) == bool(run.get("quick")):
                found |= {
                    _key(r)
                    for r in other["rows"]
                    if r.get("module", "") in stopped and r["holds"] is not None
                }
    return found


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.compare",
        description="Show whether benchmark runs judge every row the same way.",
    )
    parser.add_argument("results", nargs="+", type=Path, help="latest.json files of runs")
    parser.add_argument(
        "--all", action="store_true", help="every judged row, not only the time rows"
    )
    args = parser.parse_args(argv)
    try:
        runs = [load(path) for path in args.results]
    except (OSError, ValueError) as exc:
        print(f"benchmarks.compare: {exc}", file=sys.stderr)
        return 2
    for path, run in zip(args.results, runs, strict=True):
        quick = " (quick)" if run.get("quick") else ""
        unit = run.get("reference_s")
        ref = f", 1 ref = {unit:.3f} s" if isinstance(unit, int | float) else ""
        print(f"{path}: commit {run.get('commit', '?')}{quick}{ref}")
    missing = stopped_rows(runs)
    rows = [(key, cells, alike and key not in missing) for key, cells, alike in differences(runs)]
    timed = {_key(r) for run in runs for r in run["rows"] if r.get("ref_limit") is not None}
    if not args.all:
        rows = [(key, cells, alike) for key, cells, alike in rows if key in timed | missing]
    for key, cells, alike in rows:
        print(f"{'  ' if alike else '! '}{key}: " + " | ".join(cells))
    unlike = sum(not alike for _, _, alike in rows)
    kind = (
        "judged rows"
        if args.all
        else "time rows" + (" and stopped modules' rows" if missing else "")
    )
    print(f"{len(rows)} {kind}, {unlike} judged differently")
    return 1 if unlike else 0


if __name__ == "__main__":
    raise SystemExit(main())

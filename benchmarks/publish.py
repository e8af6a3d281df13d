"""Put the last benchmark run's table into the docs: ``python -m benchmarks.publish``.

``python -m benchmarks.run`` writes ``benchmarks/results/latest.json`` (git ignores it);
this renders that file, header and table, between the two markers of
``docs/performance.md``, leaving the page's own text as it is. A quick run is refused:
its tiny sizes check that the suite works, and its numbers mean nothing.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: python benchmarks/publish.py
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import REPO_ROOT, RESULTS_DIR, BenchmarkError
from benchmarks.run import results_markdown

PAGE = REPO_ROOT / "docs" / "performance.md"
BEGIN = "<!-- benchmarks:begin (python -m benchmarks.publish writes from here) -->"
END = "<!-- benchmarks:end -->"


def table_region(page: str) -> tuple[int, int]:
    """Where the generated text starts and ends in ``page``."""
    start, end = page.find(BEGIN), page.find(END)
    if start < 0 or end < start:
        raise BenchmarkError(f"the page has no {BEGIN!r} ... {END!r} region")
    return start + len(BEGIN), end


def published(page: str) -> str:
    """The header and table the page shows now."""
    start, end = table_region(page)
    return page[start:end].strip()


def publish(page: str, data: dict[str, Any]) -> str:
    """``page`` with ``data`` (a run's ``latest.json``) in place of its table."""
    if data.get("quick"):
        raise BenchmarkError("a --quick run's numbers mean nothing: publish a real run")
    start, end = table_region(page)
    return page[:start] + "\n" + results_markdown(data) + "\n" + page[end:]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.publish",
        description="Render a benchmark run's results into docs/performance.md.",
    )
    parser.add_argument("results", nargs="?", type=Path, default=RESULTS_DIR / "latest.json")
    parser.add_argument("--page", type=Path, default=PAGE, metavar="FILE")
    args = parser.parse_args(argv)
    try:
        data = json.loads(args.results.read_text("utf-8"))
        text = publish(args.page.read_text("utf-8"), data)
    except (OSError, json.JSONDecodeError, BenchmarkError) as exc:
        print(f"cannot publish {args.results}: {exc}", file=sys.stderr)
        return 1
    args.page.write_text(text, "utf-8")
    print(f"written: {args.page}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The install sizes the docs quote, written from ``bench_install``'s rows.

``python -m benchmarks.install_sizes`` runs that benchmark in full (fresh virtual
environments, packages from the index), prints its table and rewrites every region of
the pages in ``PAGES``; ``--results latest.json`` takes the rows of a full
``python -m benchmarks.run`` instead.

A region is ``<!-- bench_install:NAME -->text<!-- /bench_install -->`` inside a sentence
of the page; only the text between the two markers is rewritten, from ``TEMPLATES[NAME]``.
``tests/project/test_install_sizes.py`` checks that every quoted size sits in a region
and reads as the template writes it.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

if __package__ in (None, ""):  # run as a script: python benchmarks/install_sizes.py
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import REPO_ROOT, BenchmarkError, Row, format_table, validate_rows

PAGES = (REPO_ROOT / "docs" / "getting-started.md",)
REGION = re.compile(r"(<!-- bench_install:([a-z-]+) -->)(.*?)(<!-- /bench_install -->)", re.S)

#: The field of a template -> the measure of bench_install's row it is read from.
MEASURES = {
    "light_packages": "fresh venv, default install: packages (pip list)",
    "light_mb": "fresh venv, default install: site-packages",
    "full_packages": "fresh venv, with [app]: packages (pip list)",
    "full_mb": "fresh venv, with [app]: site-packages",
    "parsers_mb": "[parsers] extra alone: size on disk (closure here)",
    "images_mb": "[images] extra alone: size on disk (closure here)",
}
TEMPLATES = {
    "installs": (
        "It puts {light_packages} packages, {light_mb} MB, in its environment; "
        "the App's install puts {full_packages} packages, {full_mb} MB"
    ),
    "parsers": "about {parsers_mb} MB",
    "images": "about {images_mb} MB",
}


def values(rows: Sequence[Row]) -> dict[str, str]:
    """Each template field as the docs print it (whole packages, whole megabytes)."""
    by_measure = {r["measure"]: r["value"] for r in rows}
    out = {}
    for field, measure in MEASURES.items():
        value = by_measure.get(measure)
        if not isinstance(value, int | float) or isinstance(value, bool):
            raise BenchmarkError(f"no number for {measure!r}: run bench_install in full")
        out[field] = f"{value:.0f}"
    return out


def fill(page: str, numbers: Mapping[str, str]) -> str:
    """``page`` with each region's text written from its template."""

    def written(match: re.Match[str]) -> str:
        name = match[2]
        if name not in TEMPLATES:
            raise BenchmarkError(f"no template for the region {name!r}")
        return match[1] + TEMPLATES[name].format(**numbers) + match[4]

    return REGION.sub(written, page)


def regions(page: str) -> list[tuple[str, str]]:
    """(name, text) of each region of ``page``."""
    return [(m[2], m[3]) for m in REGION.finditer(page)]


def template_pattern(name: str) -> re.Pattern[str]:
    """What a region named ``name`` reads as when its template wrote it."""
    parts = re.split(r"\{(\w+)\}", TEMPLATES[name])
    pattern = "".join(re.escape(p) if i % 2 == 0 else r"(\d+)" for i, p in enumerate(parts))
    return re.compile(pattern)


def rows_of_results(path: Path) -> list[Row]:
    """bench_install's rows of a ``python -m benchmarks.run`` results file."""
    data = json.loads(path.read_text("utf-8"))
    if data.get("quick"):
        raise BenchmarkError("a --quick run's numbers mean nothing: use a full run")
    rows = [
        {k: v for k, v in r.items() if k != "module"}
        for r in data["rows"]
        if r.get("module") == "bench_install"
    ]
    return validate_rows(rows, f"{path}'s bench_install rows")


def write_pages(rows: Sequence[Row], pages: Sequence[Path] = PAGES) -> list[Path]:
    numbers = values(rows)
    written = []
    for page in pages:
        text = page.read_text("utf-8")
        if not regions(text):
            raise BenchmarkError(f"{page} has no <!-- bench_install:NAME --> region")
        page.write_text(fill(text, numbers), "utf-8")
        written.append(page)
    return written


def main(run: Callable[[bool], list[Row]], argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.install_sizes",
        description="Run bench_install in full and write its sizes into the docs.",
    )
    parser.add_argument("--results", type=Path, metavar="FILE", help="a full run's latest.json")
    parser.add_argument("--page", type=Path, action="append", metavar="FILE", help="page to write")
    args = parser.parse_args(argv)
    try:
        rows = rows_of_results(args.results) if args.results else validate_rows(run(False))
        if not args.results:
            print(format_table(rows))
        for page in write_pages(rows, args.page or PAGES):
            print(f"written: {page}", file=sys.stderr)
    except (OSError, KeyError, json.JSONDecodeError, BenchmarkError) as exc:
        print(f"cannot write the install sizes: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    from benchmarks.bench_install import run as bench_install

    raise SystemExit(main(bench_install))

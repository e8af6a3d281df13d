"""docs/performance.md shows a benchmark run's table as ``python -m benchmarks.publish``
renders it from the run's ``latest.json``, and keeps the page's own text."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from benchmarks.common import row, within_refs
from benchmarks.publish import BEGIN, END, published
from benchmarks.reference import judge
from benchmarks.run import write_results
from tests.support.paths import ROOT

PAGE = ROOT / "docs" / "performance.md"
HEADER = re.compile(
    r"GitNeural benchmarks, \d{4}-\d\d-\d\d \d\d:\d\d UTC at commit \w+: \d+ CPUs, Python [\d.]+, "
    r"load average [\d.]+ at the start; corpus: \d+ files of the standard library of .+, "
    r"sha256 [0-9a-f]+\. 1 ref = [\d.]+ s, [\d.]+ s of CPU \(see its rows\)\."
)


def _meta(quick: bool) -> dict[str, Any]:
    return {
        "commit": "abc1234",
        "quick": quick,
        "machine": {"cpus": 2, "python": "3.11.7", "platform": "Linux", "load_average_1m": 0.5},
        "corpus": {
            "root": "/x",
            "python": "CPython 3.11.7",
            "files": 667,
            "sha256": "e4911e5d2d4a",
            "seed": 6,
        },
        "finished": "2026-12-02 01:00 UTC",
        "reference_s": 0.6,
        "reference_cpu_s": 0.3,
    }


def _publish(tmp_path: Path, quick: bool) -> subprocess.CompletedProcess[str]:
    rows = [
        ("bench_core", row("core, 1 file | piped", 3, "calls", "<= 4", True)),
        ("bench_hook", within_refs("hook start-up", 0.31, "s", 0.5, "here 0.41")),
        ("run", row("suite: wall time", 1117, "s")),
    ]
    judged = [(name, judge(r, 0.6, 0.3)) for name, r in rows]
    json_path, _ = write_results(tmp_path / "results", judged, _meta(quick))
    (tmp_path / "performance.md").write_text(PAGE.read_text("utf-8"), "utf-8")
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmarks.publish",
            str(json_path),
            "--page",
            str(tmp_path / "performance.md"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_publish_puts_the_run_in_place_of_the_table(tmp_path: Path) -> None:
    done = _publish(tmp_path, quick=False)
    assert done.returncode == 0, done.stderr
    before = PAGE.read_text("utf-8")
    after = (tmp_path / "performance.md").read_text("utf-8")
    # The page's own text is kept, on both sides of the table.
    assert after.split(BEGIN)[0] == before.split(BEGIN)[0]
    assert after.split(END)[1] == before.split(END)[1]
    table = published(after)
    assert table == (tmp_path / "results" / "latest.md").read_text("utf-8").strip()
    assert "at commit abc1234" in table
    assert "| core, 1 file \\| piped | 3 calls | - | <= 4 | yes |" in table
    assert "| hook start-up | 0.31 s | 0.517 | <= 0.5 ref (here 0.41) | NO |" in table
    assert "| suite: wall time | 1,117 s | 1,862 | - | - |" in table
    assert "1 ref = 0.600 s, 0.300 s of CPU" in table


def test_a_quick_run_is_not_published(tmp_path: Path) -> None:
    done = _publish(tmp_path, quick=True)
    assert done.returncode == 1
    assert "quick" in done.stderr
    assert (tmp_path / "performance.md").read_text("utf-8") == PAGE.read_text("utf-8")


def test_the_page_shows_a_whole_run() -> None:
    header, _, table = published(PAGE.read_text("utf-8")).partition("\n\n")
    assert HEADER.fullmatch(header), header
    assert "quick mode" not in header
    lines = table.splitlines()
    assert lines[:2] == ["| measure | value | refs | budget | holds |", "|---|--:|--:|---|:-:|"]
    assert len(lines) > 100  # every module's rows, not a sample
    assert lines[2].startswith("| reference: ")  # the unit first, then its spreads
    for line in lines[2:]:
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        assert len(cells) == 5 and cells[0] and cells[1], line
        _, value, refs, budget, holds = cells
        assert holds in ("yes", "NO", "-"), line
        assert (budget == "-") == (holds == "-"), line
        # A time shows its ratio to the reference, and is judged on it or on a timer.
        timed = re.fullmatch(r"[\d.,]+ m?s", value) is not None
        assert (refs != "-") == timed, line
        assert not timed or budget == "-" or " ref" in budget or "timer:" in budget, line
    assert lines[-1].startswith("| suite: wall time ")  # the run went to its end
    assert lines[-1].endswith("| - | - |")  # shown, not judged

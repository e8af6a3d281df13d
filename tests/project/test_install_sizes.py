"""The install sizes the docs quote come from ``bench_install``: each sits in a region
``python -m benchmarks.install_sizes`` writes, reads exactly as its template writes it,
and no page quotes a size of an install anywhere else. The writer itself, through its
command, from a full run's results file."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from benchmarks.install_sizes import MEASURES, PAGES, REGION, TEMPLATES, regions, template_pattern
from tests.support.paths import ROOT

#: A size or a count of packages, said of an install.
QUOTED = re.compile(r"\b\d+(\.\d+)? (MB|packages)\b")
#: Pages whose numbers are written by another generator (benchmarks.publish's table).
GENERATED_ELSEWHERE = {"docs/performance.md"}


def test_every_region_of_the_pages_reads_as_its_template_writes_it() -> None:
    for page in PAGES:
        found = regions(page.read_text("utf-8"))
        assert sorted(name for name, _ in found) == sorted(TEMPLATES), page
        for name, text in found:
            assert template_pattern(name).fullmatch(text), f"{page}: {name}: {text!r}"


def test_no_page_quotes_an_install_size_outside_a_region() -> None:
    wrong = []
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        name = str(page.relative_to(ROOT))
        if name in GENERATED_ELSEWHERE:
            continue
        text = REGION.sub("", page.read_text("utf-8"))
        for paragraph in re.split(r"\n\s*\n", text):
            quoted = QUOTED.search(paragraph)
            if "install" in paragraph and quoted is not None:
                wrong.append(f"{name}: {quoted[0]!r} in {paragraph[:80]!r}")
    assert wrong == []


def test_the_writer_puts_a_full_runs_numbers_in_every_region(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    original = PAGES[0].read_text("utf-8")
    page.write_text(original, "utf-8")
    numbers = dict(zip(MEASURES.values(), (41, 101.4, 85, 212.6, 36.2, 21.7), strict=True))
    rows = [
        {
            "module": "bench_install",
            "measure": m,
            "value": v,
            "unit": "",
            "budget": "",
            "holds": None,
        }
        for m, v in numbers.items()
    ]
    rows.append(
        {
            "module": "bench_hook",
            "measure": "other",
            "value": 1.0,
            "unit": "",
            "budget": "",
            "holds": None,
        }
    )
    results = tmp_path / "latest.json"
    results.write_text(json.dumps({"quick": False, "rows": rows}), "utf-8")

    def write() -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "benchmarks.install_sizes", "--results", str(results)]
        return subprocess.run(
            [*command, "--page", str(page)], cwd=ROOT, capture_output=True, text=True
        )

    done = write()
    assert done.returncode == 0, done.stderr
    text = page.read_text("utf-8")
    assert "It puts 41 packages, 101 MB, in its environment" in text
    assert "the App's install puts 85 packages, 213 MB" in text
    assert "about 36 MB" in text and "about 22 MB" in text
    # Only the regions changed, and writing again changes nothing.
    assert REGION.sub("", text) == REGION.sub("", original)
    assert write().returncode == 0 and page.read_text("utf-8") == text
    # A quick run's numbers are refused, and the page is left as it was.
    results.write_text(json.dumps({"quick": True, "rows": rows}), "utf-8")
    refused = write()
    assert refused.returncode == 1 and "quick" in refused.stderr
    assert page.read_text("utf-8") == text

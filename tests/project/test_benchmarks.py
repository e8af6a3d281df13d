"""The benchmark suite cannot rot: every module runs (quick mode) through the real runner.

No timing is asserted here: benchmarks measure, tests check that they still can. Each
module runs as ``python -m benchmarks.run --quick --only NAME`` in a process, exactly as
a developer would run it, and the rows it writes are checked independently of the
runner's own validation.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from tests.support.paths import ROOT

REPO = ROOT
MODULES = sorted(p.stem for p in (REPO / "benchmarks").glob("bench_*.py"))
KEYS = {"module", "measure", "value", "unit", "budget", "holds"}


def runner(*args: str, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "benchmarks.run", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def results(directory: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((directory / "latest.json").read_text("utf-8"))
    return data


def assert_well_formed(r: dict[str, Any]) -> None:
    assert set(r) == KEYS, r
    assert isinstance(r["measure"], str) and r["measure"].strip(), r
    value = r["value"]
    assert isinstance(value, str) or (
        isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    ), r
    assert isinstance(r["unit"], str) and isinstance(r["budget"], str), r
    assert r["holds"] is None or isinstance(r["holds"], bool), r
    # A budget without a verdict, or a verdict without a budget, says nothing.
    assert (r["budget"] == "") == (r["holds"] is None), r


def test_the_suite_has_the_core_and_webhook_benchmarks() -> None:
    assert {"bench_core", "bench_webhook"} <= set(MODULES)


@pytest.mark.parametrize("module", MODULES)
def test_module_runs_quick_and_returns_well_formed_rows(module: str, tmp_path: Path) -> None:
    # Budgets are judged by real runs (`python -m benchmarks.run`): a quick run's tiny
    # loads on a machine busy with the rest of the suite say nothing about them. A module
    # that crashes or returns bad rows still fails here (its "runs to the end" row).
    done = runner("--quick", "--no-fail", "--only", module, "--results", str(tmp_path))
    assert done.returncode == 0, done.stderr[-3000:]
    data = results(tmp_path)
    rows = [r for r in data["rows"] if r["module"] == module]
    assert rows, data
    for r in data["rows"]:
        assert_well_formed(r)
    assert not any("runs to the end" in r["measure"] for r in rows), rows
    # The same rows are in the Markdown docs/performance.md shows, and in the printed table.
    markdown = (tmp_path / "latest.md").read_text("utf-8")
    for r in rows:
        assert r["measure"].replace("|", "\\|") in markdown
        assert r["measure"].strip() in done.stdout


def _fake_suite(directory: Path, modules: dict[str, str]) -> None:
    for name, body in modules.items():
        (directory / f"{name}.py").write_text(textwrap.dedent(body), "utf-8")


FINE = """
    def run(quick=False):
        return [{"measure": "fine thing", "value": 1.5, "unit": "ms",
                 "budget": "< 2 ms", "holds": True}]
"""
CRASH = """
    def run(quick=False):
        raise RuntimeError("boom in the benchmark")
"""
MALFORMED = """
    def run(quick=False):
        return [{"measure": "no verdict", "value": 3, "unit": "", "budget": "< 1"}]
"""
OVER_BUDGET = """
    def run(quick=False):
        return [{"measure": "slow thing", "value": 9.0, "unit": "s",
                 "budget": "< 1 s", "holds": False}]
"""


def test_a_crashing_or_malformed_module_is_a_failed_row_not_a_lost_table(
    tmp_path: Path,
) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    _fake_suite(suite, {"bench_a_fine": FINE, "bench_b_crash": CRASH, "bench_c_bad": MALFORMED})
    done = runner("--dir", str(suite), "--results", str(tmp_path))
    assert done.returncode == 1
    rows = {r["module"]: r for r in results(tmp_path)["rows"]}
    assert rows["bench_a_fine"]["measure"] == "fine thing"
    assert rows["bench_b_crash"]["holds"] is False
    assert "boom in the benchmark" in rows["bench_b_crash"]["value"]
    assert rows["bench_c_bad"]["holds"] is False
    assert "row 0" in rows["bench_c_bad"]["value"]
    assert "fine thing" in done.stdout and "bench_b_crash: runs to the end" in done.stdout
    # A crash fails even with --quick (whose budgets are not enforced).
    assert runner("--quick", "--dir", str(suite), "--results", str(tmp_path)).returncode == 1


def test_a_failed_budget_fails_the_run_unless_told_not_to(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    _fake_suite(suite, {"bench_fine": FINE, "bench_slow": OVER_BUDGET})
    failing = runner("--dir", str(suite), "--results", str(tmp_path))
    assert failing.returncode == 1
    assert "NO" in failing.stdout
    assert runner("--no-fail", "--dir", str(suite), "--results", str(tmp_path)).returncode == 0
    only_fine = runner("--only", "fine", "--dir", str(suite), "--results", str(tmp_path))
    assert only_fine.returncode == 0
    assert [r["module"] for r in results(tmp_path)["rows"]] == ["bench_fine", "run"]


def test_the_runner_also_works_as_a_script(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    _fake_suite(suite, {"bench_fine": FINE})
    done = subprocess.run(
        [sys.executable, "benchmarks/run.py", "--dir", str(suite), "--results", str(tmp_path)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "fine thing" in done.stdout

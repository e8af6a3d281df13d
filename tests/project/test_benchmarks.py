"""The benchmark suite cannot rot: every module runs (quick mode) through the real runner.

No timing is asserted here: benchmarks measure, tests check that they still can. Each
module runs as ``python -m benchmarks.run --quick --only NAME`` in a process, exactly as
a developer would run it, and the rows it writes are checked independently of the
runner's own validation. A time is judged in reference units, measured in the same run
(``benchmarks/reference.py``): every time row carries its ratio, and a budget in seconds
is a timer's or the row fails.
"""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from tests.support.paths import ROOT

REPO = ROOT
MODULES = sorted(p.stem for p in (REPO / "benchmarks").glob("bench_*.py"))
KEYS = {"module", "measure", "value", "unit", "budget", "holds", "ref_limit", "refs"}
SECONDS_PER = {"s": 1.0, "ms": 1e-3}


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


def assert_timed_in_refs(r: dict[str, Any], data: dict[str, Any]) -> None:
    """A time row shows its ratio to the run's reference (its CPU seconds' to the
    reference's), and is judged on it (or on a timer it names); no other row has one."""
    if r["unit"] not in SECONDS_PER or isinstance(r["value"], str):
        assert r["refs"] is None and r["ref_limit"] is None, r
        return
    # A module's times against the reference sampled just before and after it.
    local = data["module_reference_s"].get(r["module"])
    wall, cpu = local or (data["reference_s"], data["reference_cpu_s"])
    unit = cpu if re.search(r"\bCPU\b", r["measure"]) else wall
    assert r["refs"] == pytest.approx(r["value"] * SECONDS_PER[r["unit"]] / unit, rel=1e-3), r
    if r["ref_limit"] is not None:
        assert r["budget"].startswith(f"<= {r['ref_limit']:g} ref"), r
        assert r["holds"] is False or r["refs"] <= r["ref_limit"], r
    else:
        assert r["budget"] == "" or "timer:" in r["budget"], r


def assert_reference(data: dict[str, Any]) -> None:
    """The reference was measured before and after the modules, its spread shown."""
    for unit in (data["reference_s"], data["reference_cpu_s"]):
        assert isinstance(unit, float) and unit > 0, data
    first = [r for r in data["rows"] if r["module"] == "reference"]
    assert first == data["rows"][: len(first)], data["rows"]
    measures = [r["measure"] for r in first]
    assert "reference before the suite" in measures and "reference after the suite" in measures
    assert first[0]["refs"] == pytest.approx(1.0, rel=1e-3)
    for name, (wall, cpu) in data["module_reference_s"].items():
        assert wall > 0 and cpu > 0, data["module_reference_s"]
        (here,) = [r for r in data["rows"] if r["measure"].startswith(f"{name}: reference around")]
        assert here["value"] == pytest.approx(wall, rel=1e-3) and here["refs"] == 1.0, here
    assert data["rows"][-1]["measure"].startswith("suite: wall time"), data["rows"][-1]
    assert data["rows"][-1]["budget"] == "", data["rows"][-1]  # shown, not judged


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
    assert_reference(data)
    for r in data["rows"]:
        assert_well_formed(r)
        assert_timed_in_refs(r, data)
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
        return [{"measure": "fine thing", "value": 3, "unit": "calls",
                 "budget": "<= 4", "holds": True}]
"""
CRASH = """
    def run(quick=False):
        raise RuntimeError("boom in the benchmark")
"""
MALFORMED = """
    def run(quick=False):
        return [{"measure": "no verdict", "value": 3, "unit": "", "budget": "< 1"}]
"""
IN_REFS = """
    def run(quick=False):
        return [{"measure": "roomy", "value": 2.0, "unit": "ms", "budget": "why roomy",
                 "holds": True, "ref_limit": 1000.0},
                {"measure": "tight", "value": 2.0, "unit": "s", "budget": "why tight",
                 "holds": True, "ref_limit": 0.0001},
                {"measure": "lease", "value": 2.0, "unit": "s", "budget": "< 9 s (timer: a lease)",
                 "holds": True},
                {"measure": "parse, CPU", "value": 1.0, "unit": "s", "budget": "why parse",
                 "holds": True, "ref_limit": 1000.0}]
"""
IN_SECONDS = """
    def run(quick=False):
        return [{"measure": "absolute", "value": 2.0, "unit": "ms", "budget": "< 5 ms",
                 "holds": True}]
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
    modules = [r["module"] for r in results(tmp_path)["rows"]]
    assert [m for m in dict.fromkeys(modules) if m != "reference"] == ["bench_fine", "run"]


def test_times_are_judged_in_reference_units_measured_in_the_same_run(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    _fake_suite(suite, {"bench_refs": IN_REFS})
    done = runner("--quick", "--dir", str(suite), "--results", str(tmp_path))
    assert done.returncode == 0, done.stderr  # a quick run judges but does not fail
    data = results(tmp_path)
    assert_reference(data)
    rows = {r["measure"]: r for r in data["rows"]}
    for r in rows.values():
        assert_timed_in_refs(r, data)
    wall, cpu = data["module_reference_s"]["bench_refs"]
    assert rows["roomy"]["refs"] == pytest.approx(2e-3 / wall, rel=1e-3)
    assert rows["parse, CPU"]["refs"] == pytest.approx(1.0 / cpu, rel=1e-3)
    assert rows["roomy"]["holds"] is True and rows["roomy"]["budget"] == "<= 1000 ref (why roomy)"
    assert (
        rows["tight"]["holds"] is False and rows["tight"]["budget"] == "<= 0.0001 ref (why tight)"
    )
    assert rows["lease"]["holds"] is True and rows["lease"]["budget"] == "< 9 s (timer: a lease)"
    markdown = (tmp_path / "latest.md").read_text("utf-8")
    assert "| measure | value | refs | budget | holds |" in markdown
    assert (
        f"1 ref = {data['reference_s']:.3f} s, {data['reference_cpu_s']:.3f} s of CPU" in markdown
    )
    assert runner("--dir", str(suite), "--results", str(tmp_path)).returncode == 1


def test_a_time_judged_in_seconds_without_a_timer_fails(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    _fake_suite(suite, {"bench_seconds": IN_SECONDS})
    assert runner("--dir", str(suite), "--results", str(tmp_path)).returncode == 1
    (r,) = [r for r in results(tmp_path)["rows"] if r["measure"] == "absolute"]
    assert r["holds"] is False and "names no timer" in r["budget"], r


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


TIGHTER = IN_REFS.replace(
    '"ref_limit": 1000.0},\n                {"measure": "tight"',
    '"ref_limit": 1e-9},\n                {"measure": "tight"',
)


def compare(*paths: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "benchmarks.compare", *map(str, paths)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_compare_names_each_row_two_runs_judge_differently(tmp_path: Path) -> None:
    runs = {}
    for name, body in {"same": IN_REFS, "again": IN_REFS, "tighter": TIGHTER}.items():
        suite = tmp_path / name / "suite"
        suite.mkdir(parents=True)
        _fake_suite(suite, {"bench_refs": body})
        done = runner("--quick", "--dir", str(suite), "--results", str(tmp_path / name))
        assert done.returncode == 0, done.stderr
        runs[name] = tmp_path / name / "latest.json"
    alike = compare(runs["same"], runs["again"])
    assert alike.returncode == 0, alike.stdout + alike.stderr
    assert "3 time rows, 0 judged differently" in alike.stdout
    # Every time row is listed with its ratio and verdict in both runs.
    assert re.search(r"^  bench_refs: roomy: [\d.]+ yes \| [\d.]+ yes$", alike.stdout, re.M)
    assert re.search(r"^  bench_refs: tight: [\d.]+ NO \| [\d.]+ NO$", alike.stdout, re.M)
    unlike = compare(runs["same"], runs["tighter"])
    assert unlike.returncode == 1
    assert re.search(r"^! bench_refs: roomy: [\d.]+ yes \| [\d.]+ NO$", unlike.stdout, re.M)
    assert not re.search(r"^! bench_refs: (tight|lease|parse)", unlike.stdout, re.M)
    assert "1 judged differently" in unlike.stdout
    # A run whose module stopped half-way has only its failed "runs to the end" row: the
    # rows it left out cannot have been judged the same, even without --all.
    stopped = json.loads(runs["same"].read_text("utf-8"))
    stopped["rows"] = [
        {**r, "module": "bench_refs", "measure": "bench_refs: runs to the end",
         "value": "exit 1: boom", "unit": "", "budget": "runs", "holds": False,
         "ref_limit": None, "refs": None}
        for r in stopped["rows"][:1]
    ]  # fmt: skip  # one row, kept compact
    half = tmp_path / "stopped.json"
    half.write_text(json.dumps(stopped), "utf-8")
    cut = compare(runs["same"], half)
    assert cut.returncode == 1, cut.stdout
    assert re.search(r"^! bench_refs: bench_refs: runs to the end: absent \| exit 1: boom NO$",
                     cut.stdout, re.M), cut.stdout  # fmt: skip  # one call, kept on two lines
    # Its judged rows of the whole run are marked too: "roomy" holds there, not here.
    assert re.search(r"^! bench_refs: roomy: [\d.]+ yes \| absent$", cut.stdout, re.M)
    broken = tmp_path / "broken.json"
    broken.write_text("{}", "utf-8")
    bad = compare(runs["same"], broken)
    assert bad.returncode == 2
    assert bad.stderr.strip().count("\n") == 0 and "not a benchmarks.run results file" in bad.stderr

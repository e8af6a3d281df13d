"""Run the whole benchmark suite and print one table: ``python -m benchmarks.run``.

Every ``benchmarks/bench_*.py`` runs in a process of its own, one after the other (so
they do not disturb each other's timings, and a module that crashes or hangs becomes a
failed row instead of ending the table). The table is also written to
``benchmarks/results/latest.json`` and ``latest.md`` (``python -m benchmarks.publish``
puts it in ``docs/performance.md``), with the corpus the run measured on
(:mod:`benchmarks.corpus_files`: the standard library of the running Python, named by a
hash of its files, the same whatever else is installed) and the Python version it
depends on.

Every time is judged as a ratio to a reference workload measured by this process before
the first module, between every two and after the last (:mod:`benchmarks.reference`): a
module's times against the samples just before and after it. The table shows each time's
ratio (``refs``) beside its value, the reference around each module, and the spread of
the samples before and after the suite.

Exit status: 0 when every budget holds, 1 when one fails or a module fails to run (with
``--no-fail``: 0 anyway), 2 for a usage error. ``--quick`` runs tiny sizes to check that
the suite works; its numbers mean nothing and only a crash fails it.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import importlib.util
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: python benchmarks/run.py
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import (
    REPO_ROOT,
    RESULTS_DIR,
    BenchmarkError,
    Row,
    format_table,
    markdown_table,
    row,
    validate_rows,
)
from benchmarks.corpus_files import corpus_id
from benchmarks.reference import (
    QUICK_REPEAT,
    REPEAT,
    Reference,
    around,
    judge,
    reference_files,
    sample,
    samples,
)

BENCH_DIR = Path(__file__).resolve().parent
#: The suite's own wall time is shown, not judged: it is no measure of the product (the
#: distributed set-up's measures wait on real time by design, a 60 s lease expiring per
#: broker, 200 reviews of 5 s each, a 60 s rate window twice; about 11 minutes of it).
MODULE_TIMEOUT_SECONDS = 480.0


def discover(directory: Path = BENCH_DIR, only: Sequence[str] = ()) -> list[Path]:
    """``bench_*.py`` in ``directory``, by name; ``only`` keeps names containing a word."""
    found = sorted(directory.glob("bench_*.py"))
    if only:
        found = [p for p in found if any(word in p.stem for word in only)]
    return found


def run_one(path: Path, out: Path, quick: bool) -> None:
    """In the child process: import ``path``, run it, write its checked rows to ``out``."""
    spec = importlib.util.spec_from_file_location(f"benchmarks.{path.stem}", path)
    if spec is None or spec.loader is None:
        raise BenchmarkError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    rows = validate_rows(module.run(quick), path.stem)
    out.write_text(json.dumps(rows), encoding="utf-8")


def _failed(name: str, why: str) -> Row:
    return row(f"{name}: runs to the end", why, "", "runs", False)


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:200] if lines else "no output"


def run_module(path: Path, quick: bool, timeout: float) -> tuple[list[Row], float, bool]:
    """The module's rows (or one failed row), its wall time, and whether it ran to the end."""
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="gitneural-bench-") as tmp:
        out = Path(tmp) / "rows.json"
        command = [sys.executable, "-m", "benchmarks.run", "--one", str(path), "--out", str(out)]
        try:
            done = subprocess.run(
                [*command, *(["--quick"] if quick else [])],
                cwd=REPO_ROOT,
                capture_output=True,
                text=True,
                timeout=timeout,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return [_failed(path.stem, f"timed out after {timeout:g} s")], timeout, False
        elapsed = time.monotonic() - started
        if done.returncode != 0 or not out.exists():
            sys.stderr.write(done.stderr[-4000:])
            why = f"exit {done.returncode}: {_last_line(done.stderr)}"
            return [_failed(path.stem, why)], elapsed, False
        try:
            rows = validate_rows(json.loads(out.read_text("utf-8")), path.stem)
        except (BenchmarkError, json.JSONDecodeError) as exc:
            return [_failed(path.stem, str(exc))], elapsed, False
    return rows, elapsed, True


def _commit() -> str:
    try:
        done = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            check=True,
        )
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return done.stdout.strip()


def machine() -> dict[str, Any]:
    load = os.getloadavg()
    return {
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(terse=True),
        "load_average_1m": round(load[0], 2),
    }


def write_results(
    directory: Path, results: Sequence[tuple[str, Mapping[str, Any]]], meta: dict[str, Any]
) -> tuple[Path, Path]:
    directory.mkdir(parents=True, exist_ok=True)
    data = {**meta, "rows": [{"module": name, **r} for name, r in results]}
    json_path = directory / "latest.json"
    json_path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    md_path = directory / "latest.md"
    md_path.write_text(results_markdown(data) + "\n", "utf-8")
    return json_path, md_path


def results_markdown(data: dict[str, Any]) -> str:
    """A run's header line and table, as ``latest.md`` and ``docs/performance.md`` show it."""
    m = data["machine"]
    c = data["corpus"]
    unit, cpu = data.get("reference_s"), data.get("reference_cpu_s")
    ref = f" 1 ref = {unit:.3f} s, {cpu:.3f} s of CPU (see its rows)." if unit and cpu else ""
    header = (
        f"GitNeural benchmarks, {data['finished']} at commit {data['commit']}"
        f"{' (quick mode)' if data['quick'] else ''}: {m['cpus']} CPUs, Python {m['python']}, "
        f"load average {m['load_average_1m']} at the start; corpus: {c['files']} files of "
        f"the standard library of {c['python']}, sha256 {c['sha256']}.{ref}"
    )
    return header + "\n\n" + markdown_table(data["rows"])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.run", description="Run GitNeural's benchmark suite."
    )
    parser.add_argument("--quick", action="store_true", help="tiny sizes: check the suite runs")
    parser.add_argument("--no-fail", action="store_true", help="exit 0 even if a budget fails")
    parser.add_argument("--only", nargs="+", default=[], metavar="NAME", help="modules to run")
    parser.add_argument("--timeout", type=float, default=MODULE_TIMEOUT_SECONDS, metavar="S")
    parser.add_argument("--results", type=Path, default=RESULTS_DIR, metavar="DIR")
    parser.add_argument("--dir", type=Path, default=BENCH_DIR, help=argparse.SUPPRESS)
    parser.add_argument("--one", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one is not None:
        if args.out is None:
            parser.error("--one needs --out")
        run_one(args.one, args.out, args.quick)
        return 0

    paths = discover(args.dir, args.only)
    if not paths:
        parser.error(f"no benchmark modules matched in {args.dir}")
    corpus = corpus_id()
    print(corpus.line(), flush=True)
    meta: dict[str, Any] = {
        "commit": _commit(),
        "quick": args.quick,
        "machine": machine(),
        "corpus": dataclasses.asdict(corpus),
    }
    started = time.monotonic()
    repeat = QUICK_REPEAT if args.quick else REPEAT
    files = reference_files()
    print("measuring the reference ...", file=sys.stderr, flush=True)
    before = samples(repeat)
    # One sample between every two modules as well: a module is judged against the
    # reference taken just before and just after it, so a machine whose load changes
    # during the run (other work starting, ending) judges each module at its own load.
    between = [before[-1]]
    ran: list[tuple[str, list[Row]]] = []
    crashed = False
    for i, path in enumerate(paths):
        print(f"running {path.stem} ...", file=sys.stderr, flush=True)
        rows, elapsed, ok = run_module(path, args.quick, args.timeout)
        crashed = crashed or not ok
        print(f"  {path.stem}: {elapsed:.1f} s", file=sys.stderr, flush=True)
        ran.append((path.stem, rows))
        if i < len(paths) - 1:
            between.append(sample(files))
    after = samples(repeat)
    between.append(after[0])
    reference = Reference(tuple(before), tuple(after))
    total = time.monotonic() - started
    judged = [("reference", judge(r, reference.unit, reference.cpu_unit)) for r in reference.rows()]
    local: dict[str, list[float]] = {}
    for (name, rows), ahead, behind in zip(ran, between[:-1], between[1:], strict=True):
        wall, cpu = around(ahead, behind)
        local[name] = [round(wall, 4), round(cpu, 4)]
        here = row(f"{name}: reference around it (before and after, mean)", wall, "s")
        judged += [(name, judge(r, wall, cpu)) for r in [here, *rows]]
    wall_time = row("suite: wall time (not a measure of the product)", total, "s")
    judged.append(("run", judge(wall_time, reference.unit, reference.cpu_unit)))
    meta["reference_s"] = round(reference.unit, 4)
    meta["reference_cpu_s"] = round(reference.cpu_unit, 4)
    meta["module_reference_s"] = local
    meta["finished"] = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    print(format_table([r for _, r in judged]))
    json_path, md_path = write_results(args.results, judged, meta)
    print(f"\nwritten: {json_path} and {md_path.name}", file=sys.stderr)
    failed = any(r["holds"] is False for _, r in judged)
    if args.no_fail:
        return 0
    return 1 if crashed or (failed and not args.quick) else 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Worker throughput and memory: N concurrent reviews against a K3 stub as slow as K3.

One ``gitneural worker -Q reviews`` process (embedded broker) gets N review jobs at once,
one per pull request on the fake GitHub. The K3 stub answers each review as K3 does: it
is silent for a while, then streams its reasoning at about 62 tokens/s, then calls
``submit_review``, whose arguments stream at the same pace. A review is I/O-bound: the
worker mostly waits for the model.

Measured per pool: reviews per minute of the one worker process (N jobs from submission
to the last outcome, after one warm-up review), the same as a share of the model-bound
ideal (as many reviews every model answer as the schedule lets run at once, each answer
as long as the stub took to serve it, from the request read to its last byte: what is
left is GitNeural's own work, git and GitHub), and the memory the worker holds at its peak and
between reviews: RSS summed over its processes, and PSS (shared pages counted once, so
prefork's children are not over-counted). The README recommends the thread pool (the
default); prefork with the same concurrency is measured for comparison.

The N jobs come from one installation (the most common deployment: it may use every
thread) and, with the thread pool, from two installations taking turns (each limited to
three quarters of the threads while the other is active; together they still fill all).
Budget (issue 24): one installation, thread pool, at least 90% of the ideal.
"""

from __future__ import annotations

import math
import re
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.common import REPO_ROOT, BenchmarkError, Row, row
from benchmarks.standalone import main
from tests.support.fairness import b_pull
from tests.support.services import app_world, children_of, make_job
from workers.schedule.protocol import default_limit

JOBS = 16
CONCURRENCY = 8
#: K3 at ``max`` effort: seconds before the first token, then seconds of reasoning
#: streamed at 62 tokens/s. Real reviews take minutes; the ratio is what matters here.
SILENT_S = 2.0
STREAM_S = 8.0
#: One installation, thread pool: the share of the model-bound ideal it must reach.
EFFICIENCY_BUDGET = 90.0


@dataclass(frozen=True)
class Load:
    jobs: int
    concurrency: int
    silent: float
    stream: float


FULL = Load(JOBS, CONCURRENCY, SILENT_S, STREAM_S)
#: Quick: two jobs on two threads (both run at once, as the full run's do), the model's
#: silence and reasoning shortest but not zero (the streaming path still runs).
QUICK = Load(jobs=2, concurrency=2, silent=0.1, stream=0.2)
OUTCOME = re.compile(r"review job delivery=(\S+) .* outcome=(\S+) review=")


@dataclass
class Measured:
    pool: str
    jobs: int
    concurrency: int
    installations: int
    seconds: float
    #: The model's own time per review, as the stub served it (request read to last
    #: byte): silence, reasoning and the answer itself, all streamed at 62 tokens/s.
    model_seconds: float
    ideal_seconds: float
    rss_mb: float
    pss_mb: float
    idle_rss_mb: float
    posted: int

    @property
    def per_minute(self) -> float:
        return self.jobs / self.seconds * 60

    @property
    def efficiency(self) -> float:
        return self.ideal_seconds / self.seconds


def _family(pid: int) -> list[int]:
    found = [pid]
    for child in children_of(pid):
        found += _family(child)
    return found


def _memory_kb(pid: int) -> tuple[int, int]:
    """(RSS, PSS) of ``pid`` and its descendants, in kB (0 for a process gone meanwhile)."""
    rss = pss = 0
    for p in _family(pid):
        try:
            status = Path(f"/proc/{p}/status").read_text()
            rollup = Path(f"/proc/{p}/smaps_rollup").read_text()
        except OSError:
            continue
        rss += _field(status, "VmRSS")
        pss += _field(rollup, "Pss")
    return rss, pss


def _field(text: str, name: str) -> int:
    found = re.search(rf"^{name}:\s+(\d+) kB", text, re.MULTILINE)
    return int(found.group(1)) if found else 0


class _Peak:
    """Samples the worker's memory every 50 ms while a run lasts."""

    def __init__(self, pid: int) -> None:
        self.pid, self.rss, self.pss = pid, 0, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.wait(0.05):
            rss, pss = _memory_kb(self.pid)
            self.rss, self.pss = max(self.rss, rss), max(self.pss, pss)

    def __enter__(self) -> _Peak:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def _outcomes(log: Path) -> dict[str, str]:
    text = log.read_text(errors="replace") if log.exists() else ""
    return {m.group(1): m.group(2) for m in OUTCOME.finditer(text)}


def _wait(what: str, check: Any, timeout: float, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if proc.poll() is not None:
            tail = log.read_text(errors="replace")[-2000:]
            raise BenchmarkError(f"the worker exited while waiting for {what}:\n{tail}")
        if time.monotonic() > deadline:
            raise BenchmarkError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(0.05)


def allowed(per_installation: list[int], concurrency: int) -> int:
    """Reviews the default schedule lets run at once: an installation alone, every
    thread; several, each at most :func:`default_limit` of them while the others have
    jobs (``workers.schedule.protocol``)."""
    if len(per_installation) == 1:
        return min(concurrency, per_installation[0])
    cap = default_limit(concurrency)
    return min(concurrency, sum(min(cap, n) for n in per_installation))


def _jobs(world: Any, jobs: int, installations: int) -> list[Any]:
    """``jobs`` review jobs, one per new pull request, from 1 or 2 installations in turn."""
    made = []
    for i in range(jobs):
        made.append(b_pull(world) if i % installations else make_job(world, world.new_pull()))
    return made


def measure(
    world: Any,
    root: Path,
    pool: str,
    jobs: int,
    concurrency: int,
    installations: int = 1,
    warm_up: bool = True,
) -> Measured:
    from workers.celeryapp.app import create_celery
    from workers.celeryapp.publisher import CeleryJobQueue
    from workers.settings import WorkerSettings

    env = world.env(root / "data", GITNEURAL_GITHUB_PACING="false")
    settings = WorkerSettings.from_env(env)
    queue = CeleryJobQueue(create_celery(settings), settings)
    log = root / "worker.log"
    command = [sys.executable, "-m", "bot.cli.main", "worker", "-Q", "reviews"]
    command += ["-c", str(concurrency), "--pool", pool]
    with log.open("ab") as out:
        proc = subprocess.Popen(command, env=env, cwd=REPO_ROOT, stdout=out, stderr=out)
    try:
        _wait("the worker to start", lambda: "ready." in log.read_text(), 60, proc, log)
        # Warm-up, model answering at once: the review core imported, the mirror cloned
        # (a long-running worker pays both once, not per review). Quick mode has none: its
        # numbers mean nothing, and the jobs below run the same code.
        model = world.think, world.stream
        world.think = world.stream = 0.0
        try:
            warm = _jobs(world, installations, installations) if warm_up else []  # one each
            for job in warm:
                queue.submit(job)
            warm_ids = {job.delivery_id for job in warm}
            _wait("the warm-up", lambda: warm_ids <= set(_outcomes(log)), 120, proc, log)
        finally:
            world.think, world.stream = model
        idle_rss, _ = _memory_kb(proc.pid)
        job_list = _jobs(world, jobs, installations)
        started = time.monotonic()
        with _Peak(proc.pid) as peak:
            for job in job_list:
                queue.submit(job)
            ids = {job.delivery_id for job in job_list}
            _wait(f"{jobs} reviews", lambda: ids <= set(_outcomes(log)), 300, proc, log)
            seconds = time.monotonic() - started
        served = [
            r.answered - r.received
            for r in world.stub.requests
            if r.received >= started and r.answered is not None and r.status == 200
        ]
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    outcomes = _outcomes(log)
    shares = [len(range(i, jobs, installations)) for i in range(installations)]
    if len(served) < jobs:
        raise BenchmarkError(f"the model answered {len(served)} of {jobs} reviews")
    model_seconds = sum(served) / len(served)
    return Measured(
        pool=pool,
        jobs=jobs,
        concurrency=concurrency,
        installations=installations,
        seconds=seconds,
        model_seconds=model_seconds,
        ideal_seconds=math.ceil(jobs / allowed(shares, concurrency)) * model_seconds,
        rss_mb=peak.rss / 1024,
        pss_mb=peak.pss / 1024,
        idle_rss_mb=idle_rss / 1024,
        posted=sum(1 for d in ids if outcomes.get(d) == "posted"),
    )


def _rows(m: Measured, recommended: bool) -> list[Row]:
    where = f"worker, {m.pool} x{m.concurrency}{' (README)' if recommended else ''}"
    share = round(100 * m.efficiency, 1)
    if m.installations > 1:
        where += f", {m.installations} installations in turn"
        return [
            row(f"{where}: {m.jobs} reviews at once", m.per_minute, "reviews/min/process"),
            row(f"{where}: share of the model-bound ideal", share, "%"),
            *_posted(m, where),
        ]
    budget, holds = (
        (f">= {EFFICIENCY_BUDGET:g}", share >= EFFICIENCY_BUDGET) if recommended else ("", None)
    )
    rows = [
        row(f"{where}: {m.jobs} reviews at once", m.per_minute, "reviews/min/process"),
        row(f"{where}: the model's time per review, answer included", m.model_seconds, "s"),
        row(f"{where}: share of the model-bound ideal", share, "%", budget, holds),
        row(f"{where}: memory held at peak (RSS, all processes)", m.rss_mb, "MB"),
        row(f"{where}: memory held at peak (PSS, all processes)", m.pss_mb, "MB"),
        row(f"{where}: memory between reviews (RSS, after one)", m.idle_rss_mb, "MB"),
    ]
    return rows + _posted(m, where)


def _posted(m: Measured, where: str) -> list[Row]:
    if m.posted != m.jobs:
        return [row(f"{where}: reviews posted", m.posted, "", f"{m.jobs}", False)]
    return []


def run(quick: bool = False) -> list[Row]:
    load = QUICK if quick else FULL
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="gitneural-bench-worker-") as tmp:
        root = Path(tmp)
        with app_world(root / "world") as world:
            world.think, world.stream = load.silent, load.stream
            warm = not quick
            for pool in ("threads", "prefork"):
                m = measure(world, root / pool, pool, load.jobs, load.concurrency, 1, warm)
                rows += _rows(m, recommended=pool == "threads")
            m = measure(world, root / "two", "threads", load.jobs, load.concurrency, 2, warm)
            rows += _rows(m, recommended=True)
    model = load.silent + load.stream
    rows.insert(0, row("worker: K3 stub per review, silent then reasoning", model, "s"))
    return rows


if __name__ == "__main__":
    raise SystemExit(main(run))

"""Files built to wreck a parser (issue 31, rows 3 and 5) are reviewed without context,
named in the summary, and hold no thread of the process hostage.

Row 3: 400 kB of nested ``[`` in a Go file (under ``max_file_bytes``) kept tree-sitter's
query running for minutes in C, holding the GIL, and a worker's lease heartbeat froze
past its lease. Row 5: 3,000 nested ``lambda:`` make ``ast.parse`` raise ``MemoryError``,
which crashed the review (the App's job, the CLI and the hook).
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from pathlib import Path

import pytest

from bot.code.limits import MAX_NESTING, nesting_depth
from bot.code.outline import symbols
from bot.errors import UnparsableError
from bot.usecases.review.run import run_review_job
from tests.fakes.k3 import K3Stub
from tests.support.hook import GITNEURAL, clean_env, hook_run, run, stub_env
from tests.support.hook import submit as hook_submit
from tests.support.job_world import CONFIG, job_world, submit
from tests.support.real_repos import require_grammars
from tests.support.repos import commit, make_repo, stage
from workers.state.heartbeat import Heartbeat

NESTED = 200_000  # 400 kB of brackets
GO = "package shop\n\n// Total adds the prices up.\nfunc Total(prices []int) int {\n\tsum := 0\n"
GO_TAIL = "\tfor _, p := range prices {\n\t\tsum += p\n\t}\n\treturn sum\n}\n"
NESTED_GO = GO + "\tx := " + "[" * NESTED + "]" * NESTED + "\n\t_ = x\n" + GO_TAIL

LAMBDAS = 3000
PY = "def total(prices):\n    s = 0\n    for p in prices:\n        s += p\n    return s\n"
LAMBDA_PY = PY + "\n\ndef deep():\n    return " + "lambda: " * LAMBDAS + "0\n"


class _Beats:
    """A lease heartbeat (the workers' own class) renewing every 50 ms, and the longest
    gap between two of its renewals: what a worker's lease would have seen."""

    def __init__(self) -> None:
        self.times: list[float] = []
        self.beat = Heartbeat(
            self._renew, 0.15, name="test-beat", what="the test", unreachable=OSError
        )

    def _renew(self) -> bool:
        self.times.append(time.monotonic())
        return True

    def longest_gap(self) -> float:
        points = [*self.times, time.monotonic()]
        return max(b - a for a, b in itertools.pairwise(points))


def test_the_nested_go_file_is_refused_before_tree_sitter_runs() -> None:
    require_grammars("go")
    data = NESTED_GO.encode()
    assert nesting_depth(data) > MAX_NESTING
    ticks: list[float] = []
    stop = threading.Event()

    def tick() -> None:
        while not stop.is_set():
            ticks.append(time.monotonic())
            stop.wait(0.01)

    ticker = threading.Thread(target=tick)
    ticker.start()
    refused = ""
    try:
        try:
            symbols("shop/total.go", data)
        except UnparsableError as error:
            refused = str(error)
    finally:
        stop.set()
        ticker.join()
    points = [*ticks, time.monotonic()]
    assert max(b - a for a, b in itertools.pairwise(points)) < 5
    assert "nested over 256 brackets deep" in refused


@pytest.mark.slow
def test_the_apps_job_reviews_the_nested_go_file_without_context(tmp_path: Path) -> None:
    require_grammars("go")
    changed = NESTED_GO.replace("sum += p", "sum += p * 2")
    beats = _Beats()
    base: dict[str, str | None] = {"shop/total.go": NESTED_GO, ".gitneural.toml": CONFIG}
    with job_world(tmp_path, base_files=base, pr_files={"shop/total.go": changed}) as w:
        w.stub.push(submit(summary="Looks consistent."))
        beats.beat.start()
        try:
            outcome = run_review_job(w.job("opened"), w.ctx)
        finally:
            beats.beat.stop()
        [review] = w.reviews()

    assert beats.longest_gap() < 5
    assert outcome.status == "posted"
    [line] = [ln for ln in review["body"].split("\n") if "without context" in ln]
    assert "shop/total.go (nested over 256 brackets deep, not parsed)" in line


def _lambda_repo(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    repo = make_repo(path)
    commit(repo, {"calc.py": LAMBDA_PY, "README.md": "calc\n"}, "initial")
    stage(repo, {"calc.py": LAMBDA_PY.replace("s += p", "s += p * 2")})
    return path


@pytest.mark.slow
def test_the_cli_and_the_hook_review_the_nested_lambdas(tmp_path: Path) -> None:
    path = _lambda_repo(tmp_path)
    env = clean_env(tmp_path)
    with K3Stub([hook_submit([]), hook_submit([])]) as stub:
        full = {**env, **stub_env(stub)}
        done = run([GITNEURAL, "review", "--staged", "--format", "json"], path, full)
        assert done.returncode == 0, done.stderr
        summary = json.loads(done.stdout)["summary"]
        assert "calc.py (nested too deeply for Python's parser)" in summary
        hooked = hook_run(path, full)
        assert hooked.returncode == 0, hooked.stdout + hooked.stderr
        assert "Traceback" not in hooked.stderr
        assert len(stub.chat_requests) == 2


def test_the_apps_job_posts_the_review_of_the_nested_lambdas(tmp_path: Path) -> None:
    changed = LAMBDA_PY.replace("s += p", "s += p * 2")
    with job_world(tmp_path, base_files={"calc.py": LAMBDA_PY}, pr_files={"calc.py": changed}) as w:
        w.stub.push(submit(summary="Fine."))
        outcome = run_review_job(w.job("opened"), w.ctx)
        [review] = w.reviews()
    assert outcome.status == "posted"
    assert "calc.py (nested too deeply for Python's parser)" in review["body"]

"""Fair turns across installations (issue 16): installation A queues 200 reviews, then
installation B opens one pull request while A's run.

``tests/support/fairness.py`` (the same code as the slow test
``tests/system/test_fairness.py``): two ``gitneural worker -Q reviews -c 4`` processes
(8 review threads) on Redis (the embedded broker when Redis is down), the K3 stub thinking
5 s per review. A review-time is one review alone on the same set-up, measured first. B's
wait is from its delivery to its review on GitHub, with the default schedule (``fair``:
installations take turns; A, alone, runs on every thread until B arrives, then at most
three quarters of them while B is active) and, for comparison, in arrival order
(``GITNEURAL_SCHEDULE=fifo``, what a broker queue does). A's reviews ahead of B's are
counted twice: claimed after B's delivery (the scheduler's order, which the test
``tests/system/test_fairness.py`` bounds) and reaching the model before B's (that order
also depends on how long each review prepares on a busy machine).

Quick mode: 4 queued (two more than the two threads: B has something to jump), 1
thread per worker, 0.3 s per review, the embedded broker.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from benchmarks.common import Row, redis_up, row
from benchmarks.standalone import main
from tests.support.fairness import backlog_then_one
from tests.support.services import REDIS_URL, app_world

WAITS_BUDGET = 2.0


def run(quick: bool = False) -> list[Row]:
    if quick:
        kind, options = "sqlite", {"backlog": 4, "threads": 1, "think": 0.3}
    else:
        kind = "redis" if redis_up(REDIS_URL) else "sqlite"
        options = {"backlog": 200, "threads": 4, "think": 5.0}
    where = f"fairness, {'Redis' if kind == 'redis' else 'embedded broker'}"
    setup = f"{options['backlog']} of A queued, 2 workers x {options['threads']} threads"
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="gitneural-bench-fairness-") as tmp:
        root = Path(tmp)
        with app_world(root / "world") as world:
            fair = backlog_then_one(kind, world, root / "fair", "fair", **options)
            fifo = backlog_then_one(kind, world, root / "fifo", "fifo", **options)
    rows += [
        row(f"{where}: a review-time (one review alone, stub {options['think']:g} s)",
            fair.review_time, "s"),
        row(f"{where}: B's wait behind A ({setup}), fair turns", fair.waits, "review-times",
            f"<= {WAITS_BUDGET:g}", fair.waits <= WAITS_BUDGET),
        row(f"{where}: B's wait, arrival order (GITNEURAL_SCHEDULE=fifo)", fifo.waits,
            "review-times"),
        row(f"{where}: A's jobs claimed between B's delivery and B's, fair / fifo",
            f"{fair.ahead} / {fifo.ahead}"),
        row(f"{where}: A's reviews at the model between B's delivery and B's, fair / fifo",
            f"{fair.ahead_at_model} / {fifo.ahead_at_model}"),
    ]  # fmt: skip  # a table, kept compact
    return rows


if __name__ == "__main__":
    raise SystemExit(main(run))

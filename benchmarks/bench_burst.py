"""The burst of issue 7: delivery latency under load, and reviews posted per PR head.

``tests/support/burst/rig.py`` (the same code as the slow test
``tests/system/test_burst.py``) sends 1,000 signed ``pull_request`` deliveries for 50 PRs
to the App as deployed: 50 ``opened``, 700 ``synchronize`` for new heads pushed to the
fake GitHub in 14 rounds three seconds apart, 50 repeated ``synchronize`` events for a
head already announced, and 200 redeliveries (same id and body). Sixteen connections send
them, one request each, while two worker processes review (the K3 stub answers at once:
the time is GitNeural's own).

Deployments: ``gitneural serve --workers 2`` on the embedded SQLite broker plus a second
``gitneural worker``; and, when Redis is up, ``gitneural serve`` for the web only with two
``gitneural worker`` processes on Redis, and the same on RabbitMQ (a vhost of its own,
the state in Redis) when it is up too.

Budgets (issue 7): every delivery answered 2xx within GitHub's 10 s; exactly one review
per PR head that was reviewed, every review of the head current when it was reviewed, and
the newest head of every PR reviewed. Latencies are measured by the sender on the same two
cores as everything else, so they are an upper bound.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from benchmarks.common import TIMER, Row, redis_up, row
from benchmarks.standalone import main
from tests.support.burst.check import BurstPlan
from tests.support.burst.rig import BurstRig

#: A timer's promise, in seconds: GitHub drops a delivery not answered within 10 s.
ANSWER_LIMIT_S = 10.0
ANSWER_BUDGET = f"< {ANSWER_LIMIT_S:g} s ({TIMER} GitHub's)"


def _rows(label: str, r: Any) -> list[Row]:
    where = f"burst, {label}"
    answers = r.answers
    not_2xx = sum(1 for a in answers if a.status is None or not 200 <= a.status < 300)
    per_head = r.reviews_per_head()
    most = max(per_head.values(), default=0)
    heads = sum(len(h) for h in r.heads.values())
    newest = sum(1 for pr, h in r.heads.items() if h[-1] in {s for s, _ in r.reviews.get(pr, [])})
    stale = len(r.stale_reviews())
    slowest = r.percentile(100)
    problems = r.problems()
    return [
        row(f"{where}: deliveries (PRs)", f"{len(answers):,} ({len(r.heads)})"),
        row(f"{where}: sent in", r.burst_seconds, "s"),
        row(f"{where}: answer p50", r.percentile(50) * 1000, "ms"),
        row(f"{where}: answer p90", r.percentile(90) * 1000, "ms"),
        row(f"{where}: answer p99", r.percentile(99) * 1000, "ms"),
        row(f"{where}: answer max", slowest * 1000, "ms", ANSWER_BUDGET, slowest < ANSWER_LIMIT_S),
        row(f"{where}: answers not 2xx", not_2xx, "", "0", not_2xx == 0),
        row(f"{where}: reviews posted per PR head", most, "", "exactly 1", most == 1),
        row(f"{where}: heads reviewed", f"{len(per_head)} of {heads}"),
        row(f"{where}: reviews of a head no longer current", stale, "", "0", stale == 0),
        row(f"{where}: PRs with their newest head reviewed", f"{newest} of {len(r.heads)}",
            "", "all", newest == len(r.heads)),
        row(f"{where}: queue drained after the burst in", r.settle_seconds, "s"),
        row(f"{where}: every promise kept", "; ".join(problems)[:300] or "yes", "",
            "no problem", not problems),
    ]  # fmt: skip  # a table, kept compact


def run(quick: bool = False) -> list[Row]:
    if quick:
        # Every kind of delivery once or twice: opened, synchronize, a repeat, a redelivery
        # racing its original and one of an earlier round.
        plan = BurstPlan(prs=2, rounds=2, repeats=1, redeliveries=2, concurrency=2, round_gap=0.2)
    else:
        plan = BurstPlan()
    # Quick: the embedded broker only. Every deployment runs the same code here (BurstRig.run
    # and _rows); the rig's per-broker branches are tests/system/test_burst.py's.
    deployments = [("sqlite", "embedded broker")]
    if not quick and redis_up("redis://127.0.0.1:6379/0"):
        deployments.append(("redis", "Redis"))
        if _rabbit_up():
            deployments.append(("rabbitmq", "RabbitMQ"))
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="gitneural-bench-burst-") as tmp:
        for broker, label in deployments:
            with BurstRig(Path(tmp) / broker) as rig:
                rows += _rows(label, rig.run(plan, broker))
    if len(deployments) == 1 and not quick:
        rows.append(row("burst on Redis and RabbitMQ", "not run: Redis is down"))
    return rows


def _rabbit_up() -> bool:
    """RabbitMQ at 127.0.0.1:5672 (its burst runs in a vhost of its own, state in Redis)."""
    import socket

    try:
        with socket.create_connection(("127.0.0.1", 5672), timeout=1):
            return True
    except OSError:
        return False


if __name__ == "__main__":
    raise SystemExit(main(run))

"""A dead worker's review resumes within two minutes, on every broker (issue 16).

``tests/support/recovery.py`` (the same code as the slow test
``tests/system/test_recovery.py``): a review reaches the K3 stub, then the worker running
it is killed with SIGKILL (no clean-up of any kind). Embedded SQLite broker: ``gitneural
serve``'s review worker, which serve starts again; Redis and RabbitMQ (a vhost of its own,
the state in Redis): one of two ``gitneural worker`` processes. The seconds are from the
kill to GitHub accepting the one review, with the default settings: a 60 s lease renewed
every 20 s, so the job is back in line 40 to 60 s after the kill, plus the sweep (1 s)
and the review itself. The visibility timeout (45 min) plays no part.

Quick mode: the embedded broker only, with a 3 s lease and the test environment's short
polling (checks that the benchmark works).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from benchmarks.common import TIMER, Row, redis_up, row
from benchmarks.standalone import main
from tests.support.rabbit import RABBIT_HOST, RABBIT_PORT
from tests.support.recovery import kill_mid_review
from tests.support.services import REDIS_URL, app_world

WITHIN_S = 120.0
BROKERS = (("sqlite", "embedded broker"), ("redis", "Redis"), ("rabbitmq", "RabbitMQ"))


def _rabbit_up() -> bool:
    import socket

    try:
        with socket.create_connection((RABBIT_HOST, RABBIT_PORT), timeout=1):
            return True
    except OSError:
        return False


def run(quick: bool = False) -> list[Row]:
    rows: list[Row] = []
    up = {"sqlite": True, "redis": redis_up(REDIS_URL)}
    up["rabbitmq"] = up["redis"] and _rabbit_up()
    # Quick: one broker. Every broker runs the same loop body below (kill_mid_review);
    # its per-broker branches (serve's worker or one of two) are tests/system/test_recovery.py's.
    brokers = BROKERS[:1] if quick else BROKERS
    # Quick: a 3 s lease, and the test environment's quick polling and lock retries back.
    quick_env = {
        "GITNEURAL_LOCK_LEASE": "3",
        "GITNEURAL_LOCK_RETRY_DELAY": "0.3",
        "GITNEURAL_BROKER_POLL_INTERVAL": "0.05",
    }
    extra = quick_env if quick else {}
    lease = "quick: 3 s lease" if quick else "default 60 s lease"
    with tempfile.TemporaryDirectory(prefix="gitneural-bench-recovery-") as tmp:
        for kind, label in brokers:
            if not up[kind]:
                rows.append(row(f"recovery after SIGKILL, {label}", "not run: broker down"))
                continue
            root = Path(tmp) / kind
            with app_world(root) as world:
                r = kill_mid_review(kind, world, root / "run", **extra)
            one = len(r.reviews) == 1 and len(r.checks_after) == 1
            rows += [
                row(
                    f"recovery after SIGKILL mid-review, {label} ({lease}): kill → review posted",
                    r.seconds,
                    "s",
                    f"< {WITHIN_S:g} s ({TIMER} twice the 60 s lease)",
                    r.seconds < WITHIN_S,
                ),
                row(
                    f"recovery, {label}: reviews posted, check runs",
                    f"{len(r.reviews)}, {len(r.checks_after)}",
                    "",
                    "1, 1 (carried on)",
                    one,
                ),
            ]
    return rows


if __name__ == "__main__":
    raise SystemExit(main(run))

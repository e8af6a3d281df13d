"""Fair turns across installations, with real worker processes: installation A queues
many reviews, then installation B's one review arrives while A's run. B's review starts
at the next free thread (the order the K3 stub saw the requests in shows it), where
the arrival order (``GITNEURAL_SCHEDULE=fifo``, the control) has B wait behind all of A.
The time B waits, in review-times, is measured by ``benchmarks/bench_fairness.py``."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.fairness import backlog_then_one
from tests.support.services import AppWorld

pytestmark = pytest.mark.slow

BACKLOG, THREADS = 16, 2


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("redis", marks=pytest.mark.redis)])
def test_an_installation_s_one_review_goes_ahead_of_another_s_backlog(
    kind: str, world: AppWorld, tmp_path: Path
) -> None:
    options = {"backlog": BACKLOG, "threads": THREADS, "think": 2.0}
    fair = backlog_then_one(kind, world, tmp_path / "fair", "fair", **options)
    fifo = backlog_then_one(kind, world, tmp_path / "fifo", "fifo", **options)
    assert fair.b_reviews == fifo.b_reviews == 1
    # Fair: B takes the thread A leaves free (A runs 3 at once of 4 threads by default);
    # at most one of A's claimed in the instant B's delivery was being queued.
    assert fair.ahead <= 1, f"{fair.ahead} of A's reviews started before B's"
    # The control: in arrival order B waits for nearly all of A's queued reviews.
    assert fifo.ahead >= BACKLOG - 2 * THREADS - 1, fifo.ahead

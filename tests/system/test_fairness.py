"""Fair turns across installations, with real worker processes: installation A queues
many reviews, then installation B's one review arrives while A's run. B's job is the next
one claimed, where the arrival order (``GITNEURAL_SCHEDULE=fifo``, the control) has B
wait behind all of A. The order is the claims' (``tests/support/fairness.py`` says why);
the time B waits, in review-times, is measured by ``benchmarks/bench_fairness.py``."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.fairness import backlog_then_one
from tests.support.services import AppWorld

pytestmark = pytest.mark.slow

BACKLOG, THREADS = 16, 2
#: Review threads of the two workers: A, alone, runs on all of them when B arrives.
BUSY = 2 * THREADS


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("redis", marks=pytest.mark.redis)])
def test_an_installation_s_one_review_goes_ahead_of_another_s_backlog(
    kind: str, world: AppWorld, tmp_path: Path
) -> None:
    options = {"backlog": BACKLOG, "threads": THREADS, "think": 2.0}
    fair = backlog_then_one(kind, world, tmp_path / "fair", "fair", **options)
    fifo = backlog_then_one(kind, world, tmp_path / "fifo", "fifo", **options)
    assert fair.b_reviews == fifo.b_reviews == 1
    # B arrived while A still had more queued than there are threads (else nothing to
    # jump): the comparison below means something.
    assert BACKLOG - fair.before > BUSY and BACKLOG - fifo.before > BUSY
    # The scheduler's rule: once B's job is queued, the next claim is B's (B was never
    # served, A was). So only claims made while B's delivery was being queued can come
    # between them: at most one per thread (a thread is then busy for a review-time, far
    # longer than one submit), however busy the machine is.
    assert fair.ahead <= BUSY, f"{fair.ahead} of A's jobs were claimed after B's delivery"
    # The control, arrival order: every A job still queued when B came is claimed first
    # (up to one per thread may log its claim a moment after B's on another worker).
    assert fifo.ahead >= BACKLOG - fifo.before - BUSY, (fifo.ahead, fifo.before)
    assert fifo.ahead > BUSY  # the fair bound above would catch arrival order

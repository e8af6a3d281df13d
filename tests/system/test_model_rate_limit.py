"""One model rate limit for the whole deployment, with real worker processes: two workers
take 12 reviews at once from a K3 stub that answers 429 above 5 requests per 10 s; with
``GITNEURAL_MODEL_RPM=5`` counted over the same window, every review is posted and the
stub sees at most a handful of requests over its limit. ``benchmarks/bench_ratelimit.py``
measures the issue's case (40 reviews, 30 per minute) with and without the limit."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.ratelimit import review_storm
from tests.support.services import AppWorld

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("redis", marks=pytest.mark.redis)])
def test_every_worker_takes_from_one_budget(kind: str, world: AppWorld, tmp_path: Path) -> None:
    storm = review_storm(kind, world, tmp_path, reviews=12, limit=5, window=10.0, shared=True)
    assert (storm.posted, storm.failed) == (12, 0)
    # "At most a handful" (the issue): windows measured by two clocks may overlap at an
    # edge when a loaded machine delays a request between our count and its arrival.
    assert storm.refused <= 5, storm
    # Every attempt of both workers together kept to the limit (a refused one counts too).
    assert storm.most_in_a_window <= 5 + storm.refused
    # It waited its turn rather than storming: 12 requests need three windows.
    assert storm.seconds >= 2 * 10.0

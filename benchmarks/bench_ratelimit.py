"""One model rate limit for the whole deployment (issue 16): 40 reviews at once against a
K3 stub that answers 429 ``rate_limit_reached_error`` above 30 requests in any 60 s.

``tests/support/ratelimit.py`` (the same code as the slow test
``tests/system/test_model_rate_limit.py``): two ``gitneural worker -Q reviews -c 20``
processes on Redis (the embedded broker when Redis is down), each review one model
request, the job retries at their defaults (30 s backoff). With
``GITNEURAL_MODEL_RPM=30`` every attempt of every worker takes from one budget and waits
its turn; without it, every worker sends as fast as it can and backs off on each 429.

Quick mode: 3 reviews, 2 per 2 s, the embedded broker, the test environment's short
retry backoff (the same code: both storms, every row, only smaller and sooner).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from benchmarks.common import Row, redis_up, row
from benchmarks.standalone import main
from tests.support.ratelimit import review_storm
from tests.support.services import REDIS_URL, app_world

HANDFUL = 5
DEFAULT_RETRIES = {"GITNEURAL_RETRY_BACKOFF": "30", "GITNEURAL_RETRY_BACKOFF_MAX": "900"}


def run(quick: bool = False) -> list[Row]:
    retries = DEFAULT_RETRIES
    if quick:
        # One more review than the limit: the shared limit still makes one wait and the
        # storm without it still meets a 429, with app_world's 0.2 s retry backoff.
        kind, reviews, limit, window = "sqlite", 3, 2, 2.0
        retries = {}
    else:
        kind = "redis" if redis_up(REDIS_URL) else "sqlite"
        reviews, limit, window = 40, 30, 60.0
    where = f"rate limit, {reviews} reviews at once, stub {limit} per {window:g} s"
    with tempfile.TemporaryDirectory(prefix="gitneural-bench-ratelimit-") as tmp:
        root = Path(tmp)
        with app_world(root / "world") as world:
            common = {"reviews": reviews, "limit": limit, "window": window, **retries}
            shared = review_storm(kind, world, root / "shared", shared=True, **common)
            alone = review_storm(kind, world, root / "alone", shared=False, **common)
    return [
        row(f"{where}: 429s with GITNEURAL_MODEL_RPM={limit}", shared.refused, "",
            f"<= {HANDFUL}", shared.refused <= HANDFUL),
        row(f"{where}: reviews posted with the limit", f"{shared.posted} of {reviews}", "",
            "all", shared.posted == reviews),
        row(f"{where}: most requests in one window with the limit", shared.most_in_a_window,
            "", f"<= {limit} + 429s", shared.most_in_a_window <= limit + shared.refused),
        row(f"{where}: all reviews ended with the limit in", shared.seconds, "s"),
        row(f"{where}: 429s without the limit", alone.refused),
        row(f"{where}: requests sent without the limit (attempts)", alone.requests),
        row(f"{where}: reviews posted without the limit", f"{alone.posted} of {reviews}"),
        row(f"{where}: all reviews ended without the limit in", alone.seconds, "s"),
    ]  # fmt: skip  # a table, kept compact


if __name__ == "__main__":
    raise SystemExit(main(run))

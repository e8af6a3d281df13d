"""When a task runs again: exponential backoff with jitter, and never sooner than GitHub or
the model asked."""

from __future__ import annotations

import random


def backoff_delay(
    faults: int,
    base: float,
    cap: float,
    retry_after: float | None = None,
    rand: float | None = None,
) -> float:
    """Seconds before retry number ``faults + 1``: ``base * 2**faults`` capped, with
    "equal jitter" (half fixed, half random) so retries of many jobs spread out, and never
    less than ``retry_after`` (itself capped: the broker must not hold a message longer
    than its visibility timeout)."""
    r = random.random() if rand is None else rand
    delay = min(cap, base * 2.0 ** min(faults, 32))
    delay = delay / 2 + r * delay / 2
    if retry_after is not None and retry_after > 0:
        delay = max(delay, min(cap, retry_after) + r)
    return delay

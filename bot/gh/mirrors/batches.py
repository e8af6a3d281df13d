"""Fetches of one mirror that wait for its lock at the same time, made as one.

Eight reviews of one busy repository start together, each wanting its own pull
request's head. Taking turns under the mirror's lock, the last of them waits for seven
fetches, one after another. Here the requests that arrive while a fetch of the same
mirror is running join one batch, which the first of them fetches, with every ref the
batch asks for, once the lock is free: however many wait, at most two fetches run back
to back. A request that arrives when no fetch is running fetches at once, as before.

Batches live in one process (the worker's thread pool); processes still take turns on
the mirror's file lock.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Batch:
    """The refs asked of one mirror by the requests waiting together, and the outcome."""

    refs: set[str] = field(default_factory=set)
    done: threading.Event = field(default_factory=threading.Event)
    #: The refs the remote had, once the fetch succeeded.
    heads: set[str] | None = None
    #: Why the fetch failed, for the requests that joined it.
    error: Exception | None = None


class FetchBatches:
    """Open batches per mirror path: the first request of a batch leads it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: dict[Path, Batch] = {}

    def join(self, path: Path, refs: list[str]) -> tuple[Batch, bool]:
        """The open batch of ``path`` with ``refs`` added, and whether the caller leads
        it (fetches for everyone) or only waits for it."""
        with self._lock:
            batch = self._open.get(path)
            leads = batch is None
            if batch is None:
                batch = self._open[path] = Batch()
            batch.refs.update(refs)
            return batch, leads

    def close(self, path: Path, batch: Batch) -> list[str]:
        """Stop ``batch`` taking requests (its leader holds the lock now and fetches):
        the refs to fetch. Later requests open the next batch."""
        with self._lock:
            if self._open.get(path) is batch:
                del self._open[path]
            return sorted(batch.refs)

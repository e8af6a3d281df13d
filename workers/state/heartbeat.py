"""A lease renewed by a thread of its own while the work it guards runs.

The thread that runs a review cannot renew anything while it waits on the model, so a
heartbeat does, every third of the lease. When a renewal says the lease is no longer ours,
or the store stays unreachable for a whole lease (by then someone else may hold it), the
lease is ``lost``: the work must not post. Both the claim on a scheduled job
(:mod:`workers.schedule.leases`) and a PR's lock (:mod:`workers.state.pr_lock`) use it.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

log = logging.getLogger("gitneural.worker")


class Heartbeat:
    def __init__(
        self,
        renew: Callable[[], bool],
        lease: float,
        *,
        name: str,
        what: str,
        unreachable: type[Exception],
    ) -> None:
        #: ``renew()`` is True while the lease is still ours and raises ``unreachable``
        #: when the store cannot say.
        self._renew, self._lease, self._name = renew, lease, name
        self._what, self._unreachable = what, unreachable
        self._stop = threading.Event()
        self._lost = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def lost(self) -> bool:
        return self._lost.is_set()

    def mark_lost(self) -> None:
        self._lost.set()

    def held(self) -> bool:
        """Renew now and say whether the lease is still ours, asked of the store (not of
        what the last beat saw); raises ``unreachable`` when the store cannot say."""
        if self.lost:
            return False
        if not self._renew():
            log.error("%s was taken over: this run will not post", self._what)
            self._lost.set()
            return False
        return True

    def start(self) -> None:
        self._thread = threading.Thread(target=self._beat, name=self._name, daemon=True)
        self._thread.start()

    def _beat(self) -> None:
        renewed = time.monotonic()
        while not self._stop.wait(self._lease / 3):
            try:
                if not self._renew():
                    log.error("%s was taken over: this run will not post", self._what)
                    self._lost.set()
                    return
                renewed = time.monotonic()
            except self._unreachable as exc:
                log.warning("%s not renewed: %s", self._what, exc)
                if time.monotonic() - renewed >= self._lease:
                    self._lost.set()
                    return

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=5)

"""The lease of a claimed review job, renewed while the review runs.

The worker thread running a review cannot renew anything while it waits on the model, so
a heartbeat thread does, every third of the lease. If the schedule says the job is no
longer this claim's (the lease ran out while the store was unreachable and another worker
put it back in line), the claim is ``lost``: the run must not post. A store that stays
unreachable for a whole lease counts as lost too: by then another worker may have it.
"""

from __future__ import annotations

import logging
import threading
import time

from workers.schedule.protocol import Claim, Schedule, ScheduleError

log = logging.getLogger("gitneural.worker")


class ClaimLease:
    def __init__(self, schedule: Schedule, claim: Claim, lease: float) -> None:
        self._schedule, self.claim, self._lease = schedule, claim, lease
        self._stop = threading.Event()
        self._lost = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def lost(self) -> bool:
        return self._lost.is_set()

    def start(self) -> ClaimLease:
        self._thread = threading.Thread(
            target=self._heartbeat, name=f"gitneural-claim-{self.claim.entry.id[:8]}", daemon=True
        )
        self._thread.start()
        return self

    def _heartbeat(self) -> None:
        renewed = time.monotonic()
        while not self._stop.wait(self._lease / 3):
            try:
                if not self._schedule.renew(self.claim, self._lease):
                    log.error("job %s was put back in line by another worker: this run "
                              "will not post", self.claim.entry.id)  # fmt: skip
                    self._lost.set()
                    return
                renewed = time.monotonic()
            except ScheduleError as exc:
                log.warning("lease of job %s not renewed: %s", self.claim.entry.id, exc)
                if time.monotonic() - renewed >= self._lease:
                    self._lost.set()
                    return

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=5)

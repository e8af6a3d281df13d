"""The lease of a claimed review job, renewed while the review runs.

A heartbeat (:mod:`workers.state.heartbeat`) renews it every third of the lease. If the
schedule says the job is no longer this claim's (the lease ran out while the store was
unreachable and another worker put it back in line), the claim is ``lost``: the run must
not post. A store that stays unreachable for a whole lease counts as lost too: by then
another worker may have it.
"""

from __future__ import annotations

from workers.schedule.protocol import Claim, Schedule, ScheduleError
from workers.state.heartbeat import Heartbeat


class ClaimLease:
    def __init__(self, schedule: Schedule, claim: Claim, lease: float) -> None:
        self.claim = claim
        self._heartbeat = Heartbeat(
            lambda: schedule.renew(claim, lease),
            lease,
            name=f"gitneural-claim-{claim.entry.id[:8]}",
            what=f"the claim on job {claim.entry.id}",
            unreachable=ScheduleError,
        )

    @property
    def lost(self) -> bool:
        return self._heartbeat.lost

    def held(self) -> bool:
        """Renewed now, by the claim's owner token (a new one per claim: its epoch): is the
        job still this claim's? Raises :class:`ScheduleError` when the store cannot say."""
        return self._heartbeat.held()

    def start(self) -> ClaimLease:
        self._heartbeat.start()
        return self

    def stop(self) -> None:
        self._heartbeat.stop()

"""The fence a run passes each time it is about to write to GitHub (a review, a reply, a
thread resolved, a check run's status): every lease it holds is renewed at that moment,
conditionally on its owner token, against the store itself.

The heartbeats (:mod:`workers.state.heartbeat`) notice a lease taken over only at their
next beat, and a store that stops answering only after a whole lease; in between, a run
cut off from the store could post over the run that took its job. The fence closes that
window: a lease that is no longer this run's, or a store that cannot be reached, stops
the write (:class:`~bot.usecases.errors.FencedError`). A successful renewal extends the
lease by a whole lease, so nobody can take the job over while the write is sent.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from bot.errors import GitNeuralError
from bot.usecases.errors import FencedError


class Held(Protocol):
    @property
    def lost(self) -> bool: ...

    def held(self) -> bool: ...


def fence(
    leases: dict[str, Held], abandoned: Callable[[], bool] = lambda: False
) -> Callable[[], None]:
    """A check raising :class:`FencedError` unless every one of ``leases`` (by what they
    guard: ``"the claim on the job"``, ``"the PR's lock"``) is still this run's."""

    def check() -> None:
        if abandoned():
            raise FencedError("the run was given up at its hard time limit: nothing is posted")
        for what, lease in leases.items():
            try:
                if lease.lost or not lease.held():
                    raise FencedError(f"{what} is no longer this run's: nothing is posted")
            except FencedError:
                raise
            except GitNeuralError as exc:
                # The store cannot say: another run may hold the job by now.
                detail = f"{what} cannot be confirmed ({exc}): nothing is posted"
                raise FencedError(detail) from None

    return check


def refused(what: str) -> Callable[[], None]:
    """The fence of a run that never took ``what`` (the store could not be asked): it
    may post nothing."""

    def check() -> None:
        raise FencedError(f"{what} was never this run's: nothing is posted")

    return check

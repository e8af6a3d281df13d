"""What a job raises for a fault worth trying again later (its task retries it)."""

from __future__ import annotations

from bot.errors import GitNeuralError


class TransientJobError(GitNeuralError):
    """A fault worth retrying later; ``retry_after`` is what GitHub or the model asked."""

    transient = True

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class FencedError(GitNeuralError):
    """This run may write nothing more to GitHub: at the moment it was about to, its claim
    on the job (or its lock) was no longer current in the store, or the store could not
    say. Another run may hold the job; what this one started is left to that run."""

    transient = True


def unfenced() -> None:
    """The fence of a run nobody else can take over (one process, the CLI, the Action)."""

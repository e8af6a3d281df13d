"""What a job raises for a fault worth trying again later (its task retries it)."""

from __future__ import annotations

from bot.errors import GitNeuralError


class TransientJobError(GitNeuralError):
    """A fault worth retrying later; ``retry_after`` is what GitHub or the model asked."""

    transient = True

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after

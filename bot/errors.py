"""The one exception tree of GitNeural and the exit codes it maps to.

Every error a user can cause or meet derives from :class:`GitNeuralError`; the CLI maps
them to exit codes in one place (``bot.cli.main``). Messages are one line, say what
happened and how to fix it, and never contain a secret.
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2
EXIT_MODEL = 3
#: A run refused before it began (``gitneural replay`` over its ``--max-tokens``).
EXIT_REFUSED = 4


class GitNeuralError(Exception):
    """Base of every error GitNeural reports to a user."""

    exit_code = EXIT_USAGE
    #: Whether the same work may succeed later (a fault of the network, a server or a
    #: rate limit): a job is then tried again, never reported as failed.
    transient: bool = False
    #: Seconds the server asked to wait before trying again, when it said.
    retry_after: float | None = None


class UsageError(GitNeuralError):
    """Bad command-line arguments or input."""


class ConfigError(GitNeuralError):
    """An invalid ``.gitneural.toml`` or environment setting."""


class RefusedError(GitNeuralError):
    """A run that would cost more than the user allowed: nothing was asked."""

    exit_code = EXIT_REFUSED


class GitError(GitNeuralError):
    """A repository or revision that cannot be read."""


class ModelError(GitNeuralError):
    """The model API failed or answered with something unusable."""

    exit_code = EXIT_MODEL


class ModelConfigError(ModelError):
    """No API key, a wrong base URL or a rejected key (HTTP 401/403/404)."""


class MissingKeyError(ModelConfigError):
    """No API key is set: a configuration error, found before any request."""

    exit_code = EXIT_USAGE


class ModelQuotaError(ModelError):
    """``exceeded_current_quota_error``: never retried, the account must be topped up."""


class ModelUnavailableError(ModelError):
    """Overload, rate limits, 5xx or network faults that outlived the retries."""

    transient = True

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class ModelStalledError(ModelUnavailableError):
    """The server took the request and then sent nothing for ``stall_timeout`` seconds.

    Not retried within the request (the same server would most likely hang again), but
    transient for the App's workers: a later try may meet a server that answers.
    """


class ContextTooLongError(ModelError):
    """The prompt exceeded the model's context window."""


class ModelRequestError(ModelError):
    """Any other 4xx answer: a request the server refuses."""


class ImagesUnsupportedError(ModelRequestError):
    """The model server refused a request for its images (a deployment without the
    vision tower): the review is made again without them."""


class ModelOutputError(ModelError):
    """The model's answer could not be used (truncated, not a valid review)."""


class ModelTimeoutError(ModelError):
    """The review's time budget ran out before the model answered.

    Not transient: the same review would most likely run out of time again, so it is
    reported once (check run, hook warning) rather than retried for hours.
    """


class GitHubError(GitNeuralError):
    """GitHub refused or failed a request (the App's reads and writes, not token minting)."""

    def __init__(
        self,
        message: str,
        *,
        transient: bool = False,
        retry_after: float | None = None,
        status: int | None = None,
    ) -> None:
        super().__init__(message)
        #: Whether the same request may succeed later (5xx, rate limits, network faults).
        self.transient = transient
        #: Seconds GitHub asked to wait (``retry-after`` or ``x-ratelimit-reset``), if it said.
        self.retry_after = retry_after
        #: The HTTP status, when GitHub answered at all.
        self.status = status


class StoreError(GitNeuralError):
    """The store (SQLite or PostgreSQL) cannot be reached, opened or migrated."""

    exit_code = EXIT_MODEL


class UnparsableError(GitNeuralError):
    """A file a parser will not read, or could not: too large or nested too deeply for
    the parser's limits, or the parser failed. The review reads it without context and
    names it in the summary; the message says why, in a few words."""

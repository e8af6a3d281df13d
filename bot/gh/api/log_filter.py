"""PyGithub's DEBUG log with its tokens blanked out."""

from __future__ import annotations

import logging
import re

from bot.gh.api.errors import redact_tokens

_TOKEN_FIELD = re.compile(r"""(['"]token['"]\s*:\s*['"])[^'"]+""")


class _RedactTokens(logging.Filter):
    """PyGithub logs whole response bodies at DEBUG, and the body of an access-token
    request is the token: blank tokens out of its records before any handler sees them."""

    def filter(self, record: logging.LogRecord) -> bool:
        text = record.getMessage()
        redacted = _TOKEN_FIELD.sub(r"\1***", redact_tokens(text))
        if redacted != text:
            record.msg, record.args = redacted, None
        return True


def guard_pygithub_logs() -> None:
    """Install the filter once (calling it again changes nothing)."""
    # Logger filters do not apply to records propagated from child loggers, so the
    # filter goes on the logger PyGithub actually logs requests with.
    logger = logging.getLogger("github.Requester")
    if not any(isinstance(f, _RedactTokens) for f in logger.filters):
        logger.addFilter(_RedactTokens())

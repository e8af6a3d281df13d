"""A rate limit shared by every model client of a deployment: taken before each request.

K3 accounts limit requests and tokens per minute (RPM, TPM). Moonshot's gateway counts a
request's tokens when it arrives, as its prompt plus its ``max_completion_tokens``
(whatever is then generated), and may count over any window: a limit that allows a
burst of N and then refills can send nearly 2N within one minute. So the budget is a
strict sliding window: at most N requests and T tokens in **any** window, every attempt
counted (retries included).

The client (:class:`bot.llm.client.K3Client`) asks its settings' ``budget`` before each
attempt and waits its turn; the stores that keep the window across processes and hosts
(Redis, SQLite) are the workers' (``workers.state.model_rate_limit``), injected through
:class:`bot.llm.settings.LLMSettings`. No budget: no limit.
"""

from __future__ import annotations

import json
import math
import random
import time
from collections.abc import Callable
from typing import Any, Protocol

from bot.domain.images import messages_image_tokens, text_size
from bot.errors import ModelConfigError, ModelTimeoutError

#: Bytes per token of the request's size estimate: the review core's own rate (3 per
#: token over-counts source and English text; an over-estimate only waits a little longer).
BYTES_PER_TOKEN = 3


class RequestBudget(Protocol):
    #: For messages: what the limit is, e.g. ``"30 requests and 500000 tokens per 60 s"``.
    description: str

    def try_take(self, tokens: int) -> float:
        """Take one request of ``tokens`` if it fits the window now and return 0; else take
        nothing and return the seconds until it may fit (``math.inf``: it never will)."""
        ...


def request_tokens(
    messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, max_completion: int
) -> int:
    """What the gateway counts for a request: the prompt (estimated from its size) and the
    tokens the answer may use; an image by its pixels, not its data URI's length."""
    size = text_size(messages)
    if tools:
        size += len(json.dumps(tools, ensure_ascii=False).encode())
    return -(-size // BYTES_PER_TOKEN) + messages_image_tokens(messages) + max_completion


def take(
    budget: RequestBudget,
    tokens: int,
    deadline: float | None,
    on_wait: Callable[[float], None] | None = None,
) -> float:
    """Wait until ``budget`` grants one request of ``tokens``; the seconds waited.

    Raises :class:`ModelConfigError` if the request can never fit, and
    :class:`ModelTimeoutError` if ``deadline`` (monotonic) comes first.
    """
    started = time.monotonic()
    while True:
        wait = budget.try_take(tokens)
        if wait <= 0:
            return time.monotonic() - started
        if math.isinf(wait):
            raise ModelConfigError(
                f"one request needs about {tokens} tokens, more than the model rate limit "
                f"allows ({budget.description}): raise GITNEURAL_MODEL_TPM or lower "
                "review.max_completion_tokens"
            )
        # A little jitter, so workers woken by the same expiry do not all ask at once.
        wait += random.uniform(0.0, 0.05)
        if deadline is not None and time.monotonic() + wait >= deadline:
            raise ModelTimeoutError(
                f"the deployment's model rate limit ({budget.description}) left no turn "
                "within the time budget; raise GITNEURAL_MODEL_RPM or the timeout"
            )
        if on_wait is not None:
            on_wait(wait)
        time.sleep(wait)

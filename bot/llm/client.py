"""The Kimi K3 client: one chat completion with K3's rules, retries and live progress.

K3's rules (the K3 stub of the tests refuses whatever breaks them): no sampling
parameters, an explicit ``max_completion_tokens``, ``reasoning_effort`` at the top level,
and preserved thinking: every assistant message goes back exactly as received
(``AssistantTurn.message``).
The openai SDK is imported only when the first request is sent: ``import openai`` takes
about 400 ms, and the pre-commit hook must start fast and often needs no request at all
(every file skipped, a cached result). A missing key is found then too, so a review with
nothing to send needs no key; the CLI checks the key up front itself.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any, cast

from bot import metrics
from bot.domain.route import Endpoint
from bot.effort import Effort
from bot.errors import (
    ModelError,
    ModelOutputError,
    ModelTimeoutError,
)
from bot.llm.errors import (
    ErrorContext,
    RetryableFailure,
    connection_failure,
    cut_failure,
    read_timeout,
    stalled,
    status_failure,
    stream_error_failure,
    timeouts,
)
from bot.llm.rate_limit import request_tokens, take
from bot.llm.settings import LLMSettings
from bot.llm.stream import ProgressEmitter, TurnBuilder, turn_from_completion
from bot.llm.types import AssistantTurn, ModelClient, Progress, ToolChoice
from bot.usage import Usage

__all__ = ["K3Client"]


class K3Client:
    """A ``ModelClient`` for Kimi K3 (or any server with its wire format) on the openai SDK.

    Thread-safe: parallel review groups may share one client; ``usage`` sums them all.
    """

    def __init__(
        self,
        settings: LLMSettings,
        *,
        on_usage: Callable[[Usage], None] | None = None,
        on_routine_usage: Callable[[Usage], None] | None = None,
        endpoint: Endpoint = "main",
    ) -> None:
        self.settings = settings
        #: Told each answered request's tokens (the workers record them per PR and kind).
        self.on_usage = on_usage
        #: Likewise for the routine endpoint's requests, recorded apart (None: ``on_usage``).
        self.on_routine_usage = on_routine_usage
        #: Which of the deployment's endpoints this client asks (its metrics say so).
        self.endpoint: Endpoint = endpoint
        self.model = settings.model
        self.effort: Effort = settings.effort
        self.usage = Usage()
        self._usage_lock = threading.Lock()
        self._ctx = ErrorContext(settings.base_url, settings.model, settings.api_key)
        # The name the server gives reasoning, for answers that carry none.
        self._reasoning_field = "reasoning_content"
        self._sdk: Any = None
        self._sdk_lock = threading.Lock()

    def for_route(self, effort: Effort, endpoint: Endpoint) -> K3Client:
        """A client of the same deployment at ``effort`` on ``endpoint``, its usage told
        apart when the endpoint is the routine one."""
        told = (self.on_routine_usage or self.on_usage) if endpoint == "routine" else self.on_usage
        return K3Client(
            replace(self.settings.on(endpoint), effort=effort),
            on_usage=told,
            on_routine_usage=self.on_routine_usage,
            endpoint=endpoint,
        )

    @property
    def started(self) -> bool:
        """Whether a request was attempted (the SDK was loaded)."""
        return self._sdk is not None

    @property
    def _openai(self) -> Any:
        with self._sdk_lock:  # parallel review groups share one client
            if self._sdk is None:
                key = self.settings.require_key()
                import openai  # lazily: see the module docstring

                self._sdk = openai.OpenAI(
                    api_key=key,
                    base_url=self.settings.base_url,
                    max_retries=0,  # retries are ours: by K3 error type, within the deadline
                    timeout=self.settings.request_timeout,
                )
            return self._sdk

    def complete(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None = None,
        tool_choice: ToolChoice = "auto",
        max_completion_tokens: int,
        deadline: float | None = None,
        on_progress: Callable[[Progress], None] | None = None,
        stream: bool = True,
    ) -> AssistantTurn:
        self.settings.require_key()  # before the SDK is imported: no key, no wait
        started = time.monotonic()
        progress = ProgressEmitter(on_progress, started)
        last: RetryableFailure | None = None
        attempt = 0
        while True:
            attempt += 1
            self._check_deadline(deadline, started, last)
            progress.emit("waiting", 0, attempt)
            self._take_budget(messages, tools, max_completion_tokens, deadline, progress, attempt)
            try:
                turn = self._attempt(
                    messages,
                    tools,
                    tool_choice,
                    max_completion_tokens,
                    deadline,
                    stream,
                    progress,
                    attempt,
                )
                break
            except RetryableFailure as failure:
                last = failure
            self._check_deadline(deadline, started, last)
            limit = self.settings.max_retries
            if last.max_retries is not None:
                limit = min(limit, last.max_retries)
            if attempt > limit:
                raise last.final(attempt)
            delay = self._backoff(attempt, last.retry_after)
            if deadline is not None and time.monotonic() + delay >= deadline:
                raise self._timeout_error(deadline, started, last)
            progress.emit("retrying", 0, attempt, f"{last.detail}, retrying in {delay:.1f}s")
            time.sleep(delay)
        with self._usage_lock:
            self.usage.add(turn.usage)
        if turn.finish_reason == "length" and not turn.content.strip() and not turn.tool_calls:
            raise ModelOutputError(
                f"max_completion_tokens ({max_completion_tokens}) ran out during reasoning, "
                "before any answer; raise review.max_completion_tokens or lower the effort"
            )
        return turn

    # -- one attempt -----------------------------------------------------------------

    def _attempt(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        tool_choice: ToolChoice,
        max_completion_tokens: int,
        deadline: float | None,
        stream: bool,
        progress: ProgressEmitter,
        attempt: int,
    ) -> AssistantTurn:
        import openai

        timeout = self.settings.request_timeout
        if deadline is not None:
            timeout = max(0.001, min(timeout, deadline - time.monotonic()))
        # A stream sends bytes as the model works (reasoning too): silence for longer than
        # stall_timeout (httpx's read timeout: between two bytes) is a hung server. A
        # request without a stream is silent until its whole answer is ready.
        stall = self.settings.stall_timeout
        read = min(timeout, stall) if stream else timeout
        # Only these fields, ever: K3 answers 400 to sampling parameters.
        request: dict[str, Any] = {
            "model": self.model,
            "messages": cast(Any, messages),
            "max_completion_tokens": max_completion_tokens,
            "reasoning_effort": self.effort,
            "timeout": openai.Timeout(timeout, connect=min(timeout, 30.0), read=read),
        }
        if tools:
            request["tools"] = cast(Any, tools)
            request["tool_choice"] = tool_choice
        failure: ModelError | RetryableFailure
        status = "200"  # the HTTP status, for the metrics; a broken stream was a 200
        try:
            if stream:
                turn = self._streamed(request, deadline, progress, attempt)
            else:
                turn = self._single(request)
        except timeouts(openai) as exc:
            # Before the stream starts the SDK wraps httpx's timeout; during it, it does not.
            metrics.model_request("network")
            if not stream or read >= timeout or not read_timeout(exc):
                raise connection_failure(exc, self._ctx) from None
            raise stalled(self._ctx, stall) from None
        except openai.APIStatusError as exc:
            status = str(exc.status_code)
            failure = status_failure(exc.status_code, exc.body, exc.response.headers, self._ctx)
        except openai.APIConnectionError as exc:  # includes timeouts and resets
            status = "network"
            failure = connection_failure(exc, self._ctx)
        except openai.APIResponseValidationError:
            failure = cut_failure(self._ctx, "the answer was not a chat completion")
        except openai.APIError as exc:  # an error object sent inside the stream
            failure = stream_error_failure(exc.body, self._ctx)
        except ValueError:  # a chunk that is not JSON
            failure = cut_failure(self._ctx, "the stream held malformed data")
        except ModelTimeoutError:
            metrics.model_request(status)
            raise
        else:
            metrics.model_request(status, turn.usage, routine=self.endpoint == "routine")
            if self.on_usage is not None:
                self.on_usage(turn.usage)
            return turn
        metrics.model_request(status)
        raise failure from None  # from None: SDK errors may quote what the server echoed

    def _streamed(
        self,
        request: dict[str, Any],
        deadline: float | None,
        progress: ProgressEmitter,
        attempt: int,
    ) -> AssistantTurn:
        builder = TurnBuilder(self._reasoning_field)
        chunks = self._openai.chat.completions.create(stream=True, **request)
        with chunks:
            for chunk in chunks:
                builder.add(chunk.to_dict())
                late = deadline is not None and time.monotonic() >= deadline
                if late and builder.finish_reason is None:
                    raise ModelTimeoutError(
                        "the model was still answering when the time budget ran out; "
                        "raise the timeout or use a lower effort"
                    )
                progress.emit(builder.phase, builder.tokens, attempt)
        if builder.finish_reason is None:  # cut before the end: [DONE] alone is not enough
            raise cut_failure(self._ctx)
        self._reasoning_field = builder.reasoning_field
        return builder.turn()

    def _single(self, request: dict[str, Any]) -> AssistantTurn:
        completion = self._openai.chat.completions.create(stream=False, **request)
        turn = turn_from_completion(completion.to_dict(), self._reasoning_field)
        if turn is None:
            raise cut_failure(self._ctx, "the answer held no message")
        self._reasoning_field = next(k for k in turn.message if k.startswith("reasoning"))
        return turn

    def _take_budget(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        max_completion_tokens: int,
        deadline: float | None,
        progress: ProgressEmitter,
        attempt: int,
    ) -> None:
        """Every attempt (retries too) waits for its turn in the shared rate limit."""
        budget = self.settings.budget
        if budget is None:
            return
        # Load the SDK first (hundreds of ms on a cold start): the window is counted from
        # the grant, so the request should leave right after it.
        _ = self._openai

        def waiting(seconds: float) -> None:
            detail = f"model rate limit ({budget.description}), next turn in {seconds:.1f}s"
            progress.emit("waiting", 0, attempt, detail)

        take(budget, request_tokens(messages, tools, max_completion_tokens), deadline, waiting)

    # -- time ------------------------------------------------------------------------

    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        base = self.settings.backoff_base * 2.0 ** (attempt - 1)
        jittered = min(self.settings.backoff_max, base) * random.uniform(0.5, 1.0)
        return min(max(jittered, retry_after or 0.0), self.settings.backoff_max)

    def _check_deadline(
        self, deadline: float | None, started: float, last: RetryableFailure | None
    ) -> None:
        if deadline is not None and time.monotonic() >= deadline:
            raise self._timeout_error(deadline, started, last)

    @staticmethod
    def _timeout_error(
        deadline: float, started: float, last: RetryableFailure | None
    ) -> ModelTimeoutError:
        budget = max(0.0, deadline - started)
        tail = f" (last failure: {last.detail})" if last else ""
        return ModelTimeoutError(
            f"no answer from the model within the time budget ({budget:.0f}s){tail}; "
            "raise the timeout or use a lower effort"
        )


def _check_protocol(client: K3Client) -> ModelClient:
    return client  # mypy proves K3Client satisfies ModelClient

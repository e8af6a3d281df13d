"""How the K3 client reads failures: which are retried, and what the user is told.

K3 answers errors as ``{"error": {"type", "message"}}``, but the proxy in front of it may
answer an HTML page (a 504) and a stream may simply stop. Everything is read
defensively; every message is one line, names the base URL without credentials, and has
the API key (and anything that looks like one) removed.
"""

from __future__ import annotations

import re
import socket
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from bot.errors import (
    ContextTooLongError,
    ImagesUnsupportedError,
    ModelConfigError,
    ModelError,
    ModelQuotaError,
    ModelRequestError,
    ModelStalledError,
    ModelUnavailableError,
)
from bot.retry_after import retry_after_seconds
from bot.text import one_line

RETRIED_429_TYPES = frozenset({"engine_overloaded_error", "rate_limit_reached_error"})
QUOTA_TYPE = "exceeded_current_quota_error"
_CONTEXT_RE = re.compile(
    r"context[ _-]?(length|window)|token limit|too many tokens|prompt is too long|"
    r"maximum context|exceed\w*\b.{0,40}\btokens?\b",
    re.IGNORECASE,
)
#: How servers refuse images: vLLM serving a model without its vision tower ("At most 0
#: image(s) may be provided"), OpenAI-compatible gateways ("does not support image
#: input", "image input is not supported", "not a multimodal model").
_IMAGES_RE = re.compile(
    r"at most 0 image|not a multi-?modal|(does not|doesn't|do not) support (image|vision|multi)"
    r"|(image|vision|multi-?modal)[\w\s()-]{0,40}(not (been )?(supported|enabled)|unsupported)",
    re.IGNORECASE,
)
_KEYLIKE_RE = re.compile(r"\b(sk|ghp|gho|ghs|github_pat)[-_][A-Za-z0-9_\-*.]{6,}")
_TITLE_RE = re.compile(r"<title>(.*?)</title>", re.IGNORECASE | re.DOTALL)
_TAG_RE = re.compile(r"<[^>]+>")


def display_url(url: str) -> str:
    """The URL without user info, query or fragment: safe to show."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def shown(text: str, secret: str | None = None, limit: int = 300) -> str:
    """``text`` without the key (or anything like one), on one line: safe to show."""
    if secret:
        text = text.replace(secret, "***")
    return one_line(_KEYLIKE_RE.sub("***", text), limit)


def error_fields(body: object) -> tuple[str | None, str]:
    """(type, message) from a K3 error body, an HTML page, or anything else."""
    if isinstance(body, Mapping):
        inner = body.get("error", body)
        if isinstance(inner, Mapping):
            kind, message = inner.get("type"), inner.get("message")
            return (kind if isinstance(kind, str) else None), str(message or "")
        return None, str(inner)
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    if isinstance(body, str):
        title = _TITLE_RE.search(body)
        return None, title.group(1) if title else _TAG_RE.sub(" ", body)
    return None, ""


@dataclass
class RetryableFailure(Exception):
    """An attempt failed in a way that may pass; ``final`` builds the error to give up with."""

    detail: str  # short, for progress lines: "429 engine_overloaded_error"
    final: Callable[[int], ModelError]  # given the number of attempts made
    retry_after: float | None = None
    #: A tighter cap than the settings' for this kind of failure, or None.
    max_retries: int | None = None


#: Nothing listens at the base URL, or its host does not resolve: almost always a wrong
#: KIMI_BASE_URL or no network, seldom a server restarting. Retry briefly, then say so.
UNREACHABLE_RETRIES = 2


@dataclass(frozen=True)
class ErrorContext:
    base_url: str
    model: str
    secret: str | None

    @property
    def where(self) -> str:
        return display_url(self.base_url)


def _attempts(n: int) -> str:
    return "1 attempt" if n == 1 else f"{n} attempts"


def _described(status: int | None, kind: str | None, message: str, ctx: ErrorContext) -> str:
    head = " ".join(p for p in (f"HTTP {status}" if status else "", kind or "") if p)
    text = f"{head}: {message}" if message else head
    return shown(text or "no details", ctx.secret)


def status_failure(
    status: int, body: object, headers: Mapping[str, str], ctx: ErrorContext
) -> ModelError | RetryableFailure:
    """Map an HTTP error answer to the error to raise, or to a retry."""
    kind, message = error_fields(body)
    said = _described(status, kind, message, ctx)
    if status == 429 and kind == QUOTA_TYPE:
        return ModelQuotaError(
            f"the model quota is exhausted ({said}); top up the account or use another key"
        )
    if status == 429 or status >= 500 or status == 408:
        retry_after = retry_after_seconds(headers)

        def final(attempts: int) -> ModelError:
            return ModelUnavailableError(
                f"the model API at {ctx.where} still fails after {_attempts(attempts)} ({said}); "
                "try again later",
                retry_after=retry_after,
            )

        return RetryableFailure(f"{status} {kind or 'error'}", final, retry_after)
    if status in (401, 403):
        return ModelConfigError(
            f"the API key was rejected by {ctx.where} ({said}); check KIMI_API_KEY"
        )
    if status == 404:
        return ModelConfigError(
            f"{ctx.where} has no chat completions for model {ctx.model!r} ({said}); "
            "check KIMI_BASE_URL and GITNEURAL_MODEL"
        )
    if _CONTEXT_RE.search(message):
        return ContextTooLongError(
            f"the prompt is too long for {ctx.model} ({said}); review fewer files or lower "
            "review.max_prompt_tokens"
        )
    if status == 400 and _IMAGES_RE.search(message):
        return ImagesUnsupportedError(f"the model API does not accept images ({said})")
    return ModelRequestError(f"the model API refused the request ({said})")


def stream_error_failure(body: object, ctx: ErrorContext) -> ModelError | RetryableFailure:
    """An error object sent inside a stream (no HTTP status to go by)."""
    kind, _ = error_fields(body)
    if kind == QUOTA_TYPE:
        return status_failure(429, body, {}, ctx)
    if kind in RETRIED_429_TYPES or kind in (None, "server_error", "unexpected_output"):
        return status_failure(503, body, {}, ctx)
    return status_failure(400, body, {}, ctx)


def _root_cause(exc: BaseException) -> BaseException:
    seen = {id(exc)}
    while True:
        nxt = exc.__cause__ or exc.__context__
        if nxt is None or id(nxt) in seen:
            return exc
        seen.add(id(nxt))
        exc = nxt


_UNREACHABLE = ("connection refused", "host name not found")


def connection_failure(exc: BaseException, ctx: ErrorContext) -> RetryableFailure:
    root = _root_cause(exc)
    if isinstance(root, ConnectionRefusedError):
        reason = "connection refused"
    elif isinstance(root, ConnectionResetError):
        reason = "connection reset"
    elif isinstance(root, socket.gaierror) or "getaddrinfo" in str(root):
        reason = "host name not found"
    elif isinstance(root, TimeoutError) or "timed out" in str(exc).lower():
        reason = "timed out"
    else:
        reason = shown(f"{type(root).__name__}: {root}", ctx.secret, 120)
    unreachable = reason in _UNREACHABLE

    def final(attempts: int) -> ModelError:
        if unreachable:
            return ModelUnavailableError(
                f"cannot reach the model API at {ctx.where} ({reason}) after "
                f"{_attempts(attempts)}; check KIMI_BASE_URL and the network"
            )
        # The server was reached and the connection then failed (a reset mid-stream, a
        # read timeout): the URL is right, so do not send the operator to check it.
        return ModelUnavailableError(
            f"the connection to the model API at {ctx.where} failed ({reason}) after "
            f"{_attempts(attempts)}; try again later"
        )

    return RetryableFailure(reason, final, max_retries=UNREACHABLE_RETRIES if unreachable else None)


def cut_failure(
    ctx: ErrorContext, what: str = "the stream ended before the answer did"
) -> RetryableFailure:
    return RetryableFailure(
        what,
        lambda attempts: ModelUnavailableError(
            f"the model API at {ctx.where} failed: {what} ({_attempts(attempts)}); try again later"
        ),
    )


def timeouts(openai: Any) -> tuple[type[BaseException], ...]:
    """The timeouts a request can end with: the SDK's, and those of the HTTP library it
    loaded (httpx, or its successor httpx2), which a stream raises unwrapped."""
    found: list[type[BaseException]] = [openai.APITimeoutError]
    for name in ("httpx", "httpx2"):
        timeout = getattr(sys.modules.get(name), "TimeoutException", None)
        if isinstance(timeout, type) and issubclass(timeout, BaseException):
            found.append(timeout)
    return tuple(found)


def read_timeout(exc: BaseException) -> bool:
    """Whether the timeout was one of reading (the connection was open), not of connecting."""
    seen: BaseException | None = exc
    while seen is not None:
        if type(seen).__name__ == "ReadTimeout":
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def stalled(ctx: ErrorContext, seconds: float) -> ModelStalledError:
    """The server took the request and then sent nothing for ``seconds``: a hung server,
    not a slow model (a stream sends reasoning as it comes)."""
    return ModelStalledError(
        f"the model API at {ctx.where} sent nothing for {seconds:.0f}s (stalled); "
        "check the server, or raise stall_timeout in [review] of .gitneural.toml"
    )

"""What GitNeural counts, for Prometheus: a few functions the rest of the code calls.

    metrics.webhook_delivery("pull_request", "queued")
    metrics.job_finished("review", "posted", seconds=42.0)
    metrics.model_request("200", usage)
    metrics.github_request("201")

The families, their names and labels are in :mod:`bot.metrics.catalog`; serving them
(one process, or the sum over many) in :mod:`bot.metrics.exposition`. A label value
outside its known set is a bug in the caller (``ValueError``), except for GitHub event
names, which come from a header anyone can send and are folded into ``other``.
"""

from __future__ import annotations

from typing import Final

from bot.metrics.catalog import (
    DELIVERY_OUTCOMES,
    JOB_KINDS,
    JOB_OUTCOMES,
    TOKEN_KINDS,
    count_nothing,
    families,
)
from bot.usage import Usage

__all__ = [
    "DELIVERY_OUTCOMES",
    "JOB_KINDS",
    "JOB_OUTCOMES",
    "TOKEN_KINDS",
    "budget_refused",
    "count_nothing",
    "github_request",
    "job_finished",
    "mirror_evicted",
    "model_request",
    "set_mirror_bytes",
    "webhook_delivery",
]

#: Events a label may name; any other ``X-GitHub-Event`` counts as ``other`` (the header
#: is sent before the signature is checked, and a label per made-up name would grow
#: without bound).
KNOWN_EVENTS: Final = frozenset(
    {
        "pull_request",
        "issue_comment",
        "pull_request_review",
        "pull_request_review_comment",
        "pull_request_review_thread",
        "check_run",
        "check_suite",
        "installation",
        "installation_repositories",
        "ping",
        "push",
    }
)


def _check(value: str, allowed: tuple[str, ...], what: str) -> str:
    if value not in allowed:
        raise ValueError(f"unknown {what} {value!r}: one of {', '.join(allowed)}")
    return value


def webhook_delivery(event: str, outcome: str) -> None:
    """One delivery answered: ``queued``, ``ignored``, ``duplicate`` or ``rejected``."""
    label = event if event in KNOWN_EVENTS else "other"
    outcome = _check(outcome, DELIVERY_OUTCOMES, "delivery outcome")
    families().webhook_deliveries.labels(label, outcome).inc()


def job_finished(kind: str, outcome: str, seconds: float | None = None) -> None:
    """A job of ``kind`` ended with ``outcome`` (or was ``retried``); ``seconds`` since its
    delivery, observed for a job that ended (a retry has not)."""
    kind = _check(kind, JOB_KINDS, "job kind")
    outcome = _check(outcome, JOB_OUTCOMES, "job outcome")
    made = families()
    made.jobs.labels(kind, outcome).inc()
    if seconds is not None and outcome != "retried":
        made.job_seconds.labels(kind).observe(max(0.0, seconds))


def model_request(status: str, usage: Usage | None = None, *, routine: bool = False) -> None:
    """One request to the model API: its HTTP status (``network`` without an answer), and
    the tokens it reported; a request to the routine endpoint (``KIMI_ROUTINE_*``) has its
    tokens counted apart as well."""
    made = families()
    made.model_requests.labels(status).inc()
    if usage is not None:
        counters = (
            [made.model_tokens, made.routine_model_tokens] if routine else [made.model_tokens]
        )
        for counter in counters:
            counter.labels("prompt").inc(usage.prompt_tokens)
            counter.labels("cached").inc(usage.cached_tokens)
            counter.labels("completion").inc(usage.completion_tokens)


def github_request(status: str) -> None:
    """One request to GitHub's REST API (each retry is one more)."""
    families().github_requests.labels(status).inc()


def set_mirror_bytes(size: int) -> None:
    families().mirror_bytes.set(size)


def mirror_evicted(count: int = 1) -> None:
    families().mirror_evictions.inc(count)


def budget_refused(kind: str) -> None:
    families().budget_refusals.labels(_check(kind, JOB_KINDS, "job kind")).inc()

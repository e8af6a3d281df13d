"""GitNeural's metric families, made once per process on first use.

prometheus_client picks its storage when it is first imported: in memory, or, with
``PROMETHEUS_MULTIPROC_DIR`` set, one file per process that the scraping process sums
(gunicorn workers, Celery's prefork children and the embedded workers of ``gitneural
serve`` all write there). So the library is imported here, late, after the command line
has chosen the directory (:func:`bot.metrics.exposition.prepare_multiprocess_dir`), and
a command that counts nothing (most hook runs) never pays for the import. The commands
of a developer's machine (``review``, ``hook``, ``action``) serve no ``/metrics`` and
turn counting off (:func:`count_nothing`); so does an install without the ``app`` extra,
which has no prometheus_client: the families are then :class:`_Nothing`.
"""

from __future__ import annotations

import importlib.util
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from prometheus_client import Counter, Gauge, Histogram

#: The jobs a worker runs, and how each can end (``retried``: a transient fault, again later).
#: ``command``: the other comment commands (``/describe``, ``/help``, any added later).
JOB_KINDS: Final = ("review", "reply", "ask", "learning", "command", "eyes")
JOB_OUTCOMES: Final = ("posted", "skipped", "superseded", "failed", "retried")
#: How a webhook delivery was answered.
DELIVERY_OUTCOMES: Final = ("queued", "ignored", "duplicate", "rejected")
TOKEN_KINDS: Final = ("prompt", "cached", "completion")
#: From a webhook delivery to the job's end: seconds to minutes (K3 at ``max`` thinks).
JOB_SECONDS_BUCKETS: Final = (1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600)


@dataclass(frozen=True)
class Families:
    webhook_deliveries: Counter
    jobs: Counter
    job_seconds: Histogram
    model_requests: Counter
    model_tokens: Counter
    routine_model_tokens: Counter
    github_requests: Counter
    mirror_bytes: Gauge
    mirror_evictions: Counter
    budget_refusals: Counter


class _Nothing:
    """A family that counts nothing: every label set is itself, every update a no-op."""

    def labels(self, *values: str) -> _Nothing:
        return self

    def inc(self, amount: float = 1) -> None:
        pass

    def observe(self, amount: float) -> None:
        pass

    def set(self, value: float) -> None:
        pass


_lock = threading.Lock()
_families: list[Families] = []
_counting = [True]


def count_nothing() -> None:
    """This process serves no ``/metrics``: never import prometheus_client, count nothing."""
    with _lock:
        _counting[0] = False


def families() -> Families:
    """The families of this process (made on the first call)."""
    with _lock:
        if not _families:
            _families.append(_make() if _counting[0] else _nothing())
        return _families[0]


def _nothing() -> Families:
    none: Any = _Nothing()
    return Families(**{f: none for f in Families.__dataclass_fields__})


def _make() -> Families:
    # The app extra's: absent from the default install.
    if importlib.util.find_spec("prometheus_client") is None:
        return _nothing()
    return _make_counting()


def _make_counting() -> Families:
    from prometheus_client import Counter, Gauge, Histogram

    made = Families(
        webhook_deliveries=Counter(
            "gitneural_webhook_deliveries",
            "Webhook deliveries by GitHub event and how they were answered.",
            ["event", "outcome"],
        ),
        jobs=Counter(
            "gitneural_jobs", "Jobs ended (or retried), by kind and outcome.", ["kind", "outcome"]
        ),
        job_seconds=Histogram(
            "gitneural_job_seconds",
            "Seconds from the webhook delivery to the job's end (the post, for a review).",
            ["kind"],
            buckets=JOB_SECONDS_BUCKETS,
        ),
        model_requests=Counter(
            "gitneural_model_requests",
            "Requests to the model API by HTTP status (network: no answer came).",
            ["status"],
        ),
        model_tokens=Counter(
            "gitneural_model_tokens", "Tokens the model API reported, by kind.", ["kind"]
        ),
        routine_model_tokens=Counter(
            "gitneural_routine_model_tokens",
            "Of those, the tokens of the routine endpoint (KIMI_ROUTINE_*), by kind.",
            ["kind"],
        ),
        github_requests=Counter(
            "gitneural_github_requests",
            "Requests to GitHub's REST API, retries included, by HTTP status.",
            ["status"],
        ),
        # The newest measure wins: every worker of a host measures the same directory.
        mirror_bytes=Gauge(
            "gitneural_mirror_bytes",
            "Bytes on disk of the git mirror cache.",
            multiprocess_mode="mostrecent",
        ),
        mirror_evictions=Counter(
            "gitneural_mirror_evictions",
            "Mirrors removed from the cache to keep it under GITNEURAL_MIRROR_MAX_BYTES.",
        ),
        budget_refusals=Counter(
            "gitneural_budget_refusals",
            "Reviews or answers not sent to the model: a monthly token budget was spent.",
            ["kind"],
        ),
    )
    # Every known series from zero, so a rate() has a start and a dashboard a line.
    for kind in JOB_KINDS:
        made.job_seconds.labels(kind)
        for outcome in JOB_OUTCOMES:
            made.jobs.labels(kind, outcome)
    for token_kind in TOKEN_KINDS:
        made.model_tokens.labels(token_kind)
        made.routine_model_tokens.labels(token_kind)
    return made

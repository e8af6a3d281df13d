"""What the status page shows, gathered at request time: queue depths, the last day's
jobs, this month's usage against each installation's budget, the mirror cache's size.
A source that fails leaves its section with the reason; the page still renders."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from bot.errors import GitNeuralError
from bot.gh.mirrors.lru import tree_bytes
from bot.settings.budgets import Budgets, Limit, month_of, month_start, next_month
from bot.store import Store
from bot.store.job_records import RecentJobs, recent_jobs
from bot.store.usage import month_usage


@dataclass
class StatusInputs:
    store: Store | None = None
    budgets: Budgets = field(default_factory=Budgets)
    mirror_root: Path | None = None
    mirror_max_bytes: int | None = None


@dataclass(frozen=True)
class InstallationUsage:
    installation_id: int
    tokens: int
    repositories: int
    limit: Limit | None

    @property
    def share(self) -> float | None:
        if self.limit is None:
            return None
        cap = self.limit.monthly_tokens
        return self.tokens / cap if cap else (1.0 if self.tokens else 0.0)


@dataclass
class StatusView:
    generated_at: dt.datetime
    month: str
    resets_at: dt.datetime
    queues: Mapping[str, int] | None = None
    queues_error: str | None = None
    jobs: RecentJobs | None = None
    jobs_error: str | None = None
    usage: list[InstallationUsage] = field(default_factory=list)
    usage_error: str | None = None
    mirror_bytes: int | None = None
    mirror_max_bytes: int | None = None


def gather_status(
    inputs: StatusInputs,
    queue_depths: Callable[[], Mapping[str, int]] | None,
    now: dt.datetime | None = None,
) -> StatusView:
    now = now or dt.datetime.now(dt.UTC)
    month = month_of(now)
    view = StatusView(now, month, month_start(next_month(month)))
    if queue_depths is not None:
        try:
            view.queues = queue_depths()
        except GitNeuralError as exc:
            view.queues_error = str(exc)
    if inputs.store is None:
        view.jobs_error = view.usage_error = "no store configured"
    else:
        try:
            view.jobs = recent_jobs(inputs.store, now - dt.timedelta(hours=24))
        except GitNeuralError as exc:
            view.jobs_error = str(exc)
        try:
            view.usage = usage_by_installation(inputs.store, inputs.budgets, month)
        except GitNeuralError as exc:
            view.usage_error = str(exc)
    if inputs.mirror_root is not None:
        view.mirror_bytes = tree_bytes(inputs.mirror_root)
        view.mirror_max_bytes = inputs.mirror_max_bytes
    return view


def usage_by_installation(store: Store, budgets: Budgets, month: str) -> list[InstallationUsage]:
    """Each installation's tokens in ``month`` (those with a budget but no use too)."""
    tokens: dict[int, int] = {}
    repositories: dict[int, int] = {}
    for row in month_usage(store, month):
        tokens[row.installation_id] = tokens.get(row.installation_id, 0) + row.tokens
        repositories[row.installation_id] = repositories.get(row.installation_id, 0) + 1
    ids = sorted(set(tokens) | set(budgets.installations))
    return [
        InstallationUsage(
            i, tokens.get(i, 0), repositories.get(i, 0), budgets.installation_limit(i)
        )
        for i in ids
    ]

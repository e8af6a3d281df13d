"""Model usage in the store: one upsert per model request, and this month's sums.

Rows are keyed by month, installation, repository, pull request and kind, so a month's
spend is a handful of rows per PR however many requests its reviews made. Both
databases take the same ``INSERT … ON CONFLICT DO UPDATE`` (adding to the row), so two
workers recording at once never lose a request.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import IntegrityError

from bot.settings.budgets import Scope, month_of
from bot.store.base import utcnow
from bot.store.engine import Store
from bot.store.errors import store_errors
from bot.store.operations import BudgetNotice, UsageRecord
from bot.usage import Usage

_KEY = ("month", "installation_id", "repo", "pr_number", "kind")


@dataclass(frozen=True)
class UsageRow:
    """A month's usage of one repository of one installation."""

    installation_id: int
    repo: str
    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int
    requests: int

    @property
    def tokens(self) -> int:
        """What budgets count: prompt and completion tokens."""
        return self.prompt_tokens + self.completion_tokens


def record_usage(
    store: Store,
    *,
    installation_id: int,
    repo: str,
    pr_number: int | None,
    kind: str,
    usage: Usage,
    when: dt.datetime | None = None,
) -> None:
    """Add one request's tokens to its row of the month."""
    values: dict[str, Any] = {
        "month": month_of(when),
        "installation_id": installation_id,
        "repo": repo.lower(),
        "pr_number": pr_number or 0,
        "kind": kind,
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "cached_tokens": usage.cached_tokens,
        "requests": max(usage.requests, 1),
        "updated_at": utcnow(),
    }
    table = UsageRecord.__table__
    dialect = postgresql if store.engine.dialect.name == "postgresql" else sqlite
    insert = dialect.insert(table).values(**values)
    added = ("prompt_tokens", "completion_tokens", "cached_tokens", "requests")
    changes: dict[str, Any] = {name: table.c[name] + insert.excluded[name] for name in added}
    changes["updated_at"] = insert.excluded.updated_at
    statement = insert.on_conflict_do_update(index_elements=list(_KEY), set_=changes)
    with store_errors(store.url, "record usage in"), store.session() as session:
        session.execute(statement)


def spent(store: Store, month: str, installation_id: int, repo: str) -> dict[Scope, int]:
    """Tokens (prompt + completion) spent in ``month`` by the installation and by the
    repository."""
    tokens = UsageRecord.prompt_tokens + UsageRecord.completion_tokens
    with store_errors(store.url, "read usage from"), store.session() as session:
        by_installation = session.scalar(
            sa.select(sa.func.coalesce(sa.func.sum(tokens), 0)).where(
                UsageRecord.month == month, UsageRecord.installation_id == installation_id
            )
        )
        by_repo = session.scalar(
            sa.select(sa.func.coalesce(sa.func.sum(tokens), 0)).where(
                UsageRecord.month == month, UsageRecord.repo == repo.lower()
            )
        )
    return {"installation": int(by_installation or 0), "repository": int(by_repo or 0)}


def month_usage(store: Store, month: str) -> list[UsageRow]:
    """Every repository's usage in ``month``, by installation then repository."""
    u = UsageRecord
    query = (
        sa.select(
            u.installation_id,
            u.repo,
            sa.func.sum(u.prompt_tokens),
            sa.func.sum(u.completion_tokens),
            sa.func.sum(u.cached_tokens),
            sa.func.sum(u.requests),
        )
        .where(u.month == month)
        .group_by(u.installation_id, u.repo)
        .order_by(u.installation_id, u.repo)
    )
    with store_errors(store.url, "read usage from"), store.session() as session:
        rows = session.execute(query).all()
    return [UsageRow(int(i), str(r), int(p), int(c), int(k), int(n)) for i, r, p, c, k, n in rows]


def claim_budget_notice(
    store: Store,
    *,
    installation_id: int,
    repo: str,
    pr_number: int,
    month: str,
    head_sha: str,
    kind: str,
) -> bool:
    """``True`` the first time a PR is told its budget is spent this month; ``False``
    after that (a second push, a redelivery, a second worker at the same moment)."""
    notice = BudgetNotice(
        installation_id=installation_id,
        repo=repo.lower(),
        pr_number=pr_number,
        month=month,
        head_sha=head_sha,
        kind=kind,
    )
    try:
        with store_errors(store.url, "record a budget notice in"), store.session() as session:
            session.add(notice)
    except IntegrityError:
        return False
    return True

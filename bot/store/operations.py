"""The store's tables for operating the App: model usage, budget notices, finished jobs.

- ``usage_records``: tokens by month, installation, repository, pull request and kind
  (``review``, ``reply``, ``ask``), summed by an upsert per model request. ``gitneural
  usage`` and the budgets read it; a PR number of 0 means "no pull request".
- ``budget_notices``: a pull request was told its budget is spent this month (at which
  head), so a second push says nothing new.
- ``job_records``: one row per job that ended or was retried, for the status page
  (outcomes of the last 24 hours, the slowest, the failed with their reasons).
"""

from __future__ import annotations

import datetime as dt

import sqlalchemy as sa
from sqlalchemy.orm import Mapped, mapped_column

from bot.store.base import Base, utcnow


class UsageRecord(Base):
    __tablename__ = "usage_records"
    __table_args__ = (
        sa.UniqueConstraint("month", "installation_id", "repo", "pr_number", "kind"),
        sa.Index("ix_usage_records_month_installation", "month", "installation_id"),
    )

    id: Mapped[int] = mapped_column(sa.Integer, primary_key=True)
    #: ``YYYY-MM``, UTC.
    month: Mapped[str] = mapped_column(sa.String(7))
    installation_id: Mapped[int] = mapped_column(sa.BigInteger)
    #: ``owner/name``, lower-cased.
    repo: Mapped[str] = mapped_column(sa.String(201))
    pr_number: Mapped[int] = mapped_column(sa.BigInteger)
    kind: Mapped[str] = mapped_column(sa.String(16))
    prompt_tokens: Mapped[int] = mapped_column(sa.BigInteger, default=0)
    completion_tokens: Mapped[int] = mapped_column(sa.BigInteger, default=0)
    cached_tokens: Mapped[int] = mapped_column(sa.BigInteger, default=0)
    requests: Mapped[int] = mapped_column(sa.Integer, default=0)
    updated_at: Mapped[dt.datetime] = mapped_column(sa.DateTime(timezone=True), default=utcnow)


class BudgetNotice(Base):
    __tablename__ = "budget_notices"
    __table_args__ = (sa.UniqueConstraint("repo", "pr_number", "month"),)

    id: Mapped[int] = mapped_column(sa.Integer, primary_key=True)
    installation_id: Mapped[int] = mapped_column(sa.BigInteger)
    repo: Mapped[str] = mapped_column(sa.String(201))
    pr_number: Mapped[int] = mapped_column(sa.BigInteger)
    month: Mapped[str] = mapped_column(sa.String(7))
    head_sha: Mapped[str] = mapped_column(sa.String(64))
    kind: Mapped[str] = mapped_column(sa.String(16))
    created_at: Mapped[dt.datetime] = mapped_column(sa.DateTime(timezone=True), default=utcnow)


class JobRecord(Base):
    __tablename__ = "job_records"

    id: Mapped[int] = mapped_column(sa.Integer, primary_key=True)
    kind: Mapped[str] = mapped_column(sa.String(16))
    #: ``posted``, ``skipped``, ``superseded``, ``failed`` or ``retried``.
    outcome: Mapped[str] = mapped_column(sa.String(16))
    #: The job's own word for it (``nothing-new``, ``gone``, ``budget``…).
    status: Mapped[str] = mapped_column(sa.String(32))
    installation_id: Mapped[int | None] = mapped_column(sa.BigInteger, nullable=True)
    repo: Mapped[str | None] = mapped_column(sa.String(201), nullable=True)
    pr_number: Mapped[int | None] = mapped_column(sa.BigInteger, nullable=True)
    head_sha: Mapped[str | None] = mapped_column(sa.String(64), nullable=True)
    delivery_id: Mapped[str | None] = mapped_column(sa.String(200), nullable=True)
    job_id: Mapped[str | None] = mapped_column(sa.String(64), nullable=True)
    seconds: Mapped[float | None] = mapped_column(sa.Float, nullable=True)
    detail: Mapped[str] = mapped_column(sa.Text, default="")
    finished_at: Mapped[dt.datetime] = mapped_column(
        sa.DateTime(timezone=True), default=utcnow, index=True
    )

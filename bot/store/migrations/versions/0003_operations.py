"""Operating the App: model usage by month, budget notices, finished jobs.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "usage_records",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("month", sa.String(7), nullable=False),
        sa.Column("installation_id", sa.BigInteger(), nullable=False),
        sa.Column("repo", sa.String(201), nullable=False),
        sa.Column("pr_number", sa.BigInteger(), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("prompt_tokens", sa.BigInteger(), nullable=False),
        sa.Column("completion_tokens", sa.BigInteger(), nullable=False),
        sa.Column("cached_tokens", sa.BigInteger(), nullable=False),
        sa.Column("requests", sa.Integer(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_usage_records")),
        sa.UniqueConstraint(
            "month",
            "installation_id",
            "repo",
            "pr_number",
            "kind",
            name=op.f("uq_usage_records_month_installation_id_repo_pr_number_kind"),
        ),
    )
    op.create_index(
        "ix_usage_records_month_installation", "usage_records", ["month", "installation_id"]
    )
    op.create_table(
        "budget_notices",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("installation_id", sa.BigInteger(), nullable=False),
        sa.Column("repo", sa.String(201), nullable=False),
        sa.Column("pr_number", sa.BigInteger(), nullable=False),
        sa.Column("month", sa.String(7), nullable=False),
        sa.Column("head_sha", sa.String(64), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_budget_notices")),
        sa.UniqueConstraint(
            "repo", "pr_number", "month", name=op.f("uq_budget_notices_repo_pr_number_month")
        ),
    )
    op.create_table(
        "job_records",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("outcome", sa.String(16), nullable=False),
        sa.Column("status", sa.String(32), nullable=False),
        sa.Column("installation_id", sa.BigInteger(), nullable=True),
        sa.Column("repo", sa.String(201), nullable=True),
        sa.Column("pr_number", sa.BigInteger(), nullable=True),
        sa.Column("head_sha", sa.String(64), nullable=True),
        sa.Column("delivery_id", sa.String(200), nullable=True),
        sa.Column("job_id", sa.String(64), nullable=True),
        sa.Column("seconds", sa.Float(), nullable=True),
        sa.Column("detail", sa.Text(), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_job_records")),
    )
    op.create_index(op.f("ix_job_records_finished_at"), "job_records", ["finished_at"])


def downgrade() -> None:
    op.drop_index(op.f("ix_job_records_finished_at"), table_name="job_records")
    op.drop_table("job_records")
    op.drop_table("budget_notices")
    op.drop_index("ix_usage_records_month_installation", table_name="usage_records")
    op.drop_table("usage_records")

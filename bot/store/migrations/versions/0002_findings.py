"""Findings GitNeural posted on pull requests, and their dismissals.

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "findings",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("repository_id", sa.BigInteger(), nullable=False),
        sa.Column("repository", sa.String(200), nullable=False),
        sa.Column("pr_number", sa.Integer(), nullable=False),
        sa.Column("fingerprint", sa.String(64), nullable=False),
        sa.Column("head_sha", sa.String(64), nullable=False),
        sa.Column("comment_id", sa.BigInteger(), nullable=True),
        sa.Column("thread_node_id", sa.String(100), nullable=True),
        sa.Column("path", sa.Text(), nullable=False),
        sa.Column("side", sa.String(8), nullable=False),
        sa.Column("start_line", sa.Integer(), nullable=False),
        sa.Column("end_line", sa.Integer(), nullable=False),
        sa.Column("severity", sa.String(16), nullable=True),
        sa.Column("title", sa.Text(), nullable=True),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("dismissal_reason", sa.String(32), nullable=True),
        sa.Column("dismissed_by", sa.String(100), nullable=True),
        sa.Column("dismissed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("dismissed_comment_id", sa.BigInteger(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_findings")),
        sa.UniqueConstraint(
            "repository_id",
            "pr_number",
            "fingerprint",
            name=op.f("uq_findings_repository_id_pr_number_fingerprint"),
        ),
    )
    op.create_index(
        "ix_findings_repository_fingerprint", "findings", ["repository_id", "fingerprint"]
    )


def downgrade() -> None:
    op.drop_index("ix_findings_repository_fingerprint", table_name="findings")
    op.drop_table("findings")

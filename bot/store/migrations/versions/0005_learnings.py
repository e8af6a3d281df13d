"""Learnings: rules taught with ``/learn`` for a repository, and forgotten with ``/forget``.

Revision ID: 0005
Revises: 0003 (only ``down_revision`` names the revision before: re-chained at merges)
Create Date: 2026-12-03
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "learnings",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("repository_id", sa.BigInteger(), nullable=False),
        sa.Column("repository", sa.String(200), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("path", sa.Text(), nullable=True),
        sa.Column("author", sa.String(100), nullable=False),
        sa.Column("pr_number", sa.Integer(), nullable=False),
        sa.Column("comment_id", sa.BigInteger(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("forgotten_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("forgotten_by", sa.String(100), nullable=True),
        sa.Column("forgotten_comment_id", sa.BigInteger(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_learnings")),
        sa.UniqueConstraint(
            "repository_id", "comment_id", name=op.f("uq_learnings_repository_id_comment_id")
        ),
    )
    op.create_index(
        "ix_learnings_repository_forgotten", "learnings", ["repository_id", "forgotten_at"]
    )


def downgrade() -> None:
    op.drop_index("ix_learnings_repository_forgotten", table_name="learnings")
    op.drop_table("learnings")

"""Findings fixed by a later push, and threads GitNeural resolved itself.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-03

A finding's ``state`` gains ``fixed`` (a push changed its lines and the next review no
longer reported it) and its dismissal reasons gain ``resolved`` and ``thumbs_down``
(strings: no schema change). New columns: the head that fixed it and when, and when
GitNeural resolved its thread (once: a thread a human reopens stays open).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("findings") as batch:
        batch.add_column(sa.Column("fixed_in", sa.String(64), nullable=True))
        batch.add_column(sa.Column("fixed_at", sa.DateTime(timezone=True), nullable=True))
        batch.add_column(sa.Column("auto_resolved_at", sa.DateTime(timezone=True), nullable=True))
    op.create_index("ix_findings_pull_state", "findings", ["repository_id", "pr_number", "state"])


def downgrade() -> None:
    op.drop_index("ix_findings_pull_state", table_name="findings")
    with op.batch_alter_table("findings") as batch:
        batch.drop_column("auto_resolved_at")
        batch.drop_column("fixed_at")
        batch.drop_column("fixed_in")

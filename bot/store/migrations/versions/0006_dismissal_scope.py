"""Where a dismissal holds: the whole repository, or the pull request it was made on.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-02

A finding dismissed by someone with write access is held back on every PR of the
repository; one dismissed by a PR's author without write access, on that PR only. Every
dismissal recorded before this revision keeps the meaning it had: ``repository``.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("findings") as batch:
        batch.add_column(sa.Column("dismissal_scope", sa.String(16), nullable=True))
    findings = sa.table("findings", sa.column("state", sa.String), sa.column("dismissal_scope"))
    op.execute(
        findings.update()
        .where(findings.c.state == "dismissed")
        .values(dismissal_scope="repository")
    )


def downgrade() -> None:
    # Dismissals that held for one PR only would silence the finding repository-wide
    # under the older code: they are forgotten (the finding stands open again).
    findings = sa.table(
        "findings",
        sa.column("state", sa.String),
        sa.column("dismissal_scope", sa.String),
        sa.column("dismissal_reason", sa.String),
        sa.column("dismissed_by", sa.String),
        sa.column("dismissed_at", sa.DateTime),
        sa.column("dismissed_comment_id", sa.BigInteger),
    )
    op.execute(
        findings.update()
        .where(findings.c.dismissal_scope == "pull_request")
        .values(
            state="open",
            dismissal_reason=None,
            dismissed_by=None,
            dismissed_at=None,
            dismissed_comment_id=None,
        )
    )
    with op.batch_alter_table("findings") as batch:
        batch.drop_column("dismissal_scope")

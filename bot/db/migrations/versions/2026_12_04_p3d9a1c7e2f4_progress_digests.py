"""The Mini App: progress digests kept in the database (a restart or another instance reuses them)

Revision ID: p3d9a1c7e2f4
Revises: m7c41e9a2b05
Create Date: 2026-12-04 19:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "p3d9a1c7e2f4"
down_revision: str | None = "m7c41e9a2b05"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "progress_digests",
        sa.Column("user_id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("zone", sa.String(length=64), nullable=False),
        sa.Column("mark", sa.Text(), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_progress_digests_user_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("user_id", name=op.f("pk_progress_digests")),
    )


def downgrade() -> None:
    op.drop_table("progress_digests")

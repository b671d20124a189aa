"""processed updates

Revision ID: f47faa571c9a
Revises: a77edda660a4
Create Date: 2026-11-30 10:25:48.273818
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "f47faa571c9a"
down_revision: str | None = "a77edda660a4"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:

    op.create_table(
        "processed_updates",
        sa.Column("update_id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("received_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("update_id", name=op.f("pk_processed_updates")),
    )


def downgrade() -> None:

    op.drop_table("processed_updates")

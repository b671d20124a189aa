"""inbox: raw updates kept until handled (replaces processed_updates)

Revision ID: b3f1c2d4e5a6
Revises: 5c1e0a9b7d21
Create Date: 2026-12-01 09:10:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "b3f1c2d4e5a6"
down_revision: str | None = "5c1e0a9b7d21"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "inbox",
        sa.Column("update_id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("payload", sa.Text(), nullable=True),
        sa.Column("host", sa.String(length=64), nullable=True),
        sa.Column("received_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("done_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("update_id", name=op.f("pk_inbox")),
    )
    op.create_index("ix_inbox_pending", "inbox", ["done_at", "received_at"])
    # ids already taken stay taken (a webhook redelivery is still dropped)
    op.execute(
        "INSERT INTO inbox (update_id, received_at, done_at) "
        "SELECT update_id, received_at, received_at FROM processed_updates"
    )
    op.drop_table("processed_updates")


def downgrade() -> None:
    op.create_table(
        "processed_updates",
        sa.Column("update_id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("received_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("update_id", name=op.f("pk_processed_updates")),
    )
    op.execute("INSERT INTO processed_updates (update_id, received_at) SELECT update_id, received_at FROM inbox")
    op.drop_index("ix_inbox_pending", table_name="inbox")
    op.drop_table("inbox")

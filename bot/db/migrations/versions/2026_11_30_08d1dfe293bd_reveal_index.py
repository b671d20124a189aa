"""reveal index

Revision ID: 08d1dfe293bd
Revises: f47faa571c9a
Create Date: 2026-11-30 11:38:42.405920
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "08d1dfe293bd"
down_revision: str | None = "f47faa571c9a"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:

    with op.batch_alter_table("chats", schema=None) as batch_op:
        batch_op.create_index(
            "ix_chats_reveal",
            ["reveal_minute"],
            unique=False,
            sqlite_where=sa.text("reveal_minute IS NOT NULL"),
            postgresql_where=sa.text("reveal_minute IS NOT NULL"),
        )


def downgrade() -> None:

    with op.batch_alter_table("chats", schema=None) as batch_op:
        batch_op.drop_index(
            "ix_chats_reveal",
            sqlite_where=sa.text("reveal_minute IS NOT NULL"),
            postgresql_where=sa.text("reveal_minute IS NOT NULL"),
        )

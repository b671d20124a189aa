"""interviews.deep: a mock interview that asks the bank's follow-up after each answer

Revision ID: d1e2e9f0a1b2
Revises: b3f1c2d4e5a6
Create Date: 2026-12-02 01:10:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "d1e2e9f0a1b2"
down_revision: str | None = "b3f1c2d4e5a6"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("interviews") as batch:
        batch.add_column(sa.Column("deep", sa.Boolean(), server_default=sa.false(), nullable=False))


def downgrade() -> None:
    with op.batch_alter_table("interviews") as batch:
        batch.drop_column("deep")

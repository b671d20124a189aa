"""LLM examiner cache per user: llm_grades.user_id, so /forget deletes the model's quotes (issue 29)

The cached replies of the previous prompt (no user) are dropped: the new prompt version never reads
them, and they may quote answers of users who have since said /forget.

Revision ID: e6f7a8b9c0d1
Revises: d5e6f7a8b9c0
Create Date: 2026-12-06 18:30:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "e6f7a8b9c0d1"
down_revision: str | None = "d5e6f7a8b9c0"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute("DELETE FROM llm_grades")
    with op.batch_alter_table("llm_grades", schema=None) as batch_op:
        batch_op.add_column(sa.Column("user_id", sa.BigInteger(), nullable=True))
        batch_op.create_index("ix_llm_grades_user_id", ["user_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("llm_grades", schema=None) as batch_op:
        batch_op.drop_index("ix_llm_grades_user_id")
        batch_op.drop_column("user_id")

"""llm examiner: cached results, per-user daily usage, interview follow-ups

Revision ID: 5c1e0a9b7d21
Revises: 08d1dfe293bd
Create Date: 2026-12-01 07:30:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "5c1e0a9b7d21"
down_revision: str | None = "08d1dfe293bd"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "llm_grades",
        sa.Column("key", sa.String(length=64), nullable=False),
        sa.Column("result", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("key", name=op.f("pk_llm_grades")),
    )
    op.create_table(
        "llm_usage",
        sa.Column("user_id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("day", sa.String(length=10), nullable=False),
        sa.Column("count", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("user_id", "day", name=op.f("pk_llm_usage")),
    )
    with op.batch_alter_table("interview_items") as batch:
        batch.add_column(sa.Column("follow_up", sa.Text(), nullable=True))
        batch.add_column(sa.Column("follow_up_answer", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("interview_items") as batch:
        batch.drop_column("follow_up_answer")
        batch.drop_column("follow_up")
    op.drop_table("llm_usage")
    op.drop_table("llm_grades")

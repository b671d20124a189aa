"""Disputes: «Это не ошибка» on a charge of the grader (issue 28)

Revision ID: d5e6f7a8b9c0
Revises: p3d9a1c7e2f4
Create Date: 2026-12-06 18:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "d5e6f7a8b9c0"
down_revision: str | None = "p3d9a1c7e2f4"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "disputes",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("answer_id", sa.BigInteger(), nullable=False),
        sa.Column("user_id", sa.BigInteger(), nullable=False),
        sa.Column("question_id", sa.String(length=64), nullable=False),
        sa.Column("charge", sa.String(length=8), nullable=False),
        sa.Column("claim", sa.Text(), nullable=False),
        sa.Column("sentence", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["answer_id"], ["answers.id"], name=op.f("fk_disputes_answer_id_answers"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name=op.f("fk_disputes_user_id_users"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_disputes")),
        sa.UniqueConstraint("answer_id", "charge", name="uq_disputes_answer_charge"),
    )
    with op.batch_alter_table("disputes", schema=None) as batch_op:
        batch_op.create_index("ix_disputes_question", ["question_id"], unique=False)
        batch_op.create_index("ix_disputes_user", ["user_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("disputes", schema=None) as batch_op:
        batch_op.drop_index("ix_disputes_user")
        batch_op.drop_index("ix_disputes_question")
    op.drop_table("disputes")

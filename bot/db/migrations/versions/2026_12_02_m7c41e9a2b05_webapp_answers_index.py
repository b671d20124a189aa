"""The Mini App: indexes on answers (user_id, id) for «my answers» and (user_id, created_at) for the heatmap,
(user_id, question_id, covered) for the weakest key points

Revision ID: m7c41e9a2b05
Revises: v7c41e9a2b3d
Create Date: 2026-12-02 01:20:00
"""

from collections.abc import Sequence

from alembic import op

revision: str = "m7c41e9a2b05"
down_revision: str | None = "v7c41e9a2b3d"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("answers", schema=None) as batch_op:
        batch_op.create_index("ix_answers_user_newest", ["user_id", "id"], unique=False)
        batch_op.create_index("ix_answers_user_created", ["user_id", "created_at"], unique=False)
        batch_op.create_index("ix_answers_user_covered", ["user_id", "question_id", "covered"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("answers", schema=None) as batch_op:
        batch_op.drop_index("ix_answers_user_covered")
        batch_op.drop_index("ix_answers_user_created")
        batch_op.drop_index("ix_answers_user_newest")

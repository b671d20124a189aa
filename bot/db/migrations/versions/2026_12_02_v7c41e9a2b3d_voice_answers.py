"""voice answers: the voice's file id, length, STT backend and transcript message on answers; stt_usage

Revision ID: v7c41e9a2b3d
Revises: d1e2e9f0a1b2
Create Date: 2026-12-02 01:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "v7c41e9a2b3d"
down_revision: str | None = "d1e2e9f0a1b2"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("answers") as batch:
        batch.add_column(sa.Column("voice_file_id", sa.String(length=256), nullable=True))
        batch.add_column(sa.Column("voice_seconds", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("stt_backend", sa.String(length=16), nullable=True))
        batch.add_column(sa.Column("transcript_message_id", sa.BigInteger(), nullable=True))
        batch.add_column(sa.Column("corrects_id", sa.BigInteger(), nullable=True))
    op.create_index("ix_answers_chat_transcript", "answers", ["chat_id", "transcript_message_id"])
    op.create_table(
        "stt_usage",
        sa.Column("user_id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("day", sa.String(length=10), nullable=False),
        sa.Column("count", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("user_id", "day", name=op.f("pk_stt_usage")),
    )


def downgrade() -> None:
    op.drop_table("stt_usage")
    op.drop_index("ix_answers_chat_transcript", table_name="answers")
    with op.batch_alter_table("answers") as batch:
        batch.drop_column("corrects_id")
        batch.drop_column("voice_seconds")
        batch.drop_column("voice_file_id")
        batch.drop_column("stt_backend")
        batch.drop_column("transcript_message_id")

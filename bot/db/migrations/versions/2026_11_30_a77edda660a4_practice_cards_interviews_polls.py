"""practice: cards, interviews, polls

Revision ID: a77edda660a4
Revises: e7ad51ab10ab
Create Date: 2026-11-30 10:19:40.824208
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "a77edda660a4"
down_revision: str | None = "e7ad51ab10ab"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:

    op.create_table(
        "polls",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("chat_id", sa.BigInteger(), nullable=False),
        sa.Column("message_id", sa.BigInteger(), nullable=True),
        sa.Column("term_id", sa.String(length=64), nullable=False),
        sa.Column("correct_option", sa.Integer(), nullable=False),
        sa.Column("source", sa.String(length=16), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_polls")),
    )
    op.create_table(
        "cards",
        sa.Column("user_id", sa.BigInteger(), nullable=False),
        sa.Column("question_id", sa.String(length=64), nullable=False),
        sa.Column("state", sa.Text(), nullable=False),
        sa.Column("due", sa.DateTime(timezone=True), nullable=False),
        sa.Column("reps", sa.Integer(), nullable=False),
        sa.Column("last_rating", sa.Integer(), nullable=True),
        sa.Column("last_review", sa.DateTime(timezone=True), nullable=True),
        sa.Column("prev_state", sa.Text(), nullable=True),
        sa.Column("auto_rated", sa.Boolean(), nullable=False),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name=op.f("fk_cards_user_id_users"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("user_id", "question_id", name=op.f("pk_cards")),
    )
    with op.batch_alter_table("cards", schema=None) as batch_op:
        batch_op.create_index("ix_cards_user_due", ["user_id", "due"], unique=False)

    op.create_table(
        "interviews",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("user_id", sa.BigInteger(), nullable=False),
        sa.Column("chat_id", sa.BigInteger(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("topics", sa.String(length=256), nullable=False),
        sa.Column("size", sa.Integer(), nullable=False),
        sa.Column("time_limit", sa.Integer(), nullable=True),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_interviews_user_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_interviews")),
    )
    with op.batch_alter_table("interviews", schema=None) as batch_op:
        batch_op.create_index("ix_interviews_open", ["user_id", "chat_id", "status"], unique=False)

    op.create_table(
        "poll_answers",
        sa.Column("poll_id", sa.String(length=64), nullable=False),
        sa.Column("user_id", sa.BigInteger(), nullable=False),
        sa.Column("chat_id", sa.BigInteger(), nullable=False),
        sa.Column("option", sa.Integer(), nullable=False),
        sa.Column("correct", sa.Boolean(), nullable=False),
        sa.Column("answered_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["poll_id"], ["polls.id"], name=op.f("fk_poll_answers_poll_id_polls"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("poll_id", "user_id", name=op.f("pk_poll_answers")),
    )
    with op.batch_alter_table("poll_answers", schema=None) as batch_op:
        batch_op.create_index("ix_poll_answers_chat", ["chat_id", "answered_at"], unique=False)

    op.create_table(
        "interview_items",
        sa.Column("interview_id", sa.BigInteger(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("question_id", sa.String(length=64), nullable=False),
        sa.Column("ask_id", sa.BigInteger(), nullable=True),
        sa.Column("asked_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("answered_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("coverage", sa.Float(), nullable=True),
        sa.Column("self_grade", sa.Integer(), nullable=True),
        sa.Column("skipped", sa.Boolean(), nullable=False),
        sa.ForeignKeyConstraint(
            ["interview_id"],
            ["interviews.id"],
            name=op.f("fk_interview_items_interview_id_interviews"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("interview_id", "position", name=op.f("pk_interview_items")),
    )
    with op.batch_alter_table("answers", schema=None) as batch_op:
        batch_op.add_column(sa.Column("self_grade", sa.Integer(), nullable=True))


def downgrade() -> None:

    with op.batch_alter_table("answers", schema=None) as batch_op:
        batch_op.drop_column("self_grade")

    op.drop_table("interview_items")
    with op.batch_alter_table("poll_answers", schema=None) as batch_op:
        batch_op.drop_index("ix_poll_answers_chat")

    op.drop_table("poll_answers")
    with op.batch_alter_table("interviews", schema=None) as batch_op:
        batch_op.drop_index("ix_interviews_open")

    op.drop_table("interviews")
    with op.batch_alter_table("cards", schema=None) as batch_op:
        batch_op.drop_index("ix_cards_user_due")

    op.drop_table("cards")
    op.drop_table("polls")

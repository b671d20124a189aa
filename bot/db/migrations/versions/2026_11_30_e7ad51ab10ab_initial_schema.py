"""initial schema

Revision ID: e7ad51ab10ab
Revises:
Create Date: 2026-11-30 09:57:18.004142
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "e7ad51ab10ab"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:

    op.create_table(
        "chats",
        sa.Column("id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("type", sa.String(length=16), nullable=False),
        sa.Column("title", sa.String(length=256), nullable=True),
        sa.Column("language", sa.String(length=8), nullable=True),
        sa.Column("timezone", sa.String(length=64), nullable=True),
        sa.Column("topic_filter", sa.String(length=32), nullable=True),
        sa.Column("pending_ask_id", sa.BigInteger(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("push_enabled", sa.Boolean(), nullable=False),
        sa.Column("push_minute", sa.Integer(), nullable=True),
        sa.Column("push_weekdays_only", sa.Boolean(), nullable=False),
        sa.Column("push_kind", sa.String(length=16), nullable=False),
        sa.Column("reveal_minute", sa.Integer(), nullable=True),
        sa.Column("next_push_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("next_push_date", sa.Date(), nullable=True),
        sa.Column("push_stopped_reason", sa.String(length=64), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_chats")),
    )
    with op.batch_alter_table("chats", schema=None) as batch_op:
        batch_op.create_index("ix_chats_due", ["push_enabled", "next_push_at"], unique=False)

    op.create_table(
        "reveals",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("question_id", sa.String(length=64), nullable=False),
        sa.Column("chat_id", sa.BigInteger(), nullable=False),
        sa.Column("user_id", sa.BigInteger(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_reveals")),
    )
    with op.batch_alter_table("reveals", schema=None) as batch_op:
        batch_op.create_index("ix_reveals_user", ["user_id"], unique=False)

    op.create_table(
        "users",
        sa.Column("id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("first_name", sa.String(length=128), nullable=False),
        sa.Column("username", sa.String(length=64), nullable=True),
        sa.Column("language", sa.String(length=8), nullable=True),
        sa.Column("tg_language", sa.String(length=16), nullable=True),
        sa.Column("timezone", sa.String(length=64), nullable=True),
        sa.Column("board_opt_out", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_seen_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_users")),
    )
    op.create_table(
        "asks",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("chat_id", sa.BigInteger(), nullable=False),
        sa.Column("user_id", sa.BigInteger(), nullable=True),
        sa.Column("question_id", sa.String(length=64), nullable=False),
        sa.Column("message_id", sa.BigInteger(), nullable=True),
        sa.Column("source", sa.String(length=16), nullable=False),
        sa.Column("asked_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["chat_id"], ["chats.id"], name=op.f("fk_asks_chat_id_chats"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_asks")),
    )
    with op.batch_alter_table("asks", schema=None) as batch_op:
        batch_op.create_index("ix_asks_chat_message", ["chat_id", "message_id"], unique=False)
        batch_op.create_index("ix_asks_chat_question", ["chat_id", "question_id"], unique=False)

    op.create_table(
        "chat_seen",
        sa.Column("chat_id", sa.BigInteger(), nullable=False),
        sa.Column("question_id", sa.String(length=64), nullable=False),
        sa.Column("count", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(["chat_id"], ["chats.id"], name=op.f("fk_chat_seen_chat_id_chats"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("chat_id", "question_id", name=op.f("pk_chat_seen")),
    )
    op.create_table(
        "deliveries",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("chat_id", sa.BigInteger(), nullable=False),
        sa.Column("local_date", sa.Date(), nullable=False),
        sa.Column("due_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("claimed_by", sa.String(length=64), nullable=True),
        sa.Column("lease_until", sa.DateTime(timezone=True), nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("question_id", sa.String(length=64), nullable=True),
        sa.Column("message_id", sa.BigInteger(), nullable=True),
        sa.Column("sent_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("revealed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("error", sa.String(length=200), nullable=True),
        sa.ForeignKeyConstraint(
            ["chat_id"], ["chats.id"], name=op.f("fk_deliveries_chat_id_chats"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_deliveries")),
        sa.UniqueConstraint("chat_id", "local_date", name="uq_deliveries_chat_date"),
    )
    with op.batch_alter_table("deliveries", schema=None) as batch_op:
        batch_op.create_index("ix_deliveries_status_lease", ["status", "lease_until"], unique=False)

    op.create_table(
        "answers",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("ask_id", sa.BigInteger(), nullable=True),
        sa.Column("question_id", sa.String(length=64), nullable=False),
        sa.Column("user_id", sa.BigInteger(), nullable=False),
        sa.Column("chat_id", sa.BigInteger(), nullable=False),
        sa.Column("message_id", sa.BigInteger(), nullable=True),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("edited", sa.Boolean(), nullable=False),
        sa.Column("coverage", sa.Float(), nullable=True),
        sa.Column("covered", sa.String(length=32), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["ask_id"], ["asks.id"], name=op.f("fk_answers_ask_id_asks"), ondelete="SET NULL"),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name=op.f("fk_answers_user_id_users"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_answers")),
    )
    with op.batch_alter_table("answers", schema=None) as batch_op:
        batch_op.create_index("ix_answers_chat_message", ["chat_id", "message_id"], unique=False)
        batch_op.create_index("ix_answers_user_question", ["user_id", "question_id"], unique=False)


def downgrade() -> None:

    with op.batch_alter_table("answers", schema=None) as batch_op:
        batch_op.drop_index("ix_answers_user_question")
        batch_op.drop_index("ix_answers_chat_message")

    op.drop_table("answers")
    with op.batch_alter_table("deliveries", schema=None) as batch_op:
        batch_op.drop_index("ix_deliveries_status_lease")

    op.drop_table("deliveries")
    op.drop_table("chat_seen")
    with op.batch_alter_table("asks", schema=None) as batch_op:
        batch_op.drop_index("ix_asks_chat_question")
        batch_op.drop_index("ix_asks_chat_message")

    op.drop_table("asks")
    op.drop_table("users")
    with op.batch_alter_table("reveals", schema=None) as batch_op:
        batch_op.drop_index("ix_reveals_user")

    op.drop_table("reveals")
    with op.batch_alter_table("chats", schema=None) as batch_op:
        batch_op.drop_index("ix_chats_due")

    op.drop_table("chats")

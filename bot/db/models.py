"""Typed SQLAlchemy 2 models. Questions are referred to by their bank id (text), never by row number,
so editing the bank never misattributes history."""

from __future__ import annotations

from datetime import UTC, date, datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import (
    BigInteger,
    Boolean,
    Date,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Text,
    TypeDecorator,
    UniqueConstraint,
    false,
    text,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class UTCDateTime(TypeDecorator[datetime]):
    """Aware UTC datetimes on every backend (SQLite stores them naive)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given to a UTC column")
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        assert isinstance(value, datetime)
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class BoundedString(TypeDecorator[str]):
    """A String(n) that stores what fits: NUL characters dropped (PostgreSQL refuses them) and the
    value cut to the column's length (PostgreSQL refuses longer ones; SQLite would keep them), so a
    45-word topic list or a 200-character username cannot turn into "database unavailable"."""

    impl = String
    cache_ok = True

    def process_bind_param(self, value: str | None, dialect: Dialect) -> str | None:
        if value is None:
            return None
        value = value.replace("\x00", "")
        length = getattr(self.impl, "length", None)
        return value[:length] if length else value


class SafeText(TypeDecorator[str]):
    """Text without NUL characters (PostgreSQL refuses them in text)."""

    impl = Text
    cache_ok = True

    def process_bind_param(self, value: str | None, dialect: Dialect) -> str | None:
        return None if value is None else value.replace("\x00", "")


def utcnow() -> datetime:
    return datetime.now(UTC)


# The closed sets of values some columns hold. StrEnum members are the stored strings themselves.


class DeliveryStatus(StrEnum):
    """``deliveries.status``."""

    CLAIMED = "claimed"
    SENT = "sent"
    FAILED = "failed"
    SKIPPED = "skipped"  # too late to send (or the chat's push was switched off meanwhile)
    UNKNOWN = "unknown"  # the send timed out: maybe delivered, never retried


class InterviewStatus(StrEnum):
    """``interviews.status``."""

    OPEN = "open"
    FINISHED = "finished"
    ABANDONED = "abandoned"


class PushKind(StrEnum):
    """``chats.push_kind``: what the daily push sends."""

    QUESTION = "question"
    QUIZ = "quiz"


class AskSource(StrEnum):
    """``asks.source``: what showed the question (``polls.source`` uses QUIZ and PUSH)."""

    Q = "q"  # /q, or a least-seen pick
    TOPIC = "topic"  # a pick from a topic
    NUMBER = "number"  # /q 12
    ID = "id"  # /q q463
    MATCH = "match"  # /q with words that matched a question
    NEXT = "next"  # the «next question» button
    SEARCH = "search"  # a /search result
    BUTTON = "button"  # a question's button (related questions, ...)
    LINK = "link"  # a deep link (/start q463)
    REVIEW = "review"  # /review: a due spaced-repetition card
    INTERVIEW = "interview"  # a mock interview's question
    PUSH = "push"  # the daily push
    QUIZ = "quiz"  # a /quiz poll
    TERMINAL = "terminal"  # the terminal practice loop
    WEBAPP = "webapp"  # «Спросить меня в чате» in the Mini App


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)


class User(Base):
    __tablename__ = "users"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    first_name: Mapped[str] = mapped_column(BoundedString(128), default="")
    username: Mapped[str | None] = mapped_column(BoundedString(64))
    language: Mapped[str | None] = mapped_column(BoundedString(8))  # chosen with /lang
    tg_language: Mapped[str | None] = mapped_column(BoundedString(16))  # from Telegram
    timezone: Mapped[str | None] = mapped_column(BoundedString(64))
    board_opt_out: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    last_seen_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class Chat(Base):
    __tablename__ = "chats"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    type: Mapped[str] = mapped_column(BoundedString(16))
    title: Mapped[str | None] = mapped_column(BoundedString(256))
    language: Mapped[str | None] = mapped_column(BoundedString(8))
    timezone: Mapped[str | None] = mapped_column(BoundedString(64))
    topic_filter: Mapped[str | None] = mapped_column(BoundedString(32))
    # The question asked last in this chat; the next plain message answers it (private chats).
    pending_ask_id: Mapped[int | None] = mapped_column(BigInteger)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    # Daily push (the schedule lives here; one recurring tick reads it)
    push_enabled: Mapped[bool] = mapped_column(Boolean, default=False)
    push_minute: Mapped[int | None] = mapped_column(Integer)  # minutes after local midnight
    push_weekdays_only: Mapped[bool] = mapped_column(Boolean, default=False)
    push_kind: Mapped[str] = mapped_column(BoundedString(16), default=PushKind.QUESTION)  # a PushKind
    reveal_minute: Mapped[int | None] = mapped_column(Integer)  # optional evening reveal
    next_push_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    next_push_date: Mapped[date | None] = mapped_column(Date)
    push_stopped_reason: Mapped[str | None] = mapped_column(BoundedString(64))

    __table_args__ = (
        Index("ix_chats_due", "push_enabled", "next_push_at"),
        # the few groups with an evening reveal, found without scanning every delivery
        Index(
            "ix_chats_reveal",
            "reveal_minute",
            sqlite_where=text("reveal_minute IS NOT NULL"),
            postgresql_where=text("reveal_minute IS NOT NULL"),
        ),
    )


class Ask(Base):
    """A question shown in a chat (by /q, a button, a push, an interview, ...)."""

    __tablename__ = "asks"

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True)
    chat_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("chats.id", ondelete="CASCADE"))
    user_id: Mapped[int | None] = mapped_column(BigInteger)  # who asked for it; None for pushes
    question_id: Mapped[str] = mapped_column(BoundedString(64))
    message_id: Mapped[int | None] = mapped_column(BigInteger)
    source: Mapped[str] = mapped_column(BoundedString(16), default=AskSource.Q)  # an AskSource
    asked_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)

    __table_args__ = (
        Index("ix_asks_chat_message", "chat_id", "message_id"),
        Index("ix_asks_chat_question", "chat_id", "question_id"),
    )


class Answer(Base):
    __tablename__ = "answers"

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True)
    ask_id: Mapped[int | None] = mapped_column(BigInteger, ForeignKey("asks.id", ondelete="SET NULL"))
    question_id: Mapped[str] = mapped_column(BoundedString(64))
    user_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("users.id", ondelete="CASCADE"))
    chat_id: Mapped[int] = mapped_column(BigInteger)
    message_id: Mapped[int | None] = mapped_column(BigInteger)
    text: Mapped[str] = mapped_column(SafeText)
    edited: Mapped[bool] = mapped_column(Boolean, default=False)
    coverage: Mapped[float | None] = mapped_column(Float)
    covered: Mapped[str | None] = mapped_column(BoundedString(32))  # e.g. "1,3" — key point indexes
    self_grade: Mapped[int | None] = mapped_column(Integer)  # 1 не знал, 2 частично, 3 знал
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    # A voice answer (``text`` is its transcript): Telegram's file id, its length, the STT backend,
    # and the bot's message that shows the transcript (a text reply to it corrects the transcript)
    voice_file_id: Mapped[str | None] = mapped_column(BoundedString(256))
    voice_seconds: Mapped[int | None] = mapped_column(Integer)
    stt_backend: Mapped[str | None] = mapped_column(BoundedString(16))
    transcript_message_id: Mapped[int | None] = mapped_column(BigInteger)
    corrects_id: Mapped[int | None] = mapped_column(BigInteger)  # the voice answer this text corrects

    __table_args__ = (
        Index("ix_answers_user_question", "user_id", "question_id"),
        Index("ix_answers_chat_message", "chat_id", "message_id"),
        Index("ix_answers_chat_transcript", "chat_id", "transcript_message_id"),
        # the Mini App: «my answers» newest first, paged by id; the answer days of the heatmap
        Index("ix_answers_user_newest", "user_id", "id"),
        Index("ix_answers_user_created", "user_id", "created_at"),
        Index("ix_answers_user_covered", "user_id", "question_id", "covered"),  # the weakest key points
    )


class Reveal(Base):
    __tablename__ = "reveals"

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True)
    question_id: Mapped[str] = mapped_column(BoundedString(64))
    chat_id: Mapped[int] = mapped_column(BigInteger)
    user_id: Mapped[int | None] = mapped_column(BigInteger)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)

    __table_args__ = (Index("ix_reveals_user", "user_id"),)


class ChatSeen(Base):
    """How often each question was shown in a chat: /q picks among the least-seen."""

    __tablename__ = "chat_seen"

    chat_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("chats.id", ondelete="CASCADE"), primary_key=True)
    question_id: Mapped[str] = mapped_column(BoundedString(64), primary_key=True)
    count: Mapped[int] = mapped_column(Integer, default=0)


class Delivery(Base):
    """One daily push: claimed before sending, unique per chat and local date."""

    __tablename__ = "deliveries"

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True)
    chat_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("chats.id", ondelete="CASCADE"))
    local_date: Mapped[date] = mapped_column(Date)
    due_at: Mapped[datetime] = mapped_column(UTCDateTime)
    status: Mapped[str] = mapped_column(BoundedString(16), default=DeliveryStatus.CLAIMED)  # a DeliveryStatus
    claimed_by: Mapped[str | None] = mapped_column(BoundedString(64))
    lease_until: Mapped[datetime | None] = mapped_column(UTCDateTime)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    question_id: Mapped[str | None] = mapped_column(BoundedString(64))
    message_id: Mapped[int | None] = mapped_column(BigInteger)
    sent_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    revealed_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    error: Mapped[str | None] = mapped_column(BoundedString(200))

    __table_args__ = (
        UniqueConstraint("chat_id", "local_date", name="uq_deliveries_chat_date"),
        Index("ix_deliveries_status_lease", "status", "lease_until"),
    )


class Card(Base):
    """A user's spaced-repetition state for one question (FSRS, stored as the library's dict)."""

    __tablename__ = "cards"

    user_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("users.id", ondelete="CASCADE"), primary_key=True)
    question_id: Mapped[str] = mapped_column(BoundedString(64), primary_key=True)
    state: Mapped[str] = mapped_column(SafeText)  # fsrs.Card.to_dict() as JSON
    due: Mapped[datetime] = mapped_column(UTCDateTime)
    reps: Mapped[int] = mapped_column(Integer, default=0)
    last_rating: Mapped[int | None] = mapped_column(Integer)
    last_review: Mapped[datetime | None] = mapped_column(UTCDateTime)
    # the state before the latest review, so a self-assessment can replace the automatic rating
    prev_state: Mapped[str | None] = mapped_column(SafeText)
    auto_rated: Mapped[bool] = mapped_column(Boolean, default=False)

    __table_args__ = (Index("ix_cards_user_due", "user_id", "due"),)


class Interview(Base):
    __tablename__ = "interviews"

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True)
    user_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("users.id", ondelete="CASCADE"))
    chat_id: Mapped[int] = mapped_column(BigInteger)
    status: Mapped[str] = mapped_column(BoundedString(16), default=InterviewStatus.OPEN)  # an InterviewStatus
    topics: Mapped[str] = mapped_column(BoundedString(256), default="")
    size: Mapped[int] = mapped_column(Integer)
    time_limit: Mapped[int | None] = mapped_column(Integer)  # seconds per question
    deep: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())  # bank follow-ups asked
    position: Mapped[int] = mapped_column(Integer, default=0)
    started_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime)

    __table_args__ = (Index("ix_interviews_open", "user_id", "chat_id", "status"),)


class InterviewItem(Base):
    __tablename__ = "interview_items"

    interview_id: Mapped[int] = mapped_column(
        BigInteger, ForeignKey("interviews.id", ondelete="CASCADE"), primary_key=True
    )
    position: Mapped[int] = mapped_column(Integer, primary_key=True)
    question_id: Mapped[str] = mapped_column(BoundedString(64))
    ask_id: Mapped[int | None] = mapped_column(BigInteger)
    asked_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    answered_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    coverage: Mapped[float | None] = mapped_column(Float)
    self_grade: Mapped[int | None] = mapped_column(Integer)  # 1 не знал, 2 частично, 3 знал
    skipped: Mapped[bool] = mapped_column(Boolean, default=False)
    follow_up: Mapped[str | None] = mapped_column(SafeText)  # the LLM examiner's follow-up question, if asked
    follow_up_answer: Mapped[str | None] = mapped_column(SafeText)  # None while awaited or when skipped


class Poll(Base):
    """A quiz poll the bot sent (poll answers only arrive for the bot's own non-anonymous polls)."""

    __tablename__ = "polls"

    id: Mapped[str] = mapped_column(BoundedString(64), primary_key=True)  # Telegram's poll id
    chat_id: Mapped[int] = mapped_column(BigInteger)
    message_id: Mapped[int | None] = mapped_column(BigInteger)
    term_id: Mapped[str] = mapped_column(BoundedString(64))
    correct_option: Mapped[int] = mapped_column(Integer)
    source: Mapped[str] = mapped_column(BoundedString(16), default=AskSource.QUIZ)  # AskSource.QUIZ or PUSH
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class PollAnswer(Base):
    __tablename__ = "poll_answers"

    poll_id: Mapped[str] = mapped_column(
        BoundedString(64), ForeignKey("polls.id", ondelete="CASCADE"), primary_key=True
    )
    user_id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    chat_id: Mapped[int] = mapped_column(BigInteger)
    option: Mapped[int] = mapped_column(Integer)
    correct: Mapped[bool] = mapped_column(Boolean)
    answered_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)

    __table_args__ = (Index("ix_poll_answers_chat", "chat_id", "answered_at"),)


class InboxUpdate(Base):
    """Every update, stored (raw JSON) before Telegram is told it arrived and kept until handled:
    a crash loses none, a redelivered update is handled once. ``payload`` is cleared once done."""

    __tablename__ = "inbox"

    update_id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    payload: Mapped[str | None] = mapped_column(SafeText)
    host: Mapped[str | None] = mapped_column(BoundedString(64))  # the instance that took it
    received_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    done_at: Mapped[datetime | None] = mapped_column(UTCDateTime)

    __table_args__ = (Index("ix_inbox_pending", "done_at", "received_at"),)


class LLMGrade(Base):
    """A cached LLM examiner result, by (user, question id, hash of the answer text, prompt version).
    The model's reply may quote the answer: ``user_id`` lets /forget delete it."""

    __tablename__ = "llm_grades"

    key: Mapped[str] = mapped_column(BoundedString(64), primary_key=True)
    result: Mapped[str] = mapped_column(SafeText)  # the parsed grade as JSON
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    user_id: Mapped[int | None] = mapped_column(BigInteger, index=True)


class LLMUsage(Base):
    """How many LLM gradings a user had on a (UTC) day, for LLM_DAILY_LIMIT."""

    __tablename__ = "llm_usage"

    user_id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    day: Mapped[str] = mapped_column(BoundedString(10), primary_key=True)  # YYYY-MM-DD
    count: Mapped[int] = mapped_column(Integer, default=0)


class SttUsage(Base):
    """How many voice answers a user had transcribed on a (UTC) day, for STT_DAILY_LIMIT. Kept by
    /forget (it holds no content), so forgetting cannot reset the day's limit."""

    __tablename__ = "stt_usage"

    user_id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    day: Mapped[str] = mapped_column(BoundedString(10), primary_key=True)  # YYYY-MM-DD
    count: Mapped[int] = mapped_column(Integer, default=0)


class ProgressDigest(Base):
    """The Mini App's progress digest of a user's answers (per-day counts in one zone, latest grades,
    key points covered), kept so that a restart or another instance does not read every answer again.
    ``mark`` says which answers and card reviews it covers; it is checked against the database on
    every use and extended or made again when they changed. Deleted with the user (/forget)."""

    __tablename__ = "progress_digests"

    user_id: Mapped[int] = mapped_column(
        BigInteger, ForeignKey("users.id", ondelete="CASCADE"), primary_key=True, autoincrement=False
    )
    zone: Mapped[str] = mapped_column(BoundedString(64))  # the zone and slot size the days were counted in
    mark: Mapped[str] = mapped_column(SafeText)  # JSON
    body: Mapped[str] = mapped_column(SafeText)  # JSON
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class Dispute(Base):
    """«Это не ошибка» on a charge of the offline grader: the answer, the charge (``m<i>`` a
    misconception, ``k<i>`` a reversed key point), the claim and the sentence charged — what the
    rubric is fixed from (``interview-bot disputes``). The charge no longer counts in that answer's
    score. Deleted with the user (/forget)."""

    __tablename__ = "disputes"

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True)
    answer_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("answers.id", ondelete="CASCADE"))
    user_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("users.id", ondelete="CASCADE"))
    question_id: Mapped[str] = mapped_column(BoundedString(64))
    charge: Mapped[str] = mapped_column(BoundedString(8))
    claim: Mapped[str] = mapped_column(SafeText)
    sentence: Mapped[str] = mapped_column(SafeText)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)

    __table_args__ = (
        UniqueConstraint("answer_id", "charge", name="uq_disputes_answer_charge"),
        Index("ix_disputes_question", "question_id"),
        Index("ix_disputes_user", "user_id"),
    )

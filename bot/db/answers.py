"""Answers: stored from messages (an edit is a new answer), graded, self-assessed."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import bindparam, func, insert, select, update

from bot.db.models import Answer, Ask, utcnow
from bot.db.session import Session
from bot.db.sql import Prepared, binds, core

# storing an answer is the hottest write: prepared statements on the connection (bot.db.sql)
_ANSWER_FIELDS = (
    "ask_id", "question_id", "user_id", "chat_id", "message_id", "text", "edited", "coverage", "covered", "created_at",
)  # fmt: skip
_INSERT = Prepared(lambda _: insert(Answer).values(binds(*_ANSWER_FIELDS)).returning(Answer.id))
_FROM_MESSAGE = Prepared(
    lambda _: (
        select(Answer.id)
        .where(Answer.chat_id == bindparam("chat"), Answer.message_id == bindparam("message"), Answer.edited.is_(False))
        .limit(1)
    )
)
_LATEST = Prepared(
    lambda _: (
        select(Answer.ask_id, Answer.text)
        .where(Answer.user_id == bindparam("uid"), Answer.question_id == bindparam("qid"))
        .order_by(Answer.id.desc())
        .limit(1)
    )
)


async def _latest(session: Session, user_id: int, question_id: str) -> Any:
    """The ask and text of the user's latest answer to the question (a row), or None."""
    return (await core(session, _LATEST(session), {"uid": user_id, "qid": question_id})).first()


async def latest_text(session: Session, user_id: int, question_id: str) -> str | None:
    """The text of the user's latest answer to the question."""
    found = await _latest(session, user_id, question_id)
    return None if found is None else str(found[1])


@dataclass(frozen=True, slots=True)
class NewAnswer:
    """An answer to store: the question (and the ask, if it answers one), who wrote it in which
    chat and message (None: not from a message), the text, whether it is an edit, and its grade
    when it is known (``coverage`` and the key points ``covered``)."""

    ask: Ask | None
    question_id: str
    user_id: int
    chat_id: int
    message_id: int | None
    text: str
    edited: bool = False
    coverage: float | None = None
    covered: Sequence[int] = ()
    at: datetime | None = None


def _values(new: NewAnswer) -> dict[str, Any]:
    """An answer's columns (``covered`` as "0,2", only with a grade)."""
    return {
        "ask_id": new.ask.id if new.ask else None,
        "question_id": new.question_id,
        "user_id": new.user_id,
        "chat_id": new.chat_id,
        "message_id": new.message_id,
        "text": new.text,
        "edited": new.edited,
        "coverage": new.coverage,
        "covered": ",".join(str(i) for i in new.covered) if new.coverage is not None else None,
        "created_at": new.at or utcnow(),
    }


async def stored_from_message(session: Session, chat_id: int, message_id: int) -> Answer | None:
    """The answer stored from this message (not from an edit of it), if any: a prepared check
    first, the answer loaded only if there is one (every answer passes here)."""
    found = (await core(session, _FROM_MESSAGE(session), {"chat": chat_id, "message": message_id})).first()
    return await session.get(Answer, found[0]) if found is not None else None


async def latest_ask_answered(session: Session, user_id: int, question_id: str) -> tuple[bool, int | None]:
    """Whether the user has answered the question before, and the ask of the latest such answer."""
    found = await _latest(session, user_id, question_id)
    return (False, None) if found is None else (True, found[0])


async def add_answer(session: Session, new: NewAnswer) -> Answer:
    """Store an answer (one prepared INSERT: every answer passes here); the answer returned is
    detached (for reading)."""
    values = _values(new)
    answer_id = (await core(session, _INSERT(session), values)).scalar_one()
    return Answer(id=answer_id, **values)


async def set_grade(session: Session, answer_id: int, coverage: float, covered: Sequence[int]) -> None:
    """Attach a grade that arrived after the answer was stored."""
    await session.execute(
        update(Answer)
        .where(Answer.id == answer_id)
        .values(coverage=coverage, covered=",".join(str(i) for i in covered))
    )


async def answer_by_message(session: Session, chat_id: int, message_id: int) -> Answer | None:
    result = await session.execute(
        select(Answer)
        .where(Answer.chat_id == chat_id, Answer.message_id == message_id)
        .order_by(Answer.id.desc())
        .limit(1)
    )
    return result.scalar_one_or_none()


async def latest_answer(session: Session, user_id: int, question_id: str) -> Answer | None:
    result = await session.execute(
        select(Answer)
        .where(Answer.user_id == user_id, Answer.question_id == question_id)
        .order_by(Answer.id.desc())
        .limit(1)
    )
    return result.scalar_one_or_none()


async def answers_for_ask(session: Session, ask_id: int) -> int:
    result = await session.execute(select(func.count(func.distinct(Answer.user_id))).where(Answer.ask_id == ask_id))
    return int(result.scalar_one())


async def answered_per_question(session: Session, user_id: int) -> set[str]:
    rows = await session.execute(select(Answer.question_id).where(Answer.user_id == user_id).distinct())
    return set(rows.scalars())


async def set_self_grade(session: Session, user_id: int, question_id: str, grade: int) -> float | None:
    """Attach the self-assessment to the user's latest answer; returns that answer's coverage."""
    answer = await session.scalar(
        select(Answer)
        .where(Answer.user_id == user_id, Answer.question_id == question_id)
        .order_by(Answer.id.desc())
        .limit(1)
    )
    if answer is None:
        return None
    answer.self_grade = grade
    return answer.coverage

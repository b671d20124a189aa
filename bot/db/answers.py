"""Answers: stored from messages (an edit is a new answer), graded, self-assessed."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from bot.db.models import Answer, Ask, utcnow


async def add_answer(
    session: AsyncSession,
    *,
    ask: Ask | None,
    question_id: str,
    user_id: int,
    chat_id: int,
    message_id: int | None,
    text: str,
    edited: bool = False,
    coverage: float | None = None,
    covered: Sequence[int] = (),
    at: datetime | None = None,
) -> Answer:
    answer = Answer(
        ask_id=ask.id if ask else None,
        question_id=question_id,
        user_id=user_id,
        chat_id=chat_id,
        message_id=message_id,
        text=text,
        edited=edited,
        coverage=coverage,
        covered=",".join(str(i) for i in covered) if coverage is not None else None,
        created_at=at or utcnow(),
    )
    session.add(answer)
    await session.flush()
    return answer


async def set_grade(session: AsyncSession, answer_id: int, coverage: float, covered: Sequence[int]) -> None:
    """Attach a grade that arrived after the answer was stored."""
    await session.execute(
        update(Answer)
        .where(Answer.id == answer_id)
        .values(coverage=coverage, covered=",".join(str(i) for i in covered))
    )


async def answer_to_message(session: AsyncSession, chat_id: int, message_id: int) -> Answer | None:
    """The answer stored from this message (not from an edit of it), if any."""
    result = await session.execute(
        select(Answer)
        .where(Answer.chat_id == chat_id, Answer.message_id == message_id, Answer.edited.is_(False))
        .limit(1)
    )
    return result.scalar_one_or_none()


async def answer_by_message(session: AsyncSession, chat_id: int, message_id: int) -> Answer | None:
    result = await session.execute(
        select(Answer)
        .where(Answer.chat_id == chat_id, Answer.message_id == message_id)
        .order_by(Answer.id.desc())
        .limit(1)
    )
    return result.scalar_one_or_none()


async def latest_answer(session: AsyncSession, user_id: int, question_id: str) -> Answer | None:
    result = await session.execute(
        select(Answer)
        .where(Answer.user_id == user_id, Answer.question_id == question_id)
        .order_by(Answer.id.desc())
        .limit(1)
    )
    return result.scalar_one_or_none()


async def answers_for_ask(session: AsyncSession, ask_id: int) -> int:
    result = await session.execute(select(func.count(func.distinct(Answer.user_id))).where(Answer.ask_id == ask_id))
    return int(result.scalar_one())


async def answered_per_question(session: AsyncSession, user_id: int) -> set[str]:
    rows = await session.execute(select(Answer.question_id).where(Answer.user_id == user_id).distinct())
    return set(rows.scalars())


async def set_self_grade(session: AsyncSession, user_id: int, question_id: str, grade: int) -> float | None:
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

"""Storage for spaced repetition cards, self-assessments and mock interviews."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from bot.core import srs
from bot.db.models import Answer, Card, Interview, InterviewItem


async def review_card(
    session: AsyncSession,
    user_id: int,
    question_id: str,
    *,
    self_grade: int | None,
    coverage: float | None,
    now: datetime,
) -> Card:
    """Schedule the user's card for a question. A self-assessment replaces an automatic
    (coverage-only) rating given just before, instead of reviewing the card twice."""
    card = await session.get(Card, (user_id, question_id), with_for_update=True)
    rating = srs.rating_for(self_grade, coverage)
    auto = self_grade is None
    if card is None:
        result = srs.review(None, rating, now)
        card = Card(
            user_id=user_id,
            question_id=question_id,
            state=result.state,
            due=result.due,
            reps=1,
            last_rating=result.rating,
            last_review=now,
            prev_state=None,
            auto_rated=auto,
        )
        session.add(card)
        await session.flush()
        return card
    replacing = card.auto_rated and not auto
    base: str | None = card.prev_state if replacing else card.state  # replacing undoes the automatic rating
    result = srs.review(base, rating, now)
    card.prev_state = base if replacing else card.state
    card.state, card.due, card.last_rating, card.last_review = result.state, result.due, result.rating, now
    card.reps = card.reps if replacing else card.reps + 1
    card.auto_rated = auto
    return card


async def due_cards(
    session: AsyncSession, user_id: int, now: datetime, limit: int = 50, within: Sequence[str] | None = None
) -> list[Card]:
    stmt = select(Card).where(Card.user_id == user_id, Card.due <= now)
    if within is not None:
        stmt = stmt.where(Card.question_id.in_(list(within)))
    stmt = stmt.order_by(Card.due).limit(limit)
    return list((await session.execute(stmt)).scalars())


async def next_due(session: AsyncSession, user_id: int) -> datetime | None:
    return await session.scalar(select(func.min(Card.due)).where(Card.user_id == user_id))


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


# Interviews ----------------------------------------------------------------------------------


async def open_interview(session: AsyncSession, user_id: int, chat_id: int) -> Interview | None:
    return await session.scalar(
        select(Interview)
        .where(Interview.user_id == user_id, Interview.chat_id == chat_id, Interview.status == "open")
        .order_by(Interview.id.desc())
        .limit(1)
    )


async def create_interview(
    session: AsyncSession,
    user_id: int,
    chat_id: int,
    question_ids: Sequence[str],
    *,
    topics: Sequence[str],
    time_limit: int | None,
    now: datetime,
) -> Interview:
    interview = Interview(
        user_id=user_id,
        chat_id=chat_id,
        status="open",
        topics=",".join(topics),
        size=len(question_ids),
        time_limit=time_limit,
        position=0,
        started_at=now,
    )
    session.add(interview)
    await session.flush()
    for i, qid in enumerate(question_ids):
        session.add(InterviewItem(interview_id=interview.id, position=i, question_id=qid, skipped=False))
    await session.flush()
    return interview


async def items(session: AsyncSession, interview_id: int) -> list[InterviewItem]:
    rows = await session.execute(
        select(InterviewItem).where(InterviewItem.interview_id == interview_id).order_by(InterviewItem.position)
    )
    return list(rows.scalars())


async def item_at(session: AsyncSession, interview_id: int, position: int) -> InterviewItem | None:
    return await session.get(InterviewItem, (interview_id, position))


async def item_for_ask(session: AsyncSession, ask_id: int) -> tuple[Interview, InterviewItem] | None:
    row = (
        await session.execute(
            select(Interview, InterviewItem)
            .join(InterviewItem, InterviewItem.interview_id == Interview.id)
            .where(InterviewItem.ask_id == ask_id)
            .limit(1)
        )
    ).first()
    return (row[0], row[1]) if row else None


async def grade_interview_item(session: AsyncSession, user_id: int, chat_id: int, question_id: str, grade: int) -> None:
    """A self-assessment for a question of the user's latest interview in this chat."""
    latest = await session.scalar(
        select(Interview.id)
        .where(Interview.user_id == user_id, Interview.chat_id == chat_id)
        .order_by(Interview.id.desc())
        .limit(1)
    )
    if latest is None:
        return
    await session.execute(
        update(InterviewItem)
        .where(InterviewItem.interview_id == latest, InterviewItem.question_id == question_id)
        .values(self_grade=grade)
    )

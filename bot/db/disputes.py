"""Disputes of the grader's charges («Это не ошибка»): stored per answer and charge, listed for the rubric."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import func, select, update

from bot.db.models import Answer, Dispute, InterviewItem
from bot.db.session import Session


async def get_answer(session: Session, answer_id: int) -> Answer | None:
    return await session.get(Answer, answer_id)


async def waived(session: Session, answer_id: int) -> frozenset[str]:
    """The charges of an answer its author disputed (``m<i>``, ``k<i>``)."""
    rows = await session.execute(select(Dispute.charge).where(Dispute.answer_id == answer_id))
    return frozenset(rows.scalars())


async def add(session: Session, answer: Answer, *, charge: str, claim: str, sentence: str, now: datetime) -> None:
    session.add(
        Dispute(
            answer_id=answer.id, user_id=answer.user_id, question_id=answer.question_id, charge=charge,
            claim=claim, sentence=sentence, created_at=now,
        )
    )  # fmt: skip
    await session.flush()


async def regrade_interview_item(session: Session, ask_id: int, coverage: float) -> None:
    """The interview item answered by that ask takes the answer's new score."""
    await session.execute(update(InterviewItem).where(InterviewItem.ask_id == ask_id).values(coverage=coverage))


async def all_disputes(session: Session) -> list[Dispute]:
    return list((await session.execute(select(Dispute).order_by(Dispute.id))).scalars())


async def count(session: Session) -> int:
    return int(await session.scalar(select(func.count()).select_from(Dispute)) or 0)

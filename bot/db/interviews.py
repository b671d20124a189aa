"""Mock interviews and their items (one open interview per user per chat)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select, update

from bot.db.models import Answer, Interview, InterviewItem, InterviewStatus
from bot.db.session import Session


async def open_interview(session: Session, user_id: int, chat_id: int) -> Interview | None:
    return await session.scalar(
        select(Interview)
        .where(Interview.user_id == user_id, Interview.chat_id == chat_id, Interview.status == InterviewStatus.OPEN)
        .order_by(Interview.id.desc())
        .limit(1)
    )


@dataclass(frozen=True, slots=True)
class NewInterview:
    """A mock interview to open: whose, in which chat, its questions in order, the topics asked
    for, the seconds per question (None: no limit), when it starts, and whether the interviewer
    asks a follow-up after each answer."""

    user_id: int
    chat_id: int
    question_ids: Sequence[str]
    topics: Sequence[str]
    time_limit: int | None
    started_at: datetime
    deep: bool = False


async def create_interview(session: Session, new: NewInterview) -> Interview:
    interview = Interview(
        user_id=new.user_id,
        chat_id=new.chat_id,
        status=InterviewStatus.OPEN,
        topics=",".join(new.topics),
        size=len(new.question_ids),
        time_limit=new.time_limit,
        deep=new.deep,
        position=0,
        started_at=new.started_at,
    )
    session.add(interview)
    await session.flush()
    for i, qid in enumerate(new.question_ids):
        session.add(InterviewItem(interview_id=interview.id, position=i, question_id=qid, skipped=False))
    await session.flush()
    return interview


async def items(session: Session, interview_id: int) -> list[InterviewItem]:
    rows = await session.execute(
        select(InterviewItem).where(InterviewItem.interview_id == interview_id).order_by(InterviewItem.position)
    )
    return list(rows.scalars())


async def item_at(session: Session, interview_id: int, position: int) -> InterviewItem | None:
    return await session.get(InterviewItem, (interview_id, position))


async def item_for_ask(session: Session, ask_id: int) -> tuple[Interview, InterviewItem] | None:
    row = (
        await session.execute(
            select(Interview, InterviewItem)
            .join(InterviewItem, InterviewItem.interview_id == Interview.id)
            .where(InterviewItem.ask_id == ask_id)
            .limit(1)
        )
    ).first()
    return (row[0], row[1]) if row else None


async def grade_interview_item(session: Session, user_id: int, chat_id: int, question_id: str, grade: int) -> None:
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


async def item_asked(session: Session, interview_id: int, position: int, *, ask_id: int, now: datetime) -> None:
    item = await item_at(session, interview_id, position)
    assert item is not None
    item.ask_id, item.asked_at = ask_id, now


async def item_answered(
    session: Session, interview_id: int, position: int, *, coverage: float, follow_up: str | None, now: datetime
) -> None:
    """The item's question was answered (and graded); ``follow_up``: the examiner's follow-up question."""
    item = await item_at(session, interview_id, position)
    assert item is not None
    item.answered_at, item.coverage = now, coverage
    if follow_up:
        item.follow_up = follow_up


async def follow_up_answered(session: Session, interview_id: int, position: int, text: str) -> None:
    item = await item_at(session, interview_id, position)
    assert item is not None
    item.follow_up_answer = text


async def advance(session: Session, interview_id: int, position: int, *, skipped: bool, now: datetime) -> int:
    """Move the interview past the item at ``position`` (marked skipped, when it was); returns the
    interview's new position."""
    item = await item_at(session, interview_id, position)
    interview = await session.get(Interview, interview_id)
    assert item is not None and interview is not None
    if skipped:
        item.skipped = True
        item.answered_at = now
    interview.position = position + 1
    return interview.position


async def close(session: Session, interview_id: int, status: InterviewStatus, now: datetime) -> None:
    """Finish or abandon the interview."""
    interview = await session.get(Interview, interview_id)
    assert interview is not None
    interview.status = status
    interview.finished_at = now


async def get(session: Session, interview_id: int) -> Interview | None:
    return await session.get(Interview, interview_id)


async def answer_to(session: Session, ask_id: int) -> Answer | None:
    """The latest answer stored for an interview's ask."""
    result = await session.execute(select(Answer).where(Answer.ask_id == ask_id).order_by(Answer.id.desc()).limit(1))
    return result.scalar_one_or_none()


async def of_ask(session: Session, ask_id: int) -> int | None:
    """The interview an ask belongs to."""
    return await session.scalar(select(InterviewItem.interview_id).where(InterviewItem.ask_id == ask_id))

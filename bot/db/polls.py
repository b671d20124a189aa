"""Storage for quiz polls, their answers and the group leaderboard.

Points on a group's board, per member: for each distinct question the member answered (by reply)
in the group, 1 + 2 × their best key-point coverage (no coverage counts as 0); plus 1 per correct
quiz answer in the group. Members who opted out (``users.board_opt_out``) are not listed.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import delete, func, select

from bot.db.models import Answer, Poll, PollAnswer, User, utcnow
from bot.db.session import Session
from bot.db.sql import insert_for

BOARD_SIZE = 10


@dataclass(frozen=True, slots=True)
class BoardRow:
    user_id: int
    name: str
    points: float
    questions: int  # distinct questions answered by reply
    quiz_correct: int


async def record_poll(
    session: Session,
    *,
    poll_id: str,
    chat_id: int,
    message_id: int | None,
    term_id: str,
    correct_option: int,
    source: str,
) -> Poll:
    poll = Poll(
        id=poll_id,
        chat_id=chat_id,
        message_id=message_id,
        term_id=term_id,
        correct_option=correct_option,
        source=source,
        created_at=utcnow(),
    )
    session.add(poll)
    await session.flush()
    return poll


async def get_poll(session: Session, poll_id: str) -> Poll | None:
    return await session.get(Poll, poll_id)


async def record_poll_answer(
    session: Session, poll: Poll, user_id: int, option: int | None, *, at: datetime | None = None
) -> PollAnswer | None:
    """Store (or change) a member's answer; ``option`` None means the vote was retracted, which
    removes it. Returns the stored answer."""
    if option is None:
        await session.execute(delete(PollAnswer).where(PollAnswer.poll_id == poll.id, PollAnswer.user_id == user_id))
        return None
    values = {
        "poll_id": poll.id,
        "user_id": user_id,
        "chat_id": poll.chat_id,
        "option": option,
        "correct": option == poll.correct_option,
        "answered_at": at or utcnow(),
    }
    ins = insert_for(session)(PollAnswer).values(**values)
    await session.execute(
        ins.on_conflict_do_update(
            index_elements=[PollAnswer.poll_id, PollAnswer.user_id],
            set_={key: ins.excluded[key] for key in ("option", "correct", "answered_at")},
        )
    )
    return await session.get(PollAnswer, (poll.id, user_id), populate_existing=True)


async def quizzed_terms(session: Session, chat_id: int) -> dict[str, int]:
    """How many times each glossary term was quizzed in a chat."""
    rows = await session.execute(
        select(Poll.term_id, func.count()).where(Poll.chat_id == chat_id).group_by(Poll.term_id)
    )
    return {term_id: int(count) for term_id, count in rows.all()}


async def leaderboard(
    session: Session, chat_id: int, *, since: datetime | None = None, limit: int = BOARD_SIZE
) -> list[BoardRow]:
    """The group's top members since ``since`` (all time if None), best first."""
    best = func.max(func.coalesce(Answer.coverage, 0.0))
    per_question = (
        select(Answer.user_id.label("user_id"), Answer.question_id, best.label("best"))
        .where(Answer.chat_id == chat_id)
        .group_by(Answer.user_id, Answer.question_id)
    )
    if since is not None:
        per_question = per_question.where(Answer.created_at >= since)
    sub = per_question.subquery()
    reply_rows = await session.execute(
        select(sub.c.user_id, func.count(), func.sum(1 + 2 * sub.c.best)).group_by(sub.c.user_id)
    )
    quiz = (
        select(PollAnswer.user_id, func.count())
        .where(PollAnswer.chat_id == chat_id, PollAnswer.correct.is_(True))
        .group_by(PollAnswer.user_id)
    )
    if since is not None:
        quiz = quiz.where(PollAnswer.answered_at >= since)
    quiz_rows = await session.execute(quiz)

    questions: dict[int, int] = {}
    points: dict[int, float] = {}
    for user_id, count, total in reply_rows.all():
        questions[user_id] = int(count)
        points[user_id] = float(total or 0)
    correct: dict[int, int] = {}
    for user_id, count in quiz_rows.all():
        correct[user_id] = int(count)
        points[user_id] = points.get(user_id, 0.0) + int(count)
    if not points:
        return []
    users = await session.execute(select(User.id, User.first_name, User.board_opt_out).where(User.id.in_(list(points))))
    names: dict[int, str] = {}
    for user_id, first_name, opted_out in users.all():
        if not opted_out:
            names[user_id] = first_name or ""
    board = [
        BoardRow(uid, names[uid], round(points[uid], 6), questions.get(uid, 0), correct.get(uid, 0))
        for uid in points
        if uid in names and points[uid] > 0
    ]
    board.sort(key=lambda row: (-row.points, row.name.casefold(), row.user_id))
    return board[:limit]

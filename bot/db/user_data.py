"""What /stats, /export and /forget read and delete. Every query is scoped to one user id — the caller
passes the id of the person who sent the command, never one taken from a message or a button."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from sqlalchemy import delete, func, select, update
from sqlalchemy.engine import CursorResult
from sqlalchemy.sql.dml import Delete

from bot.core.stats import AnswerFact
from bot.db.models import (
    Answer,
    Ask,
    Card,
    Chat,
    ChatSeen,
    Delivery,
    Dispute,
    Interview,
    InterviewItem,
    LLMGrade,
    Poll,
    PollAnswer,
    ProgressDigest,
    Reveal,
    User,
)
from bot.db.session import Session


@dataclass(frozen=True, slots=True)
class ExportedAnswer:
    question_id: str
    text: str
    created_at: datetime
    edited: bool
    coverage: float | None
    self_grade: int | None
    chat_id: int
    chat_title: str | None  # of a group chat; None in the private chat
    voice_seconds: int | None = None  # a voice answer: the text is its transcript
    corrects_voice: bool = False  # a typed correction of a voice answer's transcript


@dataclass(frozen=True, slots=True)
class UserData:
    """What is stored about a user (counted before /forget, and what /forget deleted)."""

    answers: int = 0
    group_answers: int = 0  # of ``answers``, given in group chats
    cards: int = 0
    interviews: int = 0
    poll_answers: int = 0
    reveals: int = 0
    profile: bool = False  # the users row
    private_chat: bool = False  # the private chat row with its history and settings


async def answer_facts(session: Session, user_id: int) -> list[AnswerFact]:
    rows = await session.execute(
        select(Answer.question_id, Answer.created_at, Answer.coverage, Answer.self_grade)
        .where(Answer.user_id == user_id)
        .order_by(Answer.id)
    )
    return [AnswerFact(qid, at, coverage, grade) for qid, at, coverage, grade in rows.all()]


async def exported_answers(session: Session, user_id: int) -> list[ExportedAnswer]:
    rows = await session.execute(
        select(
            Answer.question_id,
            Answer.text,
            Answer.created_at,
            Answer.edited,
            Answer.coverage,
            Answer.self_grade,
            Answer.chat_id,
            Chat.title,
            Answer.voice_seconds,
            Answer.corrects_id,
        )
        .outerjoin(Chat, Chat.id == Answer.chat_id)
        .where(Answer.user_id == user_id)
        .order_by(Answer.created_at, Answer.id)
    )
    out = []
    for qid, text, at, edited, coverage, grade, chat_id, title, seconds, corrects in rows.all():
        group_title = title if chat_id != user_id else None
        spoken = seconds if corrects is None else None
        out.append(
            ExportedAnswer(
                qid, text, at, bool(edited), coverage, grade, chat_id, group_title, spoken, corrects is not None
            )
        )
    return out


async def _count(session: Session, model: Any, *where: Any) -> int:
    result = await session.execute(select(func.count()).select_from(model).where(*where))
    return int(result.scalar_one())


async def stored_data(session: Session, user_id: int) -> UserData:
    return UserData(
        answers=await _count(session, Answer, Answer.user_id == user_id),
        group_answers=await _count(session, Answer, Answer.user_id == user_id, Answer.chat_id != user_id),
        cards=await _count(session, Card, Card.user_id == user_id),
        interviews=await _count(session, Interview, Interview.user_id == user_id),
        poll_answers=await _count(session, PollAnswer, PollAnswer.user_id == user_id),
        reveals=await _count(session, Reveal, Reveal.user_id == user_id),
        profile=await session.get(User, user_id) is not None,
        private_chat=await session.get(Chat, user_id) is not None,
    )


async def _deleted(session: Session, statement: Delete) -> int:
    result = cast(CursorResult[Any], await session.execute(statement))
    return max(result.rowcount, 0)


async def forget_user(session: Session, user_id: int) -> UserData:
    """Delete everything stored about the user: their answers (in every chat), reveals, cards,
    interviews, quiz answers, the user row, and their private chat (id == user id) with its asks,
    seen counts, daily deliveries and quiz polls. Group chats stay; questions the user asked for
    there stay too, without the asker's id. Returns what was deleted."""
    before = await stored_data(session, user_id)
    await _deleted(session, delete(Dispute).where(Dispute.user_id == user_id))  # they quote the answers
    await _deleted(session, delete(LLMGrade).where(LLMGrade.user_id == user_id))  # the model may quote them
    answers = await _deleted(session, delete(Answer).where(Answer.user_id == user_id))
    reveals = await _deleted(session, delete(Reveal).where(Reveal.user_id == user_id))
    cards = await _deleted(session, delete(Card).where(Card.user_id == user_id))
    mine = select(Interview.id).where(Interview.user_id == user_id).scalar_subquery()
    await _deleted(session, delete(InterviewItem).where(InterviewItem.interview_id.in_(mine)))
    interviews = await _deleted(session, delete(Interview).where(Interview.user_id == user_id))
    poll_answers = await _deleted(session, delete(PollAnswer).where(PollAnswer.user_id == user_id))
    # the private chat and everything that hangs off it
    private_polls = select(Poll.id).where(Poll.chat_id == user_id).scalar_subquery()
    await _deleted(session, delete(PollAnswer).where(PollAnswer.poll_id.in_(private_polls)))
    await _deleted(session, delete(Poll).where(Poll.chat_id == user_id))
    await _deleted(session, delete(Ask).where(Ask.chat_id == user_id))
    await _deleted(session, delete(ChatSeen).where(ChatSeen.chat_id == user_id))
    await _deleted(session, delete(Delivery).where(Delivery.chat_id == user_id))
    private_chat = await _deleted(session, delete(Chat).where(Chat.id == user_id))
    await session.execute(update(Ask).where(Ask.user_id == user_id).values(user_id=None))
    await _deleted(session, delete(ProgressDigest).where(ProgressDigest.user_id == user_id))
    profile = await _deleted(session, delete(User).where(User.id == user_id))
    return UserData(
        answers=answers,
        group_answers=before.group_answers,
        cards=cards,
        interviews=interviews,
        poll_answers=poll_answers,
        reveals=reveals,
        profile=profile > 0,
        private_chat=private_chat > 0,
    )

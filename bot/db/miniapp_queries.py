"""What the Mini App reads. Every query is scoped to one user id: the caller passes the id taken from
the Telegram-signed ``initData``, never one from the request's query string or body."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Integer, String, and_, func, select

from bot.db.models import Answer, Card, Chat, ProgressDigest, utcnow
from bot.db.session import Session
from bot.db.sql import insert_for


@dataclass(frozen=True, slots=True)
class QuestionStat:
    """One question the user answered: how often, and the grade and self-assessment of the latest
    answer (None where that answer has none)."""

    question_id: str
    answers: int
    coverage: float | None
    self_grade: int | None


@dataclass(frozen=True, slots=True)
class AnswerStats:
    """What the progress screen needs of a user's answers, aggregated by the database (never a
    text, and not one row per answer: 10,000 answers make a few hundred rows here)."""

    slots: list[tuple[datetime, int]]  # (the start of an hour or a quarter in UTC, answers in it)
    questions: list[QuestionStat]
    covered: list[tuple[str, str, int]]  # (question, covered key points "0,2", answers graded so)
    pending: list[int]  # ids of answers not graded yet (an LLM grade may come later)


HOUR, QUARTER = 3600, 900  # every zone's offset is a multiple of a quarter hour, most of an hour


@dataclass(frozen=True, slots=True)
class CardStat:
    question_id: str
    due: datetime
    state: str  # the FSRS card as JSON


@dataclass(frozen=True, slots=True)
class AnswerRow:
    id: int
    question_id: str
    text: str
    created_at: datetime
    edited: bool
    coverage: float | None
    covered: str | None
    self_grade: int | None
    chat_id: int
    chat_title: str | None


def _slot(session: Session, seconds: int) -> Any:
    """The answer's time slot (an hour, or a quarter hour) on either backend: SQLite keeps UTC
    times as text ("2026-12-01 09:30:00.000000"), so an hour is a prefix of it (cheaper than a
    date function per row); otherwise seconds since the epoch // ``seconds``."""
    if session.get_bind().dialect.name == "postgresql":
        return func.floor(func.extract("epoch", Answer.created_at) / seconds)
    if seconds == HOUR:
        return func.substr(Answer.created_at, 1, 13, type_=String)
    return func.cast(func.strftime("%s", Answer.created_at), Integer) / seconds


def _slot_start(value: Any, seconds: int) -> datetime:
    if isinstance(value, str):  # SQLite's "YYYY-MM-DD HH"
        return datetime.strptime(value, "%Y-%m-%d %H").replace(tzinfo=UTC)
    return datetime.fromtimestamp(int(value) * seconds, UTC)


async def question_stats(session: Session, user_id: int, up_to: int | None = None) -> list[QuestionStat]:
    """Per question answered: the count (an index-only read), then the latest answer's grades."""
    mine = [Answer.user_id == user_id] + ([Answer.id <= up_to] if up_to is not None else [])
    per_question = await session.execute(
        select(Answer.question_id, func.count(), func.max(Answer.id)).where(*mine).group_by(Answer.question_id)
    )
    counts = per_question.all()
    latest = await session.execute(
        select(Answer.question_id, Answer.coverage, Answer.self_grade).where(Answer.id.in_([n for _, _, n in counts]))
    )
    found = {qid: (coverage, grade) for qid, coverage, grade in latest.all()}
    return [QuestionStat(qid, int(n), *found.get(qid, (None, None))) for qid, n, _ in counts]


async def answer_stats(
    session: Session, user_id: int, *, slot_seconds: int = HOUR, up_to: int | None = None
) -> AnswerStats:
    """``slot_seconds``: HOUR, or QUARTER for a zone whose offset is not a whole number of hours;
    ``up_to``: only the answers with an id up to it (those a mark counted)."""
    mine = [Answer.user_id == user_id] + ([Answer.id <= up_to] if up_to is not None else [])
    slot = _slot(session, slot_seconds).label("slot")
    slots = await session.execute(select(slot, func.count()).where(*mine).group_by(slot))
    covered = await session.execute(
        select(Answer.question_id, Answer.covered, func.count())
        .where(*mine, Answer.covered.is_not(None))
        .group_by(Answer.question_id, Answer.covered)
    )
    pending = await session.execute(select(Answer.id).where(*mine, Answer.covered.is_(None)))
    return AnswerStats(
        slots=[(_slot_start(value, slot_seconds), int(count)) for value, count in slots.all()],
        questions=await question_stats(session, user_id, up_to),
        covered=[(qid, text or "", int(n)) for qid, text, n in covered.all()],
        pending=list(pending.scalars()),
    )


@dataclass(frozen=True, slots=True)
class NewAnswer:
    id: int
    question_id: str
    created_at: datetime
    covered: str | None


async def answers_after(session: Session, user_id: int, after_id: int, limit: int) -> list[NewAnswer]:
    """The user's answers with an id above ``after_id`` (at most ``limit``): what is new since a
    digest was made."""
    rows = await session.execute(
        select(Answer.id, Answer.question_id, Answer.created_at, Answer.covered)
        .where(Answer.user_id == user_id, Answer.id > after_id)
        .order_by(Answer.id)
        .limit(limit)
    )
    return [NewAnswer(*row) for row in rows.all()]


async def covered_of(session: Session, user_id: int, ids: Sequence[int]) -> dict[int, tuple[str, str | None]]:
    """The question and covered key points of these answers of the user (ids no longer stored are
    left out)."""
    rows = await session.execute(
        select(Answer.id, Answer.question_id, Answer.covered).where(Answer.user_id == user_id, Answer.id.in_(list(ids)))
    )
    return {answer_id: (qid, covered) for answer_id, qid, covered in rows.all()}


async def answers_mark(session: Session, user_id: int) -> tuple[tuple[int, int | None], tuple[Any, ...]]:
    """Changes whenever the user's answers or their grades change: the answers' count and newest id
    (an index-only read), and the cards' count, latest review, reps and ratings (every grade and
    self-assessment reviews the card)."""
    answers = await session.execute(select(func.count(), func.max(Answer.id)).where(Answer.user_id == user_id))
    count, newest = answers.one()
    cards = await session.execute(
        select(func.count(), func.max(Card.last_review), func.sum(Card.reps), func.sum(Card.last_rating)).where(
            Card.user_id == user_id
        )
    )
    return (int(count), newest), tuple(cards.one())


@dataclass(frozen=True, slots=True)
class StoredDigest:
    zone: str
    mark: str
    body: str


async def stored_digest(session: Session, user_id: int) -> StoredDigest | None:
    row = await session.execute(
        select(ProgressDigest.zone, ProgressDigest.mark, ProgressDigest.body).where(ProgressDigest.user_id == user_id)
    )
    found = row.first()
    return StoredDigest(*found) if found is not None else None


async def store_digest(session: Session, user_id: int, zone: str, mark: str, body: str) -> None:
    """Keep (or replace) the user's digest; the user's row must exist."""
    insert = insert_for(session)
    values = {"zone": zone, "mark": mark, "body": body, "updated_at": utcnow()}
    statement = insert(ProgressDigest).values(user_id=user_id, **values)
    await session.execute(statement.on_conflict_do_update(index_elements=[ProgressDigest.user_id], set_=values))


async def card_stats(session: Session, user_id: int) -> list[CardStat]:
    rows = await session.execute(select(Card.question_id, Card.due, Card.state).where(Card.user_id == user_id))
    return [CardStat(*row) for row in rows.all()]


# How the grades filter reads: a self-assessment (1..3) or the grader's verdict (by coverage).
GOOD, PARTIAL = 0.70, 0.35


async def answers_page(
    session: Session,
    user_id: int,
    *,
    question_ids: Sequence[str] | None = None,
    self_grade: int | None = None,
    verdict: str | None = None,
    before_id: int | None = None,
    limit: int = 20,
) -> list[AnswerRow]:
    """The user's answers, newest first (keyset paging on the answer id), with the group's title
    where one was given in a group."""
    stmt = (
        select(
            Answer.id,
            Answer.question_id,
            Answer.text,
            Answer.created_at,
            Answer.edited,
            Answer.coverage,
            Answer.covered,
            Answer.self_grade,
            Answer.chat_id,
            Chat.title,
        )
        .outerjoin(Chat, and_(Chat.id == Answer.chat_id, Answer.chat_id != user_id))
        .where(Answer.user_id == user_id)
    )
    if question_ids is not None:
        stmt = stmt.where(Answer.question_id.in_(list(question_ids)))
    if self_grade is not None:
        stmt = stmt.where(Answer.self_grade == self_grade)
    if verdict == "good":
        stmt = stmt.where(Answer.coverage >= GOOD)
    elif verdict == "partial":
        stmt = stmt.where(Answer.coverage >= PARTIAL, Answer.coverage < GOOD)
    elif verdict == "weak":
        stmt = stmt.where(Answer.coverage < PARTIAL)
    if before_id is not None:
        stmt = stmt.where(Answer.id < before_id)
    rows = await session.execute(stmt.order_by(Answer.id.desc()).limit(limit))
    return [
        AnswerRow(aid, qid, text, at, bool(edited), coverage, covered, grade, chat_id, title)
        for aid, qid, text, at, edited, coverage, covered, grade, chat_id, title in rows.all()
    ]

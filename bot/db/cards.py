"""Spaced-repetition cards (FSRS): reviewed after each graded answer, due ones found for /review and pushes."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import bindparam, func, insert, select, update

from bot.core import srs
from bot.db.models import Card
from bot.db.session import Session
from bot.db.sql import Prepared, binds, columns, core, detached

# every graded answer reviews a card: prepared statements on the connection (bot.db.sql)
_CARD_COLUMNS = tuple(Card.__table__.c.keys())
_STATE_COLUMNS = tuple(c for c in _CARD_COLUMNS if c not in ("user_id", "question_id"))
_GET = Prepared(
    lambda _: (
        select(*columns(Card))
        .where(Card.user_id == bindparam("uid"), Card.question_id == bindparam("qid"))
        .with_for_update()
    )
)
_ADD = Prepared(lambda _: insert(Card).values(binds(*_CARD_COLUMNS)))
_SET = Prepared(
    lambda _: (
        update(Card)
        .where(Card.user_id == bindparam("uid"), Card.question_id == bindparam("qid"))
        .values(binds(*_STATE_COLUMNS))
    )
)


async def review_card(
    session: Session,
    user_id: int,
    question_id: str,
    *,
    self_grade: int | None,
    coverage: float | None,
    now: datetime,
    regrade: bool = False,
) -> Card:
    """Schedule the user's card for a question. A self-assessment replaces an automatic
    (coverage-only) rating given just before, instead of reviewing the card twice; so does a
    ``regrade`` (the answer's score changed: a disputed charge), which leaves a card the user has
    rated themselves as it is."""
    row = (await core(session, _GET(session), {"uid": user_id, "qid": question_id})).first()
    rating = srs.rating_for(self_grade, coverage)
    auto = self_grade is None
    if row is None:
        result = srs.review(None, rating, now)
        values = {
            "user_id": user_id,
            "question_id": question_id,
            "state": result.state,
            "due": result.due,
            "reps": 1,
            "last_rating": result.rating,
            "last_review": now,
            "prev_state": None,
            "auto_rated": auto,
        }
        await core(session, _ADD(session), values)
        return Card(**values)
    card = detached(Card, row)
    if regrade and not card.auto_rated:
        return card  # the user's own rating stands
    replacing = card.auto_rated and (not auto or regrade)
    base: str | None = card.prev_state if replacing else card.state  # replacing undoes the automatic rating
    result = srs.review(base, rating, now)
    card.prev_state = base if replacing else card.state
    card.state, card.due, card.last_rating, card.last_review = result.state, result.due, result.rating, now
    card.reps = card.reps if replacing else card.reps + 1
    card.auto_rated = auto
    changed = {c: getattr(card, c) for c in _STATE_COLUMNS}
    await core(session, _SET(session), {"uid": user_id, "qid": question_id, **changed})
    return card


async def due_cards(
    session: Session, user_id: int, now: datetime, limit: int = 50, within: Sequence[str] | None = None
) -> list[Card]:
    stmt = select(Card).where(Card.user_id == user_id, Card.due <= now)
    if within is not None:
        stmt = stmt.where(Card.question_id.in_(list(within)))
    stmt = stmt.order_by(Card.due).limit(limit)
    return list((await session.execute(stmt)).scalars())


async def next_due(session: Session, user_id: int) -> datetime | None:
    return await session.scalar(select(func.min(Card.due)).where(Card.user_id == user_id))


async def due_questions(session: Session, user_id: int, now: datetime) -> list[tuple[str, datetime]]:
    """The user's review cards due at ``now``, as (question id, due time): what
    :func:`bot.core.srs.due_now` decides on (it also drops questions the bank no longer has)."""
    rows = await session.execute(select(Card.question_id, Card.due).where(Card.user_id == user_id, Card.due <= now))
    return [(qid, due) for qid, due in rows]

"""Daily pushes: the due chats, the ``deliveries`` claims (unique per chat and local date, with a
lease), their outcomes and the evening reveals. The scheduling decisions are the planner's
(bot.push.planner); these are its statements. On PostgreSQL concurrent claimers skip each other's
locked rows (``SKIP LOCKED``); on SQLite one process sends (see ``engine.acquire_sender_lock``)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import date, datetime, timedelta
from typing import Any

from sqlalchemy import and_, func, select, update

from bot.db.models import Chat, Delivery, DeliveryStatus
from bot.db.session import Session
from bot.db.sql import insert_for

INSERT_CHUNK = 500  # rows per INSERT: 7 parameters each, far below SQLite's and asyncpg's limits


def _chunks(rows: list[dict[str, Any]], size: int) -> Iterator[list[dict[str, Any]]]:
    for start in range(0, len(rows), size):
        yield rows[start : start + size]


def _skip_locked(session: Session) -> bool:
    return session.get_bind().dialect.name != "sqlite"


async def last_delivery_date(session: Session, chat_id: int) -> date | None:
    """The local date of the chat's latest daily push (a day already served gets no second one)."""
    return await session.scalar(select(func.max(Delivery.local_date)).where(Delivery.chat_id == chat_id))


async def due_chats(session: Session, now: datetime, limit: int) -> Sequence[Any]:
    """The subscribed chats whose next push instant has passed, earliest first, with what a claim
    needs (locked against other claimers on PostgreSQL)."""
    due = (
        select(
            Chat.id, Chat.type, Chat.timezone, Chat.push_minute, Chat.push_weekdays_only,
            Chat.next_push_at, Chat.next_push_date, Chat.topic_filter, Chat.push_kind, Chat.language,
        )
        .where(Chat.push_enabled.is_(True), Chat.next_push_at <= now)
        .order_by(Chat.next_push_at)
        .limit(limit)
    )  # fmt: skip
    if _skip_locked(session):
        due = due.with_for_update(skip_locked=True)
    return (await session.execute(due)).all()


async def insert_claims(session: Session, rows: list[dict[str, Any]]) -> list[tuple[int, int, date, str, datetime]]:
    """Insert ``deliveries`` rows, leaving alone any (chat, local date) taken already; returns
    ``(id, chat_id, local_date, status, due_at)`` of the rows inserted."""
    out: list[tuple[int, int, date, str, datetime]] = []
    for chunk in _chunks(rows, INSERT_CHUNK):  # bound the bind parameters per statement
        ins = insert_for(session)(Delivery).values(chunk)
        ins = ins.on_conflict_do_nothing(index_elements=["chat_id", "local_date"])
        result = await session.execute(
            ins.returning(Delivery.id, Delivery.chat_id, Delivery.local_date, Delivery.status, Delivery.due_at)
        )
        out += [(delivery_id, chat_id, day, status, due_at) for delivery_id, chat_id, day, status, due_at in result]
    return out


async def move_schedules(session: Session, moves: list[dict[str, Any]]) -> None:
    """Set each chat's next push (``{"id": chat id, **schedule fields}`` per chat)."""
    if moves:
        await session.execute(update(Chat), moves)


async def expired_claims(session: Session, now: datetime, limit: int) -> list[tuple[Delivery, Chat]]:
    """Claims whose lease ran out before they were marked sent, oldest first, with their chats."""
    expired = (
        select(Delivery, Chat)
        .join(Chat, Chat.id == Delivery.chat_id)
        .where(Delivery.status == DeliveryStatus.CLAIMED, Delivery.lease_until < now)
        .order_by(Delivery.due_at)
        .limit(limit)
    )
    if _skip_locked(session):
        expired = expired.with_for_update(skip_locked=True, of=Delivery)
    return [(delivery, chat) for delivery, chat in await session.execute(expired)]


async def mark_sent(
    session: Session, delivery_id: int, message_id: int, question_id: str | None, now: datetime
) -> None:
    """Record a delivered push (in the caller's transaction, with whatever else it records)."""
    await session.execute(
        update(Delivery)
        .where(Delivery.id == delivery_id)
        .values(status=DeliveryStatus.SENT, message_id=message_id, question_id=question_id, sent_at=now)
    )


async def set_status(session: Session, delivery_id: int, status: DeliveryStatus, error: str | None) -> None:
    await session.execute(update(Delivery).where(Delivery.id == delivery_id).values(status=status, error=error))


async def release(session: Session, delivery_ids: list[int], now: datetime) -> None:
    """Let the claims' leases run out now: the next tick takes them at once."""
    await session.execute(
        update(Delivery)
        .where(Delivery.id.in_(delivery_ids), Delivery.status == DeliveryStatus.CLAIMED)
        .values(lease_until=now - timedelta(seconds=1))
    )


async def reveal_chat_ids(session: Session) -> list[int]:
    """The few chats with an evening reveal (a partial index)."""
    return list((await session.execute(select(Chat.id).where(Chat.reveal_minute.is_not(None)))).scalars())


async def unrevealed(session: Session, chat_ids: list[int], since: date, limit: int) -> list[tuple[Delivery, Chat]]:
    """Sent pushes from ``since`` on, not yet revealed, of these chats (still with a reveal)."""
    rows = await session.execute(
        select(Delivery, Chat)
        .join(Chat, Chat.id == Delivery.chat_id)
        .where(
            and_(
                Delivery.chat_id.in_(chat_ids),
                Chat.reveal_minute.is_not(None),
                Delivery.status == DeliveryStatus.SENT,
                Delivery.revealed_at.is_(None),
                Delivery.local_date >= since,
            )
        )
        .limit(limit)
    )
    return [(delivery, chat) for delivery, chat in rows]

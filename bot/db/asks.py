"""Asks (a question shown in a chat) and reveals (a reference answer shown)."""

from __future__ import annotations

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from bot.db import chats
from bot.db.models import Ask, Reveal, utcnow


async def record_ask(
    session: AsyncSession,
    chat_id: int,
    question_id: str,
    *,
    user_id: int | None,
    source: str,
    message_id: int | None = None,
    make_pending: bool = True,
) -> Ask:
    ask = Ask(
        chat_id=chat_id,
        user_id=user_id,
        question_id=question_id,
        source=source,
        message_id=message_id,
        asked_at=utcnow(),
    )
    session.add(ask)
    await chats.count_seen(session, chat_id, question_id)
    await session.flush()
    if make_pending:
        await chats.set_pending_ask(session, chat_id, ask.id)
    return ask


async def forget_ask(session: AsyncSession, ask_id: int, chat_id: int, previous_pending: int | None) -> None:
    """A question that could not be sent: remove it and restore the chat's previous pending one."""
    ask = await session.get(Ask, ask_id)
    if ask is None:
        return
    await chats.uncount_seen(session, chat_id, ask.question_id)
    await session.delete(ask)
    await chats.set_pending_ask(session, chat_id, previous_pending, if_pending=ask_id)


async def set_ask_message(session: AsyncSession, ask_id: int, message_id: int) -> None:
    await session.execute(update(Ask).where(Ask.id == ask_id).values(message_id=message_id))


async def ask_by_message(session: AsyncSession, chat_id: int, message_id: int) -> Ask | None:
    result = await session.execute(select(Ask).where(Ask.chat_id == chat_id, Ask.message_id == message_id).limit(1))
    return result.scalar_one_or_none()


async def get_ask(session: AsyncSession, ask_id: int) -> Ask | None:
    return await session.get(Ask, ask_id)


async def add_reveal(session: AsyncSession, question_id: str, chat_id: int, user_id: int | None) -> None:
    session.add(Reveal(question_id=question_id, chat_id=chat_id, user_id=user_id, created_at=utcnow()))

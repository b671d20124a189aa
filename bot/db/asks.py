"""Asks (a question shown in a chat) and reveals (a reference answer shown)."""

from __future__ import annotations

from sqlalchemy import bindparam, insert, select, update

from bot.db import chat_store as chats
from bot.db.models import Ask, Reveal, utcnow
from bot.db.session import Session
from bot.db.sql import Prepared, binds, columns, core, detached

# asking a question is the hottest write: prepared statements on the connection (bot.db.sql)
_ADD_ASK = Prepared(
    lambda _: (
        insert(Ask)
        .values(binds("chat_id", "user_id", "question_id", "source", "message_id", "asked_at"))
        .returning(Ask.id)
    )
)
_SET_MESSAGE = Prepared(
    lambda _: update(Ask).where(Ask.id == bindparam("ask_id")).values(message_id=bindparam("message_id"))
)


async def record_ask(
    session: Session,
    chat_id: int,
    question_id: str,
    *,
    user_id: int | None,
    source: str,
    message_id: int | None = None,
    make_pending: bool = True,
) -> Ask:
    values = {
        "chat_id": chat_id,
        "user_id": user_id,
        "question_id": question_id,
        "source": source,
        "message_id": message_id,
        "asked_at": utcnow(),
    }
    ask_id = (await core(session, _ADD_ASK(session), values)).scalar_one()
    await chats.count_seen(session, chat_id, question_id)
    if make_pending:
        await chats.set_pending_ask(session, chat_id, ask_id)
    return Ask(id=ask_id, **values)  # detached: for reading


async def forget_ask(session: Session, ask_id: int, chat_id: int, previous_pending: int | None) -> None:
    """A question that could not be sent: remove it and restore the chat's previous pending one."""
    ask = await session.get(Ask, ask_id)
    if ask is None:
        return
    await chats.uncount_seen(session, chat_id, ask.question_id)
    await session.delete(ask)
    await chats.set_pending_ask(session, chat_id, previous_pending, if_pending=ask_id)


async def set_ask_message(session: Session, ask_id: int, message_id: int) -> None:
    await core(session, _SET_MESSAGE(session), {"ask_id": ask_id, "message_id": message_id})


_BY_MESSAGE = Prepared(
    lambda _: (
        select(*columns(Ask)).where(Ask.chat_id == bindparam("chat"), Ask.message_id == bindparam("message")).limit(1)
    )
)
_BY_ID = Prepared(lambda _: select(*columns(Ask)).where(Ask.id == bindparam("ask_id")))
_ADD_REVEAL = Prepared(
    lambda _: insert(Reveal).values(
        question_id=bindparam("qid"), chat_id=bindparam("chat"), user_id=bindparam("uid"), created_at=bindparam("at")
    )
)


async def ask_by_message(session: Session, chat_id: int, message_id: int) -> Ask | None:
    """The ask shown by this message, detached (for reading)."""
    row = (await core(session, _BY_MESSAGE(session), {"chat": chat_id, "message": message_id})).first()
    return detached(Ask, row) if row is not None else None


async def get_ask(session: Session, ask_id: int) -> Ask | None:
    """The ask, detached (for reading)."""
    row = (await core(session, _BY_ID(session), {"ask_id": ask_id})).first()
    return detached(Ask, row) if row is not None else None


async def add_reveal(session: Session, question_id: str, chat_id: int, user_id: int | None) -> None:
    params = {"qid": question_id, "chat": chat_id, "uid": user_id, "at": utcnow()}
    await core(session, _ADD_REVEAL(session), params)

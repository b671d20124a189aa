"""Small typed storage functions. Each takes an :class:`AsyncSession` owned by the caller."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import delete, func, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncSession

from bot.db.models import (
    Answer,
    Ask,
    Chat,
    ChatSeen,
    Delivery,
    Poll,
    PollAnswer,
    ProcessedUpdate,
    Reveal,
    User,
    utcnow,
)


@dataclass(frozen=True, slots=True)
class UserInfo:
    id: int
    first_name: str = ""
    username: str | None = None
    tg_language: str | None = None


@dataclass(frozen=True, slots=True)
class ChatInfo:
    id: int
    type: str
    title: str | None = None


def _insert(session: AsyncSession) -> Any:
    bind = session.get_bind()
    return pg_insert if bind.dialect.name == "postgresql" else sqlite_insert


async def upsert_user(session: AsyncSession, info: UserInfo) -> User:
    ins = _insert(session)(User).values(
        id=info.id,
        first_name=info.first_name[:128],
        username=info.username,
        tg_language=info.tg_language,
        board_opt_out=False,
        created_at=utcnow(),
        last_seen_at=utcnow(),
    )
    ins = ins.on_conflict_do_update(
        index_elements=[User.id],
        set_={
            "first_name": ins.excluded.first_name,
            "username": ins.excluded.username,
            "tg_language": ins.excluded.tg_language,
            "last_seen_at": ins.excluded.last_seen_at,
        },
    )
    await session.execute(ins)
    user = await session.get(User, info.id, populate_existing=True)
    assert user is not None
    return user


async def upsert_chat(session: AsyncSession, info: ChatInfo) -> Chat:
    ins = _insert(session)(Chat).values(
        id=info.id,
        type=info.type,
        title=(info.title or "")[:256] or None,
        created_at=utcnow(),
        push_enabled=False,
        push_weekdays_only=False,
        push_kind="question",
    )
    ins = ins.on_conflict_do_update(
        index_elements=[Chat.id], set_={"type": ins.excluded.type, "title": ins.excluded.title}
    )
    await session.execute(ins)
    chat = await session.get(Chat, info.id, populate_existing=True)
    assert chat is not None
    return chat


async def get_chat(session: AsyncSession, chat_id: int) -> Chat | None:
    return await session.get(Chat, chat_id)


async def get_user(session: AsyncSession, user_id: int) -> User | None:
    return await session.get(User, user_id)


async def seen_counts(session: AsyncSession, chat_id: int) -> dict[str, int]:
    rows = await session.execute(select(ChatSeen.question_id, ChatSeen.count).where(ChatSeen.chat_id == chat_id))
    return {qid: count for qid, count in rows.all()}


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
    ins = _insert(session)(ChatSeen).values(chat_id=chat_id, question_id=question_id, count=1)
    await session.execute(
        ins.on_conflict_do_update(
            index_elements=[ChatSeen.chat_id, ChatSeen.question_id],
            set_={"count": ChatSeen.count + 1},
        )
    )
    await session.flush()
    if make_pending:
        await session.execute(update(Chat).where(Chat.id == chat_id).values(pending_ask_id=ask.id))
    return ask


async def forget_ask(session: AsyncSession, ask_id: int, chat_id: int, previous_pending: int | None) -> None:
    """A question that could not be sent: remove it and restore the chat's previous pending one."""
    ask = await session.get(Ask, ask_id)
    if ask is None:
        return
    await session.execute(
        update(ChatSeen)
        .where(ChatSeen.chat_id == chat_id, ChatSeen.question_id == ask.question_id, ChatSeen.count > 0)
        .values(count=ChatSeen.count - 1)
    )
    await session.delete(ask)
    await session.execute(
        update(Chat).where(Chat.id == chat_id, Chat.pending_ask_id == ask_id).values(pending_ask_id=previous_pending)
    )


async def set_ask_message(session: AsyncSession, ask_id: int, message_id: int) -> None:
    await session.execute(update(Ask).where(Ask.id == ask_id).values(message_id=message_id))


async def ask_by_message(session: AsyncSession, chat_id: int, message_id: int) -> Ask | None:
    result = await session.execute(select(Ask).where(Ask.chat_id == chat_id, Ask.message_id == message_id).limit(1))
    return result.scalar_one_or_none()


async def get_ask(session: AsyncSession, ask_id: int) -> Ask | None:
    return await session.get(Ask, ask_id)


async def add_answer(
    session: AsyncSession,
    *,
    ask: Ask | None,
    question_id: str,
    user_id: int,
    chat_id: int,
    message_id: int | None,
    text: str,
    edited: bool = False,
    coverage: float | None = None,
    covered: Sequence[int] = (),
    at: datetime | None = None,
) -> Answer:
    answer = Answer(
        ask_id=ask.id if ask else None,
        question_id=question_id,
        user_id=user_id,
        chat_id=chat_id,
        message_id=message_id,
        text=text,
        edited=edited,
        coverage=coverage,
        covered=",".join(str(i) for i in covered) if coverage is not None else None,
        created_at=at or utcnow(),
    )
    session.add(answer)
    await session.flush()
    return answer


async def answer_by_message(session: AsyncSession, chat_id: int, message_id: int) -> Answer | None:
    result = await session.execute(
        select(Answer)
        .where(Answer.chat_id == chat_id, Answer.message_id == message_id)
        .order_by(Answer.id.desc())
        .limit(1)
    )
    return result.scalar_one_or_none()


async def latest_answer(session: AsyncSession, user_id: int, question_id: str) -> Answer | None:
    result = await session.execute(
        select(Answer)
        .where(Answer.user_id == user_id, Answer.question_id == question_id)
        .order_by(Answer.id.desc())
        .limit(1)
    )
    return result.scalar_one_or_none()


async def answers_for_ask(session: AsyncSession, ask_id: int) -> int:
    result = await session.execute(select(func.count(func.distinct(Answer.user_id))).where(Answer.ask_id == ask_id))
    return int(result.scalar_one())


async def add_reveal(session: AsyncSession, question_id: str, chat_id: int, user_id: int | None) -> None:
    session.add(Reveal(question_id=question_id, chat_id=chat_id, user_id=user_id, created_at=utcnow()))


async def answered_per_question(session: AsyncSession, user_id: int) -> set[str]:
    rows = await session.execute(select(Answer.question_id).where(Answer.user_id == user_id).distinct())
    return set(rows.scalars())


async def set_chat_fields(session: AsyncSession, chat_id: int, **values: object) -> None:
    await session.execute(update(Chat).where(Chat.id == chat_id).values(**values))


async def subscribed_chat_ids(session: AsyncSession) -> list[int]:
    """The chats with the daily push on (a broadcast's audience)."""
    return list((await session.execute(select(Chat.id).where(Chat.push_enabled.is_(True)))).scalars())


async def set_user_fields(session: AsyncSession, user_id: int, **values: object) -> None:
    await session.execute(update(User).where(User.id == user_id).values(**values))


async def migrate_chat(session: AsyncSession, old_id: int, new_id: int) -> None:
    """A group became a supergroup: move the chat, its settings and its history to the new id."""
    old = await session.get(Chat, old_id)
    if old is None:
        return
    if await session.get(Chat, new_id) is None:
        columns = {c.key: getattr(old, c.key) for c in Chat.__table__.columns if c.key != "id"}
        columns["type"] = "supergroup"
        session.add(Chat(id=new_id, **columns))
        await session.flush()
    for model in (Ask, ChatSeen, Delivery, Answer, Reveal, Poll, PollAnswer):
        await session.execute(update(model).where(model.chat_id == old_id).values(chat_id=new_id))
    await session.delete(old)


async def claim_update(session: AsyncSession, update_id: int) -> bool:
    """True the first time an update id is seen (by any instance sharing the database)."""
    ins = _insert(session)(ProcessedUpdate).values(update_id=update_id, received_at=utcnow())
    result = await session.execute(ins.on_conflict_do_nothing(index_elements=[ProcessedUpdate.update_id]))
    return bool(result.rowcount)  # type: ignore[attr-defined]


async def prune_updates(session: AsyncSession, older_than: datetime) -> None:
    await session.execute(delete(ProcessedUpdate).where(ProcessedUpdate.received_at < older_than))

"""Small typed storage functions. Each takes an :class:`AsyncSession` owned by the caller."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime
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
    InboxUpdate,
    Interview,
    Poll,
    PollAnswer,
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


async def answer_to_message(session: AsyncSession, chat_id: int, message_id: int) -> Answer | None:
    """The answer stored from this message (not from an edit of it), if any."""
    result = await session.execute(
        select(Answer)
        .where(Answer.chat_id == chat_id, Answer.message_id == message_id, Answer.edited.is_(False))
        .limit(1)
    )
    return result.scalar_one_or_none()


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


async def last_delivery_date(session: AsyncSession, chat_id: int) -> date | None:
    """The local date of the chat's latest daily push (a day already served gets no second one)."""
    return await session.scalar(select(func.max(Delivery.local_date)).where(Delivery.chat_id == chat_id))


async def subscribed_chat_ids(session: AsyncSession) -> list[int]:
    """The chats with the daily push on (a broadcast's audience)."""
    return list((await session.execute(select(Chat.id).where(Chat.push_enabled.is_(True)))).scalars())


async def set_user_fields(session: AsyncSession, user_id: int, **values: object) -> None:
    await session.execute(update(User).where(User.id == user_id).values(**values))


# A chat's own settings (what /daily, /lang and /topics set), moved to the supergroup
_CHAT_SETTINGS = (
    "language", "timezone", "topic_filter", "push_enabled", "push_minute", "push_weekdays_only",
    "push_kind", "reveal_minute", "next_push_at", "next_push_date", "push_stopped_reason",
)  # fmt: skip


async def migrate_chat(session: AsyncSession, old_id: int, new_id: int) -> None:
    """A group became a supergroup: move its settings and history to the new id.

    Idempotent and order-independent: Telegram sends a service message to each id, and either may
    be handled first (the new id may already have a chat row made with defaults, and asks or seen
    counts of its own). The old group's settings win over such defaults; seen counts add up; a
    daily push stays one per date; open interviews move with everything else."""
    if old_id == new_id:
        return
    old = await session.get(Chat, old_id)
    if old is None:
        return  # moved already
    new = await session.get(Chat, new_id)
    if new is None:
        columns = {c.key: getattr(old, c.key) for c in Chat.__table__.columns if c.key != "id"}
        session.add(Chat(**{**columns, "id": new_id, "type": "supergroup"}))
        await session.flush()
    else:
        for key in _CHAT_SETTINGS:
            setattr(new, key, getattr(old, key))
        new.created_at = min(new.created_at, old.created_at)
        new.pending_ask_id = new.pending_ask_id or old.pending_ask_id
        await session.flush()
    # seen counts: add the old group's to the new one's
    old_seen = dict(
        (await session.execute(select(ChatSeen.question_id, ChatSeen.count).where(ChatSeen.chat_id == old_id))).all()
    )
    if old_seen:
        new_seen = dict(
            (
                await session.execute(
                    select(ChatSeen.question_id, ChatSeen.count).where(
                        ChatSeen.chat_id == new_id, ChatSeen.question_id.in_(old_seen)
                    )
                )
            ).all()
        )
        for question_id, count in new_seen.items():
            await session.execute(
                update(ChatSeen)
                .where(ChatSeen.chat_id == new_id, ChatSeen.question_id == question_id)
                .values(count=count + old_seen[question_id])
            )
        await session.execute(
            delete(ChatSeen).where(ChatSeen.chat_id == old_id, ChatSeen.question_id.in_(list(new_seen)))
        )
    # one delivery per chat and date: the new id's wins where both have one
    taken = select(Delivery.local_date).where(Delivery.chat_id == new_id).scalar_subquery()
    await session.execute(delete(Delivery).where(Delivery.chat_id == old_id, Delivery.local_date.in_(taken)))
    for model in (ChatSeen, Delivery, Ask, Answer, Reveal, Poll, PollAnswer, Interview):
        await session.execute(update(model).where(model.chat_id == old_id).values(chat_id=new_id))
    await session.delete(old)


async def prune_updates(session: AsyncSession, older_than: datetime) -> None:
    """Forget handled inbox rows older than ``older_than`` (pending ones stay)."""
    await session.execute(
        delete(InboxUpdate).where(InboxUpdate.done_at.is_not(None), InboxUpdate.received_at < older_than)
    )

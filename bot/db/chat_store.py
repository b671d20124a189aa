"""Chats and users: who they are, their settings, the questions a chat has seen, and moving a
group's history when it becomes a supergroup. Each function takes an :class:`Session` owned
by the caller."""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from sqlalchemy import bindparam, delete, func, select, update

from bot.db.models import (
    Answer,
    Ask,
    Chat,
    ChatSeen,
    Delivery,
    Interview,
    Poll,
    PollAnswer,
    PushKind,
    Reveal,
    User,
    utcnow,
)
from bot.db.session import Session
from bot.db.sql import Prepared, columns, core, detached, insert_for


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


async def upsert_user(session: Session, info: UserInfo) -> User:
    ins = insert_for(session)(User).values(
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


async def upsert_chat(session: Session, info: ChatInfo) -> Chat:
    ins = insert_for(session)(Chat).values(
        id=info.id,
        type=info.type,
        title=(info.title or "")[:256] or None,
        created_at=utcnow(),
        push_enabled=False,
        push_weekdays_only=False,
        push_kind=PushKind.QUESTION,
    )
    ins = ins.on_conflict_do_update(
        index_elements=[Chat.id], set_={"type": ins.excluded.type, "title": ins.excluded.title}
    )
    await session.execute(ins)
    chat = await session.get(Chat, info.id, populate_existing=True)
    assert chat is not None
    return chat


_CHAT = Prepared(lambda _: select(*columns(Chat)).where(Chat.id == bindparam("id")))
_USER = Prepared(lambda _: select(*columns(User)).where(User.id == bindparam("id")))


async def read_chat(session: Session, chat_id: int) -> Chat | None:
    """The chat's row as a detached object (every update reads it: a prepared statement)."""
    row = (await core(session, _CHAT(session), {"id": chat_id})).first()
    return detached(Chat, row) if row is not None else None


async def read_user(session: Session, user_id: int) -> User | None:
    """The user's row as a detached object (every update reads it: a prepared statement)."""
    row = (await core(session, _USER(session), {"id": user_id})).first()
    return detached(User, row) if row is not None else None


async def get_chat(session: Session, chat_id: int) -> Chat | None:
    return await session.get(Chat, chat_id)


async def get_user(session: Session, user_id: int) -> User | None:
    return await session.get(User, user_id)


async def set_chat_fields(session: Session, chat_id: int, **values: object) -> None:
    await session.execute(update(Chat).where(Chat.id == chat_id).values(**values))


async def set_user_fields(session: Session, user_id: int, **values: object) -> None:
    await session.execute(update(User).where(User.id == user_id).values(**values))


async def set_board_opt_out(session: Session, user_id: int, opted_out: bool) -> None:
    user = await session.get(User, user_id)
    if user is not None:
        user.board_opt_out = opted_out


async def subscribed_chat_ids(session: Session) -> list[int]:
    """The chats with the daily push on (a broadcast's audience)."""
    return list((await session.execute(select(Chat.id).where(Chat.push_enabled.is_(True)))).scalars())


_SEEN_COUNTS = Prepared(
    lambda _: select(ChatSeen.question_id, ChatSeen.count).where(ChatSeen.chat_id == bindparam("chat_id"))
)


async def seen_counts(session: Session, chat_id: int) -> dict[str, int]:
    rows = await core(session, _SEEN_COUNTS(session), {"chat_id": chat_id})
    return {qid: count for qid, count in cast("list[tuple[str, int]]", rows.all())}


_COUNT_SEEN = Prepared(
    lambda insert: (
        insert(ChatSeen)
        .values(chat_id=bindparam("chat"), question_id=bindparam("qid"), count=1)
        .on_conflict_do_update(
            index_elements=[ChatSeen.chat_id, ChatSeen.question_id], set_={"count": ChatSeen.count + 1}
        )
    )
)
_SET_PENDING = Prepared(
    lambda _: update(Chat).where(Chat.id == bindparam("chat")).values(pending_ask_id=bindparam("ask_id"))
)


async def count_seen(session: Session, chat_id: int, question_id: str) -> None:
    """One more showing of the question in the chat (every question asked: a prepared statement)."""
    await core(session, _COUNT_SEEN(session), {"chat": chat_id, "qid": question_id})


async def uncount_seen(session: Session, chat_id: int, question_id: str) -> None:
    """Take back one showing (of a question that could not be sent)."""
    await session.execute(
        update(ChatSeen)
        .where(ChatSeen.chat_id == chat_id, ChatSeen.question_id == question_id, ChatSeen.count > 0)
        .values(count=ChatSeen.count - 1)
    )


async def set_pending_ask(session: Session, chat_id: int, ask_id: int | None, *, if_pending: int | None = None) -> None:
    """The chat's pending question (the next plain message answers it); with ``if_pending``, only
    when that one is pending now."""
    if if_pending is None:  # every question asked: a prepared statement
        await core(session, _SET_PENDING(session), {"chat": chat_id, "ask_id": ask_id})
        return
    stmt = update(Chat).where(Chat.id == chat_id, Chat.pending_ask_id == if_pending)
    await session.execute(stmt.values(pending_ask_id=ask_id))


# A chat's own settings (what /daily, /lang and /topics set), moved to the supergroup
_CHAT_SETTINGS = (
    "language", "timezone", "topic_filter", "push_enabled", "push_minute", "push_weekdays_only",
    "push_kind", "reveal_minute", "next_push_at", "next_push_date", "push_stopped_reason",
)  # fmt: skip


async def migrate_chat(session: Session, old_id: int, new_id: int) -> None:
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


async def last_question(session: Session, chat_id: int) -> str | None:
    """The question last asked in a chat (by anything: /q, a push, an interview), or None."""
    latest = select(func.max(Ask.id)).where(Ask.chat_id == chat_id).scalar_subquery()
    return cast("str | None", await session.scalar(select(Ask.question_id).where(Ask.id == latest)))

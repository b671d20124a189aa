"""A user's own data: progress for /stats, the answers for /export, what is stored and /forget.

Privacy: every function takes the id of the person who asked (who sent the command or pressed the
button), never an id carried in a message or in button data.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, tzinfo

from bot.bank import Bank
from bot.core import srs, stats
from bot.core.schedule import get_tz
from bot.db import cards, user_data
from bot.db import chat_store as chats
from bot.db.engine import Database
from bot.db.user_data import ExportedAnswer, UserData

__all__ = ["ExportedAnswer", "Progress", "UserData", "export", "forget", "progress", "stored", "user_zone"]


def user_zone(zone: str | None, default: str) -> tuple[str, tzinfo]:
    """The user's time zone (set with /daily in the private chat), else ``default``; a zone this
    system no longer knows falls back to ``default`` too."""
    try:
        return zone or default, get_tz(zone or default)
    except (KeyError, ValueError):
        return default, get_tz(default)


def topic_specs(bank: Bank) -> list[tuple[str, Sequence[str]]]:
    return [(topic.id, bank.topic_question_ids(topic.id)) for topic in bank.topics]


@dataclass(frozen=True, slots=True)
class Progress:
    progress: stats.Progress
    due: int  # review cards due now whose question is still in the bank (as /review counts them)


async def progress(db: Database, bank: Bank, *, user_id: int, now: datetime, tz: tzinfo) -> Progress | None:
    """The user's progress by topic, streak and grades; None before the first answer."""
    async with db.read() as session:
        facts = await user_data.answer_facts(session, user_id)
        due_ids = await cards.due_questions(session, user_id, now)
    if not facts:
        return None
    due = len(srs.due_now(due_ids, now, bank.question))
    return Progress(stats.aggregate(topic_specs(bank), facts, today=now.astimezone(tz).date(), tz=tz), due)


async def export(db: Database, *, user_id: int) -> list[ExportedAnswer]:
    """Every answer of the user, oldest first, with the group's title where given in a group."""
    async with db.read() as session:
        return await user_data.exported_answers(session, user_id)


async def stored(db: Database, *, user_id: int) -> UserData:
    """What is stored about the user (shown before /forget asks for confirmation)."""
    async with db.read() as session:
        return await user_data.stored_data(session, user_id)


async def forget(db: Database, *, user_id: int) -> UserData:
    """Delete everything stored about the user, in one transaction; returns what was deleted."""
    async with db.write() as session:
        return await user_data.forget_user(session, user_id)


async def set_language(db: Database, *, chat_id: int, user_id: int | None, private: bool, lang: str) -> None:
    """The interface language: the user's own in a private chat, the group's in a group."""
    async with db.write() as session:
        if private and user_id is not None:
            await chats.set_user_fields(session, user_id, language=lang)
        else:
            await chats.set_chat_fields(session, chat_id, language=lang)


async def language(db: Database, *, user_id: int) -> str | None:
    """The interface language the user chose (None: not chosen, or not stored)."""
    async with db.read() as session:
        user = await chats.get_user(session, user_id)
    return user.language if user else None

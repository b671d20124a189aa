"""What the admin's /usage shows: active users, chats by type, subscriptions, answers per day."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import func, select

from bot.db.models import Answer, Chat, User
from bot.db.session import Session


@dataclass(frozen=True, slots=True)
class Usage:
    active: dict[int, int | None]  # days → users seen within them
    chats: dict[str, int]  # chat type → count
    subscribed: int | None  # chats with the daily push on
    answers_per_day: dict[str, int]  # "MM-DD" → answers, the last 7 days


async def usage(session: Session, now: datetime) -> Usage:
    active = {}
    for days in (1, 7, 30):
        active[days] = await session.scalar(
            select(func.count()).select_from(User).where(User.last_seen_at >= now - timedelta(days=days))
        )
    chats = {
        kind: count for kind, count in (await session.execute(select(Chat.type, func.count()).group_by(Chat.type)))
    }
    subscribed = await session.scalar(select(func.count()).select_from(Chat).where(Chat.push_enabled.is_(True)))
    since = now - timedelta(days=7)
    answers = await session.execute(select(Answer.created_at).where(Answer.created_at >= since))
    per_day: dict[str, int] = {}
    for (created,) in answers:
        key = created.strftime("%m-%d")
        per_day[key] = per_day.get(key, 0) + 1
    return Usage(active, chats, subscribed, per_day)

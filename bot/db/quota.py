"""Per-user daily counters (LLM gradings, transcriptions): one row per user and day."""

from __future__ import annotations

from typing import TypeVar

from sqlalchemy import select

from bot.db.models import LLMUsage, SttUsage
from bot.db.session import Session

U = TypeVar("U", LLMUsage, SttUsage)


async def take(session: Session, table: type[U], user_id: int, day: str, limit: int) -> bool:
    """Count one use for the user on ``day`` in ``table``; False once ``limit`` is reached."""
    query = select(table).where(table.user_id == user_id, table.day == day).with_for_update()
    row = (await session.execute(query)).scalar_one_or_none()
    if row is None:
        if limit <= 0:
            return False
        session.add(table(user_id=user_id, day=day, count=1))
        return True
    if row.count >= limit:
        return False
    row.count += 1
    return True

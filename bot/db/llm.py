"""The LLM examiner's cache of grades and its per-user daily quota."""

from __future__ import annotations

from datetime import datetime

from bot.db import quota
from bot.db.models import LLMGrade, LLMUsage
from bot.db.session import Session


async def cached_grade(session: Session, key: str) -> str | None:
    row = await session.get(LLMGrade, key)
    return row.result if row else None


async def store_grade(session: Session, key: str, result: str, now: datetime, user_id: int | None = None) -> None:
    """Keep a grade (the first one stored under ``key`` stays), with the user it was for (/forget)."""
    if await session.get(LLMGrade, key) is None:
        session.add(LLMGrade(key=key, result=result, created_at=now, user_id=user_id))


async def take_quota(session: Session, user_id: int, day: str, limit: int) -> bool:
    """Count one grading for the user on ``day``; False once ``limit`` is reached."""
    return await quota.take(session, LLMUsage, user_id, day, limit)

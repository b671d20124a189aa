"""The admin's /usage: how many use the bot, in which chats, how much they answer."""

from __future__ import annotations

from datetime import datetime

from bot.db import usage as store
from bot.db.engine import Database
from bot.db.usage import Usage

__all__ = ["Usage", "usage"]


async def usage(db: Database, *, now: datetime) -> Usage:
    async with db.read() as session:
        return await store.usage(session, now)

"""What a send outcome does to a chat, the same for pushes and broadcasts."""

from __future__ import annotations

import logging

from bot.db import chat_store
from bot.db.engine import Database

log = logging.getLogger(__name__)


async def switch_off(db: Database, chat_id: int, reason: str) -> None:
    """The chat blocked the bot (or is gone): no more pushes to it."""
    async with db.write() as session:
        await chat_store.set_chat_fields(session, chat_id, push_enabled=False, push_stopped_reason=reason[:64])
    log.info("push to chat %s switched off: %s", chat_id, reason)


async def move(db: Database, old_id: int, new_id: int) -> None:
    """The group became a supergroup: its settings and history move to the new id."""
    async with db.write() as session:
        await chat_store.migrate_chat(session, old_id, new_id)
    log.info("chat %s migrated to %s; its settings and history moved", old_id, new_id)

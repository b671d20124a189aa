"""A group became a supergroup: its settings and history move to the new id."""

from __future__ import annotations

from telegram import Update
from telegram.ext import ApplicationHandlerStop

from bot.push import outcome_actions as chats
from bot.tg.context import Ctx


async def on_migrate(update: Update, context: Ctx) -> None:
    """A group became a supergroup. Telegram tells both ids (``migrate_to_chat_id`` in the old
    group, ``migrate_from_chat_id`` in the new supergroup), in either order: both move the same
    way, and the second finds nothing left to move."""
    message = update.effective_message
    if message is None:
        return
    if message.migrate_to_chat_id is not None:
        old_id, new_id = message.chat_id, message.migrate_to_chat_id
    elif message.migrate_from_chat_id is not None:
        old_id, new_id = message.migrate_from_chat_id, message.chat_id
    else:
        return
    await chats.move(context.services.db, old_id, new_id)
    if message.migrate_to_chat_id is not None:
        raise ApplicationHandlerStop  # the old id is gone: no chat row to make for it again

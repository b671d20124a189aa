"""Who is talking: the chat and user rows every update starts from, kept up to date."""

from __future__ import annotations

from bot.db import chat_store as chats
from bot.db.chat_store import ChatInfo, UserInfo
from bot.db.engine import Database
from bot.db.models import Chat, User

__all__ = ["ChatInfo", "UserInfo", "load", "touch"]


async def touch(db: Database, chat: ChatInfo, user: UserInfo | None) -> None:
    """Create or refresh the chat (and the user, unless None) from what Telegram says of them;
    the bot's own settings on them are kept."""
    async with db.write() as session:
        await chats.upsert_chat(session, chat)
        if user is not None:
            await chats.upsert_user(session, user)


async def load(db: Database, *, chat_id: int, user_id: int | None) -> tuple[Chat | None, User | None]:
    """The chat's row and the user's row (None where not stored)."""
    async with db.read() as session:
        chat = await chats.read_chat(session, chat_id)
        user = await chats.read_user(session, user_id) if user_id is not None else None
    return chat, user

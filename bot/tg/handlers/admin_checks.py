"""Who may change a group's settings: its administrators (and anonymous admins)."""

from __future__ import annotations

from telegram import Update
from telegram.constants import ChatMemberStatus, ChatType
from telegram.error import TelegramError

from bot.i18n import t
from bot.tg.common import answer_query, reply_text
from bot.tg.context import Ctx

GROUP_ANONYMOUS_BOT = 1087968824


async def is_group_admin(update: Update, context: Ctx) -> bool:
    chat, user = update.effective_chat, update.effective_user
    if chat is None or chat.type == ChatType.PRIVATE:
        return True
    message = update.effective_message
    if message is not None and message.sender_chat is not None and message.sender_chat.id == chat.id:
        return True  # an anonymous administrator speaks as the group itself
    if user is None or user.id == GROUP_ANONYMOUS_BOT:
        return user is not None
    try:
        member = await context.bot.get_chat_member(chat.id, user.id)
    except TelegramError:
        return False
    return member.status in (ChatMemberStatus.OWNER, ChatMemberStatus.ADMINISTRATOR)


async def require_group_admin(update: Update, context: Ctx) -> bool:
    if await is_group_admin(update, context):
        return True
    if update.callback_query is not None:
        await answer_query(update, context, t(context.lang, "group_admin_only"), alert=True)
    else:
        await reply_text(update, t(context.lang, "group_admin_only"), quote=True)
    return False

"""What every handler shares: the per-update middleware, replying with views, asking a question."""

from __future__ import annotations

import logging

from telegram import Message, Update
from telegram.constants import ChatType, ParseMode

from bot.bank import Question
from bot.db import repo
from bot.i18n import language_from_telegram, t
from bot.tg.context import Ctx
from bot.tg.views import View, question_view

log = logging.getLogger(__name__)

MAX_QUERY = 200


def is_group(update: Update) -> bool:
    chat = update.effective_chat
    return chat is not None and chat.type in (ChatType.GROUP, ChatType.SUPERGROUP)


async def load_update_state(update: Update, context: Ctx) -> None:
    """Middleware (handler group -1): upsert the chat and user (at most every few minutes) and
    load their rows and the interface language into the context."""
    chat, user = update.effective_chat, update.effective_user
    if chat is None:
        return
    s = context.services
    key = (chat.id, user.id if user else 0)
    if not s.recently_touched(key):
        async with s.db.write() as session:
            await repo.upsert_chat(session, repo.ChatInfo(chat.id, chat.type, chat.title))
            if user is not None and not user.is_bot:
                await repo.upsert_user(
                    session,
                    repo.UserInfo(user.id, user.first_name or "", user.username, user.language_code),
                )
    async with s.db.read() as session:
        context.chat_row = await repo.get_chat(session, chat.id)
        if user is not None:
            context.user_row = await repo.get_user(session, user.id)
    default = s.settings.default_language
    if chat.type == ChatType.PRIVATE:
        chosen = context.user_row.language if context.user_row else None
        context.lang = chosen or language_from_telegram(user.language_code if user else None, default)
    else:
        chosen = context.chat_row.language if context.chat_row else None
        context.lang = chosen or default


async def reply(update: Update, view: View, *, quote: bool = False) -> Message | None:
    message = update.effective_message
    if message is None:
        return None
    return await message.reply_text(
        view.text,
        parse_mode=ParseMode.HTML,
        reply_markup=view.keyboard,
        disable_web_page_preview=True,
        do_quote=quote,
    )


async def reply_text(update: Update, text: str, *, quote: bool = False) -> Message | None:
    return await reply(update, View(text), quote=quote)


async def send_view(context: Ctx, chat_id: int, view: View) -> Message:
    return await context.bot.send_message(
        chat_id,
        view.text,
        parse_mode=ParseMode.HTML,
        reply_markup=view.keyboard,
        disable_web_page_preview=True,
    )


async def ask_question(update: Update, context: Ctx, q: Question, *, source: str, note: str = "") -> Message:
    """Send a question to the update's chat, then record it (it becomes the pending question)."""
    chat = update.effective_chat
    assert chat is not None
    user = update.effective_user
    s = context.services
    view = question_view(q, s.catalog.bank, context.lang, group=is_group(update), note=note)
    message = await send_view(context, chat.id, view)
    async with s.db.write() as session:
        await repo.record_ask(
            session,
            chat.id,
            q.id,
            user_id=user.id if user else None,
            source=source,
            message_id=message.message_id,
        )
    return message


def command_args(context: Ctx) -> str:
    return " ".join(context.args or []).strip()


async def check_query(update: Update, context: Ctx, query: str) -> bool:
    if len(query) > MAX_QUERY:
        await reply_text(update, t(context.lang, "query_too_long", length=len(query), limit=MAX_QUERY))
        return False
    return True


async def answer_query(update: Update, context: Ctx, text: str | None = None, *, alert: bool = False) -> None:
    """Answer the button press once (Telegram rejects a second answer)."""
    query = update.callback_query
    if query is None or context.query_answered:
        return
    context.query_answered = True
    await query.answer(text, show_alert=alert)

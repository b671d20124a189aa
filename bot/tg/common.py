"""What every handler shares: the per-update middleware, replying with views, asking a question."""

from __future__ import annotations

import contextlib
import logging

from telegram import Chat as TgChat
from telegram import InlineKeyboardButton, InlineKeyboardMarkup, Message, Update, WebAppInfo
from telegram import User as TgUser
from telegram.constants import ChatType
from telegram.error import TelegramError

from bot.bank import Question
from bot.i18n import counted, language_from_telegram, t
from bot.services import asking, chats
from bot.tg.context import Ctx, Services
from bot.tg.views import View, question_view

log = logging.getLogger(__name__)

MAX_QUERY = 200
_KINDS = ("message", "edited_message", "callback_query", "poll_answer", "my_chat_member", "poll")


def is_group(update: Update) -> bool:
    chat = update.effective_chat
    return chat is not None and chat.type in (ChatType.GROUP, ChatType.SUPERGROUP)


async def load_update_state(update: Update, context: Ctx) -> None:
    """Middleware (handler group -1): upsert the chat and user (at most every few minutes) and
    load their rows and the interface language into the context."""
    s = context.services
    if s.metrics is not None:
        kind = next((k for k in _KINDS if getattr(update, k, None) is not None), "other")
        s.metrics.updates.labels(kind=kind).inc()
    chat, user = update.effective_chat, update.effective_user
    if chat is None:
        return
    key = (chat.id, user.id if user else 0)
    fresh = not s.recently_touched(key)
    if fresh:
        await _upsert(s, chat, user)
    user_id = user.id if user else None
    context.chat_row, context.user_row = await chats.load(s.db, chat_id=chat.id, user_id=user_id)
    missing = context.chat_row is None or (user is not None and not user.is_bot and context.user_row is None)
    if missing and not fresh:  # deleted meanwhile (/forget, maybe on another instance): create again
        await _upsert(s, chat, user)
        context.chat_row, context.user_row = await chats.load(s.db, chat_id=chat.id, user_id=user_id)
    default = s.settings.default_language
    if chat.type == ChatType.PRIVATE:
        chosen = context.user_row.language if context.user_row else None
        context.lang = chosen or language_from_telegram(user.language_code if user else None, default)
    else:
        chosen = context.chat_row.language if context.chat_row else None
        context.lang = chosen or default


async def _upsert(s: Services, chat: TgChat, user: TgUser | None) -> None:
    person = user_info(user) if user is not None and not user.is_bot else None
    await chats.touch(s.db, chats.ChatInfo(chat.id, chat.type, chat.title), person)


def user_info(user: TgUser) -> chats.UserInfo:
    """What the bot keeps of a Telegram user."""
    return chats.UserInfo(user.id, user.first_name or "", user.username, user.language_code)


async def reply(update: Update, view: View, *, quote: bool = False) -> Message | None:
    message = update.effective_message
    if message is None:
        return None
    return await message.reply_text(view.text, reply_markup=view.keyboard, do_quote=quote)


async def show(update: Update, view: View, status: Message | None, *, quote: bool = False) -> Message | None:
    """Edit ``status`` (e.g. «⏳ Проверяю…», or the page of a list) into ``view``; a "not modified"
    answer means it already shows it. Without ``status``, or if the edit fails, reply."""
    if status is not None:
        try:
            edited = await status.edit_text(view.text, reply_markup=view.keyboard)
        except TelegramError as exc:
            if "not modified" in str(exc).lower():
                return status
        else:
            return edited if isinstance(edited, Message) else status
    return await reply(update, view, quote=quote)


async def page_to(update: Update, view: View) -> Message | None:
    """A page of a paged list: the message whose button was pressed is edited in place."""
    query = update.callback_query
    message = query.message if query is not None else None
    return await show(update, view, message if isinstance(message, Message) else None)


async def reply_text(update: Update, text: str, *, quote: bool = False) -> Message | None:
    return await reply(update, View(text), quote=quote)


async def send_view(context: Ctx, chat_id: int, view: View) -> Message:
    return await context.bot.send_message(chat_id, view.text, reply_markup=view.keyboard)


async def ask_question(
    update: Update,
    context: Ctx,
    q: Question,
    *,
    source: str,
    note: str = "",
    next_topic: str | None = None,
    next_search: tuple[int, str] | None = None,
) -> Message:
    """Record a question as asked (it becomes the pending one), send it, then note its message id.

    Recording first means a question the user sees is always one the bot knows about: if the
    database is down, the user is told so instead of seeing a question whose answer can't be kept.
    """
    chat = update.effective_chat
    assert chat is not None
    user = update.effective_user
    s = context.services
    view = question_view(
        q, s.bank, context.lang, group=is_group(update), note=note, next_topic=next_topic,
        next_search=next_search,
    )  # fmt: skip
    previous = context.chat_row.pending_ask_id if context.chat_row else None
    ask = await asking.record_ask(
        s.db, chat_id=chat.id, question_id=q.id, user_id=user.id if user else None, source=source
    )
    try:
        message = await send_view(context, chat.id, view)
    except Exception:
        await asking.cancel_ask(s.db, ask, previous_pending=previous)  # never shown: forget it
        raise
    await asking.note_message(s.db, ask, message.message_id)
    return message


def open_app_button(update: Update, context: Ctx, screen: str) -> InlineKeyboardButton | None:
    """«Открыть»: the Mini App (with WEBAPP_URL set) on ``screen``. A ``web_app`` button in a
    private chat; in a group (where Telegram allows no such button) a t.me link that opens it with
    the group in its signed start parameter (the group board)."""
    settings = context.services.settings
    chat = update.effective_chat
    if not settings.webapp_url or chat is None:
        return None
    text = t(context.lang, "webapp.open")
    if chat.type == ChatType.PRIVATE:
        joiner = "&" if "?" in settings.webapp_url else "?"
        return InlineKeyboardButton(text, web_app=WebAppInfo(f"{settings.webapp_url}{joiner}s={screen}"))
    if not context.bot.username:
        return None
    app = f"/{settings.webapp_short_name}" if settings.webapp_short_name else ""
    return InlineKeyboardButton(text, url=f"https://t.me/{context.bot.username}{app}?startapp=g{chat.id}")


def with_open_button(view: View, update: Update, context: Ctx, screen: str) -> View:
    """``view`` with the «Открыть» button as its last row (unchanged without WEBAPP_URL)."""
    button = open_app_button(update, context, screen)
    if button is None:
        return view
    rows = list(view.keyboard.inline_keyboard) if view.keyboard else []
    return View(view.text, InlineKeyboardMarkup([*rows, [button]]))


async def drop_buttons(update: Update) -> None:
    """Remove the buttons of the message whose button was pressed (it can't be pressed twice)."""
    query = update.callback_query
    if query is not None and query.message is not None:
        with contextlib.suppress(TelegramError):
            await query.edit_message_reply_markup(None)


def command_args(context: Ctx) -> str:
    return " ".join(context.args or []).strip()


async def check_query(update: Update, context: Ctx, query: str) -> bool:
    if len(query) > MAX_QUERY:
        await reply_text(
            update,
            t(context.lang, "query_too_long", length=counted(len(query), "chars", context.lang), limit=MAX_QUERY),
        )
        return False
    return True


async def answer_query(update: Update, context: Ctx, text: str | None = None, *, alert: bool = False) -> None:
    """Answer the button press once (Telegram rejects a second answer)."""
    query = update.callback_query
    if query is None or context.query_answered:
        return
    context.query_answered = True
    await query.answer(text, show_alert=alert)


async def on_unknown_command(update: Update, context: Ctx) -> None:
    message = update.effective_message
    if message is None or not message.text:
        return
    command = message.text.split()[0]
    name, _, target = command.partition("@")
    in_group = update.effective_chat is not None and update.effective_chat.type != ChatType.PRIVATE
    # in groups, only answer commands addressed to this bot (others may be for other bots)
    if in_group and target.lower() != (context.bot.username or "").lower():
        return
    await reply_text(update, t(context.lang, "unknown_command", command=name[:40].replace("<", "")))

"""Inline mode: `@<bot> lora` in any chat offers matching questions; a chosen one is posted as a
question card with a button that opens the bot on that question (`start=q_<n>`)."""

from __future__ import annotations

from telegram import (
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    InlineQueryResultArticle,
    InputTextMessageContent,
    Update,
)

from bot.bank import Bank, Question
from bot.i18n import language_from_telegram, t
from bot.services import asking, user_data
from bot.tg.context import Ctx
from bot.tg.views import inline_card

PAGE = 20  # results per page (Telegram takes at most 50)
CACHE_SECONDS = 3600  # the bank changes only on /reload
MAX_QUERY = 200


async def on_inline_query(update: Update, context: Ctx) -> None:
    query = update.inline_query
    if query is None:
        return
    s = context.services
    chosen = await user_data.language(s.db, user_id=query.from_user.id)
    lang = chosen or language_from_telegram(query.from_user.language_code, s.settings.default_language)
    raw = query.offset
    # only ASCII digits, and a sane page: "²".isdigit() is True, and a client may send anything
    offset = int(raw) if raw.isascii() and raw.isdigit() and len(raw) <= 6 else 0
    page = asking.search_page(s.catalog, query.query.strip()[:MAX_QUERY], offset=offset, size=PAGE)
    results = [_result(q, s.bank, lang, context.bot.username) for q in page.questions]
    await query.answer(
        results, cache_time=CACHE_SECONDS, is_personal=True,
        next_offset=str(page.next_offset) if page.next_offset is not None else "",
    )  # fmt: skip


def _result(q: Question, bank: Bank, lang: str, username: str) -> InlineQueryResultArticle:
    """A question offered in inline mode: posted as a question card with a button to the bot."""
    topic = bank.topic(q.topic)
    return InlineQueryResultArticle(
        id=q.id,
        title=q.text if len(q.text) <= 120 else q.text[:119] + "…",
        description=f"{topic.title(lang) if topic else q.topic} · {_kind(q, lang)}",
        input_message_content=InputTextMessageContent(inline_card(q, bank, lang)),
        reply_markup=_open_in_bot(username, q, lang),
    )


def _kind(q: Question, lang: str) -> str:
    """'Вопрос 463', 'Задача 13', or just 'Вопрос': never an internal id."""
    kind = t(lang, f"kind.{q.kind}")
    return f"{kind} {q.number}" if q.number is not None else kind


def _open_in_bot(username: str, q: Question, lang: str) -> InlineKeyboardMarkup:
    """The deep link that asks this question in the private chat with the bot."""
    url = f"https://t.me/{username}?start=q_{q.label}"
    return InlineKeyboardMarkup([[InlineKeyboardButton(t(lang, "inline.answer_in_bot"), url=url)]])

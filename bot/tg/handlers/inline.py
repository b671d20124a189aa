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
from telegram.constants import ParseMode

from bot.bank import Question
from bot.i18n import language_from_telegram, t
from bot.services import user_data
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
    catalog = s.catalog
    bank = catalog.bank
    text = query.query.strip()[:MAX_QUERY]
    ids = [h.question_id for h in catalog.search.search(text, limit=100)] if text else list(bank.questions)
    offset = int(query.offset) if query.offset.isdigit() else 0
    page = [q for qid in ids[offset : offset + PAGE] if (q := bank.question(qid)) is not None]
    username = context.bot.username
    results = []
    for q in page:
        topic = bank.topic(q.topic)
        results.append(
            InlineQueryResultArticle(
                id=q.id,
                title=q.text if len(q.text) <= 120 else q.text[:119] + "…",
                description=f"{topic.title(lang) if topic else q.topic} · {_kind(q, lang)}",
                input_message_content=InputTextMessageContent(
                    inline_card(q, bank, lang), parse_mode=ParseMode.HTML, disable_web_page_preview=True
                ),
                reply_markup=_open_in_bot(username, q, lang),
            )
        )
    more = offset + PAGE < len(ids)
    await query.answer(
        results, cache_time=CACHE_SECONDS, is_personal=True, next_offset=str(offset + PAGE) if more else ""
    )


def _kind(q: Question, lang: str) -> str:
    """'Вопрос 463', 'Задача 13', or just 'Вопрос': never an internal id."""
    kind = t(lang, f"kind.{q.kind}")
    return f"{kind} {q.number}" if q.number is not None else kind


def _open_in_bot(username: str, q: Question, lang: str) -> InlineKeyboardMarkup:
    """The deep link that asks this question in the private chat with the bot."""
    url = f"https://t.me/{username}?start=q_{q.label}"
    return InlineKeyboardMarkup([[InlineKeyboardButton(t(lang, "inline.answer_in_bot"), url=url)]])

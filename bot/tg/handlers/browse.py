"""/glossary, /search and /topics: finding terms and questions."""

from __future__ import annotations

from telegram import Update

from bot.bank.markdown import escape
from bot.i18n import t
from bot.services import asking
from bot.tg.callbacks import GlossaryPage, GlossaryTopic, GlossaryTopics, SearchPage, TermCard, TopicFilter
from bot.tg.common import (
    answer_query,
    check_query,
    command_args,
    is_group,
    page_to,
    reply,
    reply_text,
    with_open_button,
)
from bot.tg.context import Ctx
from bot.tg.handlers.admin_checks import is_group_admin
from bot.tg.handlers.questions import next_question
from bot.tg.views import (
    did_you_mean_view,
    glossary_topic_view,
    glossary_topics_view,
    glossary_view,
    search_view,
    term_view,
    topics_view,
)


async def cmd_glossary(update: Update, context: Ctx) -> None:
    catalog = context.services.catalog
    query = command_args(context)
    if not query:
        await reply(update, with_open_button(glossary_view(catalog.bank, context.lang), update, context, "glossary"))
        return
    if not await check_query(update, context, query):
        return
    await show_term_lookup(update, context, query)


async def show_term_lookup(update: Update, context: Ctx, query: str) -> None:
    catalog = context.services.catalog
    matches = catalog.glossary.lookup(query)
    if not matches:
        await reply_text(update, t(context.lang, "glossary_not_found", query=escape(query)))
    elif catalog.glossary.is_sure(matches):
        await reply(update, term_view(matches[0].term, catalog.bank, context.lang))
    else:
        offered = catalog.glossary.offered(matches)
        await reply(update, did_you_mean_view(query, [m.term for m in offered], context.lang))


async def cb_term(update: Update, context: Ctx, data: TermCard) -> None:
    bank = context.services.bank
    term = bank.term(data.term_id)
    if term is None:
        await reply_text(update, t(context.lang, "stale_button"))
        return
    await reply(update, term_view(term, bank, context.lang, data.page))


async def cb_glossary_page(update: Update, context: Ctx, data: GlossaryPage) -> None:
    view = glossary_view(context.services.bank, context.lang, data.page)
    await page_to(update, with_open_button(view, update, context, "glossary"))


async def cb_glossary_topics(update: Update, context: Ctx, data: GlossaryTopics) -> None:
    await page_to(update, glossary_topics_view(context.services.bank, context.lang))


async def cb_glossary_topic(update: Update, context: Ctx, data: GlossaryTopic) -> None:
    view = glossary_topic_view(context.services.bank, context.lang, data.topic_id, data.page)
    await page_to(update, view) if view else await reply_text(update, t(context.lang, "stale_button"))


async def cmd_search(update: Update, context: Ctx) -> None:
    query = command_args(context)
    if not query:
        await reply_text(update, t(context.lang, "search_usage"))
        return
    if not await check_query(update, context, query):
        return
    await show_search(update, context, query, 0)


async def show_search(update: Update, context: Ctx, query: str, page: int) -> None:
    catalog = context.services.catalog
    found = catalog.find(query, limit=80)
    ids = [hit.question_id for hit in found.hits]
    if not ids:
        await reply_text(update, t(context.lang, "nothing_found", query=escape(query)))
        return
    view = search_view(catalog, query, ids, context.lang, page, corrected=found.corrected)
    view = with_open_button(view, update, context, "bank")
    await (page_to(update, view) if update.callback_query else reply(update, view))


async def cb_search(update: Update, context: Ctx, data: SearchPage) -> None:
    await show_search(update, context, data.query, data.page)


async def cmd_topics(update: Update, context: Ctx) -> None:
    s = context.services
    answered: set[str] = set()
    if update.effective_user is not None:
        answered = await asking.answered_questions(s.db, user_id=update.effective_user.id)
    current = context.chat_row.topic_filter if context.chat_row else None
    await reply(update, topics_view(s.bank, context.lang, answered, current))


async def cb_topic(update: Update, context: Ctx, data: TopicFilter) -> None:
    s = context.services
    chat = update.effective_chat
    assert chat is not None
    topic = s.bank.topic(data.topic_id) if data.topic_id is not None else None
    if data.topic_id is not None and topic is None:
        await reply_text(update, t(context.lang, "stale_button"))
        return
    if is_group(update) and not await is_group_admin(update, context):
        # the group's filter is its daily-push topic too: admins change it; a member gets a question
        if topic is None:
            await answer_query(update, context, t(context.lang, "group_admin_only"), alert=True)
            return
        await answer_query(update, context, t(context.lang, "filter_admins_only"))
        await next_question(update, context, topic.id)
        return
    await asking.set_topic_filter(s.db, chat_id=chat.id, topic_id=topic.id if topic else None)
    if context.chat_row is not None:
        context.chat_row.topic_filter = topic.id if topic else None
    if topic is None:
        await reply_text(update, t(context.lang, "filter_cleared"))
        return
    await reply_text(update, t(context.lang, "filter_set", topic=escape(topic.title(context.lang))))
    await next_question(update, context, topic.id)

"""/q, /answer, the question buttons and free-text answers."""

from __future__ import annotations

import contextlib

from telegram import Update
from telegram.constants import ChatAction, ChatType
from telegram.error import TelegramError

from bot.bank import Question
from bot.bank.markdown import escape
from bot.db import practice_repo, repo
from bot.db.models import Ask
from bot.i18n import t
from bot.services import answers, asking
from bot.services.grading import Outcome
from bot.tg.callbacks import Callback
from bot.tg.common import answer_query, ask_question, check_query, command_args, is_group, reply, reply_text, show
from bot.tg.context import Ctx
from bot.tg.views import View, answer_views, confirm_short_view, feedback_view, nothing_found_view, question_terms_view


async def next_question(update: Update, context: Ctx, topic: str | None = None, *, source: str = "q") -> None:
    """Ask a random least-seen question from ``topic`` (default: the chat's filter)."""
    s = context.services
    chat = update.effective_chat
    assert chat is not None
    chat_filter = context.chat_row.topic_filter if context.chat_row else None
    choice = await asking.choose_next(
        s.db, s.catalog.bank, s.rng, chat_id=chat.id, topic=topic, chat_filter=chat_filter, source=source
    )
    if choice.question is None:
        topic_obj = s.catalog.bank.topic(choice.empty_topic or "")
        name = topic_obj.title(context.lang) if topic_obj else (choice.empty_topic or "")
        await reply_text(update, t(context.lang, "topic_empty", topic=escape(name)))
        return
    note = t(context.lang, "all_seen_cycle") if choice.new_round else ""
    await ask_question(update, context, choice.question, source=choice.source, note=note, next_topic=choice.next_topic)


async def cmd_q(update: Update, context: Ctx) -> None:
    arg = command_args(context)
    if not arg:
        await next_question(update, context)
        return
    if not await check_query(update, context, arg):
        return
    found = asking.resolve(context.services.catalog, arg)
    if found.kind == "topic":
        await next_question(update, context, found.topic)
    elif found.question is not None:
        await ask_question(update, context, found.question, source=found.source)
    elif found.kind == "not_found":
        await reply_text(update, t(context.lang, "question_not_found", ref=escape(found.ref)))
    else:
        await reply(update, nothing_found_view(context.services.catalog.bank, arg, context.lang))


async def _pending_ask(update: Update, context: Ctx) -> Ask | None:
    """The question a message refers to: the replied-to question, else (private) the pending one."""
    message = update.effective_message
    chat = update.effective_chat
    assert message is not None
    assert chat is not None
    s = context.services
    async with s.db.read() as session:
        replied = message.reply_to_message
        if replied is not None and replied.from_user and replied.from_user.id == context.bot.id:
            ask = await repo.ask_by_message(session, chat.id, replied.message_id)
            if ask is not None:
                return ask
        if chat.type == ChatType.PRIVATE and context.chat_row and context.chat_row.pending_ask_id:
            return await repo.get_ask(session, context.chat_row.pending_ask_id)
    return None


async def reveal(update: Update, context: Ctx, q: Question) -> None:
    s = context.services
    chat, user = update.effective_chat, update.effective_user
    assert chat is not None
    views = answer_views(q, s.catalog.bank, context.lang)
    if chat.type == ChatType.PRIVATE and user is not None:
        async with s.db.read() as session:
            mine = await repo.latest_answer(session, user.id, q.id)
        if mine is not None:
            label = "Ваш ответ" if context.lang == "ru" else "Your answer"
            quote = f"<b>{label}:</b>\n<blockquote expandable>{escape(mine.text)}</blockquote>"
            views = [View(quote), *views]
    async with s.db.write() as session:
        await repo.add_reveal(session, q.id, chat.id, user.id if user else None)
    for view in views:
        await context.bot.send_message(
            chat.id,
            view.text,
            parse_mode="HTML",
            reply_markup=view.keyboard,
            disable_web_page_preview=True,
        )


async def cmd_answer(update: Update, context: Ctx) -> None:
    arg = command_args(context)
    bank = context.services.catalog.bank
    if arg:
        q = bank.resolve(arg)
        if q is None:
            await reply_text(update, t(context.lang, "question_not_found", ref=escape(arg[:50])))
            return
        await reveal(update, context, q)
        return
    ask = await _pending_ask(update, context)
    if ask is None:
        await reply_text(update, t(context.lang, "no_question_for_answer"))
        return
    q = bank.question(ask.question_id)
    if q is None:
        await reply_text(update, t(context.lang, "question_gone"))
        return
    await reveal(update, context, q)


SHORT_CHARS = 2
_NOT_ANSWERS = frozenset({"?", "??", "???", "...", "…", "ok", "ок", "да", "нет", "ага", "hm", "хм", "+", "-"})


def looks_like_no_answer(text: str) -> bool:
    """A 1-2 character message or a bare "?": probably not meant as the answer."""
    stripped = text.strip().casefold()
    return len(stripped) <= SHORT_CHARS or stripped in _NOT_ANSWERS


async def on_answer_text(update: Update, context: Ctx) -> None:
    """A plain message: the user's answer to the replied-to or pending question."""
    message = update.effective_message
    chat, user = update.effective_chat, update.effective_user
    if message is None or chat is None or user is None or not message.text:
        return
    ask = await _pending_ask(update, context)
    if ask is None:
        if chat.type == ChatType.PRIVATE:
            await reply_text(update, t(context.lang, "no_pending"))
        return
    q = context.services.catalog.bank.question(ask.question_id)
    if q is None:
        await reply_text(update, t(context.lang, "question_gone"), quote=True)
        return
    if looks_like_no_answer(message.text):
        view = confirm_short_view(message.text, ask.id, user.id, context.lang)
        await reply(update, view, quote=is_group(update))
        return
    await submit_answer(update, context, ask, q, message.text, message.message_id)


async def cb_confirm_short(update: Update, context: Ctx, cb: Callback) -> None:
    """«Это ваш ответ?» — yes stores the short message as the answer, no drops it. Only its author
    can answer (the button carries the ask, the author and the text)."""
    chat, user = update.effective_chat, update.effective_user
    if chat is None or user is None:
        return
    ask: Ask | None = None
    text = ""
    if cb.op == "ay":
        ask_id, author, text = cb.args[0], cb.args[1], cb.args[2]
        if not (ask_id.isdigit() and author.isdigit()):
            await answer_query(update, context, t(context.lang, "stale_button"))
            return
        if int(author) != user.id:
            await answer_query(update, context, t(context.lang, "practice.confirm_not_yours"), alert=True)
            return
        async with context.services.db.read() as session:
            ask = await repo.get_ask(session, int(ask_id))
    q = context.services.catalog.bank.question(ask.question_id) if ask and ask.chat_id == chat.id else None
    query = update.callback_query
    if query is not None and query.message is not None:
        with contextlib.suppress(TelegramError):
            await query.edit_message_reply_markup(None)
    if ask is None or q is None:
        await reply_text(update, t(context.lang, "practice.confirm_dropped"))
        return
    await submit_answer(update, context, ask, q, text, None)


async def submit_answer(update: Update, context: Ctx, ask: Ask, q: Question, text: str, message_id: int | None) -> None:
    """Store the answer, grade it, review the card, reply with feedback (or move the interview on).
    With the LLM examiner, the answer is stored first and «⏳ Проверяю…» is edited into the result."""
    chat, user = update.effective_chat, update.effective_user
    assert chat is not None and user is not None
    s = context.services
    bank = s.catalog.bank
    if ask.source == "interview":
        async with s.db.read() as session:
            pending = await practice_repo.item_for_ask(session, ask.id)
        if pending is not None and pending[0].user_id == user.id:
            from bot.tg.handlers.interview import awaits_follow_up, on_follow_up_answer

            if awaits_follow_up(*pending):
                await on_follow_up_answer(update, context, pending[0], pending[1], text)
                return
    status = None
    if s.grader.name == "keywords":
        outcome = Outcome(s.grader.grade_sync(q, text, bank.lexicon))
        recorded = await answers.record_answer(
            s.db, ask=ask, question_id=q.id, user_id=user.id, chat_id=chat.id, message_id=message_id,
            text=text, grade=outcome.grade, now=s.clock(),
        )  # fmt: skip
    else:
        recorded = await answers.record_answer(
            s.db, ask=ask, question_id=q.id, user_id=user.id, chat_id=chat.id, message_id=message_id,
            text=text, grade=None, now=s.clock(),
        )  # fmt: skip
        status = await reply_text(update, t(context.lang, "practice.checking"), quote=is_group(update))
        with contextlib.suppress(TelegramError):  # only a hint that the bot is working
            await context.bot.send_chat_action(chat.id, ChatAction.TYPING)
        outcome = await s.grader.grade(q, text, lang=context.lang, user_key=str(user.id), lexicon=bank.lexicon)
        await answers.apply_grade(s.db, answer=recorded.answer, grade=outcome.grade, now=s.clock())
    if s.metrics is not None:
        s.metrics.answers.inc()
    if recorded.interview is not None:
        interview, item = recorded.interview
        current = interview.status == "open" and item.position == interview.position and item.answered_at is None
        if current and interview.user_id == user.id:
            from bot.tg.handlers.interview import on_interview_answer

            await on_interview_answer(update, context, interview, item, recorded.answer, outcome, status=status)
            return
    key = "answer_saved_again" if recorded.again else "answer_saved"
    head = t(context.lang, key, chars=len(text))
    view = feedback_view(
        q, outcome.grade, context.lang, head=head, next_op="rv" if ask.source == "review" else "n",
        fallback=outcome.fallback, next_topic=q.topic if ask.source == "topic" else None,
    )  # fmt: skip
    await show(update, view, status, quote=is_group(update))


async def on_edited_answer(update: Update, context: Ctx) -> None:
    """An edited answer is stored as a new answer; the earlier text is kept."""
    message = update.edited_message
    chat, user = update.effective_chat, update.effective_user
    if message is None or chat is None or user is None or not message.text:
        return
    s = context.services
    async with s.db.write() as session:
        earlier = await repo.answer_by_message(session, chat.id, message.message_id)
        if earlier is None:
            return
        ask = await repo.get_ask(session, earlier.ask_id) if earlier.ask_id else None
        await repo.add_answer(
            session,
            ask=ask,
            question_id=earlier.question_id,
            user_id=user.id,
            chat_id=chat.id,
            message_id=message.message_id,
            text=message.text,
            edited=True,
        )
    await context.bot.send_message(chat.id, t(context.lang, "answer_edited"), reply_to_message_id=message.message_id)


async def on_non_text(update: Update, context: Ctx) -> None:
    """Stickers, photos, voice... in a private chat while a question is pending."""
    if update.effective_chat and update.effective_chat.type == ChatType.PRIVATE:
        await reply_text(update, t(context.lang, "not_text"))


# Buttons -----------------------------------------------------------------------------------


async def cb_reveal(update: Update, context: Ctx, cb: Callback) -> None:
    q = context.services.catalog.bank.question(cb.args[0])
    if q is None:
        await reply_text(update, t(context.lang, "question_gone"))
        return
    await reveal(update, context, q)


async def cb_glossary(update: Update, context: Ctx, cb: Callback) -> None:
    bank = context.services.catalog.bank
    q = bank.question(cb.args[0])
    if q is None:
        await reply_text(update, t(context.lang, "question_gone"))
        return
    if len(q.terms) == 1 and (term := bank.term(q.terms[0])) is not None:
        from bot.tg.views import term_view

        await reply(update, term_view(term, bank, context.lang))
        return
    await reply(update, question_terms_view(q, bank, context.lang))


async def cb_next(update: Update, context: Ctx, cb: Callback) -> None:
    if cb.op == "nt" and context.services.catalog.bank.topic(cb.args[0]) is not None:
        await next_question(update, context, cb.args[0], source="next")
        return
    await next_question(update, context, source="next")


async def cb_search_result(update: Update, context: Ctx, cb: Callback) -> None:
    """A question from search results ("qs"), or «Следующий» after one ("sn"): the next result of
    the same query follows it."""
    catalog = context.services.catalog
    if cb.op == "qs":
        q, index, query = catalog.bank.question(cb.args[0]), cb.int(1), cb.args[2]
    else:
        index, query = cb.int(0), cb.args[1]
        q = asking.search_result(catalog, query, index)
        if q is None:  # the results are exhausted: go on by the chat's filter
            await next_question(update, context, source="next")
            return
    if q is None:
        await reply_text(update, t(context.lang, "question_gone"))
        return
    await ask_question(update, context, q, source="search", next_search=(index + 1, query))


async def cb_ask(update: Update, context: Ctx, cb: Callback) -> None:
    q = context.services.catalog.bank.question(cb.args[0])
    if q is None:
        await reply_text(update, t(context.lang, "question_gone"))
        return
    await ask_question(update, context, q, source="button")

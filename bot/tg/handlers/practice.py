"""Self-assessment after an answer, and /review of the questions that are due (FSRS)."""

from __future__ import annotations

import logging

from telegram import Message, Update
from telegram.error import BadRequest

from bot.core.srs import describe_interval
from bot.db.models import AskSource
from bot.i18n import t
from bot.services import answers, asking
from bot.tg.callbacks import Chosen, Next, NextReview, SelfAssess, decode
from bot.tg.common import answer_query, ask_question, reply_text
from bot.tg.context import Ctx
from bot.tg.views import after_assessment_keyboard

log = logging.getLogger(__name__)
GRADE_KEYS = {3: "practice.knew", 2: "practice.partly", 1: "practice.didnt"}


async def cb_self_assessment(update: Update, context: Ctx, data: SelfAssess) -> None:
    """«Знал» / «Частично» / «Не знал»: stored on the latest answer and fed to FSRS."""
    query, user, chat = update.callback_query, update.effective_user, update.effective_chat
    assert query is not None and chat is not None
    s = context.services
    q = s.bank.question(data.question_id)
    grade = data.grade
    if q is None or user is None or grade not in GRADE_KEYS:
        await answer_query(update, context, t(context.lang, "stale_button"), alert=True)
        return
    if data.answerer is not None and data.answerer != user.id:  # someone else's answer in a group
        await answer_query(update, context, t(context.lang, "practice.assess_not_yours"), alert=True)
        return
    now = s.clock()
    due = await answers.self_assess(s.db, user_id=user.id, chat_id=chat.id, question_id=q.id, grade=grade, now=now)
    text = t(
        context.lang,
        "practice.graded",
        grade=t(context.lang, GRADE_KEYS[grade]),
        when=describe_interval(due, now, context.lang),
    )
    await answer_query(update, context, text)
    message = query.message
    if isinstance(message, Message):
        markup = message.reply_markup
        rows = markup.inline_keyboard if markup else ()
        kinds = [decode(b.callback_data) for row in rows for b in row if isinstance(b.callback_data, str)]
        nexts = [k for k in kinds if isinstance(k, Next)]
        topic = next((k.topic for k in nexts if k.topic), None)
        next_op = "rv" if any(isinstance(k, NextReview) for k in kinds) else ("n" if nexts else "")
        keyboard = after_assessment_keyboard(q, context.lang, next_op, topic, t(context.lang, GRADE_KEYS[grade]))
        try:
            await context.bot.edit_message_reply_markup(chat.id, message.message_id, reply_markup=keyboard)
        except BadRequest as exc:  # too old or gone: the grade is saved and the press was answered
            log.info("self-assessment buttons of %s not updated: %s", message.message_id, exc)


async def cb_noop(update: Update, context: Ctx, data: Chosen) -> None:
    """A label on a button (the chosen grade): only the press is acknowledged."""
    await answer_query(update, context)


async def cmd_review(update: Update, context: Ctx) -> None:
    await next_review(update, context)


async def cb_review_next(update: Update, context: Ctx, data: NextReview) -> None:
    await next_review(update, context)


async def next_review(update: Update, context: Ctx) -> None:
    """Ask the most overdue question of this user; or say when the next one comes due."""
    s = context.services
    user = update.effective_user
    if user is None:
        return
    now = s.clock()
    review = await asking.due_review(s.db, s.bank, user_id=user.id, now=now)
    if review.question is None:
        if review.upcoming is None:
            when = t(context.lang, "practice.review_empty")
        else:
            when = t(
                context.lang, "practice.review_next_at", when=describe_interval(review.upcoming, now, context.lang)
            )
        await reply_text(update, t(context.lang, "practice.review_none", next=when))
        return
    note = t(context.lang, "practice.review_header", count=review.due)
    await ask_question(update, context, review.question, source=AskSource.REVIEW, note=note)

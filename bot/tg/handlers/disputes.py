"""«Это не ошибка»: the user disputes a charge of the grader; the feedback is edited in place."""

from __future__ import annotations

import logging

from telegram import InlineKeyboardMarkup, Message, Update
from telegram.error import BadRequest

from bot.bank.markdown import escape
from bot.i18n import counted, t
from bot.services import disputes, interviews
from bot.services.feedback import MARKS
from bot.tg.callbacks import Dispute, SelfAssess, decode
from bot.tg.common import answer_query
from bot.tg.context import Ctx
from bot.tg.views import FeedbackButtons, dispute_rows, feedback_view

log = logging.getLogger(__name__)


async def cb_dispute(update: Update, context: Ctx, data: Dispute) -> None:
    """Record the dispute, take the charge out of the answer's score, edit the feedback in place."""
    query, user = update.callback_query, update.effective_user
    assert query is not None
    if user is None:
        return
    s = context.services
    lang = context.lang
    done = await disputes.dispute(
        s.db, s.bank, answer_id=data.answer_id, user_id=user.id, charge=data.charge, now=s.clock()
    )
    if done is disputes.Refused.NOT_YOURS:
        await answer_query(update, context, t(lang, "practice.dispute_not_yours"), alert=True)
        return
    if done is disputes.Refused.GONE:
        await answer_query(update, context, t(lang, "practice.dispute_gone"), alert=True)
        return
    assert isinstance(done, disputes.Disputed)
    await answer_query(update, context, t(lang, "practice.disputed_again" if done.again else "practice.disputed"))
    message = query.message
    if done.again or not isinstance(message, Message):
        return
    if data.report:
        await _report_again(context, message, data.answer_id)
        return
    markup = message.reply_markup
    rows = [list(row) for row in markup.inline_keyboard] if markup else []
    kinds = [[decode(b.callback_data) if isinstance(b.callback_data, str) else None for b in row] for row in rows]
    kept = [row for row, k in zip(rows, kinds, strict=True) if not any(isinstance(x, Dispute) for x in k)]
    rate = any(isinstance(x, SelfAssess) for k in kinds for x in k)
    buttons = FeedbackButtons(answer_id=done.answer_id, rate=False, reveal=False, next_op=None)
    view = feedback_view(
        done.question, done.grade, lang, head=_head(message, done, lang), disputed=done.disputed, buttons=buttons
    )
    text = view.text
    if rate:
        text += "\n\n" + t(lang, "practice.rate_yourself")
    keyboard = InlineKeyboardMarkup(dispute_rows(done.grade, lang, done.answer_id) + kept)
    try:
        await message.edit_text(text, reply_markup=keyboard)
    except BadRequest as exc:  # too old or gone: the dispute is stored and the press was answered
        log.info("feedback %s not updated after a dispute: %s", message.message_id, exc)


def _head(message: Message, done: disputes.Disputed, lang: str) -> str:
    """What stood above the score line (the «saved» line, a voice answer's transcript, the interview's
    header), kept as it was; the interview header's mark follows the new verdict."""
    html = message.text_html or ""
    before = done.before
    score_line = t(
        lang, "practice.score", mark=MARKS[before.verdict], score=before.percent,
        verdict=t(lang, f"practice.verdict_{before.verdict}"),
    )  # fmt: skip
    at = html.find(f"<b>{escape(score_line)}</b>")
    if at < 0:  # a message without its formatting entities: the plain text
        at = html.find(escape(score_line))
    if at < 0:
        return t(lang, "answer_saved", chars=counted(len(done.text), "chars", lang))
    head = html[:at].rstrip("\n")
    old_mark, new_mark = MARKS[before.verdict], MARKS[done.grade.verdict]
    return new_mark + head[len(old_mark) :] if head.startswith(old_mark + " ") else head


async def _report_again(context: Ctx, message: Message, answer_id: int) -> None:
    """A mock interview's report, shown again with the new score (pressed under the report)."""
    from bot.tg.handlers.interview import report_view

    s = context.services
    interview_id = await disputes.interview_of(s.db, answer_id)
    report = await interviews.report_of(s.db, s.bank, interview_id) if interview_id is not None else None
    if report is None:
        return
    view = report_view(s.bank, report, context.lang)
    try:
        await message.edit_text(view.text, reply_markup=view.keyboard)
    except BadRequest as exc:
        log.info("report %s not updated after a dispute: %s", message.message_id, exc)

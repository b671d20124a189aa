"""/interview: a mock interview of N questions, one after another, with a report at the end.

The session lives in the database (interviews, interview_items), so it survives restarts and can
be resumed or abandoned; one open session per user per chat.
"""

from __future__ import annotations

from dataclasses import replace

from telegram import InlineKeyboardButton, InlineKeyboardMarkup, Message, Update

from bot.bank import Bank, Question
from bot.bank.markdown import escape, inline_html
from bot.core.interview import ItemResult
from bot.db.models import Interview, InterviewItem
from bot.i18n import count_questions, t
from bot.services import answers, asking, interviews
from bot.services.feedback import MARKS, charge_lines, charges
from bot.tg.callbacks import Dispute, InterviewAction, Reveal
from bot.tg.common import command_args, is_group, reply, reply_text, send_view, show
from bot.tg.context import Ctx
from bot.tg.views import FeedbackButtons, View, feedback_view, question_view

GRADE_KEYS = {3: "practice.knew", 2: "practice.partly", 1: "practice.didnt"}


def _title(bank: Bank, topic_id: str, lang: str) -> str:
    topic = bank.topic(topic_id)
    return escape(topic.title(lang) if topic else topic_id)


def _clock(seconds: float) -> str:
    seconds = round(seconds)
    return f"{seconds // 60}:{seconds % 60:02d}"


async def cmd_interview(update: Update, context: Ctx) -> None:
    chat, user = update.effective_chat, update.effective_user
    if chat is None or user is None:
        return
    s, lang = context.services, context.lang
    request = interviews.parse_request(s.catalog, command_args(context).split())
    current = await interviews.open_interview(s.db, user_id=user.id, chat_id=chat.id)
    if request is not None and request.stop:
        if current is None:
            await reply_text(update, t(lang, "interview.no_open"))
        else:
            await _finish(update, context, current, abandoned=True)
        return
    if current is not None:
        await reply(update, open_exists_view(current, lang))
        return
    if request is None:
        await reply_text(update, t(lang, "interview.usage"))
        return
    interview = await interviews.start(s.deps, s.bank, user_id=user.id, chat_id=chat.id, request=request)
    if interview is None:
        await reply_text(update, t(lang, "interview.no_questions"))
        return
    await reply_text(update, started_text(s.bank, request, interview.size, lang))
    await _ask_current(update, context, interview)


def open_exists_view(current: Interview, lang: str) -> View:
    keyboard = InlineKeyboardMarkup([[
        InlineKeyboardButton(t(lang, "interview.resume"), callback_data=InterviewAction("resume").encode()),
        InlineKeyboardButton(t(lang, "interview.abandon"), callback_data=InterviewAction("abandon").encode()),
    ]])  # fmt: skip
    return View(t(lang, "interview.open_exists", done=current.position, size=current.size), keyboard)


def started_text(bank: Bank, request: interviews.Request, size: int, lang: str) -> str:
    names = ", ".join(_title(bank, tid, lang) for tid in request.topics)
    return t(
        lang, "interview.started", size=count_questions(size, lang),
        topics=t(lang, "interview.topics_label", topics=names) if request.topics else "",
        limit=(f" · ⏱ {_clock(request.time_limit)}" if request.time_limit else "")
        + (t(lang, "interview.deep_label") if request.deep else ""),
    )  # fmt: skip


async def _ask_current(update: Update, context: Ctx, interview: Interview) -> None:
    s = context.services
    chat = update.effective_chat
    assert chat is not None
    q = await interviews.current_question(s.db, s.bank, interview, now=s.clock())
    if q is None:
        await _finish(update, context, interview)
        return
    note = t(context.lang, "interview.header", n=interview.position + 1, size=interview.size)
    if interview.time_limit:
        note += "\n" + t(context.lang, "interview.limit", limit=_clock(interview.time_limit))
    view = question_view(q, s.bank, context.lang, group=is_group(update), note=note)
    ask = await interviews.record_asked(s.db, interview, q, now=s.clock())  # recorded before it is shown
    message = await send_view(context, chat.id, View(view.text, None))  # no reveal/next buttons mid-interview
    await asking.note_message(s.db, ask, message.message_id)


async def after_interview_answer(
    update: Update, context: Ctx, done: answers.Submitted, status: Message | None = None, *, prefix: str = ""
) -> Message | None:
    """After an interview's answer is stored: short feedback (or the follow-up), then the next
    question (or the report). ``prefix``: a voice answer's transcript, shown above the feedback in
    ``status``. Returns the message with the feedback."""
    assert done.interview is not None
    interview, item = done.interview
    lang = context.lang
    if done.follow_up_saved:
        saved = t(lang, "interview.follow_up_saved")
        if done.follow_up_reference:
            saved += "\n" + t(lang, "interview.follow_up_reference", answer=inline_html(done.follow_up_reference))
        shown = await show(update, View(prefix + saved), status)
        await _ask_current(update, context, interview)
        return shown
    assert done.outcome is not None
    grade = done.outcome.grade
    q = context.services.bank.questions[item.question_id]
    head = prefix + f"{MARKS[grade.verdict]} " + t(lang, "interview.header", n=item.position + 1, size=interview.size)
    buttons = FeedbackButtons(answer_id=done.answer_id, reveal=False, next_op=None)
    view = feedback_view(
        q, replace(grade, follow_up=""), lang, head=head, fallback=done.outcome.fallback, buttons=buttons
    )
    shown = await show(update, view, status)
    if done.follow_up:
        await reply_text(update, t(lang, "interview.follow_up", question=inline_html(done.follow_up)))
        return shown
    await _ask_current(update, context, interview)
    return shown


async def cmd_skip(update: Update, context: Ctx) -> None:
    chat, user = update.effective_chat, update.effective_user
    if chat is None or user is None:
        return
    s = context.services
    interview = await interviews.skip(s.db, user_id=user.id, chat_id=chat.id, now=s.clock())
    if interview is None:
        await reply_text(update, t(context.lang, "interview.nothing_to_skip"))
        return
    await reply_text(update, t(context.lang, "interview.skipped"))
    await _ask_current(update, context, interview)


async def cb_interview(update: Update, context: Ctx, data: InterviewAction) -> None:
    chat, user = update.effective_chat, update.effective_user
    if chat is None or user is None:
        return
    interview = await interviews.open_interview(context.services.db, user_id=user.id, chat_id=chat.id)
    if interview is None:
        await reply_text(update, t(context.lang, "interview.no_open"))
    elif data.action == "resume":
        await _ask_current(update, context, interview)
    else:
        await _finish(update, context, interview, abandoned=True)


async def _finish(update: Update, context: Ctx, interview: Interview, *, abandoned: bool = False) -> None:
    s = context.services
    report = await interviews.finish(s.db, s.bank, interview, abandoned=abandoned, now=s.clock())
    if report is None:
        await reply_text(update, t(context.lang, "interview.abandoned"))
        return
    await reply(update, report_view(s.bank, report, context.lang))


def report_view(bank: Bank, report: interviews.Report, lang: str) -> View:
    """The report: each question's score, self-assessment and time, the grader's charges with the
    sentence charged and «Не ошибка» for each, the overall score and the weakest topics."""
    assert report.summary is not None
    title = t(
        lang, "interview.report_title", size=count_questions(len(report.items), lang), duration=_clock(report.seconds)
    )
    lines, buttons, disputes = [title], [], []
    graded = report.graded or [None] * len(report.items)
    for n, (item, result, found) in enumerate(zip(report.items, report.results, graded, strict=True), 1):
        q = bank.question(item.question_id)
        if q is not None:
            buttons.append(
                InlineKeyboardButton(t(lang, "interview.answer_btn", n=n), callback_data=Reveal(q.id).encode())
            )
        lines += _item_lines(n, q, item, result, report.interview.time_limit, lang)
        if q is not None and found is not None:
            answer_id, grade = found
            lines += [f"   {inline_html(line.text)}" for line in charge_lines(q, grade, lang)]
            for k, charge in enumerate(charges(grade), 1):
                label = t(lang, "interview.dispute_btn", n=f"{n}.{k}" if len(charges(grade)) > 1 else n)
                disputes.append(InlineKeyboardButton(label, callback_data=Dispute(answer_id, charge, True).encode()))
    lines += ["", t(lang, "interview.score", score=report.summary.score)]
    if report.summary.weakest:
        names = ", ".join(f"{_title(bank, tid, lang)} ({score}%)" for tid, score in report.summary.weakest)
        lines.append(t(lang, "interview.weakest", topics=names))
    else:
        lines.append(t(lang, "interview.no_weak"))
    rows = [buttons[i : i + 4] for i in range(0, len(buttons), 4)]
    rows += [disputes[i : i + 2] for i in range(0, len(disputes), 2)]
    return View("\n".join(lines), InlineKeyboardMarkup(rows) if rows else None)


def _item_lines(
    n: int, q: Question | None, item: InterviewItem, result: ItemResult, time_limit: int | None, lang: str
) -> list[str]:
    """One question of the report: its score, self-assessment and time, and the follow-up."""
    text = q.text if q else item.question_id
    text = escape(text if len(text) <= 90 else text[:89] + "…")  # cut, then escape: never inside «&lt;»
    label = f"[{escape(q.label)}] " if q else ""
    if result.skipped:
        return [t(lang, "interview.item_skipped", n=n, label=label, text=text)]
    took = _clock(result.seconds) if result.seconds is not None else "—"
    if time_limit and result.seconds and result.seconds > time_limit:
        took += t(lang, "interview.overtime")
    self_text = t(lang, GRADE_KEYS[result.self_grade]) if result.self_grade else t(lang, "interview.no_self")
    coverage = f"{round(100 * (result.coverage or 0))}/100"
    lines = [t(lang, "interview.item", n=n, label=label, text=text, coverage=coverage, self=self_text, time=took)]
    if item.follow_up:
        said = item.follow_up_answer
        cut = said if said is None or len(said) <= 200 else said[:199] + "…"
        answer = escape(cut) if cut else t(lang, "interview.follow_up_skipped")
        lines.append(t(lang, "interview.follow_up_line", question=inline_html(item.follow_up), answer=answer))
    return lines

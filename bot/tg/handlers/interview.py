"""/interview: a mock interview of N questions, one after another, with a report at the end.

The session lives in the database (interviews, interview_items), so it survives restarts and can
be resumed or abandoned; one open session per user per chat.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncSession
from telegram import InlineKeyboardButton, InlineKeyboardMarkup, Message, Update

from bot.bank import Bank
from bot.bank.markdown import escape
from bot.bank.model import is_number
from bot.core import interview as core
from bot.db import practice_repo, repo
from bot.db.models import Answer, Interview, InterviewItem
from bot.i18n import count_questions, t
from bot.services.feedback import MARKS
from bot.services.grading import Outcome
from bot.tg.callbacks import Callback, encode
from bot.tg.common import command_args, is_group, reply, reply_text, send_view, show
from bot.tg.context import Ctx
from bot.tg.views import View, feedback_view, question_view

GRADE_KEYS = {3: "practice.knew", 2: "practice.partly", 1: "practice.didnt"}
STOP_WORDS = {"stop", "стоп", "end", "закончить", "abandon"}


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
    s = context.services
    args = command_args(context).split()
    async with s.db.read() as session:
        current = await practice_repo.open_interview(session, user.id, chat.id)
    if args and args[0].lower() in STOP_WORDS:
        if current is None:
            await reply_text(update, t(context.lang, "interview.no_open"))
            return
        await _finish(update, context, current, abandoned=True)
        return
    if current is not None:
        keyboard = InlineKeyboardMarkup([[
            InlineKeyboardButton(t(context.lang, "interview.resume"), callback_data=encode("iv", "resume")),
            InlineKeyboardButton(t(context.lang, "interview.abandon"), callback_data=encode("iv", "abandon")),
        ]])  # fmt: skip
        text = t(context.lang, "interview.open_exists", done=current.position, size=current.size)
        await reply(update, View(text, keyboard))
        return
    size, topics, limit = core.DEFAULT_SIZE, [], None
    for token in args:
        if is_number(token):
            size = max(1, min(core.MAX_SIZE, int(token)))
            continue
        seconds = core.parse_time_limit(token)
        if seconds is not None:
            limit = seconds
            continue
        topic = s.catalog.find_topic(token)
        if topic is None:
            await reply_text(update, t(context.lang, "interview.usage"))
            return
        topics.append(topic.id)
    bank = s.catalog.bank
    async with s.db.read() as session:
        answered = await repo.answered_per_question(session, user.id)
    chosen = core.choose(bank, topics, size, s.rng, answered)
    if not chosen:
        await reply_text(update, t(context.lang, "interview.no_questions"))
        return
    async with s.db.write() as session:
        interview = await practice_repo.create_interview(
            session, user.id, chat.id, chosen, topics=topics, time_limit=limit, now=s.clock()
        )
    names = ", ".join(_title(bank, tid, context.lang) for tid in topics)
    await reply_text(update, t(
        context.lang, "interview.started", size=count_questions(len(chosen), context.lang),
        topics=t(context.lang, "interview.topics_label", topics=names) if topics else "",
        limit=f" · ⏱ {_clock(limit)}" if limit else "",
    ))  # fmt: skip
    await _ask_current(update, context, interview)


async def _ask_current(update: Update, context: Ctx, interview: Interview) -> None:
    s = context.services
    chat = update.effective_chat
    assert chat is not None
    async with s.db.read() as session:
        item = await practice_repo.item_at(session, interview.id, interview.position)
    if item is None:
        await _finish(update, context, interview)
        return
    q = s.catalog.bank.question(item.question_id)
    if q is None:  # the bank changed under an open interview: skip the question
        async with s.db.write() as session:
            await _advance(session, interview, item, skipped=True, now=s.clock())
        await _ask_current(update, context, interview)
        return
    note = t(context.lang, "interview.header", n=interview.position + 1, size=interview.size)
    if interview.time_limit:
        note += "\n" + t(context.lang, "interview.limit", limit=_clock(interview.time_limit))
    view = question_view(q, s.catalog.bank, context.lang, group=is_group(update), note=note)
    view = View(view.text, None)  # no reveal/next buttons mid-interview
    async with s.db.write() as session:  # recorded before it is shown (see common.ask_question)
        ask = await repo.record_ask(session, chat.id, q.id, user_id=interview.user_id, source="interview")
        stored = await practice_repo.item_at(session, interview.id, interview.position)
        assert stored is not None
        stored.ask_id, stored.asked_at = ask.id, s.clock()
    message = await send_view(context, chat.id, view)
    async with s.db.write() as session:
        await repo.set_ask_message(session, ask.id, message.message_id)


async def _advance(
    session: AsyncSession, interview: Interview, item: InterviewItem, *, skipped: bool, now: datetime
) -> None:
    db_item = await practice_repo.item_at(session, interview.id, item.position)
    db_interview = await session.get(Interview, interview.id)
    assert db_item is not None and db_interview is not None
    if skipped:
        db_item.skipped = True
        db_item.answered_at = now
    db_interview.position = item.position + 1
    interview.position = db_interview.position


async def on_interview_answer(
    update: Update,
    context: Ctx,
    interview: Interview,
    item: InterviewItem,
    answer: Answer,
    outcome: Outcome,
    *,
    status: Message | None = None,
) -> None:
    """Called by the answer handler after the answer is stored: record, give short feedback,
    move on to the next question (or the report)."""
    s = context.services
    now = s.clock()
    grade = outcome.grade
    follow_up = grade.follow_up.strip()[:400] if outcome.grade.backend == "llm" else ""
    async with s.db.write() as session:
        db_item = await practice_repo.item_at(session, interview.id, item.position)
        assert db_item is not None
        db_item.answered_at, db_item.coverage = now, grade.score
        if follow_up:  # one follow-up per question; the interview moves on after its answer or /skip
            db_item.follow_up = follow_up
        else:
            await _advance(session, interview, item, skipped=False, now=now)
    q = s.catalog.bank.questions[item.question_id]
    head = f"{MARKS[grade.verdict]} " + t(context.lang, "interview.header", n=item.position + 1, size=interview.size)
    shown = replace(grade, follow_up="")
    view = feedback_view(q, shown, context.lang, head=head, next_op=None, with_reveal=False, fallback=outcome.fallback)
    await show(update, view, status)
    if follow_up:
        await reply_text(update, t(context.lang, "interview.follow_up", question=escape(follow_up)))
        return
    await _ask_current(update, context, interview)


def awaits_follow_up(interview: Interview, item: InterviewItem) -> bool:
    return (
        interview.status == "open"
        and item.position == interview.position
        and item.answered_at is not None
        and item.follow_up is not None
        and item.follow_up_answer is None
    )


async def on_follow_up_answer(
    update: Update, context: Ctx, interview: Interview, item: InterviewItem, text: str
) -> None:
    """The answer to the interviewer's follow-up: kept for the report, then the next question."""
    s = context.services
    async with s.db.write() as session:
        db_item = await practice_repo.item_at(session, interview.id, item.position)
        assert db_item is not None
        db_item.follow_up_answer = text
        await _advance(session, interview, item, skipped=False, now=s.clock())
    await reply_text(update, t(context.lang, "interview.follow_up_saved"))
    await _ask_current(update, context, interview)


async def cmd_skip(update: Update, context: Ctx) -> None:
    chat, user = update.effective_chat, update.effective_user
    if chat is None or user is None:
        return
    s = context.services
    async with s.db.write() as session:
        interview = await practice_repo.open_interview(session, user.id, chat.id)
        item = await practice_repo.item_at(session, interview.id, interview.position) if interview else None
        if interview is None or item is None:
            interview = None
        else:  # during a follow-up only the follow-up is skipped; the answer to the question stands
            following = awaits_follow_up(interview, item)
            await _advance(session, interview, item, skipped=not following, now=s.clock())
    if interview is None:
        await reply_text(update, t(context.lang, "interview.nothing_to_skip"))
        return
    await reply_text(update, t(context.lang, "interview.skipped"))
    await _ask_current(update, context, interview)


async def cb_interview(update: Update, context: Ctx, cb: Callback) -> None:
    chat, user = update.effective_chat, update.effective_user
    if chat is None or user is None:
        return
    s = context.services
    async with s.db.read() as session:
        interview = await practice_repo.open_interview(session, user.id, chat.id)
    if interview is None:
        await reply_text(update, t(context.lang, "interview.no_open"))
        return
    if cb.args[0] == "resume":
        await _ask_current(update, context, interview)
    elif cb.args[0] == "abandon":
        await _finish(update, context, interview, abandoned=True)
    else:
        await reply_text(update, t(context.lang, "stale_button"))


async def _finish(update: Update, context: Ctx, interview: Interview, *, abandoned: bool = False) -> None:
    s = context.services
    now = s.clock()
    async with s.db.write() as session:
        db_interview = await session.get(Interview, interview.id)
        assert db_interview is not None
        db_interview.status = "abandoned" if abandoned else "finished"
        db_interview.finished_at = now
        items = await practice_repo.items(session, interview.id)
    if abandoned and not any(i.answered_at for i in items):
        await reply_text(update, t(context.lang, "interview.abandoned"))
        return
    await reply(update, report_view(context, interview, items, now))


def report_view(context: Ctx, interview: Interview, items: list[InterviewItem], now: datetime) -> View:
    lang = context.lang
    bank = context.services.catalog.bank
    done = [i for i in items if i.answered_at is not None]
    results = [
        core.ItemResult(
            i.question_id, i.coverage, i.self_grade,
            (i.answered_at - i.asked_at).total_seconds() if i.answered_at and i.asked_at else None,
            i.skipped,
        )
        for i in done
    ]  # fmt: skip
    summary = core.report(bank, results)
    lines = [
        t(
            lang,
            "interview.report_title",
            size=count_questions(len(done), lang),
            duration=_clock((now - interview.started_at).total_seconds()),
        )
    ]
    buttons = []
    for n, (item, result) in enumerate(zip(done, results, strict=True), 1):
        q = bank.question(item.question_id)
        text = escape(q.text if q else item.question_id)
        text = text if len(text) <= 90 else text[:89] + "…"
        label = f"[{escape(q.label)}] " if q and q.number is not None else ""
        if q is not None:
            buttons.append(InlineKeyboardButton(t(lang, "interview.answer_btn", n=n), callback_data=encode("a", q.id)))
        if result.skipped:
            lines.append(t(lang, "interview.item_skipped", n=n, label=label, text=text))
            continue
        took = _clock(result.seconds) if result.seconds is not None else "—"
        if interview.time_limit and result.seconds and result.seconds > interview.time_limit:
            took += t(lang, "interview.overtime")
        self_text = t(lang, GRADE_KEYS[result.self_grade]) if result.self_grade else t(lang, "interview.no_self")
        coverage = f"{round(100 * (result.coverage or 0))}/100"
        lines.append(
            t(
                lang,
                "interview.item",
                n=n,
                label=label,
                text=text,
                coverage=coverage,
                self=self_text,
                time=took,
            )
        )
        if item.follow_up:
            answer = escape(item.follow_up_answer) if item.follow_up_answer else t(lang, "interview.follow_up_skipped")
            answer = answer if len(answer) <= 200 else answer[:199] + "…"
            lines.append(t(lang, "interview.follow_up_line", question=escape(item.follow_up), answer=answer))
    lines.append("")
    lines.append(t(lang, "interview.score", score=summary.score))
    if summary.weakest:
        names = ", ".join(f"{_title(bank, tid, lang)} ({score}%)" for tid, score in summary.weakest)
        lines.append(t(lang, "interview.weakest", topics=names))
    else:
        lines.append(t(lang, "interview.no_weak"))
    rows = [buttons[i : i + 4] for i in range(0, len(buttons), 4)]
    return View("\n".join(lines), InlineKeyboardMarkup(rows) if rows else None)

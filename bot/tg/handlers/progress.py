"""/stats, /export and /forget: a user's own progress and data.

Privacy: every query here is keyed by ``update.effective_user.id`` — the person who sent the
command or pressed the button — never by an id carried in a message or in button data. In groups
/stats shows only counts (never answer texts); /export and /forget work in the private chat only,
so a file of answers or a deletion prompt is never posted where others can see or press it.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Mapping, Sequence
from datetime import datetime, tzinfo

from telegram import InlineKeyboardButton, InlineKeyboardMarkup, Update
from telegram.error import BadRequest

from bot.bank import Bank, Question
from bot.bank.markdown import escape
from bot.core import stats
from bot.i18n import counted, t
from bot.services import user_data
from bot.services.user_data import ExportedAnswer, UserData
from bot.services.user_data import topic_specs as topic_specs  # the tests import it from here
from bot.tg.callbacks import Forget
from bot.tg.chart import ChartRow, Legend, has_cyrillic_font, mastery_chart
from bot.tg.common import answer_query, is_group, reply, reply_text, with_open_button
from bot.tg.context import Ctx, Services
from bot.tg.views import View

log = logging.getLogger(__name__)

CAPTION_LIMIT = 1024


# Shared -------------------------------------------------------------------------------------


def user_zone(context: Ctx) -> tuple[str, tzinfo]:
    """The user's time zone (set with /daily in the private chat), else DEFAULT_TIMEZONE."""
    zone = context.user_row.timezone if context.user_row else None
    return user_data.user_zone(zone, context.services.settings.default_timezone)


def _topic_title(bank: Bank, topic_id: str, lang: str) -> str:
    topic = bank.topic(topic_id)
    return topic.title(lang) if topic else topic_id


async def _private_only(update: Update, context: Ctx) -> None:
    link = f"https://t.me/{context.bot.username}" if context.bot.username else ""
    await reply_text(update, t(context.lang, "progress.private_only", link=link), quote=True)


# /stats -------------------------------------------------------------------------------------


def _bar_line(fraction: float, label: str) -> str:
    return f"<code>{stats.bar(fraction)}</code> {label}"


def _grades_inline(grades: Mapping[int, int], lang: str) -> str:
    return " · ".join(f"{t(lang, f'progress.grade.{g}')} {grades.get(g, 0)}" for g in stats.GRADES)


def _streak_line(streak: stats.Streak, lang: str) -> str:
    if streak.current == 0:
        return t(lang, "progress.streak_none", best=streak.best)
    line = t(lang, "progress.streak", days=counted(streak.current, "days", lang), best=streak.best)
    return line if streak.today else line + "\n" + t(lang, "progress.streak_keep")


def stats_text(p: stats.Progress, due: int, bank: Bank, lang: str) -> str:
    """The private /stats message (Telegram HTML)."""
    lines = [
        t(lang, "progress.title"),
        t(lang, "progress.totals", answers=p.answers, questions=p.questions, total=p.total),
        _streak_line(p.streak, lang),
        t(lang, "progress.due" if due else "progress.due_none", count=due),
        "",
        t(lang, "progress.topics"),
    ]
    idle: list[str] = []
    for ts in p.topics:
        title = escape(_topic_title(bank, ts.topic_id, lang))
        if ts.answered == 0:
            idle.append(f"{title} 0/{ts.total}")
            continue
        lines.append("")
        lines.append(t(lang, "progress.topic", title=title, answered=ts.answered, total=ts.total))
        lines.append(_bar_line(ts.share, t(lang, "progress.answered")))
        if ts.coverage is not None:
            lines.append(_bar_line(ts.coverage, t(lang, "progress.coverage")))
        if sum(ts.grades.values()):
            lines.append(t(lang, "progress.topic_grades", grades=_grades_inline(ts.grades, lang)))
    if idle:
        lines += ["", t(lang, "progress.not_started", topics=", ".join(idle))]
    lines.append("")
    if p.graded:
        lines.append(t(lang, "progress.grades_title", count=counted(p.graded, "questions_genitive", lang)))
        for g in stats.GRADES:
            lines.append(_bar_line(p.grades.get(g, 0) / p.graded, t(lang, f"progress.grade.{g}")))
    else:
        lines.append(t(lang, "progress.no_grades"))
    return "\n".join(lines)


def group_stats_text(p: stats.Progress, due: int, bank: Bank, lang: str, name: str) -> str:
    """/stats in a group: the sender's counts only."""
    started = []
    for ts in p.topics:
        if ts.answered:
            started.append(f"{escape(_topic_title(bank, ts.topic_id, lang))} {ts.answered}/{ts.total}")
    lines = [
        t(
            lang,
            "progress.group",
            name=escape(name),
            answers=p.answers,
            questions=p.questions,
            total=p.total,
            days=counted(p.streak.current, "days", lang),
            due=due,
        )
    ]
    if started:
        lines.append(" · ".join(started))
    lines.append(t(lang, "progress.group_more"))
    return "\n".join(lines)


def chart_rows(p: stats.Progress, bank: Bank | None = None, lang: str = "ru") -> list[ChartRow]:
    """One bar per topic, labelled by its title in ``lang`` (by its id without a Cyrillic font)."""
    localized = bank is not None and has_cyrillic_font()
    return [
        ChartRow(_topic_title(bank, ts.topic_id, lang) if localized and bank else ts.topic_id, ts.share, ts.mastery)
        for ts in p.topics
    ]


def chart_legend(lang: str) -> Legend:
    return Legend(t(lang, "progress.chart_mastery"), t(lang, "progress.chart_answered"))


def chart_caption(p: stats.Progress, bank: Bank, lang: str) -> str:
    """Plain text (no parse mode), ≤ 1024 chars: what the bars mean; an "id — title" legend only
    where the chart had to fall back to Latin ids."""
    lines = [t(lang, "progress.chart_caption")]
    if has_cyrillic_font():
        return lines[0]
    for ts in p.topics:
        line = f"{ts.topic_id} — {_topic_title(bank, ts.topic_id, lang)}"
        if len("\n".join([*lines, line])) > CAPTION_LIMIT:
            break
        lines.append(line)
    return "\n".join(lines)


async def cmd_stats(update: Update, context: Ctx) -> None:
    user, chat = update.effective_user, update.effective_chat
    if user is None or chat is None:
        return
    s, lang, group = context.services, context.lang, is_group(update)
    bank = s.bank
    found = await user_data.progress(s.db, bank, user_id=user.id, now=s.clock(), tz=user_zone(context)[1])
    if found is None:
        await reply_text(update, t(lang, "progress.empty"), quote=group)
        return
    progress, due = found.progress, found.due
    if group:
        text = group_stats_text(progress, due, bank, lang, user.first_name or "")
        await reply(update, with_open_button(View(text), update, context, "progress"), quote=True)
        return
    await reply(update, with_open_button(View(stats_text(progress, due, bank, lang)), update, context, "progress"))
    png = await asyncio.to_thread(
        mastery_chart, chart_rows(progress, bank, lang), t(lang, "progress.chart_title"), chart_legend(lang)
    )
    await context.bot.send_photo(
        chat.id, photo=png, caption=chart_caption(progress, bank, lang), filename="progress.png", parse_mode=None
    )


# /export ------------------------------------------------------------------------------------


def _question_heading(q: Question, lang: str) -> str:
    text = " ".join(q.text.split())
    if q.number is None:
        return text
    return f"{t(lang, f'kind.{q.kind}')} {q.label}. {text}"


def _answer_meta(a: ExportedAnswer, lang: str, tz: tzinfo) -> str:
    parts = [f"**{a.created_at.astimezone(tz):%Y-%m-%d %H:%M}**"]
    if a.chat_title is not None or a.chat_id < 0:
        parts.append(t(lang, "progress.export.in_group", title=md_escape(a.chat_title or "?")))
    if a.coverage is not None:
        parts.append(t(lang, "progress.export.coverage", pct=stats.percent(a.coverage)))
    if a.self_grade in stats.GRADES:
        parts.append(t(lang, "progress.export.self", grade=t(lang, f"progress.grade.{a.self_grade}")))
    if a.edited:
        parts.append(t(lang, "progress.export.edited"))
    if a.voice_seconds is not None:
        parts.append(t(lang, "progress.export.voice", seconds=a.voice_seconds))
    if a.corrects_voice:
        parts.append(t(lang, "progress.export.corrected"))
    return " · ".join(parts)


_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~])")


def md_escape(text: str) -> str:
    """Text that Markdown shows as it is (a group title is anyone's text): one line, every
    markup character backslashed."""
    return _MD_SPECIAL.sub(r"\\\1", " ".join(text.split()))


def _quote(text: str) -> list[str]:
    return [f"> {line}" if line.strip() else ">" for line in text.splitlines() or [""]]


def export_markdown(
    answers: Sequence[ExportedAnswer], bank: Bank, lang: str, *, zone: str, tz: tzinfo, now: datetime
) -> str:
    """The user's answers as Markdown: by topic (bank order), then question, then time."""
    by_question: dict[str, list[ExportedAnswer]] = {}
    for a in answers:
        by_question.setdefault(a.question_id, []).append(a)
    lines = [
        f"# {t(lang, 'progress.export.title')}",
        "",
        t(
            lang,
            "progress.export.meta",
            date=f"{now.astimezone(tz):%Y-%m-%d %H:%M}",
            zone=zone,
            answers=len(answers),
            questions=len(by_question),
        ),
    ]

    def section(heading: str, qids: Sequence[str]) -> None:
        lines.extend(["", f"## {heading}"])
        for qid in qids:
            q = bank.question(qid)
            lines.extend(["", f"### {_question_heading(q, lang) if q else qid}"])
            for a in by_question[qid]:
                lines.extend(["", _answer_meta(a, lang, tz), "", *_quote(a.text)])

    placed: set[str] = set()
    for topic in bank.topics:
        qids = [qid for qid in bank.topic_question_ids(topic.id) if qid in by_question]
        if qids:
            section(topic.title(lang), qids)
            placed.update(qids)
    gone = sorted(qid for qid in by_question if qid not in placed)
    if gone:
        section(t(lang, "progress.export.gone"), gone)
    return "\n".join(lines) + "\n"


async def cmd_export(update: Update, context: Ctx) -> None:
    user, chat = update.effective_user, update.effective_chat
    if user is None or chat is None:
        return
    if is_group(update):
        await _private_only(update, context)
        return
    s = context.services
    lang = context.lang
    answers = await user_data.export(s.db, user_id=user.id)
    if not answers:
        await reply_text(update, t(lang, "progress.export_empty"))
        return
    zone, tz = user_zone(context)
    now = s.clock()
    document = export_markdown(answers, s.bank, lang, zone=zone, tz=tz, now=now)
    questions = len({a.question_id for a in answers})
    await context.bot.send_document(
        chat.id,
        document=document.encode("utf-8"),
        filename=f"answers-{now.astimezone(tz):%Y-%m-%d}.md",
        caption=t(lang, "progress.export_caption", answers=len(answers), questions=questions),
        parse_mode=None,
    )


# /forget ------------------------------------------------------------------------------------


def data_lines(data: UserData, lang: str) -> str:
    answers = t(lang, "progress.data.answers", count=data.answers)
    if data.group_answers:
        answers += " " + t(lang, "progress.data.in_groups", count=data.group_answers)
    items = [answers]  # the rest only where there is something
    for key, n in (
        ("cards", data.cards),
        ("interviews", data.interviews),
        ("poll_answers", data.poll_answers),
        ("reveals", data.reveals),
    ):
        if n:
            items.append(t(lang, f"progress.data.{key}", count=n))
    if data.profile or data.private_chat:
        items.append(t(lang, "progress.data.profile"))
    return "\n".join(f"• {item}" for item in items)


def forget_keyboard(lang: str) -> InlineKeyboardMarkup:
    return InlineKeyboardMarkup(
        [
            [InlineKeyboardButton(t(lang, "progress.btn_yes"), callback_data=Forget(confirmed=True).encode())],
            [InlineKeyboardButton(t(lang, "progress.btn_no"), callback_data=Forget(confirmed=False).encode())],
        ]
    )


async def cmd_forget(update: Update, context: Ctx) -> None:
    user = update.effective_user
    if user is None:
        return
    if is_group(update):
        await _private_only(update, context)
        return
    data = await user_data.stored(context.services.db, user_id=user.id)
    lang = context.lang
    parts = [t(lang, "progress.forget_ask"), data_lines(data, lang), t(lang, "progress.forget_warn")]
    text = "\n\n".join(parts)
    await reply(update, View(text, forget_keyboard(lang)))


def _drop_cached(services: Services, user_id: int) -> None:
    """The middleware skips the upsert for recently seen (chat, user) pairs: after the rows are
    gone the next update must write them again."""
    for key in [k for k in services.touched if user_id in k]:
        services.touched.pop(key, None)


async def cb_forget(update: Update, context: Ctx, data: Forget) -> None:
    user, chat, query = update.effective_user, update.effective_chat, update.callback_query
    if user is None or chat is None:
        return
    lang = context.lang
    # The prompt is only ever sent in the private chat; a press anywhere else is forged.
    if chat.id != user.id:
        await answer_query(update, context, t(lang, "stale_button"), alert=True)
        return
    await answer_query(update, context)
    if query is not None and query.message is not None:
        try:  # the prompt can't be pressed twice
            await context.bot.edit_message_reply_markup(chat.id, query.message.message_id, reply_markup=None)
        except BadRequest as exc:
            log.info("could not remove the /forget buttons: %s", exc)
    if not data.confirmed:
        await reply_text(update, t(lang, "progress.forget_kept"))
        return
    s = context.services
    deleted = await user_data.forget(s.db, user_id=user.id)
    _drop_cached(s, user.id)
    context.user_row = None
    context.chat_row = None
    log.info("forgot a user on request: %d answers, %d cards", deleted.answers, deleted.cards)
    parts = [t(lang, "progress.forget_done"), data_lines(deleted, lang), t(lang, "progress.forget_after")]
    text = "\n\n".join(parts)
    await reply_text(update, text)

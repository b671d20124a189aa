"""/quiz (glossary quiz polls), their answers, and /top (the group leaderboard)."""

from __future__ import annotations

import html
import logging
from collections.abc import Coroutine
from datetime import date
from typing import Any, Literal, cast

from telegram import InlineKeyboardButton, InlineKeyboardMarkup, InputPollOption, Message, Update
from telegram import Poll as TgPoll
from telegram.constants import ChatType
from telegram.error import BadRequest
from telegram.ext import ExtBot, PollAnswerHandler

from bot.bank.markdown import escape
from bot.core.quiz import Quiz
from bot.db.models import AskSource
from bot.db.polls import BoardRow
from bot.i18n import counted, t
from bot.services import quizzes
from bot.services.quizzes import PERIODS
from bot.services.quizzes import week_start as week_start  # the tests import it from here
from bot.tg.callbacks import BoardPeriod, BoardToggle, Period
from bot.tg.common import answer_query, check_query, command_args, is_group, reply, reply_text, user_info
from bot.tg.context import Ctx
from bot.tg.views import View

log = logging.getLogger(__name__)

OFF_WORDS = frozenset({"off", "hide", "выкл", "скрыть", "нет"})
ON_WORDS = frozenset({"on", "show", "вкл", "показать", "да"})
# the option indexes Telegram accepts (PTB types them as literals)
OptionId = Literal[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]
_MEDALS = ("🥇", "🥈", "🥉")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


# -- /quiz ---------------------------------------------------------------------------------------


def post_quiz(
    bot: ExtBot[Any], chat_id: int, quiz: Quiz, *, rate_limit_args: int | None = None
) -> Coroutine[Any, Any, Message]:
    """The sendPoll request for ``quiz`` (``/quiz`` sends it; pushes send it through delivery)."""
    return bot.send_poll(
        chat_id,
        quiz.question,
        # the poll's texts are plain: no HTML parse mode (the Defaults' one) for any of them
        [InputPollOption(option, text_parse_mode=None) for option in quiz.options],
        is_anonymous=False,  # answers then arrive as poll_answer updates
        type=TgPoll.QUIZ,
        correct_option_ids=[cast(OptionId, quiz.correct_option)],  # PTB 22.8 deprecates correct_option_id
        explanation=quiz.explanation,
        question_parse_mode=None,
        explanation_parse_mode=None,
        rate_limit_args=rate_limit_args,
    )


async def send_quiz_poll(
    context: Ctx, chat_id: int, *, source: str, topic: str | None, term_id: str | None = None
) -> Message | None:
    """Send a quiz poll to ``chat_id`` (a least-quizzed term of ``topic``, or ``term_id``) in the
    context's language and record it. ``None`` when no quiz can be built (a topic without glossary
    terms). Telegram errors propagate to the caller."""
    s = context.services
    quiz = await quizzes.build(s.deps, s.catalog, chat_id=chat_id, lang=context.lang, topic=topic, term_id=term_id)
    if quiz is None:
        return None
    message = await post_quiz(context.bot, chat_id, quiz)
    if message.poll is None:  # pragma: no cover - Telegram always returns the poll
        log.warning("sendPoll to %s returned no poll", chat_id)
        return message
    await quizzes.record_poll(
        s.db, quiz, poll_id=message.poll.id, chat_id=chat_id, message_id=message.message_id, source=source
    )
    return message


async def cmd_quiz(update: Update, context: Ctx) -> None:
    """/quiz — a quiz within the chat's topic filter; /quiz lora — from a topic; /quiz kv cache —
    about a glossary term."""
    chat = update.effective_chat
    if chat is None:
        return
    s = context.services
    arg = command_args(context)
    if arg and not await check_query(update, context, arg):
        return
    chat_filter = context.chat_row.topic_filter if context.chat_row else None
    found = quizzes.target(s.catalog, arg, chat_filter=chat_filter)
    if found.unknown:
        await reply_text(update, t(context.lang, "quiz.unknown_topic", topic=escape(arg)))
        return
    message = await send_quiz_poll(context, chat.id, source=AskSource.QUIZ, topic=found.topic, term_id=found.term_id)
    if message is None:
        topic = s.bank.topic(found.topic or "")
        name = topic.title(context.lang) if topic else (found.topic or "")
        await reply_text(update, t(context.lang, "quiz.no_terms", topic=escape(name)))


async def on_poll_answer(update: Update, context: Ctx) -> None:
    """A member answered (or retracted an answer to) one of our quiz polls. The update has no
    chat, so the middleware loaded nothing: the voter is stored here (for the board's names)."""
    answer = update.poll_answer
    if answer is None or answer.user is None:  # anonymous admins vote as the chat: not counted
        return
    user = answer.user
    await quizzes.record_vote(
        context.services.db, poll_id=answer.poll_id, voter=user_info(user), is_bot=user.is_bot,
        option=answer.option_ids[0] if answer.option_ids else None,
    )  # fmt: skip


def poll_answer_handler() -> PollAnswerHandler[Ctx, None]:
    """The handler to register for poll answers (any handler group ≥ 0)."""
    return PollAnswerHandler(on_poll_answer)


# -- /top ----------------------------------------------------------------------------------------


def format_points(points: float, lang: str) -> str:
    """'5 баллов', '3,3 балла', '1 point', '2.5 points'."""
    tenths = round(points * 10)
    whole = tenths % 10 == 0
    number = str(tenths // 10) if whole else f"{tenths // 10}.{tenths % 10}"
    if whole:
        return counted(tenths // 10, "points", lang)
    # a fraction takes the genitive singular in Russian («3,3 балла»), the plural in English
    return f"{number} points" if lang == "en" else f"{number.replace('.', ',')} балла"


def _day(day: date, lang: str) -> str:
    if lang == "en":
        return f"{_MONTHS[day.month - 1]} {day.day}"
    return f"{day.day:02d}.{day.month:02d}"


def board_view(rows: list[BoardRow], period: str, lang: str, since: date | None) -> View:
    if period == "week" and since is not None:
        title = t(lang, "quiz.board.title_week", since=_day(since, lang))
    else:
        title = t(lang, "quiz.board.title_all")
    lines = [title, ""]
    if not rows:
        lines.append(t(lang, "quiz.board.empty"))
    for i, row in enumerate(rows):
        place = _MEDALS[i] if i < len(_MEDALS) else f"{i + 1}."
        name = escape(row.name.strip() or f"#{row.user_id}")
        lines.append(
            t(
                lang,
                "quiz.board.row",
                place=place,
                name=name,
                points=format_points(row.points, lang),
                questions=row.questions,
                quizzes=row.quiz_correct,
            )
        )
    lines += ["", t(lang, "quiz.board.rules"), t(lang, "quiz.board.opt_hint")]
    mark = "• "
    keyboard = InlineKeyboardMarkup(
        [
            [
                InlineKeyboardButton(
                    (mark if p == period else "") + t(lang, f"quiz.board.{p}"),
                    callback_data=BoardPeriod(cast(Period, p)).encode(),
                )
                for p in PERIODS
            ],
            [
                InlineKeyboardButton(
                    t(lang, "quiz.board.toggle"), callback_data=BoardToggle(cast(Period, period)).encode()
                )
            ],
        ]
    )
    return View("\n".join(lines), keyboard)


async def _board(context: Ctx, chat_id: int, period: str) -> View:
    s = context.services
    zone = (context.chat_row.timezone if context.chat_row else None) or s.settings.default_timezone
    found = await quizzes.board(s.db, chat_id=chat_id, period=period, zone=zone, now=s.clock())
    return board_view(found.rows, period, context.lang, found.since)


async def _set_opt_out(update: Update, context: Ctx, opted_out: bool) -> str:
    user = update.effective_user
    assert user is not None
    await quizzes.set_opt_out(context.services.db, user_info(user), opted_out=opted_out)
    if context.user_row is not None:
        context.user_row.board_opt_out = opted_out
    key = "quiz.board.opted_out" if opted_out else "quiz.board.opted_in"
    return t(context.lang, key, name=escape(user.first_name or ""))


async def cmd_top(update: Update, context: Ctx) -> None:
    """/top — the group's board (this week); /top off, /top on — hide or show yourself."""
    chat = update.effective_chat
    if chat is None:
        return
    arg = command_args(context).lower()
    if arg and update.effective_user is not None:
        if arg in OFF_WORDS or arg in ON_WORDS:
            await reply_text(update, await _set_opt_out(update, context, arg in OFF_WORDS), quote=is_group(update))
            return
        if arg not in PERIODS:
            await reply_text(update, t(context.lang, "quiz.board.usage"))
            return
    if chat.type == ChatType.PRIVATE:
        await reply_text(update, t(context.lang, "quiz.board.only_groups"))
        return
    await reply(update, await _board(context, chat.id, arg if arg in PERIODS else "week"))


async def _show_in_place(update: Update, context: Ctx, period: str) -> None:
    query = update.callback_query
    chat = update.effective_chat
    if query is None or chat is None or chat.type == ChatType.PRIVATE:
        return
    view = await _board(context, chat.id, period)
    try:
        await query.edit_message_text(view.text, reply_markup=view.keyboard)
    except BadRequest as exc:
        if "not modified" not in str(exc).lower():
            raise


async def cb_top(update: Update, context: Ctx, data: BoardPeriod) -> None:
    """The board's "this week" / "all time" buttons: the same message shows the other period."""
    await answer_query(update, context)
    await _show_in_place(update, context, data.period)


async def cb_board(update: Update, context: Ctx, data: BoardToggle) -> None:
    """The board's "hide / show me" button: toggles the presser, then redraws the board."""
    if update.effective_user is None:
        return
    opted_out = not (context.user_row.board_opt_out if context.user_row else False)
    text = await _set_opt_out(update, context, opted_out)
    await answer_query(update, context, _plain(text))
    await _show_in_place(update, context, data.period)


def _plain(text: str) -> str:
    """A callback answer is plain text (≤ 200 characters): undo the HTML escaping."""
    return html.unescape(text)[:200]

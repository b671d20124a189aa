"""The routing table: which handler takes each command, button kind and kind of message, in the
order PTB tries them, and the two handlers every update can reach (a button press, an error)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

from sqlalchemy.exc import DBAPIError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from telegram import Update
from telegram.error import BadRequest, Forbidden
from telegram.ext import (
    Application,
    CallbackQueryHandler,
    CommandHandler,
    InlineQueryHandler,
    MessageHandler,
    TypeHandler,
    filters,
)

from bot.i18n import t
from bot.tg import callbacks
from bot.tg.common import answer_query, load_update_state, on_unknown_command
from bot.tg.context import Ctx
from bot.tg.handlers import (
    admin,
    browse,
    daily,
    disputes,
    inline,
    interview,
    migration,
    practice,
    progress,
    questions,
    quiz,
    start,
    voice,
)

log = logging.getLogger(__name__)

D = TypeVar("D", bound=callbacks.ButtonData)
CallbackFn = Callable[[Update, Ctx, Any], Awaitable[None]]


def _on(
    kind: type[D], handler: Callable[[Update, Ctx, D], Awaitable[None]]
) -> tuple[type[callbacks.ButtonData], CallbackFn]:
    """One row of the button table; the type checker holds ``handler`` to ``kind``'s data."""
    return kind, handler


# Button kinds → handlers. Registered here so the whole surface is visible in one place.
CALLBACKS: dict[type[callbacks.ButtonData], CallbackFn] = dict(
    [
        _on(callbacks.Reveal, questions.cb_reveal),
        _on(callbacks.Details, questions.cb_details),
        _on(callbacks.QuestionTerms, questions.cb_glossary),
        _on(callbacks.Next, questions.cb_next),
        _on(callbacks.SearchResult, questions.cb_search_result),
        _on(callbacks.NextSearchResult, questions.cb_search_result),
        _on(callbacks.AskQuestion, questions.cb_ask),
        _on(callbacks.ConfirmShort, questions.cb_confirm_short),
        _on(callbacks.DropShort, questions.cb_confirm_short),
        _on(callbacks.TermCard, browse.cb_term),
        _on(callbacks.TopicFilter, browse.cb_topic),
        _on(callbacks.GlossaryPage, browse.cb_glossary_page),
        _on(callbacks.GlossaryTopics, browse.cb_glossary_topics),
        _on(callbacks.GlossaryTopic, browse.cb_glossary_topic),
        _on(callbacks.SearchPage, browse.cb_search),
        _on(callbacks.Language, start.cb_lang),
        _on(callbacks.DailyAction, daily.cb_daily),
        _on(callbacks.Forget, progress.cb_forget),
        _on(callbacks.SelfAssess, practice.cb_self_assessment),
        _on(callbacks.Dispute, disputes.cb_dispute),
        _on(callbacks.Chosen, practice.cb_noop),
        _on(callbacks.NextReview, practice.cb_review_next),
        _on(callbacks.InterviewAction, interview.cb_interview),
        _on(callbacks.BoardPeriod, quiz.cb_top),
        _on(callbacks.BoardToggle, quiz.cb_board),
    ]
)

COMMAND_HANDLERS: list[tuple[str, Callable[[Update, Ctx], Coroutine[Any, Any, None]]]] = [
    ("start", start.cmd_start),
    ("help", start.cmd_help),
    ("lang", start.cmd_lang),
    ("q", questions.cmd_q),
    ("answer", questions.cmd_answer),
    ("topics", browse.cmd_topics),
    ("glossary", browse.cmd_glossary),
    ("search", browse.cmd_search),
    ("daily", daily.cmd_daily),
    # Admin commands (ADMIN_IDS only; others get the unknown-command reply)
    ("reload", admin.cmd_reload),
    ("bankstats", admin.cmd_bankstats),
    ("broadcast", admin.cmd_broadcast),
    ("usage", admin.cmd_usage),
    ("stats", progress.cmd_stats),
    ("export", progress.cmd_export),
    ("forget", progress.cmd_forget),
    ("review", practice.cmd_review),
    ("interview", interview.cmd_interview),
    ("skip", interview.cmd_skip),
    ("quiz", quiz.cmd_quiz),
    ("top", quiz.cmd_top),
]


async def on_callback(update: Update, context: Ctx) -> None:
    query = update.callback_query
    assert query is not None
    data = callbacks.decode(query.data)
    handler = CALLBACKS.get(type(data)) if data is not None else None
    if data is None or handler is None:
        await answer_query(update, context, t(context.lang, "stale_button"), alert=True)
        return
    early = None
    if data.AT_ONCE:  # only shows something: stop the spinner at once, alongside the handler
        early = asyncio.ensure_future(answer_query(update, context))
        await asyncio.sleep(0)  # its request goes out first; the handler's work overlaps the round trip
    try:
        await handler(update, context, data)
    finally:
        # stop the button's spinner if the handler did not
        await (early if early is not None else answer_query(update, context))


async def on_error(update: object, context: Ctx) -> None:
    error = context.error
    db_down = isinstance(error, OperationalError | DBAPIError | PoolTimeout | OSError)
    if isinstance(error, Forbidden):
        log.info("chat blocked the bot: %s", error)
        return
    log.error("error while handling an update", exc_info=error)
    if not isinstance(update, Update) or update.effective_chat is None:
        return
    if isinstance(error, BadRequest) and "query is too old" in str(error).lower():
        return
    key = "busy" if db_down else "error"
    try:
        await context.bot.send_message(
            update.effective_chat.id, t(context.lang, key), parse_mode=None, link_preview_options=None
        )
    except Exception:  # the chat may be gone or Telegram unreachable; nothing more to do
        log.warning("could not tell chat %s about an error", update.effective_chat.id)


def register_handlers(app: Application[Any, Any, Any, Any, Any, Any]) -> None:
    app.add_handler(TypeHandler(Update, load_update_state), group=-1)
    # A group became a supergroup: move its settings and history to the new id.
    app.add_handler(MessageHandler(filters.StatusUpdate.MIGRATE, migration.on_migrate), group=-2)
    for name, fn in COMMAND_HANDLERS:
        app.add_handler(CommandHandler(name, fn))
    app.add_handler(CallbackQueryHandler(on_callback))
    app.add_handler(InlineQueryHandler(inline.on_inline_query))
    # Quiz poll answers carry no chat: the middleware skips them, the handler stores the voter.
    app.add_handler(quiz.poll_answer_handler())
    # The menu keyboard sends its labels as text: catch them before answers.
    app.add_handler(MessageHandler(filters.TEXT & filters.Text(start.menu_labels()), start.on_menu_button))
    # Edits of answers are kept as new answers.
    app.add_handler(MessageHandler(filters.UpdateType.EDITED_MESSAGE & filters.TEXT, questions.on_edited_answer))
    # Must follow every CommandHandler: anything that looks like a command and wasn't handled.
    app.add_handler(MessageHandler(filters.COMMAND, on_unknown_command))
    app.add_handler(
        MessageHandler(filters.UpdateType.MESSAGE & filters.TEXT & ~filters.COMMAND, questions.on_answer_text)
    )
    # Voice answers: a voice message, a video note or an audio file (transcribed, or a line why not).
    app.add_handler(
        MessageHandler(
            filters.UpdateType.MESSAGE & (filters.VOICE | filters.VIDEO_NOTE | filters.AUDIO), voice.on_voice
        )
    )
    app.add_handler(
        MessageHandler(
            filters.UpdateType.MESSAGE & (filters.PHOTO | filters.Sticker.ALL | filters.Document.ALL | filters.VIDEO),
            questions.on_non_text,
        )
    )
    app.add_error_handler(on_error)

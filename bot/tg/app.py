"""The composition root: builds the PTB Application and its services (``build_application``),
registers every handler in one ordered table, starts the push sender in ``post_init`` and closes
the database in ``post_shutdown``."""

from __future__ import annotations

import asyncio
import logging
import signal
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any
from urllib.parse import urlsplit

from sqlalchemy.exc import DBAPIError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from telegram import Update
from telegram.error import BadRequest, Forbidden, NetworkError, TimedOut
from telegram.ext import (
    Application,
    ApplicationBuilder,
    BaseUpdateProcessor,
    CallbackQueryHandler,
    CommandHandler,
    ContextTypes,
    InlineQueryHandler,
    MessageHandler,
    TypeHandler,
    filters,
)

from bot.bank import Bank
from bot.catalog import Catalog, CatalogHolder
from bot.config import Settings, SettingsError
from bot.db import repo
from bot.db.engine import Database, acquire_sender_lock
from bot.i18n import t
from bot.logs import setup_logging
from bot.metrics import Metrics
from bot.push.sender import PushService
from bot.services.grading import build_grader
from bot.tg import callbacks
from bot.tg.common import answer_query, load_update_state, on_unknown_command
from bot.tg.context import Ctx, Services
from bot.tg.handlers import admin, browse, daily, inline, interview, practice, progress, questions, quiz, start
from bot.tg.push_channel import TelegramPushChannel
from bot.tg.ratelimit import BotRateLimiter
from bot.tg.web import WebServer

log = logging.getLogger(__name__)

CallbackFn = Callable[[Update, Ctx, callbacks.Callback], Awaitable[None]]

# Button operations → handlers. Registered here so the whole surface is visible in one place.
CALLBACKS: dict[str, CallbackFn] = {
    "a": questions.cb_reveal,
    "g": questions.cb_glossary,
    "n": questions.cb_next,
    "nt": questions.cb_next,
    "qs": questions.cb_search_result,
    "sn": questions.cb_search_result,
    "q": questions.cb_ask,
    "t": browse.cb_term,
    "tp": browse.cb_topic,
    "gl": browse.cb_glossary_page,
    "gT": browse.cb_glossary_topics,
    "gt": browse.cb_glossary_topic,
    "s": browse.cb_search,
    "lang": start.cb_lang,
    "d": daily.cb_daily,
    "fg": progress.cb_forget,
    "sa": practice.cb_self_assessment,
    "rv": practice.cb_review_next,
    "iv": interview.cb_interview,
    "top": quiz.cb_top,
    "bd": quiz.cb_board,
    "x": practice.cb_noop,
    "ay": questions.cb_confirm_short,
    "an": questions.cb_confirm_short,
}

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


class PerChatUpdateProcessor(BaseUpdateProcessor):
    """Updates run concurrently across chats but in order within one chat, so an answer is never
    handled before the question it answers has been recorded."""

    def __init__(self, max_concurrent_updates: int = 64) -> None:
        super().__init__(max_concurrent_updates)
        self._locks: OrderedDict[int, asyncio.Lock] = OrderedDict()

    def _lock_for(self, update: object) -> asyncio.Lock | None:
        if not isinstance(update, Update) or update.effective_chat is None:
            return None
        key = update.effective_chat.id
        lock = self._locks.get(key)
        if lock is None:
            lock = self._locks[key] = asyncio.Lock()
            if len(self._locks) > 10_000:
                for old in list(self._locks)[:1000]:
                    if not self._locks[old].locked():
                        del self._locks[old]
        return lock

    async def do_process_update(self, update: object, coroutine: Awaitable[Any]) -> None:
        lock = self._lock_for(update)
        if lock is None:
            await coroutine
            return
        async with lock:
            await coroutine

    async def initialize(self) -> None:
        return None

    async def shutdown(self) -> None:
        return None


async def on_callback(update: Update, context: Ctx) -> None:
    query = update.callback_query
    assert query is not None
    cb = callbacks.decode(query.data)
    handler = CALLBACKS.get(cb.op) if cb else None
    if cb is None or handler is None:
        await answer_query(update, context, t(context.lang, "stale_button"), alert=True)
        return
    try:
        await handler(update, context, cb)
    finally:
        await answer_query(update, context)  # stop the button's spinner if the handler did not


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
        await context.bot.send_message(update.effective_chat.id, t(context.lang, key))
    except Exception:  # the chat may be gone or Telegram unreachable; nothing more to do
        log.warning("could not tell chat %s about an error", update.effective_chat.id)


def register_handlers(app: Application[Any, Any, Any, Any, Any, Any]) -> None:
    app.add_handler(TypeHandler(Update, load_update_state), group=-1)
    # A group became a supergroup: move its settings and history to the new id.
    app.add_handler(MessageHandler(filters.StatusUpdate.MIGRATE, on_migrate), group=-2)
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
    app.add_handler(
        MessageHandler(
            filters.UpdateType.MESSAGE
            & (
                filters.PHOTO
                | filters.VOICE
                | filters.Sticker.ALL
                | filters.Document.ALL
                | filters.VIDEO
                | filters.AUDIO
            ),
            questions.on_non_text,
        )
    )
    app.add_error_handler(on_error)


async def on_migrate(update: Update, context: Ctx) -> None:
    message = update.effective_message
    if message is None or message.migrate_to_chat_id is None:
        return
    async with context.services.db.write() as session:
        await repo.migrate_chat(session, message.chat_id, message.migrate_to_chat_id)
    log.info("chat %s migrated to %s", message.chat_id, message.migrate_to_chat_id)


async def _push_tick(context: Ctx) -> None:
    push = context.services.push
    if push is not None:
        await push.tick()


def _start_pushes(app: Application[Any, Any, Any, Any, Any, Any], services: Services) -> None:
    """One recurring tick per process; the schedule itself lives in the database."""
    settings = services.settings
    if services.db.is_sqlite and not acquire_sender_lock(services.db.url):
        log.warning(
            "another instance already sends daily pushes for this SQLite database; "
            "this instance will not send pushes (use PostgreSQL to run several senders)"
        )
        return
    services.push = PushService(
        TelegramPushChannel(app.bot, paid_broadcast=settings.paid_broadcast),
        services.db,
        services.catalog_holder,
        settings,
        clock=services.clock,
        metrics=services.metrics,
        rng=services.rng,
    )
    services.push.start()
    assert app.job_queue is not None
    app.job_queue.run_repeating(
        _push_tick,
        interval=settings.tick_seconds,
        first=0.5,
        name="push-tick",
        job_kwargs={
            "max_instances": 1,
            "coalesce": True,
            "misfire_grace_time": max(1, int(settings.tick_seconds)),
        },
    )


async def _post_init(app: Application[Any, Any, Any, Any, Any, Any]) -> None:
    services: Services = app.bot_data["services"]
    await services.db.migrate()
    _start_pushes(app, services)
    default = services.settings.default_language
    for scope, names in start.command_menus():  # localized per scope: private, groups, group admins
        for lang in ("ru", "en"):
            await app.bot.set_my_commands(start.bot_commands(lang, names), scope=scope, language_code=lang)
        await app.bot.set_my_commands(start.bot_commands(default, names), scope=scope)
    await app.bot.set_my_commands(start.bot_commands(default))
    log.info("bot @%s started; bank: %s", app.bot.username, services.catalog.bank.summary())


async def _post_stop(app: Application[Any, Any, Any, Any, Any, Any]) -> None:
    """Stop taking work, finish sends in flight and give back unsent claims."""
    services: Services = app.bot_data["services"]
    if services.push is not None:
        await services.push.stop()


async def _post_shutdown(app: Application[Any, Any, Any, Any, Any, Any]) -> None:
    services: Services = app.bot_data["services"]
    await services.db.close()


def build_application(
    settings: Settings, bank: Bank, token: str, *, db: Database | None = None
) -> Application[Any, Any, Any, Any, Any, Any]:
    api = settings.telegram_api_url
    app = (
        ApplicationBuilder()
        .token(token)
        .base_url(f"{api}/bot")
        .base_file_url(f"{api}/file/bot")
        .context_types(ContextTypes(context=Ctx))
        .rate_limiter(BotRateLimiter(overall_max_rate=0, group_max_rate=20, group_time_period=60, max_retries=2))
        .concurrent_updates(PerChatUpdateProcessor())
        .build()
    )
    database = db or Database(settings.database_url)
    services = Services(
        settings=settings,
        db=database,
        catalog_holder=CatalogHolder(Catalog.build(bank)),
        metrics=Metrics(),
        grader=build_grader(settings, db=database),
    )
    app.bot_data["services"] = services
    register_handlers(app)
    return app


def run_bot(settings: Settings, bank: Bank, token: str, *, webhook: bool = False) -> None:
    """Run until SIGTERM/SIGINT: long polling, or a webhook (``--webhook`` / WEBHOOK_URL)."""
    setup_logging(settings.log_level, settings.log_format, token)
    app = build_application(settings, bank, token)
    asyncio.run(_serve(app, settings, webhook=webhook or settings.webhook_url is not None))


async def _serve(app: Application[Any, Any, Any, Any, Any, Any], settings: Settings, *, webhook: bool) -> None:
    services: Services = app.bot_data["services"]
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    server: WebServer | None = None
    await _initialize(app)
    await _post_init(app)
    await app.start()
    try:
        if webhook:
            if not settings.webhook_url:
                raise SettingsError("WEBHOOK_URL: required for --webhook (the public https URL Telegram calls)")
            secret = settings.webhook_secret.get_secret_value() if settings.webhook_secret else None
            path = urlsplit(settings.webhook_url).path or "/"
            server = WebServer(
                app,
                services,
                listen=settings.webhook_listen,
                port=settings.webhook_port,
                webhook_path=path,
                secret=secret,
            )
            await server.start()
            await app.bot.set_webhook(
                settings.webhook_url,
                secret_token=secret,
                allowed_updates=Update.ALL_TYPES,
                max_connections=40,
            )
            log.info("webhook mode: Telegram posts updates to %s", path)
        else:
            if settings.metrics_port:
                server = WebServer(app, services, listen=settings.webhook_listen, port=settings.metrics_port)
                await server.start()
            assert app.updater is not None
            await app.updater.start_polling(
                allowed_updates=Update.ALL_TYPES, bootstrap_retries=-1, timeout=int(settings.poll_timeout)
            )
            log.info("long polling started")
        await stop.wait()
        log.info("stopping: no new updates; finishing work in flight")
    finally:
        if app.updater is not None and app.updater.running:
            await app.updater.stop()
        if server is not None:
            await server.stop()
        await app.stop()  # handles updates already taken, stops the job queue
        await _post_stop(app)  # finishes sends in flight, releases unsent claims
        await app.shutdown()
        await _post_shutdown(app)
        log.info("stopped")


async def _initialize(app: Application[Any, Any, Any, Any, Any, Any]) -> None:
    """Initialize, retrying while Telegram (or the network) is unreachable at start."""
    delay = 1.0
    while True:
        try:
            await app.initialize()
            return
        except (NetworkError, TimedOut) as exc:
            log.warning("cannot reach the Bot API (%s); retrying in %.0f s", exc, delay)
            await asyncio.sleep(delay)
            delay = min(delay * 2, 30.0)

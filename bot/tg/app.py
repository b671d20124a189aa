"""The composition root: builds the PTB Application and its services (``build_application``),
registers every handler in one ordered table, starts the push sender after start-up and closes
everything at shutdown."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import signal
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar
from urllib.parse import urlsplit

from sqlalchemy.exc import DBAPIError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from telegram import CallbackQuery, LinkPreviewOptions, Update
from telegram.constants import ParseMode
from telegram.error import BadRequest, Forbidden, InvalidToken, NetworkError, TelegramError, TimedOut
from telegram.ext import (
    Application,
    ApplicationBuilder,
    ApplicationHandlerStop,
    BaseUpdateProcessor,
    CallbackQueryHandler,
    CommandHandler,
    ContextTypes,
    Defaults,
    InlineQueryHandler,
    MessageHandler,
    TypeHandler,
    filters,
)

from bot.bank import Bank
from bot.catalog import Catalog, CatalogHolder
from bot.config import Settings, SettingsError
from bot.db import chats
from bot.db.engine import (
    DATABASE_ERRORS,
    Database,
    acquire_sender_lock,
    database_problem,
    release_sender_lock,
)
from bot.i18n import t
from bot.logs import setup_logging
from bot.metrics import Metrics
from bot.push.sender import PushService
from bot.services import grading
from bot.services import voice as voice_answers
from bot.services.graders import build_grader
from bot.tg import callbacks
from bot.tg.common import answer_query, load_update_state, on_unknown_command
from bot.tg.context import Ctx, Services
from bot.tg.handlers import (
    admin,
    browse,
    daily,
    disputes,
    inline,
    interview,
    practice,
    progress,
    questions,
    quiz,
    start,
    voice,
)
from bot.tg.inbox import Inbox
from bot.tg.notices import tell_chat
from bot.tg.push_channel import TelegramPushChannel
from bot.tg.ratelimit import BotRateLimiter
from bot.tg.transport import AiohttpRequest, RawUpdatesRequest
from bot.tg.web import WebServer
from bot.tg.webapp import set_menu_button

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


@dataclass
class _ChatLine:
    """One chat's place in the processor: its order lock and what waits behind it."""

    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    waiting: int = 0
    queued: Counter[tuple[int, str]] = field(default_factory=Counter)  # commands and buttons waiting
    warned_at: float = -1e9


class FairUpdateProcessor(BaseUpdateProcessor):
    """Updates run concurrently across chats but in order within one chat, so an answer is never
    handled before the question it answers has been recorded. A chat waits in its own line: an
    update takes one of the ``max_active`` processing slots only when its chat's turn has come, so
    a busy group waiting for its send budget holds one slot, not all of them.

    A flood is handled at the chat's pace and bounded: a command or button press that is already
    waiting in its chat's line from the same user is dropped (100 × /help sent faster than they are
    handled give one answer; a dropped press gets an empty answer, so its button stops spinning), and
    beyond ``backlog`` waiting updates a chat's commands and presses are dropped, with one notice
    per minute (``on_overflow``). One user's commands and presses in a chat beyond ``burst`` within
    ``burst_window`` seconds are dropped too (no person types that fast; how many of a script's flood
    would otherwise be answered depends on how Telegram happens to batch it). Text messages (answers)
    are never dropped."""

    def __init__(
        self,
        max_active: int = 64,
        *,
        backlog: int = 30,
        burst: int = 20,
        burst_window: float = 2.0,
        on_overflow: Callable[[Update], Coroutine[Any, Any, None]] | None = None,
    ) -> None:
        super().__init__(1_000_000)  # PTB's own semaphore is taken before the chat's turn: unbounded
        self._slots = asyncio.Semaphore(max_active)
        self._lines: dict[int, _ChatLine] = {}
        self.backlog = backlog
        self.burst, self.burst_window = burst, burst_window
        self._bursts: dict[tuple[int, int], tuple[float, int]] = {}  # (chat, user) -> (window start, count)
        self.on_overflow = on_overflow
        self.on_done: Callable[[Update], None] | None = None  # the inbox marks the update handled
        self.dropped = 0
        self.stopping = False  # set at shutdown: what still waits stays in the inbox for next time
        self._running: set[asyncio.Task[Any]] = set()

    @staticmethod
    def _signature(update: Update) -> tuple[int, str] | None:
        """What makes two waiting updates the same request: a command's text or a button's data
        from one user. None for anything else (answers are never coalesced)."""
        user = update.effective_user
        if user is None:
            return None
        if update.callback_query is not None:
            return (user.id, "cb:" + (update.callback_query.data or ""))
        message = update.message
        if message is not None and message.text and message.text.startswith("/"):
            return (user.id, message.text.strip())
        return None

    async def do_process_update(self, update: object, coroutine: Awaitable[Any]) -> None:
        chat = update.effective_chat if isinstance(update, Update) else None
        if chat is None:
            async with self._slots:
                await self._run(update, coroutine)
            return
        assert isinstance(update, Update)
        line = self._lines.get(chat.id)
        if line is None:
            line = self._lines[chat.id] = _ChatLine()
        signature = self._signature(update)
        if signature is not None and (
            line.queued[signature] or line.waiting >= self.backlog or self._bursting(chat.id, signature[0])
        ):
            self._drop(update, coroutine, line, notify=line.waiting >= self.backlog)
            return
        line.waiting += 1
        if signature is not None:
            line.queued[signature] += 1
        try:
            async with line.lock:
                line.waiting -= 1
                if signature is not None:
                    line.queued[signature] -= 1
                    if not line.queued[signature]:
                        del line.queued[signature]
                async with self._slots:
                    await self._run(update, coroutine)
        finally:
            if not line.waiting and not line.lock.locked() and self._lines.get(chat.id) is line:
                del self._lines[chat.id]

    async def _run(self, update: object, coroutine: Awaitable[Any]) -> None:
        if self.stopping:  # not handled now: the inbox keeps it for the next start
            if asyncio.iscoroutine(coroutine):
                coroutine.close()
            return
        task = asyncio.current_task()
        if task is not None:
            self._running.add(task)
        try:
            await coroutine
        except asyncio.CancelledError:  # cut off at shutdown: handled again after the restart
            raise
        except BaseException:
            self._mark_done(update)
            raise
        else:
            self._mark_done(update)
        finally:
            self._running.discard(task)

    def _mark_done(self, update: object) -> None:
        if self.on_done is not None and isinstance(update, Update):
            self.on_done(update)

    async def drain(self, grace: float) -> None:
        """Stop starting updates; give those in flight ``grace`` seconds, then cancel them (a
        handler waiting for a group's send budget could otherwise hold the shutdown for a minute).
        Whatever did not finish is handled again from the inbox after the restart."""
        self.stopping = True
        if self._running:
            await asyncio.wait(list(self._running), timeout=grace)
        for task in list(self._running):
            task.cancel()

    def _bursting(self, chat_id: int, user_id: int) -> bool:
        """Counts a command or press of the user in the chat; True beyond ``burst`` in the window."""
        now = time.monotonic()
        key = (chat_id, user_id)
        start, count = self._bursts.get(key, (now, 0))
        if now - start >= self.burst_window:
            start, count = now, 0
        self._bursts[key] = (start, count + 1)
        if len(self._bursts) > 10_000:  # forget the windows that are over
            self._bursts = {k: v for k, v in self._bursts.items() if now - v[0] < self.burst_window}
        return 0 < self.burst <= count

    def _drop(self, update: Update, coroutine: Awaitable[Any], line: _ChatLine, *, notify: bool) -> None:
        if asyncio.iscoroutine(coroutine):
            coroutine.close()
        self._mark_done(update)
        self.dropped += 1
        if update.callback_query is not None:  # the button stops its spinner; the first press was handled
            self._background(_answer_quietly(update.callback_query))
        now = time.monotonic()
        if notify and self.on_overflow is not None and now - line.warned_at > 60:
            line.warned_at = now
            self._background(self.on_overflow(update))

    @staticmethod
    def _background(coroutine: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(coroutine)
        _background.add(task)
        task.add_done_callback(_background.discard)

    async def initialize(self) -> None:
        return None

    async def shutdown(self) -> None:
        return None


_background: set[asyncio.Task[None]] = set()


async def _answer_quietly(query: CallbackQuery) -> None:
    with contextlib.suppress(TelegramError):
        await query.answer()


STOP_GRACE_SECONDS = 5.0  # handlers in flight at shutdown get this long before they are cut off


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


async def on_migrate(update: Update, context: Ctx) -> None:
    """A group became a supergroup. Telegram tells both ids (``migrate_to_chat_id`` in the old
    group, ``migrate_from_chat_id`` in the new supergroup), in either order: both move the same
    way, and the second finds nothing left to move."""
    message = update.effective_message
    if message is None:
        return
    if message.migrate_to_chat_id is not None:
        old_id, new_id = message.chat_id, message.migrate_to_chat_id
    elif message.migrate_from_chat_id is not None:
        old_id, new_id = message.migrate_from_chat_id, message.chat_id
    else:
        return
    async with context.services.db.write() as session:
        await chats.migrate_chat(session, old_id, new_id)
    log.info("chat %s migrated to %s", old_id, new_id)
    if message.migrate_to_chat_id is not None:
        raise ApplicationHandlerStop  # the old id is gone: no chat row to make for it again


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
    _start_pushes(app, services)
    default = services.settings.default_language
    for scope, names in start.command_menus():  # localized per scope: private, groups, group admins
        for lang in ("ru", "en"):
            await app.bot.set_my_commands(start.bot_commands(lang, names), scope=scope, language_code=lang)
        await app.bot.set_my_commands(start.bot_commands(default, names), scope=scope)
    await app.bot.set_my_commands(start.bot_commands(default))
    await set_menu_button(app.bot, services.settings)
    log.info("bot @%s started; bank: %s", app.bot.username, services.catalog.bank.summary())


async def _post_stop(app: Application[Any, Any, Any, Any, Any, Any]) -> None:
    """Stop taking work, finish sends in flight and give back unsent claims."""
    services: Services = app.bot_data["services"]
    if services.push is not None:
        await services.push.stop()


async def _post_shutdown(app: Application[Any, Any, Any, Any, Any, Any]) -> None:
    services: Services = app.bot_data["services"]
    if services.warm_up is not None:
        services.warm_up.cancel()
    if services.voice is not None:
        services.voice.close()
    await services.db.close()
    if services.db.is_sqlite:
        release_sender_lock(services.db.url)
    # the transports, also when start-up failed after they were opened (PTB closes them only
    # once the bot was initialized); closing twice is harmless
    await app.bot.request.shutdown()
    if services.inbox is not None and services.inbox.raw is not None:
        await services.inbox.raw.shutdown()


# Every message is Telegram HTML (views escape what they insert) without link previews. Calls that
# sent something else before still do: plain texts (poll texts, captions, the error, flood and
# database notices, a broadcast) pass parse_mode=None, and messages that never turned previews off
# (/start, the /daily edit, the bank report, reveal pushes) pass link_preview_options=None.
DEFAULTS = Defaults(parse_mode=ParseMode.HTML, link_preview_options=LinkPreviewOptions(is_disabled=True))


def build_application(
    settings: Settings,
    bank: Bank,
    token: str,
    *,
    db: Database | None = None,
    clock: Callable[[], datetime] | None = None,
) -> Application[Any, Any, Any, Any, Any, Any]:
    api = settings.telegram_api_url
    app = (
        ApplicationBuilder()
        .token(token)
        .base_url(f"{api}/bot")
        .base_file_url(f"{api}/file/bot")
        .context_types(ContextTypes(context=Ctx))
        .defaults(DEFAULTS)
        .rate_limiter(BotRateLimiter(group_max_rate=20, group_time_period=60, max_retries=2))
        .concurrent_updates(processor := FairUpdateProcessor(burst=settings.flood_burst))
        .updater(None)  # updates come through the inbox (bot.tg.inbox), stored before confirmed
        .request(AiohttpRequest())  # aiohttp, not PTB's httpx: half the CPU per API call (bot/tg/transport.py)
        .get_updates_request(raw_updates := RawUpdatesRequest())
        .build()
    )
    processor.on_overflow = lambda update: tell_chat(app.bot, update, "flood", settings.default_language)
    database = db or Database(settings.database_url)
    services = Services(
        settings=settings,
        db=database,
        catalog_holder=CatalogHolder(Catalog.build(bank)),
        metrics=Metrics(),
        grader=build_grader(settings, db=database),
        voice=voice_answers.build(settings, database),
    )
    if clock is not None:
        services.clock = clock
    services.inbox = Inbox(app, database, services.clock, raw=raw_updates)
    processor.on_done = lambda update: services.inbox.done(update.update_id)  # type: ignore[union-attr]
    app.bot_data["services"] = services
    register_handlers(app)
    return app


def run_bot(settings: Settings, bank: Bank, token: str, *, webhook: bool = False) -> None:
    """Run until SIGTERM/SIGINT: long polling, or a webhook (``--webhook`` / WEBHOOK_URL)."""
    secrets = (settings.webhook_secret, settings.llm_api_key, settings.stt_api_key)
    setup_logging(settings.log_level, settings.log_format, token, [s.get_secret_value() for s in secrets if s])
    app = build_application(settings, bank, token)
    asyncio.run(serve(app, settings, webhook=webhook or settings.webhook_url is not None, freeze_heap=True))


async def serve(
    app: Application[Any, Any, Any, Any, Any, Any],
    settings: Settings,
    *,
    webhook: bool,
    stop: asyncio.Event | None = None,
    freeze_heap: bool = False,
) -> None:
    """Serve until ``stop`` is set; without one, until SIGTERM or SIGINT. ``freeze_heap``: the
    process is the bot's own (see :func:`_freeze_heap`)."""
    if stop is None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
    _check_mode(settings, webhook=webhook)
    if not await _start_up(app, settings, stop):
        return
    if freeze_heap:
        warm_up = app.bot_data["services"].warm_up
        if warm_up is not None:
            warm_up.add_done_callback(_freeze_heap)
    server: WebServer | None = None
    polling: asyncio.Task[None] | None = None
    try:
        server, polling = await _open_intake(app, settings, webhook=webhook)
        await _wait(stop, polling)
        log.info("stopping: no new updates; finishing work in flight")
    finally:
        await _shut_down(app, server, polling)


def _freeze_heap(_: object = None) -> None:
    """Once the start-up's objects exist (the bank, its indexes, the grader's prepared phrases):
    collect once, then move them out of the cyclic garbage collector's sight (``gc.freeze``). A full
    collection walked all of them, ~250,000 objects and ~160 ms with the loop stopped (a stall every
    update waiting then shares); now it walks only what was made since. They are still freed by
    reference counting when dropped (a reloaded bank)."""
    started = time.perf_counter()
    gc.collect()
    gc.freeze()
    log.info("start-up objects set aside from garbage collection: %d (%.0f ms)", gc.get_freeze_count(),
             (time.perf_counter() - started) * 1000)  # fmt: skip


def _check_mode(settings: Settings, *, webhook: bool) -> None:
    if webhook and not settings.webhook_url:
        raise SettingsError("WEBHOOK_URL: required for --webhook (the public https URL Telegram calls)")
    if webhook and not settings.webhook_secret:
        raise SettingsError(
            "WEBHOOK_SECRET: required in webhook mode (1-256 characters A-Z a-z 0-9 _ -); "
            "without it anyone who finds the URL can post updates"
        )


async def _start_up(app: Application[Any, Any, Any, Any, Any, Any], settings: Settings, stop: asyncio.Event) -> bool:
    """Database first (one line and exit 2 if it cannot be used), then Telegram (retried until it
    answers or ``stop``); then pushes, the handlers and the updates left in the inbox. False when
    stopped before start-up finished."""
    services: Services = app.bot_data["services"]
    try:
        await services.db.migrate()
    except DATABASE_ERRORS as exc:
        await services.db.close()
        raise SettingsError(database_problem(exc, settings.database_url)) from None
    try:
        initialized = await _initialize(app, stop)
    except InvalidToken as exc:
        await _post_shutdown(app)
        raise SettingsError(_rejected(exc)) from None
    if not initialized:
        log.info("stopped before start-up finished")
        await _post_shutdown(app)
        return False
    await _post_init(app)
    await app.start()
    assert services.inbox is not None
    services.inbox.start()
    await services.inbox.replay()
    services.warm_up = asyncio.create_task(grading.warm_up(services.catalog.bank), name="grader warm-up")
    return True


async def _open_intake(
    app: Application[Any, Any, Any, Any, Any, Any], settings: Settings, *, webhook: bool
) -> tuple[WebServer | None, asyncio.Task[None] | None]:
    """The webhook (and its HTTP server), or long polling (and /metrics when asked for)."""
    services: Services = app.bot_data["services"]
    assert services.inbox is not None
    if webhook:
        assert settings.webhook_url is not None and settings.webhook_secret is not None
        secret = settings.webhook_secret.get_secret_value()
        path = urlsplit(settings.webhook_url).path or "/"
        server = WebServer(
            app, services, listen=settings.webhook_listen, port=settings.webhook_port, webhook_path=path, secret=secret
        )
        await server.start()
        await app.bot.set_webhook(
            settings.webhook_url, secret_token=secret, allowed_updates=Update.ALL_TYPES, max_connections=40
        )
        log.info("webhook mode: Telegram posts updates to %s", path)
        return server, None
    metrics: WebServer | None = None
    if settings.metrics_port:
        metrics = WebServer(app, services, listen=settings.webhook_listen, port=settings.metrics_port)
        await metrics.start()
    rounds = services.inbox.poll(wait=int(settings.poll_timeout), heartbeat=settings.heartbeat_file)
    polling = asyncio.create_task(rounds, name="polling")
    log.info("long polling started")
    return metrics, polling


async def _wait(stop: asyncio.Event, polling: asyncio.Task[None] | None) -> None:
    """Until ``stop`` is set; a polling loop that fails for good (a revoked token) ends it too."""
    stopped = asyncio.create_task(stop.wait())
    await asyncio.wait({stopped, *([polling] if polling else [])}, return_when=asyncio.FIRST_COMPLETED)
    stopped.cancel()
    if polling is not None and polling.done() and not polling.cancelled() and polling.exception():
        raise polling.exception()  # type: ignore[misc]


async def _shut_down(
    app: Application[Any, Any, Any, Any, Any, Any], server: WebServer | None, polling: asyncio.Task[None] | None
) -> None:
    """No new updates; what waits stays in the inbox; handlers in flight get a grace period; sends
    in flight finish and unsent claims go back."""
    services: Services = app.bot_data["services"]
    if polling is not None and not polling.done():
        polling.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await polling
    if server is not None:
        await server.stop()
    processor = app.update_processor
    if isinstance(processor, FairUpdateProcessor):
        await processor.drain(grace=STOP_GRACE_SECONDS)
    await app.stop()  # lets the handlers in flight finish, stops the job queue
    if services.inbox is not None:
        await services.inbox.close()  # the last done marks
    await _post_stop(app)  # finishes sends in flight, releases unsent claims
    await app.shutdown()
    await _post_shutdown(app)
    log.info("stopped")


def _rejected(exc: InvalidToken) -> str:
    """One line for a token (or API URL) the Bot API refuses; PTB's message carries the token."""
    text = str(exc.__cause__ or exc).lower()  # the server's own description, without the token
    if "not found" in text or "404" in text:
        return "BOT_TOKEN or TELEGRAM_API_URL: the Bot API answered 404 Not Found (check both)"
    return "BOT_TOKEN: rejected by the Bot API (401 Unauthorized)"


async def _initialize(app: Application[Any, Any, Any, Any, Any, Any], stop: asyncio.Event) -> bool:
    """Initialize, retrying while Telegram (or the network) is unreachable at start. Returns False
    when asked to stop meanwhile (SIGTERM / Ctrl-C during the retries exit at once)."""
    delay = 1.0
    while not stop.is_set():
        try:
            await app.initialize()
            return True
        except (NetworkError, TimedOut) as exc:
            log.warning("cannot reach the Bot API (%s); retrying in %.0f s", exc, delay)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), delay)
            delay = min(delay * 2, 30.0)
    return False

"""The composition root: builds the PTB Application and its services (``build_application``),
registers the handlers of ``tg/routes.py``, starts the push sender after start-up and closes
everything at shutdown."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import signal
import time
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from telegram import LinkPreviewOptions, Update
from telegram.constants import ParseMode
from telegram.error import InvalidToken, NetworkError, TimedOut
from telegram.ext import (
    Application,
    ApplicationBuilder,
    ContextTypes,
    Defaults,
)

from bot.bank import Bank
from bot.catalog import CatalogHolder
from bot.config import Settings, SettingsError
from bot.db.engine import (
    DATABASE_ERRORS,
    Database,
    acquire_sender_lock,
    database_problem,
    release_sender_lock,
)
from bot.logs import setup_logging
from bot.metrics import Metrics
from bot.push.sender import PushService
from bot.services import grading
from bot.services import voice as voice_answers
from bot.services.deps import Deps, utcnow
from bot.services.graders import build_grader
from bot.tg.context import Ctx, Services
from bot.tg.handlers import (
    start,
)
from bot.tg.inbox import Inbox
from bot.tg.menu import set_menu_button
from bot.tg.notices import tell_chat
from bot.tg.processor import FairUpdateProcessor
from bot.tg.push_channel import TelegramPushChannel
from bot.tg.ratelimit import BotRateLimiter
from bot.tg.routes import register_handlers
from bot.tg.transport import AiohttpRequest, RawUpdatesRequest

if TYPE_CHECKING:
    from bot.tg.http_server import WebServer

log = logging.getLogger(__name__)

STOP_GRACE_SECONDS = 5.0  # handlers in flight at shutdown get this long before they are cut off


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
        services.deps,
        services.catalog_holder,
        settings,
        metrics=services.metrics,
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
    log.info("bot @%s started; bank: %s", app.bot.username, services.bank.summary())


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
        deps=Deps(database, build_grader(settings, db=database), clock or utcnow),
        catalog_holder=CatalogHolder.of_bank(bank),
        metrics=Metrics(),
        voice=voice_answers.build(settings, database),
    )
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
    services.warm_up = asyncio.create_task(grading.warm_up(services.bank), name="grader warm-up")
    return True


async def _warm_up(services: Services) -> None:
    """After the bot is answering: the search and glossary indexes and the grader's dictionaries (in a
    thread, so the loop keeps answering; an update that needs them meanwhile waits for them), then the
    grader's phrases in slices (:func:`bot.services.grading.warm_up`)."""
    await asyncio.to_thread(services.catalog_holder.prepare)
    await grading.warm_up(services.bank)


async def _open_intake(
    app: Application[Any, Any, Any, Any, Any, Any], settings: Settings, *, webhook: bool
) -> tuple[WebServer | None, asyncio.Task[None] | None]:
    """The webhook (and its HTTP server), or long polling (and /metrics when asked for)."""
    from bot.tg.http_server import WebServer  # the HTTP server is imported only when something listens

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

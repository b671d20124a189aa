"""The baseline: a bare python-telegram-bot echo bot, run as its own process like ours.

Settings (the honest PTB counterpart of bot/tg/app.py:build_application): same token, same
``base_url``/``base_file_url`` (``TELEGRAM_API_URL``), ApplicationBuilder's default HTTPXRequest
(connection pool 256, get_updates pool 1), long polling with PTB's defaults (timeout 10 s,
poll_interval 0) and ``allowed_updates=Update.ALL_TYPES`` as ours, ``concurrent_updates(64)``
(PTB's SimpleUpdateProcessor, the same concurrency as our FairUpdateProcessor(64)), no rate
limiter unless ``--rate-limiter`` (then AIORateLimiter with our settings), no persistence, no job
queue work, logging at WARNING. One MessageHandler(TEXT) that replies with the text; a
CallbackQueryHandler answers button presses.

    python -m bench.echo_bot [--sequential] [--rate-limiter] [--pool N]
"""

from __future__ import annotations

import argparse
import logging
import os

from telegram import Update
from telegram.ext import AIORateLimiter, ApplicationBuilder, CallbackQueryHandler, ContextTypes, MessageHandler, filters


async def echo(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    assert update.message is not None and update.message.text is not None
    await update.message.reply_text(update.message.text)


async def on_button(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    assert update.callback_query is not None
    await update.callback_query.answer()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sequential", action="store_true", help="PTB's default: one update at a time")
    parser.add_argument("--rate-limiter", action="store_true", help="AIORateLimiter as bot/tg/app.py sets it")
    parser.add_argument("--pool", type=int, default=0, help="connection_pool_size (0: PTB's default, 256)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    api = os.environ["TELEGRAM_API_URL"].rstrip("/")
    builder = (
        ApplicationBuilder()
        .token(os.environ["BOT_TOKEN"])
        .base_url(f"{api}/bot")
        .base_file_url(f"{api}/file/bot")
        .concurrent_updates(False if args.sequential else 64)
    )
    if args.pool:
        builder = builder.connection_pool_size(args.pool)
    if args.rate_limiter:
        builder = builder.rate_limiter(
            AIORateLimiter(overall_max_rate=0, group_max_rate=20, group_time_period=60, max_retries=2)
        )
    app = builder.build()
    app.add_handler(MessageHandler(filters.TEXT & ~filters.COMMAND, echo))
    app.add_handler(MessageHandler(filters.COMMAND, echo))
    app.add_handler(CallbackQueryHandler(on_button))
    app.run_polling(allowed_updates=Update.ALL_TYPES, bootstrap_retries=-1)


if __name__ == "__main__":
    main()

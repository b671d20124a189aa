"""Admin commands for the users in ADMIN_IDS: /reload, /bankstats, /broadcast, /usage.

Anyone else gets exactly the reply an unknown command gets, so the commands are not advertised.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from datetime import timedelta
from io import BytesIO
from typing import Any

from telegram import Message, Update
from telegram.error import TelegramError

from bot.bank import BankError, default_bank_path, load_bank
from bot.bank.markdown import escape
from bot.config import default_cache_dir
from bot.i18n import counted, t
from bot.push import broadcast
from bot.push.pacer import Pacer
from bot.services import disputes, usage
from bot.tg.common import command_args, on_unknown_command, reply_text
from bot.tg.context import Ctx
from bot.tg.push_channel import TelegramPushChannel

log = logging.getLogger(__name__)
Handler = Callable[[Update, Ctx], Coroutine[Any, Any, None]]


def admin_only(fn: Handler) -> Handler:
    async def wrapper(update: Update, context: Ctx) -> None:
        user = update.effective_user
        if user is None or user.id not in context.services.settings.admin_ids:
            await on_unknown_command(update, context)
            return
        await fn(update, context)

    wrapper.__name__ = fn.__name__
    return wrapper


@admin_only
async def cmd_reload(update: Update, context: Ctx) -> None:
    s = context.services
    path = s.settings.bank_path or default_bank_path()
    try:
        cache = default_cache_dir() if s.settings.bank_cache else None
        bank = await asyncio.to_thread(load_bank, path, cache_dir=cache)
    except BankError as exc:
        report = exc.report()
        log.warning("bank reload rejected: %d problem(s)", len(exc.problems))
        await reply_text(
            update, t(context.lang, "admin.reload_rejected", count=counted(len(exc.problems), "problems", context.lang))
        )
        message = update.effective_message
        assert message is not None
        if len(report) < 3500:
            await message.reply_text(f"<pre>{escape(report)}</pre>", link_preview_options=None)
        else:
            await message.reply_document(BytesIO(report.encode()), filename="bank-report.txt", parse_mode=None)
        return
    catalog = s.catalog_holder.replace(bank)
    summary = catalog.bank.summary()
    log.info("bank reloaded: %s", summary)
    lang = context.lang
    await reply_text(update, t(lang, "admin.reloaded", questions=counted(_n(summary, "questions"), "questions", lang),
                               tasks=counted(_n(summary, "tasks"), "tasks_short", lang),
                               terms=counted(_n(summary, "terms"), "terms", lang),
                               topics=counted(_n(summary, "topics"), "topics", lang)))  # fmt: skip


def _n(summary: dict[str, object], key: str) -> int:
    value = summary[key]
    assert isinstance(value, int)
    return value


@admin_only
async def cmd_bankstats(update: Update, context: Ctx) -> None:
    catalog = context.services.catalog
    bank = catalog.bank
    summary = bank.summary()
    loaded = catalog.loaded_at.strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        t(context.lang, "admin.bankstats", questions=counted(_n(summary, "questions"), "questions", context.lang),
          tasks=counted(_n(summary, "tasks"), "tasks_short", context.lang),
          terms=counted(_n(summary, "terms"), "terms", context.lang), links=summary["links"], loaded=loaded)
    ]  # fmt: skip
    for topic in bank.topics:
        ids = bank.topic_question_ids(topic.id)
        levels = [bank.questions[q].difficulty for q in ids]
        mean = sum(levels) / len(levels) if levels else 0
        lines.append(f"• {escape(topic.title(context.lang))}: {len(ids)} · ★{mean:.1f}")
    lines.append(t(context.lang, "admin.disputes", count=await disputes.count(context.services.db)))
    await reply_text(update, "\n".join(lines))


@admin_only
async def cmd_usage(update: Update, context: Ctx) -> None:
    s = context.services
    now = s.clock()
    found = await usage.usage(s.db, now=now)
    active, chats, subscribed, per_day = found.active, found.chats, found.subscribed, found.answers_per_day
    last_week = [(now - timedelta(days=i)).strftime("%m-%d") for i in range(6, -1, -1)]
    lines = [
        t(context.lang, "admin.usage", d1=active[1], d7=active[7], d30=active[30], subscribed=subscribed or 0),
        t(context.lang, "admin.chats", chats=", ".join(f"{k}: {v}" for k, v in sorted(chats.items())) or "—"),
        t(context.lang, "admin.answers_per_day"),
    ]
    lines += [f"<code>{day}</code> {'▇' * min(30, per_day.get(day, 0))} {per_day.get(day, 0)}" for day in last_week]
    await reply_text(update, "\n".join(lines))


@admin_only
async def cmd_broadcast(update: Update, context: Ctx) -> None:
    """Send a message to every chat with the daily push on, paced like pushes. It runs as a
    background task: the admin gets a progress message at once, edited until the final report."""
    text = command_args(context)
    message = update.effective_message
    assert message is not None
    if not text:
        await reply_text(update, t(context.lang, "admin.broadcast_usage"))
        return
    s = context.services
    targets = await broadcast.audience(s.db)
    progress = await message.reply_text(
        t(context.lang, "admin.broadcast_progress", done=0, total=len(targets)),
        parse_mode=None,
        link_preview_options=None,
    )
    context.application.create_task(_run_broadcast(context, progress, text, targets), update=update, name="broadcast")


async def _run_broadcast(context: Ctx, progress: Message, text: str, targets: list[int]) -> None:
    s = context.services
    lang = context.lang
    pacer = s.push.pacer if s.push is not None else Pacer(s.settings.send_rate)
    channel = TelegramPushChannel(context.bot)

    async def show(report: broadcast.BroadcastReport) -> None:
        await _edit(progress, t(lang, "admin.broadcast_progress", done=report.done, total=report.total))

    report = await broadcast.broadcast(channel, s.db, pacer, text, targets, progress=broadcast.Progress(show))
    await _edit(progress, t(lang, "admin.broadcast_done", sent=report.sent, failed=report.failed,
                            blocked=report.blocked, total=report.total))  # fmt: skip


async def _edit(message: Message, text: str) -> None:
    try:
        await message.edit_text(text, parse_mode=None, link_preview_options=None)
    except TelegramError as exc:  # the report is a courtesy: the broadcast goes on without it
        log.warning("broadcast progress not shown: %s", exc)

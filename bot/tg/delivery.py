"""The one Telegram send policy for bulk sends (pushes, reveals, quiz polls sent by pushes,
broadcasts): every Bot API answer becomes an :class:`~bot.push.outcome.Outcome`.

Bulk sends pass ``rate_limit_args=NO_RETRY``: on a 429 the rate limiter holds the bot's other
requests and the sender pauses its own pacing and retries the message itself.
"""

from __future__ import annotations

from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Any

from telegram import InlineKeyboardMarkup, LinkPreviewOptions, Message
from telegram.constants import ParseMode
from telegram.error import BadRequest, ChatMigrated, Forbidden, NetworkError, RetryAfter, TelegramError, TimedOut
from telegram.ext import ExtBot

from bot.push.outcome import Outcome, Status
from bot.tg.ratelimit import NO_RETRY, retry_seconds

_TOO_LONG = "message is too long"
NO_PREVIEW = LinkPreviewOptions(is_disabled=True)


def classify(exc: TelegramError) -> Outcome:
    """The outcome of a request that raised ``exc``; errors outside the policy are raised again."""
    if isinstance(exc, RetryAfter):
        return Outcome.wait(retry_seconds(exc))
    if isinstance(exc, Forbidden):
        return Outcome.blocked(f"forbidden: {exc.message}")
    if isinstance(exc, ChatMigrated):
        return Outcome.migrated(exc.new_chat_id)
    if isinstance(exc, TimedOut):  # before NetworkError: a TimedOut is one
        return Outcome.failed(Status.TIMED_OUT, "timed out")
    if isinstance(exc, BadRequest):  # before NetworkError: a BadRequest is one too
        status = Status.TOO_LONG if _TOO_LONG in exc.message.lower() else Status.REJECTED
        return Outcome.failed(status, exc.message)
    if isinstance(exc, NetworkError):
        return Outcome.failed(Status.NETWORK, str(exc))
    raise exc


async def attempt(request: Awaitable[Message]) -> Outcome:
    """Await one Bot API request that returns a message and classify what happened."""
    try:
        message = await request
    except TelegramError as exc:
        return classify(exc)
    return Outcome.sent(message.message_id, message.poll.id if message.poll is not None else None)


@dataclass(frozen=True, slots=True)
class Style:
    """How a bulk text is sent: Telegram HTML or plain text (``html``), with link previews or not
    (``no_preview``), as a paid broadcast (``paid``: beyond the free rate, PAID_BROADCAST)."""

    html: bool = False
    no_preview: bool = False
    paid: bool = False


PLAIN = Style()  # the admin's broadcast text, as typed
HTML = Style(html=True)


async def send(
    bot: ExtBot[Any],
    chat_id: int,
    text: str,
    *,
    style: Style = PLAIN,
    keyboard: InlineKeyboardMarkup | None = None,
    reply_to: int | None = None,
) -> Outcome:
    """Send one text message under the bulk policy."""
    return await attempt(
        bot.send_message(
            chat_id,
            text,
            # explicit either way: ``None`` overrides the Defaults (tg/app.py) of HTML without previews
            parse_mode=ParseMode.HTML if style.html else None,
            reply_markup=keyboard,
            reply_to_message_id=reply_to,
            link_preview_options=NO_PREVIEW if style.no_preview else None,
            allow_paid_broadcast=style.paid or None,
            rate_limit_args=NO_RETRY,
        )
    )

"""Notices sent outside an update's normal handling (no per-update state, no database): the inbox
telling a chat to wait for the database, the fair processor telling a flooding chat to slow down."""

from __future__ import annotations

import logging
from typing import Any

from telegram import Update
from telegram.error import TelegramError

from bot.i18n import language_from_telegram, t

log = logging.getLogger(__name__)


async def tell_chat(bot: Any, update: Update, key: str, default_lang: str) -> None:
    """A plain notice to the update's chat without the per-update state (no database): in the
    sender's Telegram language. A failure to send is logged, not raised."""
    chat, user = update.effective_chat, update.effective_user
    if chat is None:
        return
    lang = language_from_telegram(user.language_code if user else None, default_lang)
    try:
        await bot.send_message(chat.id, t(lang, key), parse_mode=None, link_preview_options=None)
    except TelegramError as exc:
        log.info("could not send %s to chat %s: %s", key, chat.id, exc)

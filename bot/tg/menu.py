"""The chat menu button: the Mini App when it is on, else Telegram's default (the command list).
Its own module so that a bot without the Mini App never imports its HTTP server."""

from __future__ import annotations

import logging
from typing import Any

from telegram import MenuButtonDefault, MenuButtonWebApp, WebAppInfo
from telegram.error import TelegramError
from telegram.ext import ExtBot

from bot.config import Settings
from bot.i18n import t

log = logging.getLogger(__name__)


async def set_menu_button(bot: ExtBot[Any], settings: Settings) -> None:
    """With WEBAPP_URL, the chat menu button opens the Mini App (else Telegram's default: the
    command list). A refusal is logged; the bot runs on without it."""
    button = (
        MenuButtonWebApp(t(settings.default_language, "webapp.menu"), WebAppInfo(settings.webapp_url))
        if settings.webapp_url
        else MenuButtonDefault()
    )
    try:
        await bot.set_chat_menu_button(menu_button=button)
    except TelegramError as exc:
        log.warning("could not set the menu button to the Mini App: %s", exc)
    if settings.webapp_dev:
        log.warning("WEBAPP_DEV=1: /app/ signs requests itself as a test user; never use it in production")

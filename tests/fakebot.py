"""The tests' fake Telegram: the stand-in Bot API server that ships in the package (``bot/demo/standin.py``,
which ``interview-bot demo`` runs too), re-exported under the name the tests use."""

from bot.demo.standin import (
    ALLOWED_TAGS,
    BOT_ID,
    BOT_USERNAME,
    TOKEN,
    ApiError,
    Chat,
    FakeTelegram,
    FakeUser,
    Fault,
    Sent,
    check_markup,
    parse_html,
    parse_html_entities,
    utf16_len,
)

__all__ = [
    "ALLOWED_TAGS",
    "BOT_ID",
    "BOT_USERNAME",
    "TOKEN",
    "ApiError",
    "Chat",
    "FakeTelegram",
    "FakeUser",
    "Fault",
    "Sent",
    "check_markup",
    "parse_html",
    "parse_html_entities",
    "utf16_len",
]

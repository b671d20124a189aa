"""PTB ``Defaults`` (``tg/app.py: DEFAULTS``): HTML without link previews unless a call says
otherwise. What Telegram receives, recorded below the bot (no network): HTML views as before, and
the plain texts (a broadcast, poll texts) still plain, a reveal push still with previews."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from telegram.ext import ExtBot
from telegram.request import BaseRequest, RequestData

from bot.core.quiz import Quiz
from bot.tg import delivery
from bot.tg.app import DEFAULTS
from bot.tg.handlers.quiz import post_quiz
from bot.tg.ratelimit import BotRateLimiter

TOKEN = "123456789:AAFakeTokenForTestsOnly_abcdefghijklmnop"
MESSAGE = {"message_id": 7, "date": 0, "chat": {"id": 42, "type": "private"}, "text": "x"}


class Recorder(BaseRequest):
    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []

    @property
    def read_timeout(self) -> float | None:
        return None

    async def initialize(self) -> None:
        return None

    async def shutdown(self) -> None:
        return None

    async def do_request(
        self,
        url: str,
        method: str,
        request_data: RequestData | None = None,
        read_timeout: Any = None,
        write_timeout: Any = None,
        connect_timeout: Any = None,
        pool_timeout: Any = None,
    ) -> tuple[int, bytes]:
        endpoint = url.rsplit("/", 1)[-1]
        params = json.loads(request_data.json_payload) if request_data is not None else {}
        # objects and lists travel as JSON inside the form, as Telegram gets them
        params = {k: json.loads(v) if isinstance(v, str) and v[:1] in "[{" else v for k, v in params.items()}
        self.calls.append((endpoint, params))
        return 200, json.dumps({"ok": True, "result": MESSAGE}).encode()


def _bot() -> tuple[ExtBot[Any], Recorder]:
    recorder = Recorder()
    limiter = BotRateLimiter(group_max_rate=20, group_time_period=60, max_retries=2)
    return ExtBot(TOKEN, defaults=DEFAULTS, request=recorder, rate_limiter=limiter), recorder


@pytest.mark.parametrize(
    ("html", "no_preview", "expected"),
    [
        (True, True, {"parse_mode": "HTML", "link_preview_options": {"is_disabled": True}}),  # a question push
        (True, False, {"parse_mode": "HTML"}),  # a reveal push: links in answers keep their previews
        (False, False, {}),  # a broadcast: the admin's text as typed
    ],
)
def test_delivery_sends_what_it_sent_before_the_defaults(
    html: bool, no_preview: bool, expected: dict[str, Any]
) -> None:
    bot, recorder = _bot()
    style = delivery.Style(html=html, no_preview=no_preview)
    outcome = asyncio.run(delivery.send(bot, 42, "<b>x</b> & y", style=style))
    assert outcome.ok
    ((method, params),) = recorder.calls
    assert method == "sendMessage"
    got = {k: params[k] for k in ("parse_mode", "link_preview_options", "disable_web_page_preview") if k in params}
    assert got == expected


def test_quiz_poll_texts_stay_plain() -> None:
    bot, recorder = _bot()
    quiz = Quiz("t", "definition", None, "What is <LoRA> & co?", ("a < b", "c"), 0, "x & y", ("t", "u"))
    asyncio.run(post_quiz(bot, 42, quiz))
    ((method, params),) = recorder.calls
    assert method == "sendPoll"
    assert params["question"] == "What is <LoRA> & co?" and params["explanation"] == "x & y"
    assert "question_parse_mode" not in params and "explanation_parse_mode" not in params
    assert params["options"] == [{"text": "a < b"}, {"text": "c"}]

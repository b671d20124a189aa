"""The rate limiter holds each 429 where it applies: one chat, or everything (issue 29)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from telegram.error import RetryAfter

from bot.tg.ratelimit import NO_RETRY, BotRateLimiter


def _run(limiter: BotRateLimiter, chat: int | None, fail: list[float] | None = None, retries: Any = None) -> Any:
    """One request to ``chat``; it raises RetryAfter(s) for each s in ``fail`` first."""
    pending = list(fail or [])

    async def callback() -> dict[str, Any]:
        if pending:
            raise RetryAfter(pending.pop(0))  # type: ignore[arg-type]
        return {"ok": True, "at": time.monotonic()}

    data = {"chat_id": chat} if chat is not None else {}
    return limiter.process_request(callback, (), {}, "sendMessage", data, retries)


def test_a_chats_429_holds_that_chat_only() -> None:
    async def go() -> None:
        limiter = BotRateLimiter()
        with pytest.raises(RetryAfter):
            await _run(limiter, 501, [0.6], NO_RETRY)
        assert limiter.held(501) and not limiter.held(502)
        started = time.monotonic()
        await _run(limiter, 502)  # another user: at once
        assert time.monotonic() - started < 0.1
        result = await _run(limiter, 501)  # the held chat waits its retry_after
        assert result["at"] - started >= 0.5

    asyncio.run(go())


def test_a_429_without_a_chat_or_in_several_chats_holds_everything() -> None:
    async def go() -> None:
        limiter = BotRateLimiter()
        with pytest.raises(RetryAfter):
            await _run(limiter, None, [0.5], NO_RETRY)
        assert limiter.held(777)
        limiter = BotRateLimiter()
        for chat in (1, 2, 3):
            with pytest.raises(RetryAfter):
                await _run(limiter, chat, [0.5], NO_RETRY)
        assert limiter.held(999)  # the bot's overall limit

    asyncio.run(go())


def test_a_request_is_retried_after_its_wait() -> None:
    async def go() -> None:
        limiter = BotRateLimiter(max_retries=2)
        started = time.monotonic()
        result = await _run(limiter, -100, [0.2, 0.2])
        assert result["ok"] and time.monotonic() - started >= 0.35
        with pytest.raises(RetryAfter):
            await _run(limiter, -100, [0.1, 0.1, 0.1])

    asyncio.run(go())

"""The bot's rate limiter: Telegram's limits, and each 429 held only where it applies.

Built on python-telegram-bot's public :class:`telegram.ext.BaseRateLimiter` (no library internals):

- a group gets at most 20 messages in any minute (:class:`SlidingWindow`; aiolimiter's leaky bucket,
  PTB's default, lets a group receive 20 at once and then one every 3 s: up to 40 in the first minute,
  and Telegram answers 429);
- a 429 (``RetryAfter``) on a request to a chat holds **that chat** until its ``retry_after`` has
  passed: one user's flood (a Mini App ``/ask`` loop, a push) slows that user, not the others. A 429
  on a request without a chat, or 429s in three or more chats within two seconds (the bot's overall
  limit), hold every request;
- a request is retried after its wait up to ``max_retries`` times; bulk senders pass
  ``rate_limit_args=NO_RETRY``: on a 429 they requeue the message themselves and pause their own
  pacing.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from collections.abc import Callable, Coroutine
from typing import Any

from telegram.error import RetryAfter
from telegram.ext import BaseRateLimiter

NO_RETRY = -1
GROUP_MARGIN_SECONDS = 0.5  # our clock starts before Telegram's: keep clear of its window edge
GLOBAL_CHATS = 3  # 429s in this many chats …
GLOBAL_WINDOW = 2.0  # … within this many seconds: the bot's overall limit, hold everything
MAX_HELD_CHATS = 10_000  # held chats remembered at most (expired ones are dropped first)

JSONDict = dict[str, Any]


class SlidingWindow:
    """At most ``max_rate`` entries in any ``time_period`` seconds: Telegram's "20 messages per
    minute in a group"."""

    def __init__(self, max_rate: float, time_period: float) -> None:
        self.max_rate = max_rate
        self.time_period = time_period + GROUP_MARGIN_SECONDS
        self._times: deque[float] = deque()
        self._lock = asyncio.Lock()

    def _trim(self, now: float) -> None:
        while self._times and now - self._times[0] >= self.time_period:
            self._times.popleft()

    def has_capacity(self, amount: float = 1) -> bool:
        self._trim(time.monotonic())
        return len(self._times) + amount <= self.max_rate

    def take(self) -> bool:
        """Count one entry now if there is room (no waiting)."""
        now = time.monotonic()
        self._trim(now)
        if len(self._times) < self.max_rate:
            self._times.append(now)
            return True
        return False

    async def __aenter__(self) -> None:
        async with self._lock:  # first come, first served
            while True:
                now = time.monotonic()
                self._trim(now)
                if len(self._times) < self.max_rate:
                    self._times.append(now)
                    return
                await asyncio.sleep(self._times[0] + self.time_period - now)

    async def __aexit__(self, *exc: object) -> None:
        return None


def retry_seconds(exc: RetryAfter) -> float:
    """Telegram's ``retry_after`` in seconds (PTB gives an int or a timedelta)."""
    value = exc.retry_after
    return float(value) if isinstance(value, int | float) else value.total_seconds()


def chat_of(data: JSONDict | None) -> int | str | None:
    """The chat a request goes to (an id, or a channel's @username), None for chat-less methods."""
    chat = (data or {}).get("chat_id")
    if chat is None:
        return None
    with contextlib.suppress(ValueError, TypeError):
        return int(chat)
    return str(chat)


def is_group(chat: int | str | None) -> bool:
    return (isinstance(chat, int) and chat < 0) or isinstance(chat, str)


class BotRateLimiter(BaseRateLimiter[int]):
    def __init__(self, *, group_max_rate: int = 20, group_time_period: float = 60, max_retries: int = 2) -> None:
        self.group_max_rate = group_max_rate
        self.group_time_period = group_time_period
        self.max_retries = max_retries
        self._groups: dict[int | str, SlidingWindow] = {}
        self._held: dict[int | str, float] = {}  # chat -> monotonic time its hold ends
        self._held_all = 0.0  # every request waits until then
        self._recent: deque[tuple[float, int | str]] = deque()  # (when, chat) of the latest 429s

    async def initialize(self) -> None:
        return None

    async def shutdown(self) -> None:
        return None

    def _group(self, chat: int | str) -> SlidingWindow:
        window = self._groups.get(chat)
        if window is None:
            if len(self._groups) > 512:  # forget the windows that are empty
                for key, old in list(self._groups.items()):
                    if old.has_capacity(old.max_rate):
                        del self._groups[key]
            window = self._groups[chat] = SlidingWindow(self.group_max_rate, self.group_time_period)
        return window

    async def _wait(self, chat: int | str | None) -> None:
        while True:
            until = max(self._held_all, self._held.get(chat, 0.0) if chat is not None else 0.0)
            delay = until - time.monotonic()
            if delay <= 0:
                return
            await asyncio.sleep(delay)

    def hold(self, chat: int | str | None, seconds: float) -> None:
        """After a 429: hold that chat (or everything: no chat, or several chats at once)."""
        now = time.monotonic()
        until = now + seconds
        if chat is None:
            self._held_all = max(self._held_all, until)
            return
        self._held[chat] = max(self._held.get(chat, 0.0), until)
        self._recent.append((now, chat))
        while self._recent and now - self._recent[0][0] > GLOBAL_WINDOW:
            self._recent.popleft()
        if len({c for _, c in self._recent}) >= GLOBAL_CHATS:
            self._held_all = max(self._held_all, until)
        if len(self._held) > MAX_HELD_CHATS:
            self._held = {c: t for c, t in self._held.items() if t > now}

    def held(self, chat: int | str | None) -> bool:
        """Whether requests to ``chat`` wait now (for tests and the health page)."""
        now = time.monotonic()
        return self._held_all > now or (chat is not None and self._held.get(chat, 0.0) > now)

    async def process_request(
        self,
        callback: Callable[..., Coroutine[Any, Any, bool | JSONDict | list[JSONDict]]],
        args: Any,
        kwargs: dict[str, Any],
        endpoint: str,
        data: dict[str, Any],
        rate_limit_args: int | None,
    ) -> bool | JSONDict | list[JSONDict]:
        chat = chat_of(data)
        retries = 0 if rate_limit_args == NO_RETRY else (rate_limit_args or self.max_retries)
        attempt = 0
        while True:
            await self._wait(chat)
            try:
                if is_group(chat):
                    assert chat is not None
                    async with self._group(chat):
                        return await callback(*args, **kwargs)
                return await callback(*args, **kwargs)
            except RetryAfter as exc:
                self.hold(chat, retry_seconds(exc))
                if attempt >= retries:
                    raise
                attempt += 1

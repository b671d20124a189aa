"""PTB's AIORateLimiter, with one addition: ``rate_limit_args=NO_RETRY`` means "no retries".

(ExtBot drops a falsy ``rate_limit_args`` and AIORateLimiter reads ``rate_limit_args or
max_retries``, so 0 cannot express it.) Bulk senders pass NO_RETRY: on a 429 they requeue the
message themselves and pause their own pacing, while
this limiter holds every other request of the bot until ``retry_after`` has passed.
Relies on AIORateLimiter internals of the pinned python-telegram-bot 22.8.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from collections.abc import Callable, Coroutine
from typing import Any

from telegram._utils.types import JSONDict
from telegram.error import RetryAfter
from telegram.ext import AIORateLimiter

NO_RETRY = -1
GROUP_MARGIN_SECONDS = 0.5  # our clock starts before Telegram's: keep clear of its window edge


class SlidingWindow:
    """At most ``max_rate`` entries in any ``time_period`` seconds: Telegram's "20 messages per
    minute in a group". (aiolimiter's leaky bucket, PTB's default, lets a group receive 20 at once
    and then one every 3 s: up to 40 in the first minute, and Telegram answers 429.)"""

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


class BotRateLimiter(AIORateLimiter):
    def _get_group_limiter(self, group_id: str | int | bool) -> Any:
        limiters: dict[str | int | bool, SlidingWindow] = self._group_limiters  # type: ignore[assignment]
        if len(limiters) > 512:
            for key, limiter in list(limiters.items()):
                if key != group_id and limiter.has_capacity(limiter.max_rate):
                    del limiters[key]
        if group_id not in limiters:
            limiters[group_id] = SlidingWindow(self._group_max_rate, self._group_time_period)
        return limiters[group_id]

    async def process_request(
        self,
        callback: Callable[..., Coroutine[Any, Any, bool | JSONDict | list[JSONDict]]],
        args: Any,
        kwargs: dict[str, Any],
        endpoint: str,
        data: dict[str, Any],
        rate_limit_args: int | None,
    ) -> bool | JSONDict | list[JSONDict]:
        if rate_limit_args != NO_RETRY:
            return await super().process_request(callback, args, kwargs, endpoint, data, rate_limit_args)
        chat_id = data.get("chat_id")
        with contextlib.suppress(ValueError, TypeError):
            chat_id = int(chat_id)  # type: ignore[arg-type]
        group: int | str | bool = (
            chat_id if (isinstance(chat_id, int) and chat_id < 0) or isinstance(chat_id, str) else False
        )
        try:
            return await self._run_request(
                chat=chat_id is not None,
                group=group,
                allow_paid_broadcast=bool(data.get("allow_paid_broadcast", False)),
                callback=callback,
                args=args,
                kwargs=kwargs,
            )
        except RetryAfter as exc:
            self._hold(exc._retry_after.total_seconds())
            raise

    def _hold(self, seconds: float) -> None:
        """Every request waits until Telegram's retry_after has passed."""
        self._retry_after_event.clear()
        asyncio.get_running_loop().call_later(seconds, self._retry_after_event.set)


def retry_seconds(exc: RetryAfter) -> float:
    """Telegram's ``retry_after`` in seconds (PTB gives an int or a timedelta)."""
    value = exc.retry_after
    return float(value) if isinstance(value, int | float) else value.total_seconds()

"""Pacing outgoing bulk messages to Telegram's limits (no telegram imports).

- at most ``rate`` messages per second overall (30 by default, up to 1000 for paid broadcasts);
- at most one message per second to one chat;
- at most 20 messages per minute to one group;
- a 429 pauses everything for ``retry_after`` seconds.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable


class Pacer:
    def __init__(
        self,
        rate: float,
        *,
        chat_interval: float = 1.0,
        group_per_minute: int = 20,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.interval = 1.0 / rate
        self.chat_interval = chat_interval
        self.group_per_minute = group_per_minute
        self.clock = clock
        self._next_slot = 0.0
        self._paused_until = 0.0
        self._chat_next: dict[int, float] = {}
        self._group_sends: dict[int, deque[float]] = {}
        self._lock = asyncio.Lock()

    def pause(self, seconds: float) -> None:
        """Telegram said "retry after": nobody sends until then."""
        self._paused_until = max(self._paused_until, self.clock() + seconds)

    async def wait_if_paused(self) -> None:
        """For a send that took its slot before a 429 arrived: wait out the pause before sending."""
        left = self._paused_until - self.clock()
        while left > 0:  # a second 429 during the wait extends it
            await asyncio.sleep(left)
            left = self._paused_until - self.clock()

    def _ready_at(self, chat_id: int, is_group: bool, now: float) -> float:
        at = max(now, self._next_slot, self._paused_until, self._chat_next.get(chat_id, 0.0))
        if is_group:
            window = self._group_sends.get(chat_id)
            if window is not None:
                while window and now - window[0] >= 60.0:
                    window.popleft()
                if len(window) >= self.group_per_minute:
                    at = max(at, window[0] + 60.0)
        return at

    async def acquire(self, chat_id: int, is_group: bool = False) -> None:
        """Wait until a message to ``chat_id`` may be sent, and take that slot."""
        async with self._lock:
            while True:
                now = self.clock()
                at = self._ready_at(chat_id, is_group, now)
                if at <= now:
                    break
                await asyncio.sleep(at - now)
            self._next_slot = max(self._next_slot, now) + self.interval
            self._chat_next[chat_id] = now + self.chat_interval
            if is_group:
                self._group_sends.setdefault(chat_id, deque()).append(now)
            if len(self._chat_next) > 100_000:
                self._chat_next = {k: v for k, v in self._chat_next.items() if v > now}

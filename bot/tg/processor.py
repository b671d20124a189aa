"""The fair update processor: updates run concurrently across chats, in order within a chat, and a
flood is handled at the chat's own pace."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

from telegram import CallbackQuery, Update
from telegram.error import TelegramError
from telegram.ext import BaseUpdateProcessor

log = logging.getLogger(__name__)


@dataclass
class _ChatLine:
    """One chat's place in the processor: its order lock and what waits behind it."""

    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    waiting: int = 0
    queued: Counter[tuple[int, str]] = field(default_factory=Counter)  # commands and buttons waiting
    warned_at: float = -1e9


class FairUpdateProcessor(BaseUpdateProcessor):
    """Updates run concurrently across chats but in order within one chat, so an answer is never
    handled before the question it answers has been recorded. A chat waits in its own line: an
    update takes one of the ``max_active`` processing slots only when its chat's turn has come, so
    a busy group waiting for its send budget holds one slot, not all of them.

    A flood is handled at the chat's pace and bounded: a command or button press that is already
    waiting in its chat's line from the same user is dropped (100 × /help sent faster than they are
    handled give one answer; a dropped press gets an empty answer, so its button stops spinning), and
    beyond ``backlog`` waiting updates a chat's commands and presses are dropped, with one notice
    per minute (``on_overflow``). One user's commands and presses in a chat beyond ``burst`` within
    ``burst_window`` seconds are dropped too (no person types that fast; how many of a script's flood
    would otherwise be answered depends on how Telegram happens to batch it). Text messages (answers)
    are never dropped."""

    def __init__(
        self,
        max_active: int = 64,
        *,
        backlog: int = 30,
        burst: int = 20,
        burst_window: float = 2.0,
        on_overflow: Callable[[Update], Coroutine[Any, Any, None]] | None = None,
    ) -> None:
        super().__init__(1_000_000)  # PTB's own semaphore is taken before the chat's turn: unbounded
        self._slots = asyncio.Semaphore(max_active)
        self._lines: dict[int, _ChatLine] = {}
        self.backlog = backlog
        self.burst, self.burst_window = burst, burst_window
        self._bursts: dict[tuple[int, int], tuple[float, int]] = {}  # (chat, user) -> (window start, count)
        self.on_overflow = on_overflow
        self.on_done: Callable[[Update], None] | None = None  # the inbox marks the update handled
        self.dropped = 0
        self.stopping = False  # set at shutdown: what still waits stays in the inbox for next time
        self._running: set[asyncio.Task[Any]] = set()

    @staticmethod
    def _signature(update: Update) -> tuple[int, str] | None:
        """What makes two waiting updates the same request: a command's text or a button's data
        from one user. None for anything else (answers are never coalesced)."""
        user = update.effective_user
        if user is None:
            return None
        if update.callback_query is not None:
            return (user.id, "cb:" + (update.callback_query.data or ""))
        message = update.message
        if message is not None and message.text and message.text.startswith("/"):
            return (user.id, message.text.strip())
        return None

    async def do_process_update(self, update: object, coroutine: Awaitable[Any]) -> None:
        chat = update.effective_chat if isinstance(update, Update) else None
        if chat is None:
            async with self._slots:
                await self._run(update, coroutine)
            return
        assert isinstance(update, Update)
        line = self._lines.get(chat.id)
        if line is None:
            line = self._lines[chat.id] = _ChatLine()
        signature = self._signature(update)
        if signature is not None and (
            line.queued[signature] or line.waiting >= self.backlog or self._bursting(chat.id, signature[0])
        ):
            self._drop(update, coroutine, line, notify=line.waiting >= self.backlog)
            return
        line.waiting += 1
        if signature is not None:
            line.queued[signature] += 1
        try:
            async with line.lock:
                line.waiting -= 1
                if signature is not None:
                    line.queued[signature] -= 1
                    if not line.queued[signature]:
                        del line.queued[signature]
                async with self._slots:
                    await self._run(update, coroutine)
        finally:
            if not line.waiting and not line.lock.locked() and self._lines.get(chat.id) is line:
                del self._lines[chat.id]

    async def _run(self, update: object, coroutine: Awaitable[Any]) -> None:
        if self.stopping:  # not handled now: the inbox keeps it for the next start
            if asyncio.iscoroutine(coroutine):
                coroutine.close()
            return
        task = asyncio.current_task()
        if task is not None:
            self._running.add(task)
        try:
            await coroutine
        except asyncio.CancelledError:  # cut off at shutdown: handled again after the restart
            raise
        except BaseException:
            self._mark_done(update)
            raise
        else:
            self._mark_done(update)
        finally:
            self._running.discard(task)

    def _mark_done(self, update: object) -> None:
        if self.on_done is not None and isinstance(update, Update):
            self.on_done(update)

    async def drain(self, grace: float) -> None:
        """Stop starting updates; give those in flight ``grace`` seconds, then cancel them (a
        handler waiting for a group's send budget could otherwise hold the shutdown for a minute).
        Whatever did not finish is handled again from the inbox after the restart."""
        self.stopping = True
        if self._running:
            await asyncio.wait(list(self._running), timeout=grace)
        for task in list(self._running):
            task.cancel()

    def _bursting(self, chat_id: int, user_id: int) -> bool:
        """Counts a command or press of the user in the chat; True beyond ``burst`` in the window."""
        now = time.monotonic()
        key = (chat_id, user_id)
        start, count = self._bursts.get(key, (now, 0))
        if now - start >= self.burst_window:
            start, count = now, 0
        self._bursts[key] = (start, count + 1)
        if len(self._bursts) > 10_000:  # forget the windows that are over
            self._bursts = {k: v for k, v in self._bursts.items() if now - v[0] < self.burst_window}
        return 0 < self.burst <= count

    def _drop(self, update: Update, coroutine: Awaitable[Any], line: _ChatLine, *, notify: bool) -> None:
        if asyncio.iscoroutine(coroutine):
            coroutine.close()
        self._mark_done(update)
        self.dropped += 1
        if update.callback_query is not None:  # the button stops its spinner; the first press was handled
            self._background(_answer_quietly(update.callback_query))
        now = time.monotonic()
        if notify and self.on_overflow is not None and now - line.warned_at > 60:
            line.warned_at = now
            self._background(self.on_overflow(update))

    @staticmethod
    def _background(coroutine: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(coroutine)
        _background.add(task)
        task.add_done_callback(_background.discard)

    async def initialize(self) -> None:
        return None

    async def shutdown(self) -> None:
        return None


_background: set[asyncio.Task[None]] = set()


async def _answer_quietly(query: CallbackQuery) -> None:
    with contextlib.suppress(TelegramError):
        await query.answer()

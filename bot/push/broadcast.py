"""An admin's broadcast: one text to every chat with the daily push on, paced like pushes and
under the same send policy (a 429 pauses and retries, a block switches the chat's push off, a
migrated group gets it at its new id)."""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from bot.db import chat_store
from bot.db.engine import Database
from bot.push import outcome_actions as chats
from bot.push.channel import PushChannel
from bot.push.outcome import Status
from bot.push.pacer import Pacer

log = logging.getLogger(__name__)


@dataclass
class BroadcastReport:
    total: int
    sent: int = 0
    failed: int = 0
    blocked: int = 0

    @property
    def done(self) -> int:
        return self.sent + self.failed + self.blocked


async def audience(db: Database) -> list[int]:
    async with db.read() as session:
        return await chat_store.subscribed_chat_ids(session)


@dataclass(frozen=True, slots=True)
class Progress:
    """How the admin hears about a broadcast: ``show`` is called at most every ``every`` seconds of
    ``clock``."""

    show: Callable[[BroadcastReport], Awaitable[None]]
    every: float = 5.0
    clock: Callable[[], float] = time.monotonic


async def broadcast(
    channel: PushChannel, db: Database, pacer: Pacer, text: str, targets: list[int], *, progress: Progress
) -> BroadcastReport:
    """Send ``text`` to ``targets``, telling ``progress`` along the way."""
    clock, every = progress.clock, progress.every
    report = BroadcastReport(total=len(targets))
    queue: deque[tuple[int, bool]] = deque((chat_id, False) for chat_id in targets)  # (chat, migrated)
    last_progress = clock()
    while queue:
        chat_id, migrated = queue.popleft()
        await pacer.acquire(chat_id, chat_id < 0)
        outcome = await channel.send_text(chat_id, text)
        match outcome.status:
            case Status.SENT:
                report.sent += 1
            case Status.RETRY_AFTER:
                pacer.pause(outcome.retry_after)
                log.warning("429 from Telegram: pausing the broadcast for %ss", outcome.retry_after)
                queue.appendleft((chat_id, migrated))
                continue
            case Status.BLOCKED:
                report.blocked += 1
                await chats.switch_off(db, chat_id, outcome.detail)
            case Status.MIGRATED if not migrated and outcome.new_chat_id is not None:
                await chats.move(db, chat_id, outcome.new_chat_id)
                queue.appendleft((outcome.new_chat_id, True))
                continue
            case _:
                report.failed += 1
        if clock() - last_progress > every:
            last_progress = clock()
            await progress.show(report)
    log.info("broadcast done: %d sent, %d failed, %d blocked", report.sent, report.failed, report.blocked)
    return report

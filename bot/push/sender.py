"""The daily-push tick and sender: claim (planner), send (paced), record.

One recurring PTB JobQueue job calls :meth:`PushService.tick`. The tick asks the planner for due
pushes and queues them; a single consumer task paces the sends (:class:`~bot.push.pacer.Pacer`) and
records each result. Telegram's answers decide what happens next:

- 429 ``retry_after``: the whole sender pauses, the push is retried (it was not delivered);
- 403 (blocked, kicked, deactivated, chat deleted): the chat's push is switched off, no retry;
- 400 ``migrate_to_chat_id``: the chat and its history move to the new id, the push goes there once;
- a timeout: the push may have been delivered, so it is not retried (status ``unknown``);
- other network errors before a response: the claim is released and retried by a later tick.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import random
import socket
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from telegram.constants import ParseMode
from telegram.error import BadRequest, ChatMigrated, Forbidden, NetworkError, RetryAfter, TimedOut
from telegram.ext import ExtBot

from bot.catalog import CatalogHolder
from bot.config import Settings
from bot.core.picking import candidates_for, pick
from bot.db import practice_repo, repo
from bot.db.engine import Database
from bot.i18n import t
from bot.metrics import Metrics
from bot.push.pacer import Pacer
from bot.push.planner import Claim, PushPlanner, RevealDue
from bot.tg.ratelimit import NO_RETRY, retry_seconds

log = logging.getLogger(__name__)
_RNG = random.Random()


def instance_id() -> str:
    return f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"


@dataclass
class PushStats:
    sent: int = 0
    failed: dict[str, int] = field(default_factory=dict)
    last_tick_at: datetime | None = None
    last_tick_seconds: float = 0.0

    metrics: Metrics | None = None

    def fail(self, reason: str) -> None:
        self.failed[reason] = self.failed.get(reason, 0) + 1
        if self.metrics is not None:
            self.metrics.pushes_failed.labels(reason=reason).inc()

    def delivered(self) -> None:
        self.sent += 1
        if self.metrics is not None:
            self.metrics.pushes_sent.inc()


class PushService:
    """Owns the tick, the claims in flight and the sender task."""

    def __init__(
        self,
        bot: ExtBot[Any],
        db: Database,
        catalog: CatalogHolder,
        settings: Settings,
        *,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        metrics: Metrics | None = None,
    ) -> None:
        self.bot = bot
        self.db = db
        self.catalog = catalog
        self.settings = settings
        self.clock = clock
        self.instance = instance_id()
        self.planner = PushPlanner(
            db,
            instance_id=self.instance,
            default_zone=settings.default_timezone,
            grace=timedelta(hours=settings.push_grace_hours),
            lease=timedelta(seconds=settings.push_lease_seconds),
        )
        self.pacer = Pacer(settings.send_rate)
        self.queue: asyncio.Queue[Claim | RevealDue] = asyncio.Queue()
        self.in_flight: set[int] = set()
        self.stats = PushStats(metrics=metrics)
        self.metrics = metrics
        if metrics is not None:
            metrics.watch_queue(self.queue.qsize)
        self._consumer: asyncio.Task[None] | None = None
        self._sends: set[asyncio.Task[None]] = set()
        self._stopping = False
        self._holding: Claim | RevealDue | None = None
        # Claim about what this instance can send before its next tick (so several instances share
        # a large broadcast) and never more than half a lease's worth (so claims don't expire queued).
        per_tick = settings.send_rate * settings.tick_seconds * 1.5
        self.batch = max(1, int(min(per_tick, settings.send_rate * settings.push_lease_seconds * 0.5)))

    # -- lifecycle -------------------------------------------------------------------------------
    def start(self) -> None:
        if self._consumer is None:
            self._consumer = asyncio.create_task(self._consume(), name="push-sender")

    async def stop(self) -> None:
        """Finish sends in flight, give back claims not yet sent."""
        self._stopping = True
        if self._consumer is not None:
            self._consumer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._consumer
        if self._sends:
            await asyncio.gather(*self._sends, return_exceptions=True)
        pending = [self._holding.delivery_id] if isinstance(self._holding, Claim) else []
        while not self.queue.empty():
            item = self.queue.get_nowait()
            if isinstance(item, Claim):
                pending.append(item.delivery_id)
        await self.planner.release(pending, self.clock())
        log.info("push sender stopped; %d queued claim(s) released", len(pending))

    # -- the tick --------------------------------------------------------------------------------
    async def tick(self) -> None:
        if self._stopping:
            return
        started = asyncio.get_running_loop().time()
        now = self.clock()
        room = self.batch - self.queue.qsize() - len(self.in_flight)
        if room > 0:
            result = await self.planner.plan(now, room)
            for claim in result.claims:
                if claim.delivery_id in self.in_flight:
                    continue
                self.in_flight.add(claim.delivery_id)
                self.queue.put_nowait(claim)
        for reveal in await self.planner.due_reveals(now):
            self.queue.put_nowait(reveal)
        self.stats.last_tick_at = now
        self.stats.last_tick_seconds = asyncio.get_running_loop().time() - started
        if self.metrics is not None:
            self.metrics.tick_seconds.observe(self.stats.last_tick_seconds)
        if now.minute == 0 and now.second < self.settings.tick_seconds + 1:  # hourly housekeeping
            async with self.db.write() as session:
                await repo.prune_updates(session, now - timedelta(days=2))

    # -- sending ---------------------------------------------------------------------------------
    async def _consume(self) -> None:
        limit = asyncio.Semaphore(max(4, min(64, int(self.settings.send_rate // 10))))
        while True:
            item = await self.queue.get()
            self._holding = item  # taken from the queue, not yet sending: released on stop
            is_group = item.chat_id < 0
            await self.pacer.acquire(item.chat_id, is_group)
            await limit.acquire()
            self._holding = None
            task = asyncio.create_task(self._send_one(item, limit))
            self._sends.add(task)
            task.add_done_callback(self._sends.discard)

    async def _send_one(self, item: Claim | RevealDue, limit: asyncio.Semaphore) -> None:
        try:
            if isinstance(item, Claim):
                await self._deliver(item)
            else:
                await self._reveal(item)
        except Exception:
            log.exception("push to chat %s failed unexpectedly", item.chat_id)
            if isinstance(item, Claim):
                self.in_flight.discard(item.delivery_id)
        finally:
            limit.release()

    async def _pick_question(self, claim: Claim) -> str | None:
        """Due spaced-repetition questions first (private chats: the chat is the user), then a
        least-seen question from the chat's topic filter."""
        bank = self.catalog.current.bank
        topic = claim.topic_filter if bank.topic(claim.topic_filter or "") else None
        candidates = candidates_for(bank, topic)
        async with self.db.read() as session:
            if claim.chat_type == "private":
                within = None if topic is None else candidates
                for card in await practice_repo.due_cards(session, claim.chat_id, self.clock(), 20, within):
                    if bank.question(card.question_id) is not None:
                        return card.question_id
            seen = await repo.seen_counts(session, claim.chat_id)
        return pick(candidates, seen, _RNG)

    async def _deliver(self, claim: Claim, chat_id: int | None = None) -> None:
        from bot.tg.views import question_view

        target = chat_id or claim.chat_id
        bank = self.catalog.current.bank
        lang = claim.language or self.settings.default_language
        quiz = claim.push_kind == "quiz"
        qid = None if quiz else await self._pick_question(claim)
        if qid is None and not quiz:
            await self.planner.mark(claim.delivery_id, "failed", "no questions")
            self.in_flight.discard(claim.delivery_id)
            return
        try:
            if quiz:
                from bot.tg.handlers.quiz import send_quiz_poll

                topic = claim.topic_filter if bank.topic(claim.topic_filter or "") else None
                sent = await send_quiz_poll(self.bot, self.db, self.catalog.current, target, lang, source="push",
                                            topic=topic)  # fmt: skip
                if sent is None:
                    await self.planner.mark(claim.delivery_id, "failed", "no quiz for this topic")
                    self.in_flight.discard(claim.delivery_id)
                    return
                message = sent
            else:
                assert qid is not None
                view = question_view(bank.questions[qid], bank, lang, group=claim.chat_type != "private",
                                     note=t(lang, "daily.note"))  # fmt: skip
                message = await self.bot.send_message(
                    target,
                    view.text,
                    parse_mode=ParseMode.HTML,
                    reply_markup=view.keyboard,
                    disable_web_page_preview=True,
                    allow_paid_broadcast=self.settings.paid_broadcast or None,
                    rate_limit_args=NO_RETRY,
                )
        except RetryAfter as exc:
            delay = retry_seconds(exc)
            self.pacer.pause(delay)
            self.stats.fail("retry_after")
            log.warning("429 from Telegram: pausing all pushes for %ss", delay)
            self.queue.put_nowait(claim)  # not delivered: try again after the pause
            return
        except Forbidden as exc:
            await self._stop_chat(claim, f"forbidden: {exc.message}"[:200])
            return
        except ChatMigrated as exc:
            if chat_id is not None:  # migrated twice in one go: give up
                await self._stop_chat(claim, "migrated twice")
                return
            await self._migrate(claim, exc.new_chat_id)
            await self._deliver(claim, exc.new_chat_id)
            return
        except TimedOut:
            # It may have been delivered: retrying could duplicate it.
            await self.planner.mark(claim.delivery_id, "unknown", "timed out")
            self.stats.fail("timeout")
            self.in_flight.discard(claim.delivery_id)
            return
        except BadRequest as exc:
            await self.planner.mark(claim.delivery_id, "failed", exc.message[:200])
            self.stats.fail("bad_request")
            self.in_flight.discard(claim.delivery_id)
            log.warning("push to chat %s rejected: %s", target, exc.message)
            return
        except NetworkError as exc:
            await self.planner.release([claim.delivery_id], self.clock())
            self.stats.fail("network")
            self.in_flight.discard(claim.delivery_id)
            log.warning("push to chat %s: network error, will retry: %s", target, exc)
            return
        now = self.clock()
        # Mark the delivery sent in its own short transaction first: the sooner that commits, the fewer
        # pushes a crash right now would send twice (measured: 7 vs ~20 of 1000 when merged with the ask).
        async with self.db.write() as session:
            await self.planner.mark_sent(session, claim.delivery_id, message.message_id, qid, now)
        if qid is not None:  # a quiz poll has nothing to answer by reply
            async with self.db.write() as session:
                await repo.record_ask(
                    session,
                    target,
                    qid,
                    user_id=None,
                    source="push",
                    message_id=message.message_id,
                    make_pending=claim.chat_type == "private",
                )
        self.stats.delivered()
        self.in_flight.discard(claim.delivery_id)

    async def _stop_chat(self, claim: Claim, reason: str) -> None:
        async with self.db.write() as session:
            await repo.set_chat_fields(session, claim.chat_id, push_enabled=False, push_stopped_reason=reason[:64])
        await self.planner.mark(claim.delivery_id, "failed", reason)
        self.stats.fail("forbidden")
        self.in_flight.discard(claim.delivery_id)
        log.info("push to chat %s switched off: %s", claim.chat_id, reason)

    async def _migrate(self, claim: Claim, new_id: int) -> None:
        async with self.db.write() as session:
            await repo.migrate_chat(session, claim.chat_id, new_id)
        log.info("chat %s migrated to %s; its settings and history moved", claim.chat_id, new_id)

    async def _reveal(self, item: RevealDue) -> None:
        from bot.tg.views import answer_views

        bank = self.catalog.current.bank
        q = bank.question(item.question_id)
        if q is None:
            return
        async with self.db.read() as session:
            ask = await repo.ask_by_message(session, item.chat_id, item.message_id)
            answered = await repo.answers_for_ask(session, ask.id) if ask else 0
        lang = item.language or self.settings.default_language
        views = answer_views(q, bank, lang, lead=t(lang, "daily.reveal_header", count=answered))
        try:
            for i, view in enumerate(views):
                await self.bot.send_message(
                    item.chat_id,
                    view.text,
                    parse_mode=ParseMode.HTML,
                    reply_markup=view.keyboard,
                    reply_to_message_id=item.message_id if i == 0 else None,
                    rate_limit_args=NO_RETRY,
                )
        except RetryAfter as exc:
            delay = retry_seconds(exc)
            self.pacer.pause(delay)
        except (Forbidden, BadRequest, NetworkError) as exc:
            log.info("evening reveal in chat %s not sent: %s", item.chat_id, exc)

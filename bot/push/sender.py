"""The daily-push tick and sender: claim (planner), send (paced), record.

One recurring PTB JobQueue job calls :meth:`PushService.tick`. The tick asks the planner for due
pushes and queues them; a single consumer task paces the sends (:class:`~bot.push.pacer.Pacer`) and
records each result. Messages go out through a :class:`~bot.push.channel.PushChannel` (Telegram's
is :class:`bot.tg.push_channel.TelegramPushChannel`); its :class:`~bot.push.outcome.Outcome`
decides what happens next:

- 429 ``retry_after``: the whole sender pauses, the push is retried (it was not delivered);
- 403 (blocked, kicked, deactivated, chat deleted): the chat's push is switched off, no retry;
- 400 ``migrate_to_chat_id``: the chat and its history move to the new id, the push goes there once;
- a timeout: the push may have been delivered, so it is not retried (status ``unknown``);
- another 400 (including "message is too long"): the push failed, no retry;
- other network errors before a response: the claim is released and retried by a later tick.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from bot.catalog import CatalogHolder
from bot.config import Settings
from bot.core.picking import candidates_for, not_after, pick
from bot.core.quiz import Quiz
from bot.db import answers, asks, cards, chat_store, deliveries, inbox
from bot.db.models import AskSource, DeliveryStatus, PushKind
from bot.metrics import Metrics
from bot.push import outcome_actions as chats
from bot.push.channel import PushChannel
from bot.push.outcome import Outcome, Status
from bot.push.pacer import Pacer
from bot.push.planner import Claim, PushPlanner, RevealDue
from bot.services import quizzes
from bot.services.deps import Deps

log = logging.getLogger(__name__)


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
        channel: PushChannel,
        deps: Deps,
        catalog: CatalogHolder,
        settings: Settings,
        *,
        metrics: Metrics | None = None,
    ) -> None:
        self.channel = channel
        self.deps = deps
        self.rng = deps.rng
        self.db = deps.db
        self.catalog = catalog
        self.settings = settings
        self.clock = deps.clock
        self.instance = instance_id()
        self.planner = PushPlanner(
            deps.db,
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
                await inbox.prune(session, now - timedelta(days=2))

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
        requeued = False
        try:
            if isinstance(item, Claim):
                requeued = await self._deliver(item)
            else:
                await self._reveal(item)
        except Exception:
            log.exception("push to chat %s failed unexpectedly", item.chat_id)
        finally:
            if isinstance(item, Claim) and not requeued:  # done with it, one way or another
                self.in_flight.discard(item.delivery_id)
            limit.release()

    async def _pick_question(self, claim: Claim) -> str | None:
        """Due spaced-repetition questions first (private chats: the chat is the user), then a
        least-seen question from the chat's topic filter."""
        bank = self.catalog.bank
        topic = claim.topic_filter if bank.topic(claim.topic_filter or "") else None
        candidates = candidates_for(bank, topic)
        async with self.db.read() as session:
            previous = await chat_store.last_question(session, claim.chat_id) if bank.links else None
            avoid = not_after(bank, previous)  # yesterday's question's twin is not today's
            if claim.chat_type == "private":
                within = None if topic is None else candidates
                for card in await cards.due_cards(session, claim.chat_id, self.clock(), 20, within):
                    if bank.question(card.question_id) is not None and card.question_id not in avoid:
                        return card.question_id
            seen = await chat_store.seen_counts(session, claim.chat_id)
        return pick(candidates, seen, self.rng, avoid=avoid, linked=bank.linked)

    async def _deliver(self, claim: Claim, chat_id: int | None = None) -> bool:
        """Send one claimed push and record what became of it. True when it went back to the queue
        (still in flight)."""
        target = chat_id or claim.chat_id
        bank = self.catalog.bank
        lang = claim.language or self.settings.default_language
        qid: str | None = None
        quiz: Quiz | None = None
        if claim.push_kind == PushKind.QUIZ:
            topic = claim.topic_filter if bank.topic(claim.topic_filter or "") else None
            quiz = await quizzes.build(self.deps, self.catalog.current, chat_id=target, lang=lang, topic=topic)
            if quiz is None:
                await self.planner.mark(claim.delivery_id, DeliveryStatus.FAILED, "no quiz for this topic")
                return False
            await self.pacer.wait_if_paused()  # a 429 may have come while the quiz was built
            outcome = await self.channel.send_quiz(target, quiz)
        else:
            qid = await self._pick_question(claim)
            if qid is None:
                await self.planner.mark(claim.delivery_id, DeliveryStatus.FAILED, "no questions")
                return False
            group = claim.chat_type != "private"
            await self.pacer.wait_if_paused()  # a 429 may have come while the question was picked
            outcome = await self.channel.send_question(target, bank.questions[qid], bank, lang, group=group)
        if outcome.status is Status.SENT:
            await self._sent(claim, target, outcome, qid, quiz)
            return False
        return await self._not_sent(claim, target, outcome, migrated=chat_id is not None)

    async def _sent(self, claim: Claim, target: int, outcome: Outcome, qid: str | None, quiz: Quiz | None) -> None:
        assert outcome.message_id is not None
        now = self.clock()
        # Mark the delivery sent in its own short transaction first: the sooner that commits, the fewer
        # pushes a crash right now would send twice (measured: 7 vs ~20 of 1000 when merged with the ask).
        async with self.db.write() as session:
            await deliveries.mark_sent(session, claim.delivery_id, outcome.message_id, qid, now)
        if quiz is not None and outcome.poll_id is not None:  # a quiz poll has nothing to answer by reply
            await quizzes.record_poll(
                self.db,
                quiz,
                poll_id=outcome.poll_id,
                chat_id=target,
                message_id=outcome.message_id,
                source=AskSource.PUSH,
            )
        if qid is not None:
            async with self.db.write() as session:
                await asks.record_ask(
                    session,
                    target,
                    qid,
                    user_id=None,
                    source=AskSource.PUSH,
                    message_id=outcome.message_id,
                    make_pending=claim.chat_type == "private",
                )
        self.stats.delivered()

    async def _not_sent(self, claim: Claim, target: int, outcome: Outcome, *, migrated: bool) -> bool:
        match outcome.status:
            case Status.RETRY_AFTER:
                self.pacer.pause(outcome.retry_after)
                self.stats.fail("retry_after")
                log.warning("429 from Telegram: pausing all pushes for %ss", outcome.retry_after)
                self.queue.put_nowait(claim)  # not delivered: try again after the pause
                return True
            case Status.BLOCKED:
                await self._stop_chat(claim, outcome.detail[:200])
            case Status.MIGRATED if migrated or outcome.new_chat_id is None:  # migrated twice in one go: give up
                await self._stop_chat(claim, "migrated twice")
            case Status.MIGRATED:
                assert outcome.new_chat_id is not None
                await chats.move(self.db, claim.chat_id, outcome.new_chat_id)
                return await self._deliver(claim, outcome.new_chat_id)
            case Status.TIMED_OUT:
                # It may have been delivered: retrying could duplicate it.
                await self.planner.mark(claim.delivery_id, DeliveryStatus.UNKNOWN, "timed out")
                self.stats.fail("timeout")
            case Status.TOO_LONG | Status.REJECTED:
                await self.planner.mark(claim.delivery_id, DeliveryStatus.FAILED, outcome.detail[:200])
                self.stats.fail("bad_request")
                log.warning("push to chat %s rejected: %s", target, outcome.detail)
            case Status.NETWORK:
                await self.planner.release([claim.delivery_id], self.clock())
                self.stats.fail("network")
                log.warning("push to chat %s: network error, will retry: %s", target, outcome.detail)
        return False

    async def _stop_chat(self, claim: Claim, reason: str) -> None:
        await chats.switch_off(self.db, claim.chat_id, reason)
        await self.planner.mark(claim.delivery_id, DeliveryStatus.FAILED, reason)
        self.stats.fail("forbidden")

    async def _reveal(self, item: RevealDue) -> None:
        bank = self.catalog.bank
        q = bank.question(item.question_id)
        if q is None:
            return
        async with self.db.read() as session:
            ask = await asks.ask_by_message(session, item.chat_id, item.message_id)
            answered = await answers.answers_for_ask(session, ask.id) if ask else 0
        lang = item.language or self.settings.default_language
        await self.pacer.wait_if_paused()
        outcome = await self.channel.send_reveal(
            item.chat_id, q, bank, lang, answered=answered, reply_to=item.message_id
        )
        if outcome.status is Status.RETRY_AFTER:
            self.pacer.pause(outcome.retry_after)
        elif not outcome.ok:
            log.info("evening reveal in chat %s not sent: %s %s", item.chat_id, outcome.status, outcome.detail)

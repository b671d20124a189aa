"""Planning daily pushes: which chats are due, claimed exactly once per chat and local date.

The schedule lives in the database: each subscribed chat stores its next push instant
(``chats.next_push_at``, indexed). A tick runs one query for the chats whose instant has passed,
then in the same transaction inserts a ``deliveries`` row per chat — unique on (chat, local date),
so a chat's push for a day can be claimed only once, whatever the number of instances — and moves
the chat's next instant to its next local day. Claims carry a lease; a claim whose lease expires
before it is marked sent (the process died) is taken again by the next tick. Pushes that are more
than the grace window late are skipped, never sent on a later day.

No ``telegram`` imports here; the sender (bot.push.sender) does the sending.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

from bot.core.schedule import get_tz, occurrence, schedule_fields
from bot.db import deliveries
from bot.db.engine import Database, Session
from bot.db.models import DeliveryStatus

log = logging.getLogger(__name__)

MAX_CLAIMS_PER_PLAN = 2000  # one tick's transaction stays short, whatever the send rate


@dataclass(frozen=True, slots=True)
class Claim:
    delivery_id: int
    chat_id: int
    chat_type: str
    local_date: date
    due_at: datetime
    topic_filter: str | None
    push_kind: str
    language: str | None


@dataclass(frozen=True, slots=True)
class RevealDue:
    delivery_id: int
    chat_id: int
    question_id: str
    message_id: int
    language: str | None


@dataclass(frozen=True, slots=True)
class PlanResult:
    claims: list[Claim]
    skipped: int
    reclaimed: int


class PushPlanner:
    def __init__(
        self,
        db: Database,
        *,
        instance_id: str,
        default_zone: str,
        grace: timedelta,
        lease: timedelta,
    ) -> None:
        self.db = db
        self.instance_id = instance_id
        self.default_zone = default_zone
        self.grace = grace
        self.lease = lease

    async def plan(self, now: datetime, limit: int) -> PlanResult:
        """Claim up to ``limit`` due pushes (new ones and expired leases) in one transaction."""
        limit = min(limit, MAX_CLAIMS_PER_PLAN)
        async with self.db.write() as session:
            claims, skipped = await self._claim_due(session, now, limit)
            room = limit - len(claims)
            reclaimed, late = await self._reclaim_expired(session, now, room, claims) if room > 0 else (0, 0)
            skipped += late
        if claims or skipped:
            log.info(
                "push tick: %d claimed (%d re-claimed), %d skipped as too late",
                len(claims),
                reclaimed,
                skipped,
            )
        return PlanResult(claims, skipped, reclaimed)

    async def _claim_due(self, session: Session, now: datetime, limit: int) -> tuple[list[Claim], int]:
        """Claim the chats whose push instant has passed (those later than the grace window are
        recorded as skipped) and move each chat's instant to its next local day; returns the claims
        and how many were skipped."""
        claims: list[Claim] = []
        skipped = 0
        chats = await deliveries.due_chats(session, now, limit)
        fresh: list[dict[str, Any]] = []
        moves: list[dict[str, Any]] = []
        by_id: dict[int, Any] = {}
        next_for: dict[tuple[str, int, bool, date], dict[str, Any]] = {}  # many chats share settings
        for chat in chats:
            zone = chat.timezone or self.default_zone
            late = now - chat.next_push_at > self.grace
            skipped += late
            fresh.append(
                {
                    "chat_id": chat.id,
                    "local_date": chat.next_push_date,
                    "due_at": chat.next_push_at,
                    "status": DeliveryStatus.SKIPPED if late else DeliveryStatus.CLAIMED,
                    "claimed_by": self.instance_id,
                    "lease_until": now + self.lease,
                    "attempts": 0 if late else 1,
                }
            )
            by_id[chat.id] = chat
            key = (zone, chat.push_minute or 0, chat.push_weekdays_only, chat.next_push_date)
            if key not in next_for:
                next_for[key] = schedule_fields(
                    zone, key[1], key[2], now - self.grace, chat.next_push_date + timedelta(days=1)
                )
            moves.append({"id": chat.id, **next_for[key]})
        for delivery_id, chat_id, day, status, due_at in await deliveries.insert_claims(session, fresh):
            if status != DeliveryStatus.CLAIMED:
                continue
            chat = by_id[chat_id]
            claims.append(
                Claim(delivery_id, chat_id, chat.type, day, due_at, chat.topic_filter, chat.push_kind, chat.language)
            )
        await deliveries.move_schedules(session, moves)
        return claims, skipped

    async def _reclaim_expired(
        self, session: Session, now: datetime, room: int, claims: list[Claim]
    ) -> tuple[int, int]:
        """Take back up to ``room`` claims whose lease expired (the process that held them died),
        appending them to ``claims``; those too late now, or of a chat whose push is off, are
        skipped. Returns how many were re-claimed and how many skipped."""
        reclaimed = skipped = 0
        for delivery, owner in await deliveries.expired_claims(session, now, room):
            if now - delivery.due_at > self.grace or not owner.push_enabled:
                delivery.status = DeliveryStatus.SKIPPED
                skipped += 1
                continue
            delivery.claimed_by = self.instance_id
            delivery.lease_until = now + self.lease
            delivery.attempts += 1
            reclaimed += 1
            claims.append(
                Claim(
                    delivery.id,
                    owner.id,
                    owner.type,
                    delivery.local_date,
                    delivery.due_at,
                    owner.topic_filter,
                    owner.push_kind,
                    owner.language,
                )
            )
        return reclaimed, skipped

    async def mark(self, delivery_id: int, status: DeliveryStatus, error: str | None = None) -> None:
        async with self.db.write() as session:
            await deliveries.set_status(session, delivery_id, status, error)

    async def release(self, delivery_ids: list[int], now: datetime) -> None:
        """Give claims back (shutdown, transient error): the next tick takes them at once."""
        if not delivery_ids:
            return
        async with self.db.write() as session:
            await deliveries.release(session, delivery_ids, now)

    async def due_reveals(self, now: datetime, limit: int = 200) -> list[RevealDue]:
        """Groups' evening reveals whose local time has passed, each claimed once."""
        out: list[RevealDue] = []
        async with self.db.read() as session:  # the few chats with a reveal (partial index)
            chat_ids = await deliveries.reveal_chat_ids(session)
        if not chat_ids:
            return out
        async with self.db.write() as session:
            since = (now - timedelta(days=2)).date()
            for delivery, chat in await deliveries.unrevealed(session, chat_ids[:5000], since, limit):
                assert chat.reveal_minute is not None
                tz = get_tz(chat.timezone or self.default_zone)
                at = occurrence(delivery.local_date, chat.reveal_minute, tz)
                if at > now or delivery.message_id is None or delivery.question_id is None:
                    continue
                if at <= delivery.due_at:
                    delivery.revealed_at = now  # the reveal time is before the push time: nothing to do
                    continue
                delivery.revealed_at = now
                if now - at > self.grace:
                    continue
                out.append(RevealDue(delivery.id, chat.id, delivery.question_id, delivery.message_id, chat.language))
        return out

"""The inbox: raw updates stored before they are confirmed to Telegram, marked done once handled."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime

from sqlalchemy import bindparam, delete, or_, select, update

from bot.db.models import InboxUpdate
from bot.db.session import Session
from bot.db.sql import Prepared, binds, core

# every update passes here: prepared statements on the connection (bot.db.sql)
_STORE = Prepared(
    lambda insert: (
        insert(InboxUpdate)
        .values(binds("update_id", "payload", "host", "received_at"))
        .on_conflict_do_nothing(index_elements=[InboxUpdate.update_id])
        .returning(InboxUpdate.update_id)
    )
)
_DONE = Prepared(
    lambda _: (
        update(InboxUpdate)
        .where(InboxUpdate.update_id.in_(bindparam("ids", expanding=True)), InboxUpdate.done_at.is_(None))
        .values(done_at=bindparam("now"), payload=None)
    )
)


async def store(session: Session, rows: Sequence[tuple[int, str]], host: str, now: datetime) -> set[int]:
    """Insert ``(update_id, raw JSON)`` rows; returns the ids seen for the first time (by any
    instance sharing the database). An id taken before is left alone: a redelivery."""
    statement = _STORE(session)
    fresh = set()
    for update_id, payload in rows:
        params = {"update_id": update_id, "payload": payload, "host": host[:64], "received_at": now}
        if (await core(session, statement, params)).first() is not None:
            fresh.add(update_id)
    return fresh


_DONE_ONE = Prepared(
    lambda _: (
        update(InboxUpdate)
        .where(InboxUpdate.update_id == bindparam("id"), InboxUpdate.done_at.is_(None))
        .values(done_at=bindparam("now"), payload=None)
    )
)


async def mark_done(session: Session, update_ids: Iterable[int], now: datetime) -> None:
    ids = sorted(set(update_ids))
    if len(ids) <= 8:  # the usual batch (what finished since the last write): one prepared UPDATE each
        statement = _DONE_ONE(session)
        for update_id in ids:
            await core(session, statement, {"id": update_id, "now": now})
        return
    statement = _DONE(session)
    for start in range(0, len(ids), 500):
        await core(session, statement, {"ids": ids[start : start + 500], "now": now})


async def pending(
    session: Session, *, host: str, orphaned_before: datetime, limit: int = 5000
) -> list[tuple[int, str]]:
    """Updates taken but not handled: this host's (it stopped or crashed before handling them),
    and any instance's that have waited since ``orphaned_before`` (that instance is gone)."""
    rows = await session.execute(
        select(InboxUpdate.update_id, InboxUpdate.payload)
        .where(
            InboxUpdate.done_at.is_(None),
            InboxUpdate.payload.is_not(None),
            or_(InboxUpdate.host == host[:64], InboxUpdate.received_at < orphaned_before),
        )
        .order_by(InboxUpdate.update_id)
        .limit(limit)
    )
    return [(int(update_id), str(payload)) for update_id, payload in rows]


async def prune(session: Session, older_than: datetime) -> None:
    """Forget handled inbox rows older than ``older_than`` (pending ones stay)."""
    await session.execute(
        delete(InboxUpdate).where(InboxUpdate.done_at.is_not(None), InboxUpdate.received_at < older_than)
    )

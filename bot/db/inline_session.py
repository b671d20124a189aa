"""SQLite's units of work without greenlets: an ``AsyncSession`` whose methods call a plain (sync)
SQLAlchemy ``Session`` directly.

SQLite runs on the event-loop thread anyway (a statement on a local WAL database takes microseconds;
a thread hand-off costs more), so the async layer only adds cost: through ``AsyncSession`` every call
spawns a greenlet and every DB-API call inside switches to it and back. Measured on this machine
(CPU per unit of work, p50): an ORM write of an ask and the chat's pending ask 1,934 µs through
``AsyncSession`` against 649 µs through a sync ``Session``; a read of one row by key 529 against
265 µs. The repositories keep their ``await session.execute(...)`` code and their ``AsyncSession``
type: :class:`InlineSession` is one, with the methods they use overridden to run inline.
PostgreSQL keeps the real ``AsyncSession`` (asyncpg does real network I/O).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from sqlalchemy.engine import Result
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Session as SyncSession

T = TypeVar("T")


class InlineSession(AsyncSession):
    """An ``AsyncSession`` over a sync ``Session`` on SQLite: ``await session.execute(...)`` runs
    the statement at once on the calling (event-loop) thread. Transactions are begun, committed and
    closed by :class:`bot.db.engine.Database`, never by the code that receives the session."""

    def __init__(self, sync_session: SyncSession) -> None:
        self.sync_session = sync_session
        self._proxied = sync_session  # what AsyncSession's proxied methods (add, get_bind, …) use
        self.sync_session_class = SyncSession

    async def execute(self, statement: Any, params: Any = None, **kw: Any) -> Result[Any]:
        return self.sync_session.execute(statement, params, **kw)

    async def scalar(self, statement: Any, params: Any = None, **kw: Any) -> Any:
        return self.sync_session.scalar(statement, params, **kw)

    async def scalars(self, statement: Any, params: Any = None, **kw: Any) -> Any:
        return self.sync_session.scalars(statement, params, **kw)

    async def get(self, entity: Any, ident: Any, **kw: Any) -> Any:
        return self.sync_session.get(entity, ident, **kw)

    async def flush(self, objects: Sequence[Any] | None = None) -> None:
        self.sync_session.flush(objects)

    async def delete(self, instance: object) -> None:
        self.sync_session.delete(instance)

    async def refresh(self, instance: object, attribute_names: Any = None, with_for_update: Any = None) -> None:
        self.sync_session.refresh(instance, attribute_names, with_for_update)

    async def run_sync(self, fn: Callable[..., T], *arg: Any, **kw: Any) -> T:
        return fn(self.sync_session, *arg, **kw)

    async def commit(self) -> None:
        self.sync_session.commit()

    async def rollback(self) -> None:
        self.sync_session.rollback()

    async def close(self) -> None:
        self.sync_session.close()

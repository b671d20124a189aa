"""The unit of work's session, one per backend: PostgreSQL's is SQLAlchemy's ``AsyncSession``;
SQLite's is :class:`SqliteSession`, whose async methods call a plain (sync) SQLAlchemy ``Session``
directly, through its public API. Repositories take a :data:`Session` (either) and write
``await session.execute(...)`` for both.

SQLite runs on the event-loop thread anyway (a statement on a local WAL database takes microseconds;
a thread hand-off costs more), so the async layer only adds cost: through ``AsyncSession`` every call
spawns a greenlet and every DB-API call inside switches to it and back. Measured on this machine
(CPU per unit of work, p50): an ORM write of an ask and the chat's pending ask 1,934 µs through
``AsyncSession`` against 649 µs through a sync ``Session``; a read of one row by key 529 against
265 µs. So SQLite has one engine, SQLAlchemy's sync pysqlite one, and no async driver at all;
PostgreSQL keeps the real ``AsyncSession`` (asyncpg does real network I/O).

A unit of work takes a pooled sqlite3 connection and begins its transaction directly (~8 µs); the
ORM ``Session`` is made only when something needs it, over that same connection and transaction.
Most units of work on the hot paths never need it: their prepared statements
(:func:`bot.db.sql.core`) run on the sqlite3 connection itself. A ``Session`` with its pooled
``Connection`` costs ~40 µs to open and close even when nothing else is done with it (measured on
this project's machine; more inside a real update, with colder caches).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar, TypeVarTuple, overload

from sqlalchemy.engine import Connection, Engine, Result, ScalarResult
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session as SyncSession
from sqlalchemy.orm import sessionmaker

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.sql import Executable
from sqlalchemy.sql.selectable import TypedReturnsRows

T = TypeVar("T")
_T = TypeVar("_T")
_O = TypeVar("_O")
_Ts = TypeVarTuple("_Ts")


def begin_on(driver: sqlite3.Connection, mode: str) -> None:
    """``BEGIN <mode>`` on the driver's connection; a failure (e.g. "database is locked") is
    SQLAlchemy's error, as if SQLAlchemy had run it."""
    statement = f"BEGIN {mode}"
    try:
        driver.execute(statement)
    except sqlite3.Error as exc:
        raise DBAPIError.instance(statement, (), exc, sqlite3.Error) from exc


def _commit(driver: sqlite3.Connection) -> None:
    """COMMIT on the driver's connection; a failure (a full disk shows up here, when the pages are
    written) is SQLAlchemy's error, which the callers handle as "the database is unavailable"."""
    try:
        driver.commit()
    except sqlite3.Error as exc:
        raise DBAPIError.instance("COMMIT", (), exc, sqlite3.Error) from exc


class SqliteSession:
    """SQLite's unit of work: its statements run at once on the calling (event-loop) thread.
    ``await session.execute(...)`` goes to a plain (sync) ``Session``, made on first use over the
    unit of work's connection; the methods are the ones of ``AsyncSession`` the repositories use.
    Transactions are begun, committed and closed by :class:`bot.db.engine.Database`
    (:meth:`begin_now`, :meth:`finish`), never by the code that receives the session."""

    def __init__(self, engine: Engine, make_session: sessionmaker[SyncSession], begin: str = "DEFERRED") -> None:
        self._engine = engine
        self._make_session = make_session
        self._begin_mode = begin
        self._pooled: Any = None  # the pool's connection, in this unit of work's transaction
        self._connection: Connection | None = None  # SQLAlchemy's, over it (for the Session)
        self._sync: SyncSession | None = None

    # -- the transaction ---------------------------------------------------------------------------
    def begin_now(self) -> None:
        """Take a pooled connection and begin the transaction now (a write's ``BEGIN IMMEDIATE``
        fails here, not at its first statement, when another process holds the lock)."""
        if self._pooled is not None:
            return
        pooled = self._engine.raw_connection()
        try:
            driver = pooled.driver_connection
            assert isinstance(driver, sqlite3.Connection)
            begin_on(driver, self._begin_mode)
        except BaseException:
            pooled.close()
            raise
        self._pooled = pooled

    def driver(self) -> sqlite3.Connection:
        """The sqlite3 connection, in this unit of work's transaction (begun if it was not)."""
        self.begin_now()
        driver = self._pooled.driver_connection
        assert isinstance(driver, sqlite3.Connection)
        return driver

    def finish(self, *, commit: bool) -> None:
        """Commit (flushing the Session's changes first) or roll back, and give the connection back."""
        try:
            if commit and self._sync is not None:
                self._sync.commit()  # commits the transaction if the Session took part in it
            if commit and self._pooled is not None:
                driver = self._pooled.driver_connection
                assert isinstance(driver, sqlite3.Connection)
                if driver.in_transaction:  # prepared statements only (or a Session that ran nothing)
                    _commit(driver)
        finally:
            self.release()

    def release(self) -> None:
        """Roll back whatever was not committed and give the connection back to the pool."""
        sync, connection, pooled = self._sync, self._connection, self._pooled
        self._sync = self._connection = self._pooled = None
        try:
            if sync is not None:
                sync.close()
        finally:
            if connection is not None:
                connection.close()  # rolls back, and gives the pooled connection back
            elif pooled is not None:
                try:
                    pooled.driver_connection.rollback()
                except sqlite3.Error:  # the connection is in doubt: not given back to the pool
                    pooled.invalidate()
                finally:
                    pooled.close()

    # -- the ORM, on demand ------------------------------------------------------------------------
    @property
    def sync_session(self) -> SyncSession:
        if self._sync is None:
            self.begin_now()
            # SQLAlchemy's Connection over the same pooled connection: its "begin" finds the
            # transaction open (bot.db.engine's begin hook) and its commit commits it
            self._connection = Connection(self._engine, connection=self._pooled)
            self._sync = self._make_session(bind=self._connection)
        return self._sync

    def add(self, instance: object) -> None:
        self.sync_session.add(instance)

    def add_all(self, instances: Sequence[object]) -> None:
        self.sync_session.add_all(instances)

    def get_bind(self, *args: Any, **kw: Any) -> Engine:
        return self._engine

    # typed as AsyncSession's are, so a repository's rows have the same types on both backends
    @overload
    async def execute(self, statement: TypedReturnsRows[*_Ts], params: Any = None, **kw: Any) -> Result[*_Ts]: ...

    @overload
    async def execute(self, statement: Executable, params: Any = None, **kw: Any) -> Result[*tuple[Any, ...]]: ...

    async def execute(self, statement: Executable, params: Any = None, **kw: Any) -> Result[*tuple[Any, ...]]:
        return self.sync_session.execute(statement, params, **kw)

    @overload
    async def scalar(self, statement: TypedReturnsRows[_T], params: Any = None, **kw: Any) -> _T | None: ...

    @overload
    async def scalar(self, statement: Executable, params: Any = None, **kw: Any) -> Any: ...

    async def scalar(self, statement: Executable, params: Any = None, **kw: Any) -> Any:
        return self.sync_session.scalar(statement, params, **kw)

    @overload
    async def scalars(self, statement: TypedReturnsRows[_T], params: Any = None, **kw: Any) -> ScalarResult[_T]: ...

    @overload
    async def scalars(self, statement: Executable, params: Any = None, **kw: Any) -> ScalarResult[Any]: ...

    async def scalars(self, statement: Executable, params: Any = None, **kw: Any) -> ScalarResult[Any]:
        return self.sync_session.scalars(statement, params, **kw)

    async def get(self, entity: type[_O], ident: Any, **kw: Any) -> _O | None:
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
        self.release()


# A unit of work's session, whichever the backend (repositories annotate their parameter with it)
Session: TypeAlias = "AsyncSession | SqliteSession"

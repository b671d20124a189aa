"""Engine, sessions and migrations. Nothing is created at import time.

SQLite: WAL, foreign keys; pysqlite's own transaction handling is switched off so that write
transactions start with ``BEGIN IMMEDIATE`` (a read-then-write transaction can otherwise fail with
SQLITE_BUSY), and writers inside one process queue on a lock. Statements run on the event-loop thread
(``bot.db.inline_sqlite``: a thread hand-off costs more than a local statement), so a connection's
``busy_timeout`` is short and a write waits for another process's writer asleep, in ``Database.write``.
PostgreSQL: plain transactions; concurrent claimers use ``SKIP LOCKED`` (see the scheduler).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any, TypeAlias, TypeVar
from urllib.parse import urlsplit

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from sqlalchemy import create_engine, event, text
from sqlalchemy.engine import Connection, Engine, make_url
from sqlalchemy.exc import DBAPIError, OperationalError, SQLAlchemyError
from sqlalchemy.ext.asyncio import (
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)
from sqlalchemy.orm import sessionmaker

from bot.config import async_database_url
from bot.db import inline_sqlite
from bot.db.inline_session import InlineSession, begin_on

log = logging.getLogger(__name__)
MIGRATIONS = Path(__file__).resolve().parent / "migrations"
SQLITE_BUSY_TIMEOUT_MS = 30_000  # how long a write waits for another process's write transaction
# SQLite runs on the event-loop thread (bot.db.inline_sqlite): SQLite's own wait would stall every
# chat, so a connection waits at most this long and Database.write waits the rest asleep
SQLITE_INLINE_BUSY_TIMEOUT_MS = 20
MIGRATION_LOCK_KEY = 0x1B07_5EED  # pg_advisory_xact_lock key held while migrating

# A unit of work's session, for code outside bot.db that passes one on (it writes no SQL itself)
Session: TypeAlias = AsyncSession

# What a database that cannot be reached, opened or written raises (at start-up: one line, exit 2)
DATABASE_ERRORS: tuple[type[BaseException], ...] = (SQLAlchemyError, OSError)


def database_problem(exc: BaseException, url: str) -> str:
    """One line naming the setting and the cause, without the URL (it may hold a password)."""
    cause: BaseException = exc.orig if isinstance(exc, DBAPIError) and exc.orig is not None else exc
    text_ = str(cause).strip().splitlines()[0] if str(cause).strip() else type(cause).__name__
    password = urlsplit(url.replace("+asyncpg", "").replace("+aiosqlite", "")).password
    if password:
        text_ = text_.replace(password, "***")
    return f"DATABASE_URL: cannot use the database ({text_[:200]})"


def describe_url(url: str) -> str:
    """The database a URL names, for people: the file of a SQLite URL, else the URL without its password."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        return parsed.database or ":memory:"
    return parsed.render_as_string(hide_password=True)


def _setup_sqlite(engine: Engine, *, raw_begin: bool = False) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # we emit BEGIN ourselves
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout = {SQLITE_INLINE_BUSY_TIMEOUT_MS}")
        cursor.execute("PRAGMA journal_mode = WAL")
        cursor.execute("PRAGMA synchronous = NORMAL")
        cursor.execute("PRAGMA foreign_keys = ON")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        mode = conn.get_execution_options().get("sqlite_begin", "DEFERRED")
        if mode == "IMMEDIATE WAIT":  # migrations at start-up: nothing else runs yet, so block
            conn.exec_driver_sql(f"PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS}")
            try:
                conn.exec_driver_sql("BEGIN IMMEDIATE")
            finally:
                conn.exec_driver_sql(f"PRAGMA busy_timeout = {SQLITE_INLINE_BUSY_TIMEOUT_MS}")
            return
        if not raw_begin:
            conn.exec_driver_sql(f"BEGIN {mode}")
            return
        driver = conn.connection.driver_connection
        assert isinstance(driver, sqlite3.Connection)
        if not driver.in_transaction:  # an InlineSession's unit of work began it already
            begin_on(driver, mode)


def _is_locked(exc: OperationalError) -> bool:
    return "locked" in str(exc.orig) or "busy" in str(exc.orig)


T = TypeVar("T")


async def _when_unlocked(begin: Callable[[], Awaitable[T]]) -> T:
    """``begin()`` (a write transaction's start, which cleans up after itself when it fails), again
    while SQLite says another process's writer (a CLI import, a second bot) holds the lock: waiting
    asleep, so other chats go on, up to ``SQLITE_BUSY_TIMEOUT_MS``."""
    deadline = time.monotonic() + SQLITE_BUSY_TIMEOUT_MS / 1000
    pause = 0.005
    while True:
        try:
            return await begin()
        except OperationalError as exc:
            if not _is_locked(exc) or time.monotonic() >= deadline:
                raise
        await asyncio.sleep(pause)
        pause = min(pause * 2, 0.2)


def make_inline_engine(url: str) -> Engine | None:
    """The sync pysqlite engine of a SQLite file URL, for :class:`InlineSession` (None otherwise).
    Its transactions begin on the driver's connection directly (a few µs; through SQLAlchemy's
    execution path a ``BEGIN`` costs as much as a query)."""
    url = async_database_url(url)
    if not url.startswith("sqlite"):
        return None
    path = url.split("///", 1)[-1]
    if not path or path == ":memory:" or "?" in path:
        return None
    # never wait for a free connection: a wait would block the event loop, the only thread that
    # can give one back (units of work beyond the 8 kept open get a connection of their own)
    engine = create_engine(f"sqlite:///{path}", pool_size=8, max_overflow=-1)
    _setup_sqlite(engine, raw_begin=True)
    return engine


def make_engine(url: str, **kwargs: Any) -> AsyncEngine:
    url = async_database_url(url)
    if url.startswith("sqlite"):
        inline_sqlite.register()
        url = url.replace("sqlite+aiosqlite://", f"{inline_sqlite.DIALECT}://", 1)
        path = url.split("///", 1)[-1]
        if path and path != ":memory:":
            with contextlib.suppress(OSError):  # if it cannot be made, connecting says so (one line)
                Path(path).parent.mkdir(parents=True, exist_ok=True)
        engine = create_async_engine(url, **kwargs)
        _setup_sqlite(engine.sync_engine)
        return engine
    kwargs.setdefault("pool_pre_ping", True)
    kwargs.setdefault("pool_size", 10)
    return create_async_engine(url, **kwargs)


class Database:
    """Owns the engine; hands out one session per unit of work.

    ``read()`` for queries, ``write()`` for anything that changes rows: it commits on success
    and rolls back on error.
    """

    def __init__(self, url: str, **engine_kwargs: Any) -> None:
        self.url = async_database_url(url)
        self.engine = make_engine(self.url, **engine_kwargs)
        self.is_sqlite = self.engine.dialect.name == "sqlite"
        writer = self.engine.execution_options(sqlite_begin="IMMEDIATE") if self.is_sqlite else self.engine
        self._read = async_sessionmaker(self.engine, expire_on_commit=False)
        self._write = async_sessionmaker(writer, expire_on_commit=False)
        self._write_lock = asyncio.Lock() if self.is_sqlite else None
        # SQLite files: units of work through a sync Session on the loop thread (InlineSession)
        self.inline_engine = make_inline_engine(self.url) if self.is_sqlite and not engine_kwargs else None
        if self.inline_engine is not None:
            self._inline_sessions = sessionmaker(self.inline_engine, expire_on_commit=False)
        # Runs at the end of every write transaction, in it (the inbox adds its "done" marks there,
        # so they cost no transaction of their own); returns how to undo its bookkeeping if the
        # transaction fails.
        self.piggyback: Callable[[AsyncSession], Awaitable[Callable[[], None] | None]] | None = None

    @asynccontextmanager
    async def read(self) -> AsyncIterator[AsyncSession]:
        if self.inline_engine is not None:
            inline = InlineSession(self.inline_engine, self._inline_sessions)  # begins at its first statement
            try:
                yield inline
            finally:
                inline.release()
            return
        async with self._read() as session:
            yield session

    @asynccontextmanager
    async def write(self) -> AsyncIterator[AsyncSession]:
        async with self._write_lock or contextlib.nullcontext():
            undo: Callable[[], None] | None = None
            if self.inline_engine is not None:
                inline = await self._begin_inline_write()
                try:
                    yield inline
                    if self.piggyback is not None:
                        undo = await self.piggyback(inline)
                    inline.finish(commit=True)
                except BaseException:
                    if undo is not None:
                        undo()
                    raise
                finally:
                    inline.release()  # rolls back what was not committed
                return
            try:
                async with AsyncExitStack() as transaction:
                    session = await self._begin_write(transaction)
                    yield session
                    if self.piggyback is not None:
                        undo = await self.piggyback(session)
            except BaseException:
                if undo is not None:
                    undo()
                raise

    async def _begin_write(self, stack: AsyncExitStack) -> AsyncSession:
        """A session in a started write transaction (:func:`_when_unlocked`)."""

        async def attempt() -> tuple[AsyncExitStack, AsyncSession]:
            opened = AsyncExitStack()
            session = await opened.enter_async_context(self._write())
            await opened.enter_async_context(session.begin())
            try:
                if self.is_sqlite:
                    await session.connection()  # emits BEGIN IMMEDIATE now, not at the first statement
            except OperationalError as exc:
                await opened.__aexit__(type(exc), exc, exc.__traceback__)
                raise
            return opened, session

        opened, session = await _when_unlocked(attempt)
        stack.push_async_exit(opened)
        return session

    async def _begin_inline_write(self) -> InlineSession:
        """:meth:`_begin_write` for the inline sessions."""
        assert self.inline_engine is not None
        engine = self.inline_engine

        async def attempt() -> InlineSession:
            session = InlineSession(engine, self._inline_sessions, begin="IMMEDIATE")
            session.begin_now()  # BEGIN IMMEDIATE now, not at the first statement (cleans up if it fails)
            return session

        return await _when_unlocked(attempt)

    async def migrate(self) -> None:
        """Apply Alembic migrations up to head (run at start-up). On PostgreSQL an advisory lock
        makes instances that start together migrate one after another."""
        migrator = self.engine.execution_options(sqlite_begin="IMMEDIATE WAIT") if self.is_sqlite else self.engine
        async with migrator.begin() as conn:
            if not self.is_sqlite:
                await conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK_KEY})
            await conn.run_sync(_upgrade)
            # a real (unchanging) write: a database that cannot be written fails here, at start
            await conn.execute(text("UPDATE alembic_version SET version_num = version_num"))

    async def ping(self) -> bool:
        try:
            async with self.engine.connect() as conn:
                await conn.execute(text("SELECT 1"))
        except Exception:
            return False
        return True

    async def close(self) -> None:
        if self.inline_engine is not None:
            self.inline_engine.dispose()
        await self.engine.dispose()


def alembic_config() -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    return cfg


def _upgrade(connection: Connection) -> None:
    """Upgrade to head; one log line when the schema changed (Alembic's own, one per step, are capped)."""
    cfg = alembic_config()
    cfg.attributes["connection"] = connection
    before = MigrationContext.configure(connection).get_current_revision()
    command.upgrade(cfg, "head")
    after = MigrationContext.configure(connection).get_current_revision()
    if after != before:
        log.info("database schema %s: %s → %s", "created" if before is None else "upgraded", before or "empty", after)


def migrate_sync(url: str) -> None:
    async def _run() -> None:
        db = Database(url)
        try:
            await db.migrate()
        finally:
            await db.close()

    asyncio.run(_run())


_LOCKS: list[object] = []


def acquire_sender_lock(url: str) -> bool:
    """On SQLite only one process may send pushes: hold an exclusive lock on ``<db>.sender.lock``
    for the life of the process. Returns False when another process holds it."""
    import fcntl

    path = url.split("///", 1)[-1]
    if not path or path == ":memory:":
        return True
    handle = open(f"{path}.sender.lock", "a+")  # noqa: SIM115 - held until the process exits
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.close()
        return False
    _LOCKS.append(handle)
    return True


def release_sender_lock(url: str) -> None:
    """Give back the lock taken by :func:`acquire_sender_lock` (at shutdown; a process that dies
    loses it anyway)."""
    path = url.split("///", 1)[-1]
    for handle in list(_LOCKS):
        if getattr(handle, "name", None) == f"{path}.sender.lock":
            _LOCKS.remove(handle)
            handle.close()  # type: ignore[attr-defined]

"""Engine, sessions and migrations. Nothing is created at import time.

One data path per backend. SQLite: one sync pysqlite engine, and statements run on the event-loop
thread (:class:`bot.db.session.SqliteSession`: a thread hand-off costs more than a local statement);
WAL, foreign keys; pysqlite's own transaction handling is switched off so that write transactions
start with ``BEGIN IMMEDIATE`` (a read-then-write transaction can otherwise fail with SQLITE_BUSY),
and writers inside one process queue on a lock. A connection's ``busy_timeout`` is short and a
write waits for another process's writer asleep, in ``Database.write``. PostgreSQL: asyncpg through
SQLAlchemy's ``AsyncSession``; plain transactions; concurrent claimers use ``SKIP LOCKED`` (see the
scheduler).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TypeVar
from urllib.parse import urlsplit

from sqlalchemy import create_engine, event, text
from sqlalchemy.engine import Connection, Engine, make_url
from sqlalchemy.exc import DBAPIError, OperationalError, SQLAlchemyError
from sqlalchemy.orm import sessionmaker
from sqlalchemy.pool import StaticPool

from bot.config import database_url
from bot.db.session import Session, SqliteSession, begin_on

if TYPE_CHECKING:
    from alembic.config import Config
    from sqlalchemy.ext.asyncio import AsyncEngine

log = logging.getLogger(__name__)
MIGRATIONS = Path(__file__).resolve().parent / "migrations"
SQLITE_BUSY_TIMEOUT_MS = 30_000  # how long a write waits for another process's write transaction
# SQLite runs on the event-loop thread (bot.db.session): SQLite's own wait would stall every
# chat, so a connection waits at most this long and Database.write waits the rest asleep
SQLITE_INLINE_BUSY_TIMEOUT_MS = 20
MIGRATION_LOCK_KEY = 0x1B07_5EED  # pg_advisory_xact_lock key held while migrating
# The newest migration. A database already at it starts without importing Alembic (~0.1 s);
# tests/test_db.py holds this to Alembic's own head, so a new migration cannot forget it.
SCHEMA_HEAD: Final = "e6f7a8b9c0d1"
_WRITABLE = "UPDATE alembic_version SET version_num = version_num"  # a real write that changes nothing

__all__ = ["DATABASE_ERRORS", "Database", "Session", "database_problem", "describe_url"]

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


def _setup_sqlite(engine: Engine) -> None:
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
        driver = conn.connection.driver_connection
        assert isinstance(driver, sqlite3.Connection)
        if not driver.in_transaction:  # a SqliteSession's unit of work began it already
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


def sqlite_engine(url: str) -> Engine:
    """The sync pysqlite engine of a SQLite URL. Its transactions begin on the driver's connection
    directly (a few µs; through SQLAlchemy's execution path a ``BEGIN`` costs as much as a query).
    An in-memory database is one connection shared by every unit of work."""
    rest = url.split("://", 1)[1].removeprefix("/")  # sqlite:///path → path; sqlite:// → ""
    path = rest.split("?", 1)[0]
    if not path or path == ":memory:":
        engine = create_engine("sqlite://", poolclass=StaticPool, connect_args={"check_same_thread": False})
    else:
        with contextlib.suppress(OSError):  # if it cannot be made, connecting says so (one line)
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        # never wait for a free connection: a wait would block the event loop, the only thread that
        # can give one back (units of work beyond the 8 kept open get a connection of their own)
        engine = create_engine(f"sqlite:///{rest}", pool_size=8, max_overflow=-1)
    _setup_sqlite(engine)
    return engine


class Database:
    """Owns the engine; hands out one session per unit of work.

    ``read()`` for queries, ``write()`` for anything that changes rows: it commits on success
    and rolls back on error.
    """

    def __init__(self, url: str, **engine_kwargs: Any) -> None:
        self.url = database_url(url)
        self.is_sqlite = self.url.startswith("sqlite")
        self.engine: Engine | AsyncEngine
        if self.is_sqlite:
            self.engine = self._sqlite = sqlite_engine(self.url)
            self._sqlite_sessions = sessionmaker(self._sqlite, expire_on_commit=False)
        else:
            engine_kwargs.setdefault("pool_pre_ping", True)
            engine_kwargs.setdefault("pool_size", 10)
            # imported here: a SQLite bot never loads the async layer (nor greenlet)
            from sqlalchemy.ext.asyncio import async_sessionmaker, create_async_engine

            self.engine = self._async = create_async_engine(self.url, **engine_kwargs)
            self._sessions = async_sessionmaker(self._async, expire_on_commit=False)
        self._write_lock = asyncio.Lock() if self.is_sqlite else None
        # Runs at the end of every write transaction, in it (the inbox adds its "done" marks there,
        # so they cost no transaction of their own); returns how to undo its bookkeeping if the
        # transaction fails.
        self.piggyback: Callable[[Session], Awaitable[Callable[[], None] | None]] | None = None

    @property
    def sync_engine(self) -> Engine:
        """The engine's sync side (for event listeners: statement counters in benchmarks)."""
        return self.engine if isinstance(self.engine, Engine) else self.engine.sync_engine

    @asynccontextmanager
    async def read(self) -> AsyncIterator[Session]:
        if self.is_sqlite:
            unit = SqliteSession(self._sqlite, self._sqlite_sessions)  # begins at its first statement
            try:
                yield unit
            finally:
                unit.release()
            return
        async with self._sessions() as session:
            yield session

    @asynccontextmanager
    async def write(self) -> AsyncIterator[Session]:
        async with self._write_lock or contextlib.nullcontext():
            undo: Callable[[], None] | None = None
            if self.is_sqlite:
                unit = await self._begin_sqlite_write()
                try:
                    yield unit
                    if self.piggyback is not None:
                        undo = await self.piggyback(unit)
                    unit.finish(commit=True)
                except BaseException:
                    if undo is not None:
                        undo()
                    raise
                finally:
                    unit.release()  # rolls back what was not committed
                return
            try:
                async with self._sessions() as session, session.begin():
                    yield session
                    if self.piggyback is not None:
                        undo = await self.piggyback(session)
            except BaseException:
                if undo is not None:
                    undo()
                raise

    async def _begin_sqlite_write(self) -> SqliteSession:
        """A unit of work in a started write transaction (``BEGIN IMMEDIATE`` now, not at its first
        statement), waiting asleep while another process writes (:func:`_when_unlocked`)."""

        async def attempt() -> SqliteSession:
            unit = SqliteSession(self._sqlite, self._sqlite_sessions, begin="IMMEDIATE")
            unit.begin_now()  # cleans up if it fails
            return unit

        return await _when_unlocked(attempt)

    async def migrate(self) -> None:
        """Apply Alembic migrations up to head (run at start-up). On PostgreSQL an advisory lock
        makes instances that start together migrate one after another. A database already at
        :data:`SCHEMA_HEAD` costs one query and one write that changes nothing (a database that
        cannot be written fails here, at start), and Alembic is not imported."""
        if await self.schema_version() == SCHEMA_HEAD:
            if self.is_sqlite:
                with self._sqlite.execution_options(sqlite_begin="IMMEDIATE WAIT").begin() as conn:
                    conn.execute(text(_WRITABLE))
            else:
                async with self._async.begin() as aconn:
                    await aconn.execute(text(_WRITABLE))
            return
        if self.is_sqlite:
            # at start-up nothing else runs yet: SQLite's own wait may block
            with self._sqlite.execution_options(sqlite_begin="IMMEDIATE WAIT").begin() as conn:
                _upgrade_checked(conn)
            return
        async with self._async.begin() as conn:
            await conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK_KEY})
            await conn.run_sync(_upgrade_checked)

    async def schema_version(self) -> str | None:
        """The database's Alembic revision; None for a new database (no version table yet)."""
        query = text("SELECT version_num FROM alembic_version")
        try:
            if self.is_sqlite:
                with self._sqlite.connect() as conn:
                    return conn.execute(query).scalar()
            async with self._async.connect() as aconn:
                return (await aconn.execute(query)).scalar()
        except DBAPIError:
            return None

    async def ping(self) -> bool:
        try:
            if self.is_sqlite:
                with self._sqlite.connect() as conn:
                    conn.execute(text("SELECT 1"))
            else:
                async with self._async.connect() as aconn:
                    await aconn.execute(text("SELECT 1"))
        except Exception:
            return False
        return True

    async def close(self) -> None:
        if self.is_sqlite:
            self._sqlite.dispose()
        else:
            await self._async.dispose()


def _upgrade_checked(connection: Connection) -> None:
    _upgrade(connection)
    connection.execute(text(_WRITABLE))  # a database that cannot be written fails here, at start


def alembic_config() -> Config:
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    return cfg


def _upgrade(connection: Connection) -> None:
    """Upgrade to head; one log line when the schema changed (Alembic's own, one per step, are capped)."""
    from alembic import command
    from alembic.runtime.migration import MigrationContext

    cfg = alembic_config()
    cfg.attributes["connection"] = connection
    before = MigrationContext.configure(connection).get_current_revision()
    command.upgrade(cfg, "head")
    after = MigrationContext.configure(connection).get_current_revision()
    if after != before:
        log.info("database schema %s: %s → %s", "created" if before is None else "upgraded", before or "empty", after)


def run_in_transaction(url: str, fn: Callable[[Connection], None]) -> None:
    """``fn`` on a connection in a transaction of the database at ``url`` (Alembic's own command
    line, run without the bot: its env.py)."""

    async def _run() -> None:
        db = Database(url)
        try:
            if isinstance(db.engine, Engine):
                with db.engine.begin() as conn:
                    fn(conn)
            else:
                async with db.engine.begin() as aconn:
                    await aconn.run_sync(fn)
        finally:
            await db.close()

    asyncio.run(_run())


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

"""SQLite on the event-loop thread: a DB-API shim with aiosqlite's async surface over plain
``sqlite3``, registered as the SQLAlchemy dialect ``sqlite+inlinesqlite``.

aiosqlite runs every call on a worker thread and hands the result back through a queue: about four
thread hand-offs per statement, which cost more than the statements themselves on a local WAL
database (microseconds each). Here the calls run inline. In WAL mode readers never wait for the
writer; writers inside the process already queue on ``Database``'s lock, and a writer of another
process (a CLI command) is waited for without blocking the loop: connections get a short
``busy_timeout`` and ``Database.write`` retries ``BEGIN IMMEDIATE`` with ``asyncio.sleep``.
"""

from __future__ import annotations

import asyncio
import sqlite3
import types
from collections.abc import Generator, Iterable
from typing import Any

from sqlalchemy.dialects import registry
from sqlalchemy.dialects.sqlite.aiosqlite import AsyncAdapt_aiosqlite_dbapi, SQLiteDialect_aiosqlite

DIALECT = "sqlite+inlinesqlite"


class _Cursor:
    __slots__ = ("_c",)

    def __init__(self, cursor: sqlite3.Cursor) -> None:
        self._c = cursor

    async def __aenter__(self) -> _Cursor:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._c.close()

    @property
    def description(self) -> Any:
        return self._c.description

    @property
    def rowcount(self) -> int:
        return self._c.rowcount

    @property
    def lastrowid(self) -> int | None:
        return self._c.lastrowid

    @property
    def arraysize(self) -> int:
        return self._c.arraysize

    @arraysize.setter
    def arraysize(self, value: int) -> None:
        self._c.arraysize = value

    async def execute(self, sql: str, parameters: Any = ()) -> _Cursor:
        self._c.execute(sql, parameters)
        return self

    async def executemany(self, sql: str, seq: Iterable[Any]) -> _Cursor:
        self._c.executemany(sql, seq)
        return self

    async def fetchone(self) -> Any:
        return self._c.fetchone()

    async def fetchmany(self, size: int | None = None) -> list[Any]:
        return self._c.fetchmany(size) if size else self._c.fetchmany()

    async def fetchall(self) -> list[Any]:
        return self._c.fetchall()

    async def close(self) -> None:
        self._c.close()


class _Requests:
    """Stands in for aiosqlite's request queue (SQLAlchemy sets the isolation level through it)."""

    __slots__ = ()

    def put_nowait(self, item: tuple[asyncio.Future[Any], Any]) -> None:
        future, function = item
        try:
            future.set_result(function())
        except Exception as exc:
            future.set_exception(exc)


class Connection:
    """What SQLAlchemy's aiosqlite adapter expects of ``aiosqlite.Connection``."""

    daemon = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["check_same_thread"] = False  # the pool may close it from another thread at exit
        self._conn: sqlite3.Connection = sqlite3.connect(*args, **kwargs)
        self._connection: sqlite3.Connection | None = self._conn
        self._tx = _Requests()
        self._thread = types.SimpleNamespace(daemon=True)

    def __await__(self) -> Generator[Any, None, Connection]:
        return self
        yield  # pragma: no cover - makes this a generator

    @property
    def isolation_level(self) -> str | None:
        return self._conn.isolation_level

    def cursor(self) -> _Cursor:
        return _Cursor(self._conn.cursor())

    async def execute(self, sql: str, parameters: Any = ()) -> _Cursor:
        return _Cursor(self._conn.execute(sql, parameters))

    async def commit(self) -> None:
        self._conn.commit()

    async def rollback(self) -> None:
        self._conn.rollback()

    async def close(self) -> None:
        if self._connection is not None:
            self._conn.close()
            self._connection = None

    async def create_function(self, *args: Any, **kwargs: Any) -> None:
        self._conn.create_function(*args, **kwargs)

    def stop(self) -> None:
        self._conn.close()


_module = types.ModuleType("inline_aiosqlite")
_module.connect = Connection  # type: ignore[attr-defined]
_module.Connection = Connection  # type: ignore[attr-defined]
_module.__version__ = "0.0-inline"  # type: ignore[attr-defined]
for _name in (
    "DatabaseError",
    "Error",
    "IntegrityError",
    "NotSupportedError",
    "OperationalError",
    "ProgrammingError",
    "sqlite_version",
    "sqlite_version_info",
):
    setattr(_module, _name, getattr(sqlite3, _name))


class InlineSQLiteDialect(SQLiteDialect_aiosqlite):
    driver = "inlinesqlite"
    supports_statement_cache = True

    @classmethod
    def import_dbapi(cls) -> Any:
        return AsyncAdapt_aiosqlite_dbapi(_module, sqlite3)


def register() -> None:
    registry.register("sqlite.inlinesqlite", __name__, "InlineSQLiteDialect")
